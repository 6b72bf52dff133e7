import Foundation
import HomeAPI
import Logging
import MatterDevice
import MatterModel
import MatterProtocol
import NIOCore
import TestDevices
import TestWaiting
import Testing

/// HomeAPI against MatterDevice's own NodeServer (the server matter-sim runs), on loopback.
@Suite("NodeServer interop", .serialized)
struct NodeServerInteropTests {
    /// A dimmable light served by NodeServer on 127.0.0.1 (not yet running).
    static func startLight(
        serial: String, configure: (inout NodeServerConfiguration) -> Void = { _ in }
    )
        async throws -> (MatterNode, NodeServer)
    {
        let credentials = try DeviceAttestationProvisioning.loadOrMint(
            store: nil, vendorID: 0xFFF1, productID: 0x8001, deviceTypeID: 0x0101, authority: testAuthority)
        var logger = Logger(label: "test.node-server")
        logger.logLevel = .critical
        let node = try MatterNode(
            description: Fixture.dimmableLight(serial: serial), logger: logger,
            commissioning: CommissioningConfiguration(stateStore: nil, attestation: credentials))
        var configuration = NodeServerConfiguration(port: 0, binding: .addresses(["127.0.0.1"]), passcode: 20202021, discriminator: 3840)
        configure(&configuration)
        return (node, try await NodeServer(node: node, configuration: configuration, logger: logger))
    }

    /// A new home in a temporary folder that trusts the test PAA; the closure removes both.
    static func openTrustingHome() async throws -> (Home, @Sendable () -> Void) {
        let dir = try temporaryDirectory()
        let trust = try makeTrustStoreDirectory()
        let home = try await openHome(dir, trustStore: trust)
        return (
            home,
            {
                Task { await home.close() }
                try? FileManager.default.removeItem(at: dir)
                try? FileManager.default.removeItem(at: trust)
            }
        )
    }

    @Test func commissionsAndControlsANodeServerDevice() async throws {
        let (node, server) = try await Self.startLight(serial: "NS-1")
        let running = Task { await server.run() }
        defer { running.cancel() }
        let (home, cleanup) = try await Self.openTrustingHome()
        defer { cleanup() }
        let structure = try await home.createStructure(name: "Home")
        let code = try MatterProtocolCode.manual(passcode: 20202021, discriminator: 3840)
        let device = try await home.commissionDevice(
            setupCode: code, address: try SocketAddress(ipAddress: "127.0.0.1", port: server.port),
            structureID: structure.id)
        #expect(device.types.contains(DimmableLightDeviceType.self))
        let light = try #require(await device.types.get(DimmableLightDeviceType.self))
        #expect(light.matterTraits.basicInformationTrait?.attributes.serialNumber == "NS-1")
        try await #require(light.matterTraits.onOffTrait).toggle()
        let onOff = AttributePath(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))
        #expect(try await node.read(onOff).get().value == .bool(true))
        try await #require(light.matterTraits.levelControlTrait).moveToLevel(level: 10, transitionTime: 0)
        #expect(
            await until(node.changes) {
                (try? await node.read(AttributePath(endpoint: 1, cluster: Fixture.levelControl, attribute: AttributeID(0))).get().value)
                    == .unsigned(10)
            })
        #expect(
            await until(signals(home.devices().batched())) {
                await device.types.get(DimmableLightDeviceType.self)?.matterTraits.levelControlTrait?.attributes.currentLevel == 10
            })
    }

    /// Issue #22 item 6: while another host holds the node's one PASE slot, commissioning
    /// retries BUSY answers with backoff instead of failing at once. Issue #37 item 3: a
    /// holder that never sends Pake1 (restarting or not) loses the slot to the commissioner
    /// after the grace, not after the 30 s step timeout.
    @Test func commissioningWaitsOutABusyPASESlot() async throws {
        let (_, server) = try await Self.startLight(serial: "NS-2")
        let running = Task { await server.run() }
        defer { running.cancel() }
        let deviceAddress = try SocketAddress(ipAddress: "127.0.0.1", port: server.port)

        // Another host takes the slot: PBKDFParamRequest, answered, then silence.
        let transport = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.2"])))
        let holder = ExchangeManager(transport: transport)
        let holding = Task { await holder.run() }
        defer { holding.cancel(); Task { await transport.close() } }
        func holderRequest() async throws -> UInt8 {
            let exchange = try await holder.openExchange(
                session: await holder.openUnsecuredSession(to: deviceAddress),
                protocolID: .secureChannel)
            let reply = try await exchange.request(
                opcode: SecureChannelOpcode.pbkdfParamRequest.rawValue,
                payload: PBKDFParamRequest(
                    initiatorRandom: Array(repeating: 7, count: 32),
                    initiatorSessionID: 9
                ).encoded(),
                timeout: .seconds(5))
            return reply.opcode
        }
        #expect(try await holderRequest() == SecureChannelOpcode.pbkdfParamResponse.rawValue)
        // It restarts: its attempt is replaced, its grace not renewed.
        #expect(try await holderRequest() == SecureChannelOpcode.pbkdfParamResponse.rawValue)

        let (home, cleanup) = try await Self.openTrustingHome()
        defer { cleanup() }
        let structure = try await home.createStructure(name: "Home")
        let device = try await home.commissionDevice(
            setupCode: try MatterProtocolCode.manual(passcode: 20202021, discriminator: 3840),
            address: deviceAddress, structureID: structure.id)
        #expect(device.types.contains(DimmableLightDeviceType.self))
        #expect(await server.secureChannel.paseTakeovers == 1)
    }
}
