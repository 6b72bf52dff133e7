/// The frames one connection may send: a token bucket refilled at `framesPerSecond` up to
/// `burst`. Frames past it are dropped, not routed, so one flooding connection cannot take
/// the relay's time from other homes (issue #17 item 5). A connection that sends more than
/// `floodFactor` times its rate in each of `floodSeconds` seconds in a row is a flood rather
/// than a busy client, and is closed; a short spike only loses its excess.
///
/// Owned by one connection's reading task; time comes from the relay's `MatterClock`.
struct RelayFrameLimiter {
    enum Verdict: Equatable {
        /// Route the frame.
        case pass
        /// Drop it: over the rate.
        case drop
        /// Drop it and close the connection (1008): a sustained flood.
        case close
    }

    static let floodFactor = 10
    static let floodSeconds = 5

    let framesPerSecond: Int
    let burst: Int
    private var tokens: Double
    private var refilledAt: Duration
    /// The second being counted for the flood check, and the frames in it so far.
    private var secondStart: Duration
    private var framesThisSecond = 0
    /// Whole seconds in a row, before the current one, above `floodFactor` × the rate.
    private var floodedSeconds = 0

    /// Starts with a full bucket: a new connection may send its first `burst` frames at once.
    init(framesPerSecond: Int, burst: Int, now: Duration) {
        self.framesPerSecond = max(1, framesPerSecond)
        self.burst = max(1, burst)
        tokens = Double(self.burst)
        refilledAt = now
        secondStart = now
    }

    mutating func admit(at now: Duration) -> Verdict {
        if now > refilledAt {
            tokens = min(Double(burst), tokens + (now - refilledAt) / .seconds(1) * Double(framesPerSecond))
            refilledAt = now
        }
        if now - secondStart >= .seconds(1) {
            // A second with no frame at all between the last counted one and now ends a flood.
            let quietSecond = now - secondStart >= .seconds(2)
            floodedSeconds = !quietSecond && framesThisSecond > floodLimit ? floodedSeconds + 1 : 0
            secondStart = quietSecond ? now : secondStart + .seconds(1)
            framesThisSecond = 0
        }
        framesThisSecond += 1
        if framesThisSecond > floodLimit && floodedSeconds + 1 >= Self.floodSeconds { return .close }
        guard tokens >= 1 else { return .drop }
        tokens -= 1
        return .pass
    }

    private var floodLimit: Int { Self.floodFactor * framesPerSecond }
}
