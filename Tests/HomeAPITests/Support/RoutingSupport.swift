@testable import CloudRelay
import Foundation
import Hummingbird
import Logging
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
import NIOCore
@testable import RelayClients
@testable import RelayProtocol
import ServiceLifecycle
import TestDevices

// Test support for routing (issue #6): a device's LAN cable that can be pulled, the LAN
// view of a node without its cloud-only clusters, the device's relay connection serving
// the whole node, and an in-process relay on loopback. The device-side pieces stand in
// until MatterDevice serves cloud-only clusters and relay subjects itself.

// MARK: - The LAN cable

extension TestDevice {
    /// Pulls the device's LAN cable: its UDP traffic is dropped both ways.
    func lanDown() { lan.setUp(false) }
    func lanUp() { lan.setUp(true) }

    /// The serial number the device reports (its relay device ID).
    var serialNumber: String {
        get async {
            (await value(AttributePath(endpoint: 0, cluster: Fixture.basicInformation, attribute: AttributeID(0x000F))))?.stringValue ?? ""
        }
    }
}

// MARK: - The device's relay connection

/// The whole node as the relay sees it, acting (contract point 3) as the Administer
/// subject of the node's first fabric, looked up in its ACL at request time.
struct RelayNodeProvider: InteractionDataProvider {
    let node: MatterNode

    static let relaySession = SessionID(0xFFFF_FFFF_0000_0001)

    private func provider() async -> NodeSessionProvider {
        let fabrics = await node.fabrics.sorted { $0.index < $1.index }
        let acl = await node.accessControlEntries
        guard let fabric = fabrics.first else {
            return NodeSessionProvider(node: node, context: SessionContext(id: Self.relaySession, subject: .pase(fabricIndex: 0)))
        }
        let admin =
            acl.first { $0.fabricIndex == fabric.index && $0.privilege == .administer && $0.authMode == .case }?
            .subjects?.first ?? 0
        let subject = SubjectDescriptor(authMode: .case, fabricIndex: fabric.index, subject: admin)
        return NodeSessionProvider(node: node, context: SessionContext(id: Self.relaySession, subject: subject))
    }

    func endpoints() async -> [EndpointNumber] { node.composition.endpoints }
    func clusters(on endpoint: EndpointNumber) async -> [ClusterID] { node.composition.clusters(on: endpoint) }
    func attributes(of cluster: ClusterPath) async -> [AttributeMetadata] { await provider().attributes(of: cluster) }
    func commands(of cluster: ClusterPath) async -> [CommandMetadata] { await provider().commands(of: cluster) }
    func dataVersion(of cluster: ClusterPath) async -> DataVersion? { await node.dataVersion(of: cluster) }

    func checkAccess(_ subject: SubjectDescriptor, to cluster: ClusterPath, privilege: Privilege) async -> Bool {
        await provider().checkAccess(subject, to: cluster, privilege: privilege)
    }

    func read(_ path: AttributePath, context: AttributeReadContext) async -> Result<VersionedAttributeValue, InteractionStatus> {
        await provider().read(path, context: context)
    }

    func write(_ path: AttributePath, _ operation: AttributeWriteOperation, context: InteractionContext) async -> InteractionStatus {
        await provider().write(path, operation, context: context)
    }

    func invoke(_ path: ConcreteCommandPath, fields: TLVValue?, context: InteractionContext) async -> CommandOutcome {
        await provider().invoke(path, fields: fields, context: context)
    }

    func attributeChanges() -> AsyncStream<AttributePath> {
        NodeSessionProvider(node: node, context: SessionContext(id: Self.relaySession, subject: .pase(fabricIndex: 0))).attributeChanges()
    }
}

/// A device's outbound connection to the relay, serving the whole node.
final class DeviceRelayConnection: Sendable {
    let client: RelayDeviceClient
    let server: InteractionServer
    private let tasks: [Task<Void, Never>]

    init(node: MatterNode, relayURL: String, credential: String) {
        var logger = Logger(label: "test.device.relay")
        logger.logLevel = .critical
        server = InteractionServer(provider: RelayNodeProvider(node: node), logger: logger)
        var configuration = RelayDeviceClient.Configuration()
        configuration.settings.minimumBackoff = .milliseconds(50)
        configuration.settings.maximumBackoff = .milliseconds(500)
        client = RelayDeviceClient(
            relayURL: relayURL, credential: credential, handler: server, configuration: configuration,
            logger: logger)
        let server = self.server, client = self.client
        tasks = [Task { await server.run() }, Task { try? await client.run() }]
    }

    /// Cloud down for this device: the relay connection drops and stays down.
    func cloudDown() { client.goOffline() }
    func cloudUp() { client.goOnline() }

    func stop() {
        for t in tasks { t.cancel() }
    }
}

// MARK: - An in-process relay

/// A relay server on 127.0.0.1 (ephemeral port) with a real SQLite file.
final class TestRelay: Sendable {
    let server: RelayServer
    let port: Int
    let directory: URL
    private let group: ServiceGroup
    private let runner: Task<Void, Never>

    var url: String { "ws://127.0.0.1:\(port)" }
    var store: RelayStore { server.store }

    private init(server: RelayServer, port: Int, directory: URL, group: ServiceGroup, runner: Task<Void, Never>) {
        self.server = server
        self.port = port
        self.directory = directory
        self.group = group
        self.runner = runner
    }

    static func start() async throws -> TestRelay {
        let directory = try temporaryDirectory()
        var logger = Logger(label: "test.relay")
        logger.logLevel = .critical
        let store = try RelayStore(path: directory.appendingPathComponent("relay.sqlite").path)
        var configuration = RelayServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.adminToken = "test-admin-token"
        let server = RelayServer(store: store, configuration: configuration, logger: logger)
        let portSlot = AwaitableSlot<Int>()
        let app = server.application { port in portSlot.set(port) }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let runner = Task { _ = try? await group.run() }
        let port = try await withRelayTimeout(.seconds(20), "relay start") { try await portSlot.wait() }
        return TestRelay(server: server, port: port, directory: directory, group: group, runner: runner)
    }

    /// A home and its token.
    func addHome(_ name: String) async throws -> (id: String, token: String) {
        let (home, token) = try await store.addHome(name: name)
        return (home.id, token)
    }

    /// Registers the device under its serial number and connects it to the relay.
    func connect(_ device: TestDevice, homeID: String) async throws -> DeviceRelayConnection {
        let credential = try await store.registerDevice(homeID: homeID, deviceID: await device.serialNumber)
        let connection = DeviceRelayConnection(node: device.node, relayURL: url, credential: credential)
        try await connection.client.waitUntilConnected(timeout: .seconds(10))
        return connection
    }

    private let stopped = NIOLockedValueBox(false)

    /// Stops the relay (an internet outage for everyone using it); stopping twice is harmless.
    func stop() async {
        guard
            !stopped.withLockedValue({ s in
                defer { s = true }; return s
            })
        else { return }
        await group.triggerGracefulShutdown()
        _ = await runner.value
        try? FileManager.default.removeItem(at: directory)
    }
}
