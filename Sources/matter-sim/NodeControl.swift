// The simulator's control socket (contract for issue #6, point 5): `matter-sim run` and
// `matter-sim home` listen on a Unix domain socket (default <state dir or state root>/
// control.sock) and apply the faults `matter-sim fault` asks for to their running nodes.
// One JSON request per connection, one JSON line back.
import ArgumentParser
import DeviceProfile
import Foundation
import Logging
import MatterCrypto
import MatterDevice
import NIOCore
import NIOPosix

/// What `matter-sim fault` can do to a node.
enum FaultAction: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case lanDown = "lan-down"
    case lanUp = "lan-up"
    case cloudDown = "cloud-down"
    case cloudUp = "cloud-up"
    case powerOff = "power-off"
    case powerOn = "power-on"
    /// A lossy LAN: VALUE is "loss=20%,delay=50ms,jitter=20ms,duplicate=1%,seed=7,maxlost=2" (any of them) or "none".
    case lanImpair = "lan-impair"

    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    var touchesCloud: Bool { self == .cloudDown || self == .cloudUp }
}

/// A request on the control socket: a fault (`matter-sim fault`) or what a person does at
/// the device (`matter-sim act`, with its value).
struct ControlRequest: Codable, Sendable {
    /// A serial number, a device name, or `all`.
    var node: String
    var action: String
    var value: String?
}

/// The answer: an error, or what became of each node.
struct ControlResponse: Codable, Sendable {
    struct NodeResult: Codable, Sendable {
        var name: String
        var serialNumber: String
        /// The node's state after the action ("LAN down, cloud connected, power on").
        var state: String
        /// Why the action did not apply, when it did not (a node without a relay).
        var note: String?
    }

    var error: String?
    var results: [NodeResult] = []
}

/// One running node as the control socket sees it.
struct SimulatedNode: Sendable {
    let name: String
    let serialNumber: String
    let server: NodeServer
    let cloud: CloudLink?

    var state: String {
        let impairment = server.lanImpairment, lost = server.lostDatagrams
        let impaired = impairment.isNone ? "" : " (impaired: \(impairment); lost \(lost.inbound) in, \(lost.outbound) out)"
        var parts = [(server.isLANUp ? "LAN up" : "LAN down") + impaired]
        parts.append(cloud?.status ?? "no cloud relay")
        parts.append(server.isPoweredOn ? "power on" : "power off")
        return parts.joined(separator: ", ")
    }

    /// Carries out what a person does at the device; a note when it cannot (no such
    /// cluster, or the power is off: a dead device's button does nothing).
    func act(_ action: PhysicalAction) async -> String? {
        guard server.isPoweredOn else { return "the power is off" }
        do {
            try await server.node.act(action)
            return nil
        } catch {
            return error.description
        }
    }

    /// Applies the action; a note when it cannot apply here.
    func apply(_ action: FaultAction, impairment: LinkImpairment = .none) async -> String? {
        switch action {
        case .lanImpair: server.setLANImpairment(impairment)
        case .lanDown: await server.setLAN(up: false)
        case .lanUp: await server.setLAN(up: true)
        case .cloudDown, .cloudUp:
            guard let cloud else { return "no cloud relay (the profile names none)" }
            cloud.setConnected(action == .cloudUp)
        case .powerOff:
            cloud?.setPowered(false)
            await server.powerOff()
        case .powerOn:
            await server.powerOn()
            cloud?.setPowered(true)
        }
        return nil
    }
}

struct ControlSocketError: Error, CustomStringConvertible {
    var description: String
}

/// Serves the control socket for a set of running nodes.
final class NodeControlServer: Sendable {
    let path: String
    let nodes: [SimulatedNode]
    private let channel: any Channel
    private let logger: Logger
    private let jobs: AsyncStream<ControlJob>
    private let jobSink: AsyncStream<ControlJob>.Continuation
    /// Connections refused because their peer is another user.
    let refusals: ControlRefusals

    /// Largest request read.
    static let maxRequest = 4096
    /// How long a connection may take to send its request.
    static let requestTimeout: TimeAmount = .seconds(5)

    /// `<directory>/control.sock`.
    static func defaultPath(in directory: String) -> String {
        URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent("control.sock").path
    }

    private init(
        path: String, nodes: [SimulatedNode], channel: any Channel, jobs: AsyncStream<ControlJob>,
        jobSink: AsyncStream<ControlJob>.Continuation, refusals: ControlRefusals, logger: Logger
    ) {
        self.refusals = refusals
        self.path = path
        self.nodes = nodes
        self.channel = channel
        self.jobs = jobs
        self.jobSink = jobSink
        self.logger = logger
    }

    /// Binds the socket. A stale socket file (no simulator behind it) is replaced; one a
    /// running simulator answers on, or a file that is not a socket, is an error. The socket
    /// is 0600 and the directories made for it 0700, whatever the umask; connections from
    /// users `policy` does not allow are answered with a refusal, counted and logged.
    static func bind(
        path: String, nodes: [SimulatedNode], logger: Logger, policy: ControlPeerPolicy = .ownerAndRoot
    ) async throws -> NodeControlServer {
        if FileManager.default.fileExists(atPath: path) {
            let type = (try? FileManager.default.attributesOfItem(atPath: path)[.type]) as? FileAttributeType
            guard type == .typeSocket else {
                throw ControlSocketError(description: "\(path) exists and is not a socket; choose another --control path")
            }
            if let probe = try? await ControlClient.connect(path) {
                // An NIOAsyncChannel must be closed through executeThenClose.
                try? await probe.executeThenClose { _, _ in }
                throw ControlSocketError(
                    description:
                        "another simulator is already listening on \(path); give this one its own --control path (or --state-dir / --state-root)"
                )
            }
            try? FileManager.default.removeItem(atPath: path)
        }
        // Only the owner may reach the socket: an existing directory is left as it is (a
        // user's state directory), the peer check below covers it.
        try SecretFiles.createDirectory(URL(fileURLWithPath: (path as NSString).deletingLastPathComponent, isDirectory: true))
        let (jobs, jobSink) = AsyncStream.makeStream(of: ControlJob.self)
        let refusals = ControlRefusals()
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .childChannelInitializer { child in
                    ControlPeer.of(child).flatMapThrowing { peer in
                        var refusal: String?
                        if peer.map(policy.allows) != true {
                            refusal = peer.map(policy.refusal) ?? "refused: the peer's credentials are unknown"
                            let total = refusals.record()
                            logger.warning(
                                "control socket \(path): \(refusal ?? "") (pid \(peer.map { String($0.pid) } ?? "?"); \(total) refused so far)"
                            )
                        }
                        try child.pipeline.syncOperations.addHandler(ControlConnectionHandler(jobs: jobSink, refusal: refusal))
                    }
                }
                .bind(unixDomainSocketPath: path).get()
            // bind(2) gave the socket the umask's mode (0777 under umask 000).
            guard chmod(path, 0o600) == 0 else {
                let reason = String(cString: strerror(errno))
                try? await channel.close()
                throw ControlSocketError(description: "cannot make the control socket \(path) owner-only (0600): \(reason)")
            }
        } catch let error as SocketAddressError {
            throw ControlSocketError(description: "cannot use \(path) as the control socket: \(ControlClient.explain(error))")
        } catch {
            throw ControlSocketError(description: "cannot listen on the control socket \(path): \(error)")
        }
        return NodeControlServer(
            path: path, nodes: nodes, channel: channel, jobs: jobs, jobSink: jobSink, refusals: refusals, logger: logger)
    }

    /// Serves until the task is cancelled, then closes and removes the socket. Requests
    /// apply one at a time, in arrival order: two clients cannot interleave half-applied faults.
    func run() async {
        let channel = channel, jobSink = jobSink
        await withTaskCancellationHandler {
            for await job in jobs {
                job.reply(await process(job.request))
            }
        } onCancel: {
            jobSink.finish()
            channel.close(promise: nil)
        }
        try? await channel.closeFuture.get()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Applies one request in its turn among the socket's (the dashboard's buttons).
    func submit(_ request: ControlRequest) async -> ControlResponse {
        await withCheckedContinuation { continuation in
            let job = ControlJob(request: request) { continuation.resume(returning: $0) }
            if case .terminated = jobSink.yield(job) {
                continuation.resume(returning: ControlResponse(error: "the simulator is shutting down"))
            }
        }
    }

    /// Applies one request.
    func process(_ request: ControlRequest) async -> ControlResponse {
        let apply: @Sendable (SimulatedNode) async -> String?
        let what: String
        var kind = "fault"
        if let fault = FaultAction(rawValue: request.action) {
            var impairment = LinkImpairment.none
            switch (fault, request.value) {
            case (.lanImpair, let value?):
                switch LinkImpairment.parse(value) {
                case .success(let parsed): impairment = parsed
                case .failure(let error): return ControlResponse(error: "lan-impair \(value): \(error.description)")
                }
            case (.lanImpair, nil):
                return ControlResponse(error: "lan-impair needs its settings, e.g. loss=20%,delay=50ms,jitter=20ms (or none)")
            case (_, let value?):
                return ControlResponse(error: "'\(fault.rawValue)' takes no value, but '\(value)' was given")
            default: break
            }
            apply = { [impairment] in await $0.apply(fault, impairment: impairment) }
            what = fault == .lanImpair ? "lan-impair \(impairment)" : fault.rawValue
        } else if PhysicalActionName(rawValue: request.action) != nil {
            switch PhysicalActionName.parse(request.action, value: request.value) {
            case .success(let action):
                apply = { await $0.act(action) }
                what = "\(action)"
                kind = "act"
            case .failure(let error):
                return ControlResponse(error: error.description)
            }
        } else {
            return ControlResponse(
                error: "unknown action '\(request.action)'; expected a fault (\(FaultAction.names)) or an act (\(PhysicalActionName.names))"
            )
        }
        let selected: [SimulatedNode]
        switch select(request.node) {
        case .success(let nodes): selected = nodes
        case .failure(let error): return ControlResponse(error: error.description)
        }
        var results: [ControlResponse.NodeResult] = []
        for node in selected {
            let note = await apply(node)
            if note != nil, selected.count == 1 {
                return ControlResponse(error: "\(node.name) (\(node.serialNumber)): cannot \(what): \(note ?? "")")
            }
            logger.notice("\(kind) \(what) on \(node.name) (\(node.serialNumber))\(note.map { ": \($0)" } ?? "")")
            results.append(ControlResponse.NodeResult(name: node.name, serialNumber: node.serialNumber, state: node.state, note: note))
        }
        return ControlResponse(results: results)
    }

    /// NODE is `all`, a serial number, or a device name (exact first, then ignoring case);
    /// a name several devices share is ambiguous.
    func select(_ query: String) -> Result<[SimulatedNode], ControlSocketError> {
        if query == "all" { return .success(nodes) }
        let matchers: [(SimulatedNode) -> Bool] = [
            { $0.serialNumber == query },
            { $0.name == query },
            { $0.serialNumber.caseInsensitiveCompare(query) == .orderedSame },
            { $0.name.caseInsensitiveCompare(query) == .orderedSame },
        ]
        for matches in matchers {
            let found = nodes.filter(matches)
            if found.count == 1 { return .success(found) }
            if found.count > 1 {
                let serials = found.map(\.serialNumber).joined(separator: ", ")
                return .failure(
                    ControlSocketError(
                        description: "'\(query)' names \(found.count) devices (serial numbers \(serials)); give a serial number"))
            }
        }
        if let suggestion = closestMatch(to: query, in: nodes.map(\.name)) {
            return .failure(ControlSocketError(description: "no node '\(query)' in this simulator; did you mean '\(suggestion)'?"))
        }
        let known = nodes.prefix(20).map { "\($0.name) (\($0.serialNumber))" }.joined(separator: ", ")
        let more = nodes.count > 20 ? ", …" : ""
        return .failure(ControlSocketError(description: "no node '\(query)' in this simulator; it runs: \(known)\(more), or use 'all'"))
    }
}

/// A request waiting its turn, with where its answer goes.
struct ControlJob: Sendable {
    var request: ControlRequest
    var reply: @Sendable (ControlResponse) -> Void
}

/// One control connection on the event loop: reads one line (bounded in size and time),
/// hands the request to the server's queue and writes the answer back, then closes.
/// Plain NIO rather than NIOAsyncChannel, so a connection that arrives while the
/// simulator shuts down is simply closed.
final class ControlConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let jobs: AsyncStream<ControlJob>.Continuation
    private var line: [UInt8] = []
    private var answered = false
    /// Closes a connection that does not send its request in time; the answer may take longer.
    private var requestDeadline: Scheduled<Void>?

    /// Why this connection's peer may not send commands, if it may not.
    private let refusal: String?

    init(jobs: AsyncStream<ControlJob>.Continuation, refusal: String? = nil) {
        self.jobs = jobs
        self.refusal = refusal
    }

    func channelActive(context: ChannelHandlerContext) {
        let channel = context.channel
        // A refused peer still gets its request read and the refusal as the answer: closing at
        // once could fail its write ("I/O on closed channel") before it reads why.
        requestDeadline = context.eventLoop.scheduleTask(in: NodeControlServer.requestTimeout) { channel.close(promise: nil) }
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        let buffer = unwrapInboundIn(data)
        for byte in buffer.readableBytesView {
            if byte == UInt8(ascii: "\n") {
                answered = true
                requestDeadline?.cancel()
                if let refusal { return Self.answer(ControlResponse(error: refusal), on: context.channel) }
                return submit(line, on: context.channel)
            }
            line.append(byte)
            if line.count > NodeControlServer.maxRequest {
                answered = true
                return Self.answer(ControlResponse(error: "request longer than \(NodeControlServer.maxRequest) bytes"), on: context.channel)
            }
        }
    }

    private func submit(_ line: [UInt8], on channel: any Channel) {
        guard let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line)) else {
            return Self.answer(
                ControlResponse(error: "malformed request: expected one JSON line {\"node\": …, \"action\": …}"), on: channel)
        }
        let job = ControlJob(request: request) { Self.answer($0, on: channel) }
        if case .terminated = jobs.yield(job) {
            Self.answer(ControlResponse(error: "the simulator is shutting down"), on: channel)
        }
    }

    private static func answer(_ response: ControlResponse, on channel: any Channel) {
        guard var bytes = try? JSONEncoder().encode(response) else { return channel.close(promise: nil) }
        bytes.append(UInt8(ascii: "\n"))
        channel.writeAndFlush(ByteBuffer(bytes: bytes)).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// The client side, for `matter-sim fault` (and for telling a live socket from a stale one).
enum ControlClient {
    static func connect(_ path: String) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(2))
            .connect(unixDomainSocketPath: path) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
    }

    /// Sends one request and reads the answer.
    static func send(_ request: ControlRequest, to path: String, timeout: Duration = .seconds(30)) async throws -> ControlResponse {
        let connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            connection = try await connect(path)
        } catch let error as SocketAddressError {
            throw ControlSocketError(description: "cannot use \(path) as a control socket: \(explain(error))")
        } catch {
            throw ControlSocketError(
                description:
                    "no running simulator at \(path) (\(error)); start `matter-sim run` or `matter-sim home`, or give its socket with --control"
            )
        }
        return try await connection.executeThenClose { inbound, outbound in
            var bytes = try JSONEncoder().encode(request)
            bytes.append(UInt8(ascii: "\n"))
            try await outbound.write(ByteBuffer(bytes: bytes))
            let line = try await readLine(inbound, limit: 1 << 20, timeout: timeout)
            do {
                return try JSONDecoder().decode(ControlResponse.self, from: Data(line))
            } catch {
                throw ControlSocketError(description: "\(path) answered something that is not a simulator's response")
            }
        }
    }

    /// Reads up to the first newline (not included), within `limit` bytes and `timeout`.
    static func readLine(_ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, limit: Int, timeout: Duration) async throws -> [UInt8] {
        try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var line: [UInt8] = []
                for try await chunk in inbound {
                    for byte in chunk.readableBytesView {
                        if byte == UInt8(ascii: "\n") { return line }
                        line.append(byte)
                        guard line.count <= limit else { throw ControlSocketError(description: "request longer than \(limit) bytes") }
                    }
                }
                return line.isEmpty ? nil : line
            }
            group.addTask {
                // real time: external: the control socket's client process.
                try await Task.sleep(for: timeout)
                throw ControlSocketError(description: "no answer within \(timeout.secondsText)")
            }
            defer { group.cancelAll() }
            guard let line = try await group.next() ?? nil else {
                throw ControlSocketError(description: "the connection closed without an answer")
            }
            return line
        }
    }

    static func explain(_ error: SocketAddressError) -> String {
        switch error {
        case .unixDomainSocketPathTooLong: "the path is too long for a Unix domain socket (at most 107 bytes); choose a shorter one"
        default: "\(error)"
        }
    }
}
