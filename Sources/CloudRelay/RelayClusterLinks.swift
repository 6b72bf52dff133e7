import Foundation
import Hummingbird
import HummingbirdWSClient
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// How a frame for a peer held by another relay instance gets there (issue #42).
public enum RelayCrossInstance: String, Sendable, CaseIterable {
    /// PostgreSQL `NOTIFY` on the cluster channel: the database already reaches every instance.
    case notify
    /// A persistent WebSocket from this instance straight to the one holding the peer, at the
    /// address that instance recorded in `relay_instance` (`RelayClusterLinks`).
    case forward
}

/// The forwarding way between instances: each instance listens for the others' links on a port
/// of its own (never behind the balancer, and outside the per-home limits, which are for homes),
/// records `host:port` and a random secret in its `relay_instance` row, and sends each envelope
/// for another instance down one WebSocket to it. The secret proves the sender can read the
/// database, as sending a `NOTIFY` does. While a link is being opened, or is down, envelopes go
/// by `NOTIFY` as before; presence and controller-gone broadcasts always do (they must follow
/// the connection records they describe, committed in the same transaction).
final class RelayClusterLinks: Sendable {
    static let path = "/v1/cluster"
    /// A link that failed is not tried again sooner than this (NOTIFY carries meanwhile).
    static let retryAfter = Duration.seconds(1)
    /// Envelopes queued for one link before newer ones go by NOTIFY.
    static let queueCapacity = 8192

    /// Other instances present it as a bearer token to open a link to this one.
    let secret = RelayCredentials.hex((0..<24).map { _ in UInt8.random(in: 0...255) })
    /// Where links listen, and the host the other instances are told to reach.
    let host: String
    let port: Int
    let advertisedHost: String
    let metrics: RelayMetrics
    let logger: Logger
    /// The bound port, once the listener runs.
    private let bound = NIOLockedValueBox<Int?>(nil)

    private enum Link {
        case opening
        case open(AsyncStream<String>.Continuation)
        // real time: external: when the link failed; another instance's listener, not a simulated one.
        case down(since: ContinuousClock.Instant)
    }
    // The lock guards the links by target instance.
    private let links = NIOLockedValueBox<[String: Link]>([:])
    /// Targets to open a link to, taken by `run`.
    private let opens: AsyncStream<String>
    private let openSink: AsyncStream<String>.Continuation

    init(host: String, port: Int, advertisedHost: String?, metrics: RelayMetrics, logger: Logger) {
        self.host = host
        self.port = port
        self.advertisedHost = advertisedHost ?? host
        self.metrics = metrics
        self.logger = logger
        (opens, openSink) = AsyncStream.makeStream(of: String.self)
    }

    /// `host:port` for the other instances once the listener is bound, else nil.
    var address: String? {
        bound.withLockedValue { port in
            port.map { advertisedHost.contains(":") && !advertisedHost.hasPrefix("[") ? "[\(advertisedHost)]:\($0)" : "\(advertisedHost):\($0)" }
        }
    }

    func listening(on port: Int) { bound.withLockedValue { $0 = port } }

    func accepts(_ authorization: String?) -> Bool {
        guard let token = RelayCredentials.bearer(authorization) else { return false }
        return RelayCredentials.constantTimeEquals(token, secret)
    }

    /// Queues `payload` on the open link to `target`; false when there is none yet (one is then
    /// opened) or its queue is full: the caller sends it by NOTIFY.
    func send(_ payload: String, to target: String) -> Bool {
        // real time: external: the retry pause of a link to another process.
        let now = ContinuousClock.now
        let (sink, open) = links.withLockedValue { l -> (AsyncStream<String>.Continuation?, Bool) in
            switch l[target] {
            case .open(let sink): return (sink, false)
            case .opening: return (nil, false)
            case .down(let since) where now - since < Self.retryAfter: return (nil, false)
            case .down, nil:
                l[target] = .opening
                return (nil, true)
            }
        }
        if open { openSink.yield(target) }
        guard let sink, case .enqueued = sink.yield(payload) else { return false }
        metrics.clusterForwarded(.sent)
        return true
    }

    /// The instance stopped answering: its link goes.
    func drop(_ target: String) {
        let link = links.withLockedValue { $0.removeValue(forKey: target) }
        if case .open(let sink) = link { sink.finish() }
    }

    /// Opens the links `send` asks for, each run until it fails or the task is cancelled.
    func run(cluster: RelayCluster) async {
        await withDiscardingTaskGroup { group in
            for await target in opens {
                group.addTask { await self.link(to: target, cluster: cluster) }
            }
        }
    }

    private func link(to target: String, cluster: RelayCluster) async {
        let rows = try? await cluster.store.query(
            "SELECT address, linkSecret FROM relay_instance WHERE id = \(target) AND address IS NOT NULL AND linkSecret IS NOT NULL")
        guard let row = rows?.first, let (address, secret) = try? row.decode((String, String).self) else {
            return failed(target, "it recorded no link address")
        }
        let (queue, sink) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingOldest(Self.queueCapacity))
        let links = links
        let client = WebSocketClient(
            url: "ws://\(address)\(Self.path)",
            configuration: .init(
                maxFrameSize: ClusterEnvelope.payloadLimit + 1024, additionalHeaders: [.authorization: "Bearer \(secret)"],
                closeTimeout: .seconds(1), autoPing: .enabled(timePeriod: .seconds(30))),
            logger: logger
        ) { inbound, outbound, _ in
            links.withLockedValue { l in if case .opening = l[target] { l[target] = .open(sink) } }
            // Whichever ends first (the other end closed, the link dropped, a write failed) ends both.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for await payload in queue { try await outbound.write(.text(payload)) } }
                group.addTask { for try await _ in inbound.messages(maxSize: 1024) {} }
                try await group.next()
                group.cancelAll()
            }
        }
        do {
            try await client.run()
            failed(target, "it closed the link")
        } catch {
            failed(target, "\(error)")
        }
        sink.finish()
    }

    private func failed(_ target: String, _ why: String) {
        if Task.isCancelled { return }
        logger.debug("relay link to instance \(target) ended (NOTIFY carries meanwhile): \(why)")
        // real time: external: when the link to another process failed.
        links.withLockedValue { $0[target] = .down(since: .now) }
    }

    /// The listener for the other instances' links: envelopes addressed to this instance go to `hub`.
    func application(instanceID: String, hub: RelayHub) -> some ApplicationProtocol {
        let router = Router(context: BasicWebSocketRequestContext.self)
        let metrics = metrics
        router.ws(RouterPath(Self.path)) { request, _ in
            self.accepts(request.headers[.authorization]) ? .upgrade([:]) : .dontUpgrade
        } onUpgrade: { inbound, _, _ in
            for try await message in inbound.messages(maxSize: ClusterEnvelope.payloadLimit + 1024) {
                guard case .text(let text) = message, let envelope = ClusterEnvelope(payload: text) else {
                    metrics.rejected(.malformed)
                    continue
                }
                metrics.clusterForwarded(.received)
                if envelope.isFor(instanceID) { hub.deliver(envelope) }
            }
        }
        return Application(
            router: Router(),
            server: .http1WebSocketUpgrade(
                webSocketRouter: router, configuration: .init(ws: .init(maxFrameSize: ClusterEnvelope.payloadLimit + 1024))),
            configuration: .init(address: .hostname(host, port: port), serverName: "matter-relay-link"),
            onServerRunning: { channel in self.listening(on: channel.localAddress?.port ?? 0) },
            logger: logger)
    }
}
