/// How long the node takes to serve a request: from the message layer taking the datagram to
/// its response leaving, per interaction kind (issue #43: the node's own figure, apart from
/// any controller's time). Quarter-octave buckets: a percentile is at most 25 % above the
/// truth, from 1 ns up; the counters grow only as far as the slowest time seen (about 80
/// for a millisecond), as 10,000 nodes each keep a few.
public struct ServiceTimeHistogram: Sendable, Hashable {
    public private(set) var count: UInt64 = 0
    public private(set) var total: Duration = .zero
    public private(set) var maximum: Duration = .zero
    private var buckets: [UInt64] = []

    public init() {}

    public mutating func record(_ time: Duration) {
        let clamped = max(time, .zero)
        let bucket = Self.bucket(of: clamped)
        if bucket >= buckets.count { buckets += repeatElement(0, count: bucket + 1 - buckets.count) }
        buckets[bucket] += 1
        count += 1
        total += clamped
        maximum = max(maximum, clamped)
    }

    public mutating func merge(_ other: ServiceTimeHistogram) {
        if other.buckets.count > buckets.count { buckets += repeatElement(0, count: other.buckets.count - buckets.count) }
        for i in other.buckets.indices { buckets[i] += other.buckets[i] }
        count += other.count
        total += other.total
        maximum = max(maximum, other.maximum)
    }

    /// What was recorded after `earlier`, an earlier copy of this histogram (a benchmark's
    /// phase between two marks): counts and total are the difference; the maximum stays this
    /// one's, an upper bound, so a percentile is still at most 25 % high.
    public func since(_ earlier: ServiceTimeHistogram) -> ServiceTimeHistogram {
        var delta = self
        for i in earlier.buckets.indices where i < delta.buckets.count {
            delta.buckets[i] -= min(delta.buckets[i], earlier.buckets[i])
        }
        delta.count = delta.buckets.reduce(0, +)
        delta.total = total > earlier.total ? total - earlier.total : .zero
        return delta
    }

    /// The upper edge of the bucket holding the `fraction` quantile (0.5 for p50), at most
    /// the largest time seen; nil before the first sample.
    public func percentile(_ fraction: Double) -> Duration? {
        guard count > 0 else { return nil }
        let rank = max(1, UInt64((Double(count) * min(max(fraction, 0), 1)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, n) in buckets.enumerated() {
            seen += n
            if seen >= rank { return min(Self.upperEdge(of: i), maximum) }
        }
        return maximum
    }

    /// Bucket of a time in nanoseconds: 4 sub-buckets per power of two (the two bits after
    /// the leading one), so each spans at most a quarter of its octave.
    static func bucket(of d: Duration) -> Int {
        let ns = nanoseconds(d)
        guard ns >= 4 else { return Int(ns) }
        let octave = UInt64.bitWidth - 1 - ns.leadingZeroBitCount
        return octave * 4 + Int((ns >> UInt64(octave - 2)) & 3)
    }

    static func upperEdge(of bucket: Int) -> Duration {
        guard bucket >= 8 else { return .nanoseconds(bucket + 1) }
        let (octave, sub) = (bucket / 4, UInt64(bucket % 4))
        let edge = (4 + sub + 1).multipliedReportingOverflow(by: 1 << UInt64(octave - 2))
        return edge.overflow ? .seconds(Int64.max / 1_000_000_000) : .nanoseconds(Int64(clamping: edge.partialValue))
    }

    public static func nanoseconds(_ d: Duration) -> UInt64 {
        let (seconds, attoseconds) = d.components
        guard seconds >= 0 else { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole &+ UInt64(attoseconds / 1_000_000_000)
    }
}

/// The kind of request an exchange serves, named by its message type: `invoke`, `read`,
/// `subscribe`, `write`, `timed`, `status` (a chunked report's next step), or a session
/// establishment step (`sigma1`, `pbkdfParamRequest`, ...).
public enum ServedRequest {
    public static func kind(protocolID: ProtocolID, opcode: UInt8) -> String {
        if protocolID == .interactionModel, let op = InteractionOpcode(rawValue: opcode) {
            switch op {
            case .invokeRequest: return "invoke"
            case .readRequest: return "read"
            case .subscribeRequest: return "subscribe"
            case .writeRequest: return "write"
            case .timedRequest: return "timed"
            case .statusResponse: return "status"
            default: return "im-\(op)"
            }
        }
        if protocolID == .secureChannel, let op = SecureChannelOpcode(rawValue: opcode) { return "\(op)" }
        return "protocol-\(protocolID)-\(opcode)"
    }
}
