// Message Reliability Protocol timing (Matter Core spec 4.12.2, 4.12.8).

/// MRP constants and the retransmission backoff formula.
public enum ReliableMessageProtocol {
    /// MRP_MAX_TRANSMISSIONS: the first transmission plus four retransmissions.
    public static let maxTransmissions = 5
    public static let backoffBase = 1.6
    public static let backoffJitter = 0.25
    public static let backoffMargin = 1.1
    public static let backoffThreshold = 1
    /// MRP_STANDALONE_ACK_TIMEOUT.
    public static let standaloneAckTimeout: Duration = .milliseconds(200)

    /// mrpBackoffTime = i · MRP_BACKOFF_MARGIN · MRP_BACKOFF_BASE^max(0, n − MRP_BACKOFF_THRESHOLD)
    ///                  · (1 + jitter · MRP_BACKOFF_JITTER)   (spec 4.12.2.1)
    /// - Parameters:
    ///   - baseInterval: i, the peer's active or idle retry interval.
    ///   - retransmissions: n, how many retransmissions of the message were already sent (0 after the first transmission).
    ///   - jitter: a random value in [0, 1).
    public static func backoff(baseInterval: Duration, retransmissions n: Int, jitter: Double) -> Duration {
        let exponent = max(0, n - backoffThreshold)
        let ms =
            Double(SessionParameters.milliseconds(baseInterval)) * backoffMargin
            * pow(backoffBase, Double(exponent)) * (1 + min(max(jitter, 0), 1) * backoffJitter)
        return .microseconds(Int64(min(ms, 1e12) * 1000))
    }

    /// The retry interval to use toward a peer: its active interval if it was heard
    /// from within its active threshold, else its idle interval (spec 4.12.2.1).
    public static func baseInterval(peer: SessionParameters, lastPeerActivity: Duration?, now: Duration) -> Duration {
        if let last = lastPeerActivity, now - last < peer.activeThreshold {
            return peer.activeInterval
        }
        return peer.idleInterval
    }

    private static func pow(_ base: Double, _ exponent: Double) -> Double {
        var r = 1.0
        var i = 0.0
        while i < exponent {
            r *= base
            i += 1
        }
        return r
    }
}
