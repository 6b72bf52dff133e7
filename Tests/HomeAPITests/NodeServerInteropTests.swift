import Foundation
import HomeAPI
import Logging
import MatterDevice
import MatterModel
import NIOCore
import Testing

/// HomeAPI against MatterDevice's own NodeServer (the server matter-sim runs), on loopback.
@Suite("NodeServer interop", .serialized)
struct NodeServerInteropTests {
    @Test func commissionsAndControlsANodeServerDevice() async throws {
        let credentials = try DeviceAttestationProvisioning.loadOrMint(
            store: nil, vendorID: 0xFFF1, productID: 0x8001, deviceTypeID: 0x0101, authority: testAuthority)
        var logger = Logger(label: "test.node-server")
        logger.logLevel = .critical
        let node = try MatterNode(description: Fixture.dimmableLight(serial: "NS-1"), logger: logger,
                                  commissioning: CommissioningConfiguration(stateStore: nil, attestation: credentials))
        let server = try await NodeServer(node: node, configuration: NodeServerConfiguration(
            port: 0, binding: .addresses(["127.0.0.1"]), passcode: 20202021, discriminator: 3840), logger: logger)
        let running = Task { await server.run() }
        defer { running.cancel() }

        let dir = try temporaryDirectory()
        let trust = try makeTrustStoreDirectory()
        defer {
            try? FileManager.default.removeItem(at: dir)
            try? FileManager.default.removeItem(at: trust)
        }
        let home = try await openHome(dir, trustStore: trust)
        defer { Task { await home.close() } }
        let structure = try await home.createStructure(name: "Home")
        let code = try MatterProtocolCode.manual(passcode: 20202021, discriminator: 3840)
        let device = try await home.commissionDevice(setupCode: code, address: try SocketAddress(ipAddress: "127.0.0.1", port: server.port),
                                                     structureID: structure.id)
        #expect(device.types.contains(DimmableLightDeviceType.self))
        let light = try #require(await device.types.get(DimmableLightDeviceType.self))
        #expect(light.matterTraits.basicInformationTrait?.attributes.serialNumber == "NS-1")
        try await #require(light.matterTraits.onOffTrait).toggle()
        let onOff = AttributePath(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))
        #expect(try await node.read(onOff).get().value == .bool(true))
        try await #require(light.matterTraits.levelControlTrait).moveToLevel(level: 10, transitionTime: 0)
        #expect(await eventually { (try? await node.read(AttributePath(endpoint: 1, cluster: Fixture.levelControl, attribute: AttributeID(0))).get().value) == .unsigned(10) })
        #expect(await eventually {
            await device.types.get(DimmableLightDeviceType.self)?.matterTraits.levelControlTrait?.attributes.currentLevel == 10
        })
    }
}
