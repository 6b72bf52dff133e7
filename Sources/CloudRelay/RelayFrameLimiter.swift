import NIOConcurrencyHelpers

/// A token bucket of frames: refilled at `framesPerSecond` up to `burst`, one token a frame.
struct FrameBucket {
    let framesPerSecond: Int
    let burst: Int
    private var tokens: Double
    private(set) var refilledAt: Duration

    /// Starts full: the first `burst` frames pass at once.
    init(framesPerSecond: Int, burst: Int, now: Duration) {
        self.framesPerSecond = max(1, framesPerSecond)
        self.burst = max(1, burst)
        tokens = Double(self.burst)
        refilledAt = now
    }

    /// Takes a token; false when there is none. `share`: the part of the rate and burst this
    /// instance may use of a budget several instances share (`RelayLimitSharing`).
    mutating func take(at now: Duration, share: Double = 1) -> Bool {
        let cap = max(1, Double(burst) * share)
        if now > refilledAt {
            tokens = tokens + (now - refilledAt) / .seconds(1) * Double(framesPerSecond) * share
            refilledAt = now
        }
        tokens = min(cap, tokens)  // also when the share shrank
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Full again by `now` (untouched long enough to refill): it can be forgotten.
    func isFull(at now: Duration) -> Bool {
        now - refilledAt >= .seconds(1) * (Double(burst) / Double(framesPerSecond))
    }
}

/// The frames one connection may send: a token bucket refilled at `framesPerSecond` up to
/// `burst`. Frames past it are dropped, not routed, so one flooding connection cannot take
/// the relay's time from other homes (issue #17 item 5). A connection that sends more than
/// `floodFactor` times its rate in each of `floodSeconds` seconds in a row is a flood rather
/// than a busy client, and is closed; a short spike only loses its excess.
///
/// Owned by one connection's `ConnectionGuardHandler`, which counts frames as they arrive
/// (issue #37 item 7: counted where they were read, a flood faster than the relay read it
/// never looked like one); time comes from the relay's `MatterClock`.
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

    private var bucket: FrameBucket
    var framesPerSecond: Int { bucket.framesPerSecond }
    var burst: Int { bucket.burst }
    /// The second being counted for the flood check, and the frames in it so far.
    private var secondStart: Duration
    private var framesThisSecond = 0
    /// Whole seconds in a row, before the current one, above `floodFactor` × the rate.
    private var floodedSeconds = 0

    /// Starts with a full bucket: a new connection may send its first `burst` frames at once.
    init(framesPerSecond: Int, burst: Int, now: Duration) {
        bucket = FrameBucket(framesPerSecond: framesPerSecond, burst: burst, now: now)
        secondStart = now
    }

    mutating func admit(at now: Duration) -> Verdict {
        if now - secondStart >= .seconds(1) {
            // A second with no frame at all between the last counted one and now ends a flood.
            let quietSecond = now - secondStart >= .seconds(2)
            floodedSeconds = !quietSecond && framesThisSecond > floodLimit ? floodedSeconds + 1 : 0
            secondStart = quietSecond ? now : secondStart + .seconds(1)
            framesThisSecond = 0
        }
        framesThisSecond += 1
        if framesThisSecond > floodLimit && floodedSeconds + 1 >= Self.floodSeconds { return .close }
        return bucket.take(at: now) ? .pass : .drop
    }

    private var floodLimit: Int { Self.floodFactor * framesPerSecond }
}

/// Frame buckets shared by every connection with the same key: a home's connections
/// together, or one client address's (issue #37 item 7: 32 connections of one home, each
/// within its own limit, took the relay from every other home). Buckets left untouched
/// long enough to be full again are forgotten.
final class SharedFrameBuckets: Sendable {
    let framesPerSecond: Int
    let burst: Int
    /// Several instances share each key's budget (`RelayLimitSharing`): frames offered per key
    /// are counted for their reports, and each key is held to this instance's share.
    let sharedAcrossInstances: Bool
    /// The buckets by key, with the demand counted and the shares.
    let table = SharedKeyTable<FrameBucket>()

    init(framesPerSecond: Int, burst: Int, sharedAcrossInstances: Bool = false) {
        self.framesPerSecond = max(1, framesPerSecond)
        self.burst = max(1, burst)
        self.sharedAcrossInstances = sharedAcrossInstances
    }

    /// Takes a token from `key`'s bucket; false when it has none.
    func take(_ key: String, at now: Duration) -> Bool {
        table.withLockedValue { t in
            if t.entries.count >= SharedKeyTable<FrameBucket>.sweepAbove { t.entries = t.entries.filter { !$0.value.isFull(at: now) } }
            var bucket = t.entries[key] ?? FrameBucket(framesPerSecond: framesPerSecond, burst: burst, now: now)
            var share = 1.0
            if sharedAcrossInstances {
                t.offered[key, default: 0] += 1
                share = t.shares[key] ?? 1
            }
            let taken = bucket.take(at: now, share: share)
            t.entries[key] = bucket
            return taken
        }
    }
}

/// What all connections with the same key (a home's, or one client address's) may send, in
/// bytes or in frames: refilled at `perSecond` up to `burst` and charged with what arrives,
/// before anything decodes it, frames shed included (issue #37 item 7: counted where they
/// were read and let through, a home's flood cost whatever reading and shedding it cost).
/// What was read is already paid for, so a balance may go below zero; while it is, the
/// key's connections are not read at all (TCP then pushes back on the senders) until the
/// debt is paid at the rate. Budgets left untouched long enough to be full again are forgotten.
final class SharedBudgets: Sendable {
    let perSecond: Int
    let burst: Int
    /// Several instances share each key's budget (`RelayLimitSharing`), as `SharedFrameBuckets`
    /// do: what arrives per key is counted for their reports, and each key refills at this
    /// instance's share of the rate, up to that share of the burst.
    let sharedAcrossInstances: Bool
    struct Budget {
        var balance: Double
        var at: Duration
    }
    /// The budgets by key, with the demand counted and the shares.
    let table = SharedKeyTable<Budget>()

    init(perSecond: Int, burst: Int, sharedAcrossInstances: Bool = false) {
        self.perSecond = max(1, perSecond)
        self.burst = max(1, burst)
        self.sharedAcrossInstances = sharedAcrossInstances
    }

    /// Charges `amount` (bytes or frames) that arrived for `key`.
    func charge(_ key: String, _ amount: Int, at now: Duration) {
        table.withLockedValue { t in
            if t.entries.count >= SharedKeyTable<Budget>.sweepAbove {
                let shares = t.shares
                t.entries = t.entries.filter { refilled($0.value, at: now, share: shares[$0.key] ?? 1) < Double(burst) * (shares[$0.key] ?? 1) }
            }
            let share = t.shares[key] ?? 1
            if sharedAcrossInstances { t.offered[key, default: 0] += amount }
            var budget = t.entries[key] ?? Budget(balance: Double(burst) * share, at: now)
            budget.balance = refilled(budget, at: now, share: share) - Double(amount)
            budget.at = max(budget.at, now)
            t.entries[key] = budget
        }
    }

    /// How long until `key`'s debt is paid; nil when it has none.
    func debt(_ key: String, at now: Duration) -> Duration? {
        table.withLockedValue { t in
            guard let budget = t.entries[key] else { return nil }
            let share = t.shares[key] ?? 1
            let balance = refilled(budget, at: now, share: share)
            guard balance < 0 else { return nil }
            return .seconds(-balance / (Double(perSecond) * share))
        }
    }

    private func refilled(_ budget: Budget, at now: Duration, share: Double) -> Double {
        let cap = Double(burst) * share
        guard now > budget.at else { return min(cap, budget.balance) }  // also when the share shrank
        return min(cap, budget.balance + (now - budget.at) / .seconds(1) * Double(perSecond) * share)
    }
}

/// The per-key state of a limit that every connection with the same key shares (a home's, or
/// one client address's), with what each key offered since the last report and this
/// instance's share of each key other instances use too (`RelayLimitSharing`).
final class SharedKeyTable<Entry: Sendable>: Sendable {
    struct Table {
        var entries: [String: Entry] = [:]
        /// What each key offered (frames or bytes) since the last `takeDemand()`.
        var offered: [String: Int] = [:]
        /// This instance's part of a key's budget, where other instances use it too (else 1).
        var shares: [String: Double] = [:]
    }
    /// Past this many entries, those left untouched long enough to be full again are forgotten.
    static var sweepAbove: Int { 4096 }
    // The lock guards the entries, the demand counted and the shares.
    private let table = NIOLockedValueBox(Table())

    func withLockedValue<T>(_ body: (inout Table) -> T) -> T { table.withLockedValue(body) }

    /// What each key offered since the last call.
    func takeDemand() -> [String: Int] {
        table.withLockedValue { t in
            defer { t.offered = [:] }
            return t.offered
        }
    }

    /// This instance's shares of the keys other instances use too; every other key has all of its budget.
    func setShares(_ shares: [String: Double]) {
        table.withLockedValue { $0.shares = shares }
    }
}
