import CoreMetrics
import MatterProtocol
import NIOConcurrencyHelpers
import OperatorMetrics

/// Who is on the other end of a relay connection.
public enum RelayRole: String, Sendable, Hashable, CaseIterable {
    case device
    case controller
}

/// Why the relay dropped a frame or refused a request, for the metrics.
public enum RelayRejection: String, Sendable, Hashable, CaseIterable {
    /// Bytes that are not a relay frame, a text message, or a frame a client may not send.
    case malformed
    /// A WebSocket protocol error below the frames (bad framing, bad close). A frame above
    /// the size limit is refused by the WebSocket layer itself (close 1009) before it is
    /// read, and does not reach these counters.
    case protocolError = "protocol"
    case unknownDevice = "unknown_device"
    case deviceOffline = "device_offline"
    case sessionGone = "session_gone"
    /// The receiver's queue was full.
    case overflow
    /// The sender went past its connection's frame rate (`maxFramesPerSecond`, `frameBurst`).
    case rateLimited = "rate_limited"
    /// The sender's home went past the frames all its connections together may send
    /// (`maxFramesPerSecondPerHome`, `homeFrameBurst`).
    case homeRateLimited = "home_rate_limited"
    /// The sender's address went past the frames all its connections together may send
    /// (`maxFramesPerSecondPerAddress`, `addressFrameBurst`).
    case addressRateLimited = "address_rate_limited"
    /// HTTP 401: no or a wrong credential.
    case unauthorized
    /// HTTP 403: a token of another home.
    case forbidden
}

/// A limit shared by several connections, whose reads the relay holds back while it is exceeded.
public enum RelaySharedLimit: String, Sendable, Hashable, CaseIterable {
    case home
    case address
}

/// Which way a routed frame went.
public enum RelayDirection: String, Sendable, Hashable, CaseIterable {
    case toDevice = "to_device"
    case toController = "to_controller"
}

/// What became of a controller's request (a message opening an exchange) at the relay.
public enum RelayRequestOutcome: String, Sendable, Hashable, CaseIterable {
    /// The device's answer came back through the relay.
    case answered
    case deviceOffline = "device_offline"
    case unknownDevice = "unknown_device"
    /// A queue on the way was full (or another instance could not be told).
    case overloaded
}

/// Which way an envelope between relay instances went (`RelayCluster`).
public enum RelayClusterDirection: String, Sendable, Hashable, CaseIterable {
    case sent
    case received
}

/// The relay's counters, gauges and latency histogram. Each is a swift-metrics instrument made
/// by swift-prometheus's factory on this relay's own registry, which renders `/metrics`
/// (Prometheus text format 0.0.4); a plain snapshot of the same figures serves code and tests.
public final class RelayMetrics: Sendable {
    /// Upper bounds, in seconds, of the exchange round-trip histogram's buckets.
    public static let latencyBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    public struct Snapshot: Sendable, Hashable {
        public var connections: [RelayRole: Int]
        public var connectionsAccepted: [RelayRole: Int]
        public var routed: [RelayDirection: Int]
        public var rejected: [RelayRejection: Int]
        public var latencyCounts: [Int]
        public var latencyCount: Int
        public var latencySum: Double
        /// Connections closed because no whole request head came within `requestHeadTimeout`.
        public var requestHeadTimeouts = 0
        /// Reads of a connection held back because its home or address was over a limit.
        public var readsHeld: [RelaySharedLimit: Int] = [:]
        /// Connections closed for staying over their home's or address's limit.
        public var closedOverLimit = 0
        /// Well-formed frames read from connections, by who sent them.
        public var received: [RelayRole: Int] = [:]
        /// Frames written to connections, and the socket writes that carried them (a write takes
        /// every frame queued for its connection: under load, many).
        public var framesWritten = 0
        public var socketWrites = 0
        /// Controllers' requests by what became of them.
        public var requests: [RelayRequestOutcome: Int] = [:]
        /// Envelopes exchanged with other instances.
        public var clusterEnvelopes: [RelayClusterDirection: Int] = [:]
        /// Frames dropped by any rate limit, by the sender's home ("other" past `dropSeriesLimit` homes).
        public var homeDrops: [String: Int] = [:]
        /// Of the envelopes, the ones that went over an instance-to-instance link, not NOTIFY.
        public var clusterForwarded: [RelayClusterDirection: Int] = [:]

        /// The totals a relay prints when it stops.
        public var summary: String {
            "\(connectionsAccepted.values.reduce(0, +)) connections served, \(routed.values.reduce(0, +)) frames routed, "
                + "\(rejected.values.reduce(0, +)) rejected"
        }
    }

    /// The instruments, made once per label value so every series shows from the start.
    private struct Instruments: Sendable {
        let connections: [RelayRole: CoreMetrics.Meter]
        let accepted: [RelayRole: CoreMetrics.Counter]
        let received: [RelayRole: CoreMetrics.Counter]
        let framesWritten: CoreMetrics.Counter
        let socketWrites: CoreMetrics.Counter
        let routed: [RelayDirection: CoreMetrics.Counter]
        let rejected: [RelayRejection: CoreMetrics.Counter]
        let requests: [RelayRequestOutcome: CoreMetrics.Counter]
        let readsHeld: [RelaySharedLimit: CoreMetrics.Counter]
        let cluster: [RelayClusterDirection: CoreMetrics.Counter]
        let forwarded: [RelayClusterDirection: CoreMetrics.Counter]
        let closedOverLimit: CoreMetrics.Counter
        let headTimeouts: CoreMetrics.Counter
        let roundTrip: CoreMetrics.Timer
        let poolInUse: CoreMetrics.Meter
        let poolSize: CoreMetrics.Meter

        init(_ r: MetricsRegistry) {
            connections = r.each("relay_connections", "role", r.meter)
            accepted = r.each("relay_connections_accepted_total", "role", r.counter)
            received = r.each("relay_frames_received_total", "role", r.counter)
            framesWritten = r.counter("relay_frames_written_total")
            socketWrites = r.counter("relay_socket_writes_total")
            routed = r.each("relay_frames_routed_total", "direction", r.counter)
            rejected = r.each("relay_rejected_total", "reason", r.counter)
            requests = r.each("relay_requests_total", "outcome", r.counter)
            readsHeld = r.each("relay_reads_held_total", "limit", r.counter)
            cluster = r.each("relay_cluster_envelopes_total", "direction", r.counter)
            forwarded = r.each("relay_cluster_forwarded_total", "direction", r.counter)
            closedOverLimit = r.counter("relay_connections_closed_over_limit_total")
            headTimeouts = r.counter("relay_request_head_timeouts_total")
            roundTrip = r.timer("relay_exchange_round_trip_seconds")
            poolInUse = r.meter("relay_database_connections", [("state", "in_use")])
            poolSize = r.meter("relay_database_connections", [("state", "pool_size")])
        }
    }

    // The lock guards the whole snapshot; every update is a few integer additions.
    private let state: NIOLockedValueBox<Snapshot>
    private let changed = EventBroadcaster<Void>()
    /// Its registry, on the exporter the hub and `matter-sim home` use too.
    public let registry = MetricsRegistry(durationBuckets: ["relay_exchange_round_trip_seconds": RelayMetrics.latencyBuckets])
    private let instruments: Instruments
    /// Frames dropped by a rate limit, per home (`relay_rate_limit_drops_total{home,limit}`),
    /// made as homes are first dropped; past `dropSeriesLimit` homes, the rest count as "other".
    private let homeDrops = NIOLockedValueBox<[String: [RelayRateLimit: CoreMetrics.Counter]]>([:])
    static let dropSeriesLimit = 1000

    public init() {
        state = NIOLockedValueBox(
            Snapshot(
                connections: [:], connectionsAccepted: [:], routed: [:], rejected: [:],
                latencyCounts: Array(repeating: 0, count: Self.latencyBuckets.count), latencyCount: 0, latencySum: 0))
        instruments = Instruments(registry)
    }

    public var snapshot: Snapshot { state.withLockedValue { $0 } }

    /// Yields after frames were routed or rejected and connections opened or closed (coalesced
    /// while unread), so a watcher
    /// waits for a count instead of polling.
    package func changes() -> AsyncStream<Void> { changed.subscribe(bufferLimit: 1) }

    /// Reads the database pool's use at each scrape.
    func watchPool(_ source: @escaping @Sendable () -> (inUse: Int, size: Int)) {
        let (inUse, size) = (instruments.poolInUse, instruments.poolSize)
        registry.beforeScrape {
            let use = source()
            inUse.set(use.inUse)
            size.set(use.size)
        }
    }

    func connectionOpened(_ role: RelayRole) {
        state.withLockedValue {
            $0.connections[role, default: 0] += 1
            $0.connectionsAccepted[role, default: 0] += 1
        }
        instruments.connections[role]?.increment()
        instruments.accepted[role]?.increment()
        changed.publish(())
    }

    func connectionClosed(_ role: RelayRole) {
        state.withLockedValue { $0.connections[role, default: 0] -= 1 }
        instruments.connections[role]?.decrement()
        changed.publish(())
    }

    /// A well-formed frame read from a connection of `role`.
    func received(_ role: RelayRole) {
        state.withLockedValue { $0.received[role, default: 0] += 1 }
        instruments.received[role]?.increment()
    }

    /// One socket write of `frames` frames to a connection.
    func wrote(frames: Int) {
        state.withLockedValue {
            $0.framesWritten += frames
            $0.socketWrites += 1
        }
        instruments.framesWritten.increment(by: frames)
        instruments.socketWrites.increment()
    }

    package func routed(_ direction: RelayDirection) {
        state.withLockedValue { $0.routed[direction, default: 0] += 1 }
        instruments.routed[direction]?.increment()
        changed.publish(())
    }

    package func rejected(_ reason: RelayRejection, count: Int = 1) {
        guard count > 0 else { return }
        state.withLockedValue { $0.rejected[reason, default: 0] += count }
        instruments.rejected[reason]?.increment(by: count)
        changed.publish(())
    }

    package func request(_ outcome: RelayRequestOutcome) {
        state.withLockedValue { $0.requests[outcome, default: 0] += 1 }
        instruments.requests[outcome]?.increment()
    }

    func clusterEnvelope(_ direction: RelayClusterDirection) {
        state.withLockedValue { $0.clusterEnvelopes[direction, default: 0] += 1 }
        instruments.cluster[direction]?.increment()
    }

    func clusterForwarded(_ direction: RelayClusterDirection) {
        state.withLockedValue { $0.clusterForwarded[direction, default: 0] += 1 }
        instruments.forwarded[direction]?.increment()
    }

    func readHeld(_ limit: RelaySharedLimit) {
        state.withLockedValue { $0.readsHeld[limit, default: 0] += 1 }
        instruments.readsHeld[limit]?.increment()
        changed.publish(())
    }

    func closedForStayingOverLimit() {
        state.withLockedValue { $0.closedOverLimit += 1 }
        instruments.closedOverLimit.increment()
        changed.publish(())
    }

    func requestHeadTimedOut() {
        state.withLockedValue { $0.requestHeadTimeouts += 1 }
        instruments.headTimeouts.increment()
        changed.publish(())
    }

    /// One controller request answered by its device: from the request's arrival
    /// at the relay to the answer's.
    package func observeRoundTrip(_ duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        state.withLockedValue { s in
            s.latencyCount += 1
            s.latencySum += seconds
            s.requests[.answered, default: 0] += 1
            if let i = Self.latencyBuckets.firstIndex(where: { seconds <= $0 }) {
                s.latencyCounts[i] += 1
            }
        }
        instruments.roundTrip.recordNanoseconds(Int64(seconds * 1e9))
        instruments.requests[.answered]?.increment()
    }

    /// Frames of `home` dropped by `limit`, counted in the home's own series.
    package func rateLimitDrops(home: String, _ limit: RelayRateLimit, count: Int) {
        guard count > 0 else { return }
        let counter = homeDrops.withLockedValue { drops -> CoreMetrics.Counter in
            let key = drops[home] != nil || drops.count < Self.dropSeriesLimit ? home : "other"
            if let made = drops[key]?[limit] { return made }
            let made = registry.counter("relay_rate_limit_drops_total", [("home", key), ("limit", limit.rawValue)])
            drops[key, default: [:]][limit] = made
            return made
        }
        counter.increment(by: count)
        state.withLockedValue { s in
            let key = s.homeDrops[home] != nil || s.homeDrops.count < Self.dropSeriesLimit ? home : "other"
            s.homeDrops[key, default: 0] += count
        }
    }

    /// The Prometheus text exposition, by swift-prometheus.
    public func render() async -> String { await registry.render() }
}

/// Which rate limit dropped a home's frames.
public enum RelayRateLimit: String, Sendable, Hashable, CaseIterable {
    /// The sending connection's own.
    case connection
    case home
    case address

    init?(_ rejection: RelayRejection) {
        switch rejection {
        case .rateLimited: self = .connection
        case .homeRateLimited: self = .home
        case .addressRateLimited: self = .address
        default: return nil
        }
    }
}
