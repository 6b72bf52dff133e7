import MatterProtocol
import NIOConcurrencyHelpers

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

/// Counters, gauges and a latency histogram, rendered in the Prometheus text
/// exposition format (version 0.0.4) for `/metrics`.
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

        /// The totals a relay prints when it stops.
        public var summary: String {
            "\(connectionsAccepted.values.reduce(0, +)) connections served, \(routed.values.reduce(0, +)) frames routed, "
                + "\(rejected.values.reduce(0, +)) rejected"
        }
    }

    // The lock guards the whole snapshot; every update is a few integer additions.
    private let state: NIOLockedValueBox<Snapshot>
    private let changed = EventBroadcaster<Void>()

    public init() {
        state = NIOLockedValueBox(
            Snapshot(
                connections: [:], connectionsAccepted: [:], routed: [:], rejected: [:],
                latencyCounts: Array(repeating: 0, count: Self.latencyBuckets.count), latencyCount: 0, latencySum: 0))
    }

    public var snapshot: Snapshot { state.withLockedValue { $0 } }

    /// Yields after frames were routed or rejected and connections opened or closed (coalesced
    /// while unread), so a watcher
    /// waits for a count instead of polling.
    package func changes() -> AsyncStream<Void> { changed.subscribe(bufferLimit: 1) }

    func connectionOpened(_ role: RelayRole) {
        state.withLockedValue {
            $0.connections[role, default: 0] += 1
            $0.connectionsAccepted[role, default: 0] += 1
        }
        changed.publish(())
    }

    func connectionClosed(_ role: RelayRole) {
        state.withLockedValue { $0.connections[role, default: 0] -= 1 }
        changed.publish(())
    }

    package func routed(_ direction: RelayDirection) {
        state.withLockedValue { $0.routed[direction, default: 0] += 1 }
        changed.publish(())
    }

    package func rejected(_ reason: RelayRejection, count: Int = 1) {
        guard count > 0 else { return }
        state.withLockedValue { $0.rejected[reason, default: 0] += count }
        changed.publish(())
    }

    func readHeld(_ limit: RelaySharedLimit) {
        state.withLockedValue { $0.readsHeld[limit, default: 0] += 1 }
        changed.publish(())
    }

    func closedForStayingOverLimit() {
        state.withLockedValue { $0.closedOverLimit += 1 }
        changed.publish(())
    }

    func requestHeadTimedOut() {
        state.withLockedValue { $0.requestHeadTimeouts += 1 }
        changed.publish(())
    }

    /// One controller request answered by its device: from the request's arrival
    /// at the relay to the answer's.
    func observeRoundTrip(_ duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        state.withLockedValue { s in
            s.latencyCount += 1
            s.latencySum += seconds
            if let i = Self.latencyBuckets.firstIndex(where: { seconds <= $0 }) {
                s.latencyCounts[i] += 1
            }
        }
    }

    /// The Prometheus text exposition.
    public func render() -> String {
        let s = snapshot
        var out = ""
        out += "# HELP relay_connections Open WebSocket connections.\n# TYPE relay_connections gauge\n"
        for role in RelayRole.allCases {
            out += "relay_connections{role=\"\(role.rawValue)\"} \(s.connections[role] ?? 0)\n"
        }
        out += "# HELP relay_connections_accepted_total WebSocket connections accepted.\n# TYPE relay_connections_accepted_total counter\n"
        for role in RelayRole.allCases {
            out += "relay_connections_accepted_total{role=\"\(role.rawValue)\"} \(s.connectionsAccepted[role] ?? 0)\n"
        }
        out += "# HELP relay_frames_routed_total Frames delivered to a connection.\n# TYPE relay_frames_routed_total counter\n"
        for direction in RelayDirection.allCases {
            out += "relay_frames_routed_total{direction=\"\(direction.rawValue)\"} \(s.routed[direction] ?? 0)\n"
        }
        out += "# HELP relay_rejected_total Frames dropped and requests refused.\n# TYPE relay_rejected_total counter\n"
        for reason in RelayRejection.allCases {
            out += "relay_rejected_total{reason=\"\(reason.rawValue)\"} \(s.rejected[reason] ?? 0)\n"
        }
        out += "# HELP relay_request_head_timeouts_total Connections closed for sending no whole request head in time.\n"
        out += "# TYPE relay_request_head_timeouts_total counter\nrelay_request_head_timeouts_total \(s.requestHeadTimeouts)\n"
        out += "# HELP relay_reads_held_total Reads held back while the connection's home or address was over its limits.\n"
        out += "# TYPE relay_reads_held_total counter\n"
        for limit in RelaySharedLimit.allCases {
            out += "relay_reads_held_total{limit=\"\(limit.rawValue)\"} \(s.readsHeld[limit] ?? 0)\n"
        }
        out += "# HELP relay_connections_closed_over_limit_total Connections closed for staying over their home's or address's limits.\n"
        out += "# TYPE relay_connections_closed_over_limit_total counter\nrelay_connections_closed_over_limit_total \(s.closedOverLimit)\n"
        out += "# HELP relay_exchange_round_trip_seconds From a controller request reaching the relay to the device's answer reaching it.\n"
        out += "# TYPE relay_exchange_round_trip_seconds histogram\n"
        var cumulative = 0
        for (i, bound) in Self.latencyBuckets.enumerated() {
            cumulative += s.latencyCounts[i]
            out += "relay_exchange_round_trip_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        out += "relay_exchange_round_trip_seconds_bucket{le=\"+Inf\"} \(s.latencyCount)\n"
        out += "relay_exchange_round_trip_seconds_sum \(s.latencySum)\n"
        out += "relay_exchange_round_trip_seconds_count \(s.latencyCount)\n"
        return out
    }
}
