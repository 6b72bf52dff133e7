import CloudRelay
import DeviceProfile
import Foundation
import Hummingbird
import Logging
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore
import RelayClients
import ServiceLifecycle
import TestWaiting
@testable import matter_sim

// A real relay server in the test process (Hummingbird on an ephemeral loopback port, a
// real SQLite file), and a node built from a shipped profile with its cloud link, as
// `matter-sim run` builds them.

/// A relay on 127.0.0.1 for the duration of `body`.
func withRelay<T: Sendable>(_ body: @escaping @Sendable (_ url: String, _ store: RelayStore) async throws -> T) async throws -> T {
    let directory = temporaryDirectory()
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try RelayStore(path: directory.appendingPathComponent("relay.sqlite").path)
    let server = RelayServer(store: store, configuration: RelayServerConfiguration(host: "127.0.0.1", port: 0), logger: quietLogger)
    let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
    let app = server.application { port in portSink.yield(port) }
    let group = ServiceGroup(configuration: .init(services: [app], logger: quietLogger))
    return try await withThrowingTaskGroup(of: T?.self) { tasks in
        tasks.addTask {
            try await group.run()
            return nil
        }
        do {
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw CommissionerError("the relay did not start") }
            let result = try await body("ws://127.0.0.1:\(port)", store)
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        } catch {
            await group.triggerGracefulShutdown()
            tasks.cancelAll()
            throw error
        }
    }
}

/// Quick reconnects, so tests do not wait out production backoffs.
func fastRelaySettings() -> RelayClientSettings {
    var settings = RelayClientSettings()
    settings.minimumBackoff = .milliseconds(50)
    settings.maximumBackoff = .milliseconds(500)
    return settings
}

/// The shipped profiles directory.
let shippedProfiles = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("DeviceProfiles")

/// A node from a shipped device profile on 127.0.0.1 (no mDNS), with a cloud link to
/// `relay` when given, everything running until `stop()`.
struct ProfileNode {
    let launch: NodeLaunch
    let server: NodeServer
    let cloud: CloudLink?
    let tasks: Task<Void, Never>

    var serialNumber: String { launch.device.identity.serialNumber }

    /// The cloud link's status changes (an ended stream for a node without one).
    func cloudChanges() -> AsyncStream<Void> { cloud?.statusChanges() ?? AsyncStream { $0.finish() } }
    var passcode: UInt32 { launch.passcode }
    var address: SocketAddress { get throws { try SocketAddress(ipAddress: "127.0.0.1", port: server.port) } }
    var simulated: SimulatedNode { SimulatedNode(name: launch.device.name, serialNumber: serialNumber, server: server, cloud: cloud) }

    static func start(profile: String, stateDirectory: URL, relay: CloudEndpoint? = nil) async throws -> ProfileNode {
        let loader = ProfileLoader()
        let device = try loader.loadDevice(file: shippedProfiles.appendingPathComponent(profile).path)
        let launch = try NodeLaunch(
            device: device, model: loader.model,
            command: NodeLaunchOptions(port: 0, stateDir: stateDirectory.path, authority: testAuthority),
            logger: quietLogger)
        var configuration = launch.serverConfiguration
        configuration.binding = .addresses(["127.0.0.1"])
        configuration.advertisement = nil
        let server = try await NodeServer(node: launch.node, configuration: configuration, logger: quietLogger)
        let cloud = relay.map {
            CloudLink(
                endpoint: $0, deviceID: device.identity.serialNumber, label: device.name, stateDirectory: launch.stateDirectory,
                server: server, settings: fastRelaySettings(), logger: quietLogger)
        }
        let tasks = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await server.run() }
                if let cloud { group.addTask { await cloud.run() } }
            }
        }
        // The PASE window opens as the server boots: a PBKDFParamRequest sent before then is
        // dropped, and its retransmissions count as duplicates. Wait for it (a new node only).
        let node = launch.node
        _ = await until(server.commissioningChanges()) {
            if await server.secureChannel.isCommissioningWindowOpen { return true }
            return await !node.fabrics.isEmpty
        }
        return ProfileNode(launch: launch, server: server, cloud: cloud, tasks: tasks)
    }

    func stop() async {
        tasks.cancel()
        await tasks.value
    }
}

/// A controller of the relay's home, running until `body` returns.
func withRelayController<T: Sendable>(
    url: String, homeToken: String,
    _ body: @escaping @Sendable (RelayControllerClient) async throws -> T
) async throws -> T {
    var configuration = RelayControllerClient.Configuration()
    configuration.settings = fastRelaySettings()
    configuration.operationTimeout = .seconds(10)
    let controller = RelayControllerClient(relayURL: url, homeToken: homeToken, configuration: configuration, logger: quietLogger)
    return try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask {
            try? await controller.run()
            return nil
        }
        defer { group.cancelAll() }
        try await controller.waitUntilConnected(timeout: .seconds(10))
        return try await body(controller)
    }
}

extension ReportDataMessage {
    /// The value or status reported for one concrete attribute.
    func result(_ path: AttributePath) -> Result<TLVValue, InteractionStatus>? {
        for report in attributeReports {
            switch report {
            case .data(let data) where data.path.concretePath == path: return .success(data.data)
            case .status(let status) where status.path.concretePath == path: return .failure(status.status.status)
            default: continue
            }
        }
        return nil
    }

    /// Clusters that reported any attribute.
    var reportedClusters: Set<ClusterPath> {
        Set(
            attributeReports.compactMap { report in
                guard case .data(let data) = report, let path = data.path.concretePath else { return nil }
                return ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
            })
    }
}

extension LoopbackCommissioner {
    /// One ReadRequest (wildcards allowed) over a UDP session, chunks merged.
    func read(_ session: SessionInfo, paths: [AttributePathIB], timeout: Duration = .seconds(10)) async throws -> ReportDataMessage {
        let exchange = try await manager.openExchange(session: session.handle, protocolID: .interactionModel)
        do {
            var merged = ReportDataMessage()
            var reply = try await exchange.request(
                opcode: InteractionOpcode.readRequest.rawValue,
                payload: ReadRequestMessage(attributeRequests: paths).encoded(), timeout: timeout)
            while true {
                guard reply.opcode == InteractionOpcode.reportData.rawValue else {
                    throw CommissionerError("read: answered opcode \(reply.opcode)")
                }
                let report = try ReportDataMessage(payload: reply.payload)
                merged.attributeReports += report.attributeReports
                guard report.moreChunkedMessages else { break }
                reply = try await exchange.request(
                    opcode: InteractionOpcode.statusResponse.rawValue,
                    payload: StatusResponseMessage(status: .success).encoded(), timeout: timeout)
            }
            await exchange.close()
            return merged
        } catch {
            await exchange.close()
            throw error
        }
    }
}

enum Level {
    static let cluster = ClusterID(0x0008)
    static let currentLevel = AttributePath(endpoint: 1, cluster: cluster, attribute: AttributeID(0x0000))
    /// MoveToLevelWithOnOff: the light is off, and plain MoveToLevel does nothing to a light that is off.
    static let moveToLevel: UInt32 = 0x04
    static let descriptor = ClusterID(0x001D)
    static let serverList = AttributePath(endpoint: 1, cluster: descriptor, attribute: AttributeID(0x0001))
    static let deviceTypeList = AttributePath(endpoint: 1, cluster: descriptor, attribute: AttributeID(0x0000))
    static let onOff = AttributePath(endpoint: 1, cluster: ClusterIDs.onOff, attribute: AttributeID(0x0000))

    /// MoveToLevelWithOnOff(level, transition 0, no option masks).
    static func moveToLevel(_ level: UInt8) -> InvokeRequestMessage {
        InvokeRequestMessage(invokeRequests: [
            CommandDataIB(
                path: CommandPathIB(endpoint: 1, cluster: cluster, command: CommandID(moveToLevel)),
                fields: fields((0, u(level)), (1, u(0)), (2, u(0)), (3, u(0))))
        ])
    }
}

extension InvokeResponseMessage {
    var firstStatus: InteractionStatus? {
        guard case .status(let status)? = invokeResponses.first else { return nil }
        return status.status.status
    }
}

/// The cluster IDs in a ServerList value.
func clusterIDs(_ value: TLVValue?) -> [UInt32] {
    guard case .array(let elements)? = value else { return [] }
    return elements.compactMap { $0.value.uintValue.flatMap { UInt32(exactly: $0) } }
}
