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

// Issue #40: a light switch bound to a light. The home binds them as Google Home does (the
// light's ACL lets the switch Operate it, the switch's Binding names the light); a press at
// the switch then goes to the light over a CASE session the switch's node opens itself.
// Both are NodeServers (what matter-sim runs) on loopback.
@Suite("Light switch bindings", .serialized)
struct SwitchBindingTests {
    static func switchNode(_ type: DeviceTypeID, clients: [ClusterID], serial: String) -> NodeDescription {
        NodeDescription(endpoints: [
            Fixture.root(vendor: "Acme", product: "Wall Switch", serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [Fixture.deviceType(type.rawValue)],
                serverClusters: [ClusterInstanceDescription(id: Fixture.identify), ClusterInstanceDescription(id: Clusters.Binding.id)],
                clientClusters: clients),
        ])
    }

    /// A NodeServer on 127.0.0.1 for `description`; bound nodes are found on loopback through `addresses`.
    static func start(
        _ description: NodeDescription, discriminator: UInt16, addresses: AddressBook
    ) async throws -> (MatterNode, NodeServer) {
        let credentials = try DeviceAttestationProvisioning.loadOrMint(
            store: nil, vendorID: 0xFFF1, productID: 0x8001, deviceTypeID: 0x0101, authority: testAuthority)
        var logger = Logger(label: "test.switch-binding")
        logger.logLevel = .critical
        let node = try MatterNode(
            description: description, logger: logger, commissioning: CommissioningConfiguration(stateStore: nil, attestation: credentials))
        var configuration = NodeServerConfiguration(
            port: 0, binding: .addresses(["127.0.0.1"]), passcode: 20202021, discriminator: discriminator)
        configuration.boundNodeAddresses = { _, node in addresses.address(of: node) }
        return (node, try await NodeServer(node: node, configuration: configuration, logger: logger))
    }

    /// Node ID → loopback address, filled in as the nodes are commissioned.
    final class AddressBook: Sendable {
        let entries = Watched<[UInt64: SocketAddress]>([:])
        func address(of node: UInt64) -> SocketAddress? { entries.value[node] }
    }

    @Test func aPressAtABoundSwitchTogglesTheLightAndADimmerSetsItsLevel() async throws {
        let book = AddressBook()
        let (lightNode, lightServer) = try await Self.start(
            Fixture.dimmableLight(serial: "BOUND-LIGHT"), discriminator: 3840, addresses: book)
        let (switchNode, switchServer) = try await Self.start(
            Self.switchNode(
                DeviceTypes.dimmerSwitch, clients: [Clusters.Identify.id, Clusters.OnOff.id, Clusters.LevelControl.id], serial: "DIMMER-1"),
            discriminator: 3841, addresses: book)
        let running = [Task { await lightServer.run() }, Task { await switchServer.run() }]
        defer { for task in running { task.cancel() } }
        let (home, cleanup) = try await NodeServerInteropTests.openTrustingHome()
        defer { cleanup() }
        let structure = try await home.createStructure(name: "Home")
        func commission(_ server: NodeServer, _ discriminator: UInt16) async throws -> HomeDevice {
            let address = try SocketAddress(ipAddress: "127.0.0.1", port: server.port)
            let device = try await home.commissionDevice(
                setupCode: try MatterProtocolCode.manual(passcode: 20202021, discriminator: discriminator), address: address,
                structureID: structure.id)
            book.entries.update { $0[device.nodeID] = address }
            return device
        }
        let light = try await commission(lightServer, 3840)
        let dimmer = try await commission(switchServer, 3841)
        #expect(dimmer.types.contains(DimmerSwitchDeviceType.self))
        let onOff = AttributePath(endpoint: 1, cluster: Clusters.OnOff.id, attribute: Clusters.OnOff.Attribute.onOff)
        let level = AttributePath(endpoint: 1, cluster: Clusters.LevelControl.id, attribute: Clusters.LevelControl.Attribute.currentLevel)
        let wasOn = try await lightNode.read(onOff).get().value

        // Not bound yet: the press has nowhere to go.
        await #expect(throws: PhysicalActionError.self) { try await switchNode.act(.press(.single)) }
        try await dimmer.bind(to: light)
        try await dimmer.bind(to: light)  // idempotent: one ACL entry, one binding per cluster
        let binding = AttributePath(endpoint: 1, cluster: Clusters.Binding.id, attribute: Clusters.Binding.Attribute.binding)
        #expect(try await switchNode.read(binding).get().value.members?.count == 2)

        try await switchNode.act(.press(.single))
        #expect(
            await until(lightNode.changes) {
                (try? await lightNode.read(onOff).get().value) == (wasOn == .bool(true) ? .bool(false) : .bool(true))
            })
        try await switchNode.act(.dim(percent: 40))
        #expect(await until(lightNode.changes) { (try? await lightNode.read(level).get().value) == .unsigned(102) })
        #expect(try await lightNode.read(onOff).get().value == .bool(true))
        // The switch's traffic log shows what it sent.
        #expect(switchServer.traffic.recent.contains { $0.summary.hasPrefix("bound") })
    }
}
