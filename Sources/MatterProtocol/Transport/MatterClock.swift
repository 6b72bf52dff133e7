import Foundation
import Synchronization

/// The one time source of the stack: the message layer (MRP, ack and exchange timers), the
/// Interaction Model (subscription intervals, timed-request windows) and a node's clusters
/// (transitions, countdowns, motion, the fail-safe) all read, sleep and schedule on it, so
/// tests drive every timer with `ManualClock`.
public protocol MatterClock: Sendable {
    /// Monotonic time since the clock's origin.
    var now: Duration { get }
    /// Suspends until `now >= deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: Duration) async throws
    /// Runs `action` once `deadline` is reached. A manual clock runs scheduled actions in
    /// deadline order, each to completion, while it advances; the default runs each in its
    /// own task after `sleep(until:)`.
    func schedule(at deadline: Duration, _ action: @escaping @Sendable () async -> Void) -> ClockTimer
    /// The wall-clock date at the clock's origin (`now == .zero`): what `date` counts from.
    var wallClockOrigin: Date { get }
}

extension MatterClock {
    /// Wall-clock time on this clock: its origin's date plus `now` (a scaled clock's days run
    /// faster, a manual clock's move when told). Automations' times of day read it.
    public var date: Date {
        let elapsed = now.components
        return wallClockOrigin.addingTimeInterval(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
    }

    public func schedule(at deadline: Duration, _ action: @escaping @Sendable () async -> Void) -> ClockTimer {
        let task = Task {
            do { try await sleep(until: deadline) } catch { return }
            await action()
        }
        return ClockTimer { task.cancel() }
    }
}

/// A scheduled action that can be cancelled. Cancelling after the action has started has no
/// effect on that run; callers guard against stale firings.
public struct ClockTimer: Sendable {
    private let onCancel: @Sendable () -> Void

    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    public func cancel() { onCancel() }
}

/// Real monotonic time, from `ContinuousClock`, counted from when this value was made.
public struct SystemClock: MatterClock {
    // real time: clock: SystemClock, the real MatterClock.
    private let origin: ContinuousClock.Instant
    public let wallClockOrigin: Date

    public init() {
        origin = ContinuousClock.now
        wallClockOrigin = Date()
    }

    public var now: Duration { origin.duration(to: ContinuousClock.now) }

    public func sleep(until deadline: Duration) async throws {
        try await ContinuousClock().sleep(until: origin.advanced(by: deadline), tolerance: nil)
    }
}

/// Real time run `speed` times faster (`matter-sim home --scenario --speed N`): a day of a
/// home's simulated time in minutes. Every timer of the node runs faster with it, MRP's too,
/// so it is for homes no controller outside the scenario relies on.
public struct ScaledClock: MatterClock {
    // real time: clock: a SystemClock whose durations are divided by `speed`.
    private let origin: ContinuousClock.Instant
    public let speed: Double
    public let wallClockOrigin: Date

    /// A clock from `start` (a date; now by default) running `speed` times real time.
    public init(speed: Double, start: Date = Date()) {
        precondition(speed > 0 && speed.isFinite, "a clock's speed is a positive number")
        self.speed = speed
        origin = ContinuousClock.now
        wallClockOrigin = start
    }

    public var now: Duration { origin.duration(to: ContinuousClock.now) * speed }

    public func sleep(until deadline: Duration) async throws {
        try await ContinuousClock().sleep(until: origin.advanced(by: deadline / speed), tolerance: nil)
    }
}

/// A clock that only moves when told to, for tests and deterministic replays.
///
/// `advance(by:)` walks through every scheduled action and sleeper whose deadline
/// falls inside the step, in deadline order (ties in scheduling order). A scheduled
/// action runs to completion before the next one starts, and actions it schedules
/// inside the step run in the same call, so after `advance` returns the node has
/// done everything it would have done by then.
public final class ManualClock: MatterClock {
    private struct Pending {
        enum Work {
            case action(@Sendable () async -> Void)
            case sleeper(CheckedContinuation<Void, any Error>)
        }
        var id: UInt64
        var deadline: Duration
        var work: Work
    }

    private struct State {
        var now: Duration
        var nextID: UInt64 = 0
        var pending: [Pending] = []
        /// Sleepers cancelled before they got to register.
        var cancelledEarly: Set<UInt64> = []
        /// Advances under way (their loops run actions scheduled as already due).
        var advancing = 0

        mutating func makeID() -> UInt64 {
            nextID += 1
            return nextID
        }

        /// Removes and returns the earliest item due at or before `limit`.
        mutating func popEarliest(notAfter limit: Duration) -> Pending? {
            var best: Int?
            for index in pending.indices where pending[index].deadline <= limit {
                if let current = best {
                    let a = pending[index], b = pending[current]
                    if a.deadline < b.deadline || (a.deadline == b.deadline && a.id < b.id) { best = index }
                } else {
                    best = index
                }
            }
            guard let index = best else { return nil }
            return pending.remove(at: index)
        }
    }

    // Mutex-guarded state makes the class Sendable without @unchecked.
    private let state: Mutex<State>
    private let registered = EventBroadcaster<Void>()

    public let wallClockOrigin: Date

    /// `wallClockOrigin`: the date at `now == .zero` (automations' tests start at a time of day).
    public init(now: Duration = .zero, wallClockOrigin: Date = Date(timeIntervalSince1970: 0)) {
        state = Mutex(State(now: now))
        self.wallClockOrigin = wallClockOrigin
    }

    public var now: Duration { state.withLock { $0.now } }

    /// Number of scheduled actions and sleepers still waiting.
    public var pendingCount: Int { state.withLock { $0.pending.count } }

    /// The earliest deadline of a scheduled action or sleeper, if any.
    public var nextDeadline: Duration? { state.withLock { $0.pending.map(\.deadline).min() } }

    /// Number of tasks sleeping on this clock (lets tests wait until a timer is armed).
    public var sleeperCount: Int {
        state.withLock { s in s.pending.count { if case .sleeper = $0.work { true } else { false } } }
    }

    /// Yields after each action or sleeper joins the pending ones (coalesced while unread), so
    /// a test waits for a timer to be armed before it moves the clock, without polling.
    public func registrations() -> AsyncStream<Void> {
        registered.subscribe(bufferLimit: 1)
    }

    /// An action due at or before `now` runs at once in its own task (as a sleeper's wait
    /// ends at once) unless an advance is under way, which then runs it in turn.
    public func schedule(at deadline: Duration, _ action: @escaping @Sendable () async -> Void) -> ClockTimer {
        let id = state.withLock { s -> UInt64? in
            if deadline <= s.now && s.advancing == 0 { return nil }
            let id = s.makeID()
            s.pending.append(Pending(id: id, deadline: deadline, work: .action(action)))
            return id
        }
        guard let id else {
            let task = Task { await action() }
            return ClockTimer { task.cancel() }
        }
        registered.publish(())
        return ClockTimer { [weak self] in
            self?.state.withLock { s in s.pending.removeAll { $0.id == id } }
        }
    }

    public func sleep(until deadline: Duration) async throws {
        let id = state.withLock { $0.makeID() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { s in
                    if s.cancelledEarly.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= s.now { return .success(()) }
                    s.pending.append(Pending(id: id, deadline: deadline, work: .sleeper(continuation)))
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) } else { registered.publish(()) }
            }
        } onCancel: {
            let continuation: CheckedContinuation<Void, any Error>? = state.withLock { s in
                if let index = s.pending.firstIndex(where: { $0.id == id }),
                    case .sleeper(let continuation) = s.pending[index].work
                {
                    s.pending.remove(at: index)
                    return continuation
                }
                // Not registered yet (or already resumed): remember, so a late registration fails.
                s.cancelledEarly.insert(id)
                return nil
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Moves time forward by `duration`, running everything that falls due on the way.
    public func advance(by duration: Duration) async {
        await advance(to: now + duration)
    }

    /// Moves time forward to `target` (never backwards), running everything due on the way.
    public func advance(to target: Duration) async {
        state.withLock { $0.advancing += 1 }
        while let item = state.withLock({ s -> Pending? in
            guard let item = s.popEarliest(notAfter: target) else { return nil }
            s.now = max(s.now, item.deadline)
            return item
        }) {
            switch item.work {
            case .action(let action):
                await action()
            case .sleeper(let continuation):
                continuation.resume()
                // Give the woken task a chance to run; sleepers are best effort,
                // scheduled actions are the deterministic path.
                await Task.yield()
            }
        }
        // What was scheduled as already due after the loop last looked runs now, as it
        // would have outside an advance.
        let stragglers = state.withLock { s -> [Pending] in
            s.now = max(s.now, target)
            s.advancing -= 1
            guard s.advancing == 0 else { return [] }
            let due = s.pending.filter { $0.deadline <= s.now }
            s.pending.removeAll { $0.deadline <= s.now }
            return due
        }
        for item in stragglers {
            switch item.work {
            case .action(let action): Task { await action() }
            case .sleeper(let continuation): continuation.resume()
            }
        }
    }
}
