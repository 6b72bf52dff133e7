// The node's only source of time. Transitions, countdowns and motion are driven
// through it, so tests can replace the wall clock with a ManualClock and step
// through a one-second transition deterministically.

/// A point in a node's time line, measured from the clock's own origin.
public struct NodeInstant: Comparable, Hashable, Sendable, CustomStringConvertible {
    public var sinceOrigin: Duration

    public init(sinceOrigin: Duration) {
        self.sinceOrigin = sinceOrigin
    }

    public static let origin = NodeInstant(sinceOrigin: .zero)

    public static func < (a: Self, b: Self) -> Bool { a.sinceOrigin < b.sinceOrigin }
    public static func + (a: Self, b: Duration) -> Self { Self(sinceOrigin: a.sinceOrigin + b) }
    public static func - (a: Self, b: Self) -> Duration { a.sinceOrigin - b.sinceOrigin }

    public var description: String { "t+\(sinceOrigin)" }
}

/// A scheduled action that can be cancelled. Cancelling after the action has
/// started has no effect on that run; callers guard against stale firings.
public struct NodeTimer: Sendable {
    private let onCancel: @Sendable () -> Void

    public init(onCancel: @escaping @Sendable () -> Void) {
        self.onCancel = onCancel
    }

    public func cancel() { onCancel() }
}

/// The injectable time source of a node.
public protocol NodeClock: Sendable {
    var now: NodeInstant { get }

    /// Suspends until `deadline`; throws CancellationError when the task is cancelled.
    func sleep(until deadline: NodeInstant) async throws

    /// Runs `action` once `deadline` is reached. The node schedules all its timers
    /// here: a manual clock runs them in deadline order, each to completion, while it
    /// advances; the default runs each in its own task after `sleep(until:)`.
    func schedule(at deadline: NodeInstant, _ action: @escaping @Sendable () async -> Void) -> NodeTimer
}

extension NodeClock {
    public func schedule(at deadline: NodeInstant, _ action: @escaping @Sendable () async -> Void) -> NodeTimer {
        let task = Task {
            do { try await sleep(until: deadline) } catch { return }
            await action()
        }
        return NodeTimer { task.cancel() }
    }
}

/// Real time, from the monotonic ContinuousClock.
public struct SystemNodeClock: NodeClock {
    private let origin: ContinuousClock.Instant

    public init() {
        origin = ContinuousClock.now
    }

    public var now: NodeInstant {
        NodeInstant(sinceOrigin: ContinuousClock.now - origin)
    }

    public func sleep(until deadline: NodeInstant) async throws {
        try await ContinuousClock().sleep(until: origin + deadline.sinceOrigin, tolerance: .milliseconds(5))
    }
}
