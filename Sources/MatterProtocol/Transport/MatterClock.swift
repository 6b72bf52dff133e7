import NIOConcurrencyHelpers

/// The time source of the message layer. MRP timers, ack timers and exchange
/// timeouts all read and sleep on it, so tests can drive them with `ManualClock`.
public protocol MatterClock: Sendable {
    /// Monotonic time since the clock's origin.
    var now: Duration { get }
    /// Suspends until `now >= deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: Duration) async throws
}

/// Real monotonic time.
public struct SystemClock: MatterClock {
    private let origin: ContinuousClock.Instant

    public init() { origin = ContinuousClock.now }

    public var now: Duration { origin.duration(to: ContinuousClock.now) }

    public func sleep(until deadline: Duration) async throws {
        try await Task.sleep(until: origin.advanced(by: deadline), clock: .continuous)
    }
}

/// A clock that only moves when told to. Sleepers whose deadline is reached are
/// resumed by `advance(by:)`.
public final class ManualClock: MatterClock {
    private struct Sleeper {
        let deadline: Duration
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var nextID: UInt64 = 0
        var sleepers: [UInt64: Sleeper] = [:]
        /// Sleepers cancelled before their continuation was registered.
        var cancelledEarly: Set<UInt64> = []
    }

    // The lock guards all mutable state; continuations are resumed outside it.
    private let state = NIOLockedValueBox(State())

    public init(now: Duration = .zero) {
        state.withLockedValue { $0.now = now }
    }

    public var now: Duration { state.withLockedValue { $0.now } }

    /// Number of tasks currently sleeping on this clock (lets tests wait until a timer is armed).
    public var sleeperCount: Int { state.withLockedValue { $0.sleepers.count } }

    /// The earliest deadline any sleeper waits for.
    public var nextDeadline: Duration? { state.withLockedValue { $0.sleepers.values.map(\.deadline).min() } }

    public func sleep(until deadline: Duration) async throws {
        let id = state.withLockedValue { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let action: (() -> Void)? = state.withLockedValue { s in
                    if s.cancelledEarly.remove(id) != nil { return { c.resume(throwing: CancellationError()) } }
                    if deadline <= s.now { return { c.resume() } }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: c)
                    return nil
                }
                action?()
            }
        } onCancel: {
            let sleeper = state.withLockedValue { s -> Sleeper? in
                if let sl = s.sleepers.removeValue(forKey: id) { return sl }
                s.cancelledEarly.insert(id)
                return nil
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
        state.withLockedValue { _ = $0.cancelledEarly.remove(id) }
    }

    /// Moves time forward and wakes every sleeper whose deadline has passed.
    public func advance(by delta: Duration) {
        let due = state.withLockedValue { s -> [Sleeper] in
            s.now += delta
            let ready = s.sleepers.filter { $0.value.deadline <= s.now }
            for id in ready.keys { s.sleepers.removeValue(forKey: id) }
            return ready.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves time to `instant` (no-op if it is in the past).
    public func advance(to instant: Duration) {
        let delta = instant - now
        if delta > .zero { advance(by: delta) }
    }
}

/// A one-slot wake-up signal for the timer loop: `signal()` before `wait()` is not lost.
final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    // The lock guards `pending` and `waiter`; the continuation is resumed outside it.
    private let state = NIOLockedValueBox(State())

    func signal() {
        let waiter = state.withLockedValue { s -> CheckedContinuation<Void, Never>? in
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            s.pending = true
            return nil
        }
        waiter?.resume()
    }

    /// Returns at the next signal (or at once if one is pending), or when the task is cancelled.
    func wait() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLockedValue { s -> Bool in
                    if s.pending || Task.isCancelled {
                        s.pending = false
                        return true
                    }
                    s.waiter = c
                    return false
                }
                if resumeNow { c.resume() }
            }
        } onCancel: {
            let waiter = state.withLockedValue { s -> CheckedContinuation<Void, Never>? in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume()
        }
    }
}
