@testable import CloudRelay
import Foundation
import Glibc
import Logging
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
@testable import RelayClients
@testable import RelayProtocol
import ServiceLifecycle
import Testing

// MARK: - A small On/Off light as the device's data model

enum OnOff {
    static let cluster = ClusterID(0x0006)
    static let onOff = AttributeID(0x0000)
    static let onTime = AttributeID(0x4001)
    static let off = CommandID(0x00)
    static let on = CommandID(0x01)
    static let toggle = CommandID(0x02)
    static let endpoint: EndpointNumber = 1

    static let onOffPath = AttributePath(endpoint: endpoint, cluster: cluster, attribute: onOff)
    static let onTimePath = AttributePath(endpoint: endpoint, cluster: cluster, attribute: onTime)

    static func command(_ id: CommandID) -> InvokeRequestMessage {
        InvokeRequestMessage(invokeRequests: [CommandDataIB(path: CommandPathIB(endpoint: endpoint, cluster: cluster, command: id))])
    }
}

/// Fan-out of attribute changes, one stream per subscription.
final class ChangeFeed: Sendable {
    // The lock guards the sinks.
    private let sinks = NIOLockedValueBox<[Int: AsyncStream<AttributePath>.Continuation]>([:])
    private let nextID = NIOLockedValueBox(0)

    func stream() -> AsyncStream<AttributePath> {
        let (stream, sink) = AsyncStream.makeStream(of: AttributePath.self)
        let id = nextID.withLockedValue { n -> Int in
            n += 1
            return n
        }
        sinks.withLockedValue { $0[id] = sink }
        sink.onTermination = { [weak self] _ in _ = self?.sinks.withLockedValue { $0.removeValue(forKey: id) } }
        return stream
    }

    func publish(_ path: AttributePath) {
        for sink in sinks.withLockedValue({ Array($0.values) }) { sink.yield(path) }
    }
}

/// Endpoint 1 with an On/Off cluster: OnOff (read-only, changed by commands) and
/// OnTime (writable); commands Off, On, Toggle.
actor LightNode: InteractionDataProvider {
    private var onOff = false
    private var onTime: UInt64 = 0
    private var dataVersion: DataVersion = 1
    private(set) var invocations: [ConcreteCommandPath] = []
    nonisolated let changes = ChangeFeed()

    var isOn: Bool { onOff }

    func endpoints() -> [EndpointNumber] { [OnOff.endpoint] }

    func clusters(on endpoint: EndpointNumber) -> [ClusterID] { endpoint == OnOff.endpoint ? [OnOff.cluster] : [] }

    func attributes(of cluster: ClusterPath) -> [AttributeMetadata] {
        guard cluster == ClusterPath(endpoint: OnOff.endpoint, cluster: OnOff.cluster) else { return [] }
        return [AttributeMetadata(id: OnOff.onOff), AttributeMetadata(id: OnOff.onTime, writePrivilege: .operate)]
    }

    func commands(of cluster: ClusterPath) -> [CommandMetadata] {
        guard cluster == ClusterPath(endpoint: OnOff.endpoint, cluster: OnOff.cluster) else { return [] }
        return [CommandMetadata(id: OnOff.off), CommandMetadata(id: OnOff.on), CommandMetadata(id: OnOff.toggle)]
    }

    func dataVersion(of cluster: ClusterPath) -> DataVersion? {
        cluster == ClusterPath(endpoint: OnOff.endpoint, cluster: OnOff.cluster) ? dataVersion : nil
    }

    func checkAccess(_ subject: SubjectDescriptor, to cluster: ClusterPath, privilege: Privilege) -> Bool { true }

    func read(_ path: AttributePath, context: AttributeReadContext) -> Result<VersionedAttributeValue, InteractionStatus> {
        switch path {
        case OnOff.onOffPath: .success(VersionedAttributeValue(.bool(onOff), dataVersion: dataVersion))
        case OnOff.onTimePath: .success(VersionedAttributeValue(.unsigned(onTime), dataVersion: dataVersion))
        default: .failure(InteractionStatus(.unsupportedAttribute))
        }
    }

    func write(_ path: AttributePath, _ operation: AttributeWriteOperation, context: InteractionContext) -> InteractionStatus {
        guard path == OnOff.onTimePath, case .replace(.unsigned(let value)) = operation else {
            return InteractionStatus(.invalidDataType)
        }
        guard value <= UInt64(UInt16.max) else { return InteractionStatus(.constraintError) }
        onTime = value
        bump(path)
        return .success
    }

    func invoke(_ path: ConcreteCommandPath, fields: TLVValue?, context: InteractionContext) -> CommandOutcome {
        invocations.append(path)
        switch path.command {
        case OnOff.off: set(false)
        case OnOff.on: set(true)
        case OnOff.toggle: set(!onOff)
        default: return .status(InteractionStatus(.unsupportedCommand))
        }
        return .status(.success)
    }

    nonisolated func attributeChanges() -> AsyncStream<AttributePath> { changes.stream() }

    private func set(_ value: Bool) {
        guard value != onOff else { return }
        onOff = value
        bump(OnOff.onOffPath)
    }

    private func bump(_ path: AttributePath) {
        dataVersion &+= 1
        changes.publish(path)
    }
}

/// A handler that accepts exchanges and never answers, to exercise timeouts.
struct SilentHandler: RelayInteractionHandler {
    func handle(opcode: UInt8, payload: [UInt8], on exchange: any IMExchange) async {
        _ = try? await exchange.receive()
    }
}

// MARK: - A relay server on an ephemeral loopback port

let testLogger: Logger = {
    var logger = Logger(label: "relay-test")
    logger.logLevel = ProcessInfo.processInfo.environment["RELAY_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
    return logger
}()

let adminToken = "test-admin-token"

/// A fresh database file in a fresh temporary directory.
func temporaryDatabasePath() throws -> String {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relay-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory.appendingPathComponent("relay.sqlite").path
}

struct RelayHarness: Sendable {
    let server: RelayServer
    let port: Int
    var store: RelayStore { server.store }
    var baseURL: String { "ws://127.0.0.1:\(port)" }
    var httpURL: String { "http://127.0.0.1:\(port)" }

    /// A home with one registered device.
    func home(_ name: String, device: String) async throws -> (home: RelayHome, token: String, credential: String) {
        let (home, token) = try await store.addHome(name: name)
        let credential = try await store.registerDevice(homeID: home.id, deviceID: device)
        return (home, token, credential)
    }
}

/// Runs a relay on 127.0.0.1 with an ephemeral port and a real SQLite file for
/// the duration of `body`, then shuts it down gracefully.
/// `logger` is the relay's; `controllers`, when given, routes the controllers' requests
/// instead of the relay's own hub (which it gets, with the metrics, to delegate to).
func withRelay<T: Sendable>(
    databasePath: String? = nil, store given: RelayStore? = nil, configuration: RelayServerConfiguration = .init(),
    logger: Logger = testLogger,
    controllers: (@Sendable (RelayHub) -> any RelayControllerRouting)? = nil,
    _ body: @escaping @Sendable (RelayHarness) async throws -> T
) async throws -> T {
    let path = try databasePath ?? temporaryDatabasePath()
    // A database made here is removed afterwards; a caller's stays for the caller.
    defer {
        if databasePath == nil { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }
    // A given store (PostgreSQL, or one shared with another relay) stays open for its caller.
    let store = try given ?? RelayStore(path: path)
    var configuration = configuration
    configuration.host = "127.0.0.1"
    configuration.port = 0
    configuration.adminToken = adminToken
    let server: RelayServer
    if let controllers {
        let metrics = RelayMetrics()
        let hub = RelayHub(
            store: store, metrics: metrics, queueCapacity: configuration.queueCapacity, clock: configuration.clock, logger: logger)
        server = RelayServer(store: store, controllers: controllers(hub), metrics: metrics, configuration: configuration, logger: logger)
    } else {
        server = RelayServer(store: store, configuration: configuration, logger: logger)
    }
    let portSlot = AwaitableSlot<Int>()
    let app = server.application { port in portSlot.set(port) }
    let group = ServiceGroup(configuration: .init(services: [app], logger: testLogger))
    return try await withThrowingTaskGroup(of: T?.self) { tasks in
        tasks.addTask {
            try await group.run()
            return nil
        }
        do {
            let port = try await withRelayTimeout(.seconds(20), "relay start") { try await portSlot.wait() }
            let result = try await body(RelayHarness(server: server, port: port))
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

/// Runs services (clients, an InteractionServer) beside `body`, cancelling them after it.
func withServices<T: Sendable>(
    _ services: [@Sendable () async throws -> Void], _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { tasks in
        for service in services {
            tasks.addTask {
                try? await service()
                return nil
            }
        }
        defer { tasks.cancelAll() }
        return try await body()
    }
}

/// A device served by a real InteractionServer over a LightNode.
struct RelayTestDevice: Sendable {
    let node = LightNode()
    let interactionServer: InteractionServer
    let client: RelayDeviceClient

    init(relayURL: String, credential: String, configuration: RelayDeviceClient.Configuration = .init()) {
        interactionServer = InteractionServer(provider: node, logger: testLogger)
        client = RelayDeviceClient(
            relayURL: relayURL, credential: credential, handler: interactionServer, configuration: configuration, logger: testLogger)
    }

    var services: [@Sendable () async throws -> Void] {
        [{ await interactionServer.run() }, { try await client.run() }]
    }
}

func fastSettings() -> RelayClientSettings {
    var settings = RelayClientSettings()
    settings.minimumBackoff = .milliseconds(50)
    settings.maximumBackoff = .milliseconds(500)
    return settings
}

func deviceConfiguration() -> RelayDeviceClient.Configuration {
    var configuration = RelayDeviceClient.Configuration()
    configuration.settings = fastSettings()
    return configuration
}

func controllerConfiguration(timeout: Duration = .seconds(10)) -> RelayControllerClient.Configuration {
    var configuration = RelayControllerClient.Configuration()
    configuration.settings = fastSettings()
    configuration.operationTimeout = timeout
    return configuration
}

extension ReportDataMessage {
    /// The value reported for a concrete attribute, if any.
    func value(_ path: AttributePath) -> TLVValue? {
        for report in attributeReports {
            if case .data(let data) = report, data.path.concretePath == path { return data.data }
        }
        return nil
    }
}

extension InvokeResponseMessage {
    /// The statuses of the command responses.
    var statuses: [StatusCode] {
        invokeResponses.compactMap { response in
            if case .status(let status) = response { return status.status.status.status }
            return nil
        }
    }
}

// MARK: - Raw TCP, as a misbehaving client holds it

#if canImport(Glibc)
#endif

/// A plain TCP connection from `source` (a loopback address) to 127.0.0.1:`port`, for
/// clients that hold sockets without speaking HTTP. Its reads block, so they run on a
/// Dispatch thread, never on the cooperative pool the relay under test needs.
final class RawConnection: Sendable {
    let fd: Int32

    init(port: Int, source: String = "127.0.0.1") throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawConnectionError("socket: errno \(errno)") }
        func address(_ host: String, _ port: Int) -> sockaddr_in {
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = in_port_t(UInt16(port).bigEndian)
            inet_pton(AF_INET, host, &a.sin_addr)
            return a
        }
        var local = address(source, 0)
        var remote = address("127.0.0.1", port)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, connected == 0 else {
            close(fd)
            throw RawConnectionError("bind/connect: errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// A controller WebSocket upgraded by hand (no library below it); also returns the
    /// bytes that followed the 101 response head (the relay's first frames).
    static func controllerWebSocket(port: Int, token: String) async throws -> (RawConnection, [UInt8]) {
        let socket = try RawConnection(port: port)
        socket.send(
            "GET /v1/controller HTTP/1.1\r\nHost: relay\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Bearer \(token)\r\n\r\n")
        let handshake = await socket.receiveBytes(within: 5)
        guard String(decoding: handshake, as: UTF8.self).hasPrefix("HTTP/1.1 101") else {
            throw RawConnectionError("no upgrade: \(String(decoding: handshake, as: UTF8.self))")
        }
        let headEnd = (0..<max(0, handshake.count - 3)).first { Array(handshake[$0..<$0 + 4]) == [13, 10, 13, 10] }
        return (socket, headEnd.map { Array(handshake[($0 + 4)...]) } ?? [])
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    func sendBytes(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// The bytes the server sends within `seconds` (empty when none).
    func receiveBytes(within seconds: Int) async -> [UInt8] { await offPool { self.blockingReceiveBytes(within: seconds) } }

    private func blockingReceiveBytes(within seconds: Int) -> [UInt8] {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? Array(buffer[0..<n]) : []
    }

    /// Reads the server's WebSocket frames (unmasked) for up to `seconds`, after `pending`
    /// bytes already read; the status code of the first close frame, nil when none came.
    func closeCode(within seconds: Int, after pending: [UInt8] = []) async -> UInt16? {
        await offPool { self.blockingCloseCode(within: seconds, after: pending) }
    }

    private func blockingCloseCode(within seconds: Int, after pending: [UInt8]) -> UInt16? {
        var bytes = pending
        // real time: external: a raw socket's blocking reads, bounded.
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            // Parse whole frames from the front.
            while bytes.count >= 2 {
                let opcode = bytes[0] & 0x0F
                var length = Int(bytes[1] & 0x7F)
                var offset = 2
                if length == 126 {
                    guard bytes.count >= 4 else { break }
                    length = Int(bytes[2]) << 8 | Int(bytes[3])
                    offset = 4
                } else if length == 127 {
                    guard bytes.count >= 10 else { break }
                    length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
                    offset = 10
                }
                guard bytes.count >= offset + length else { break }
                if opcode == 0x8 {
                    return length >= 2 ? UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1]) : 1005
                }
                bytes.removeFirst(offset + length)
            }
            var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var buffer = [UInt8](repeating: 0, count: 4096)
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n == 0 { return nil }  // closed without a close frame
            if n > 0 { bytes += buffer[0..<n] }
        }
        return nil
    }

    /// What the server sends within `seconds`; nil when it closed the connection without a byte.
    func receive(within seconds: Int) async -> String? { await offPool { self.blockingReceive(within: seconds) } }

    private func blockingReceive(within seconds: Int) -> String? {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { return String(decoding: buffer[0..<n], as: UTF8.self) }
        return n == 0 ? nil : ""  // "": nothing yet (timed out), the connection still open
    }

    /// Whether the server has closed the connection, without waiting.
    var isClosedNow: Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK)) == 0
    }

    private func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: body()) }
        }
    }
}

struct RawConnectionError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
