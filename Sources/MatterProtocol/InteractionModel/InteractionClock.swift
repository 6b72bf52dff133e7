/// Monotonic time for the Interaction Model's timers (subscription intervals,
/// timed-request windows), injectable so tests can drive it by hand.
public protocol InteractionClock: Sendable {
    /// Time elapsed since an arbitrary, fixed origin.
    var now: Duration { get }
    /// Suspends until `now` reaches `deadline`; throws CancellationError when cancelled.
    func sleep(until deadline: Duration) async throws
}

/// The real clock: `ContinuousClock`, counted from when this value was made.
public struct ContinuousInteractionClock: InteractionClock {
    private let origin: ContinuousClock.Instant

    public init() {
        origin = ContinuousClock.now
    }

    public var now: Duration { origin.duration(to: ContinuousClock.now) }

    public func sleep(until deadline: Duration) async throws {
        try await ContinuousClock().sleep(until: origin.advanced(by: deadline), tolerance: nil)
    }
}
