import NIOConcurrencyHelpers

/// Fans events out to any number of AsyncStream subscribers (a change signal is an
/// `EventBroadcaster<Void>` subscribed with a buffer of one).
public final class EventBroadcaster<Event: Sendable>: Sendable {
    private struct State {
        var nextID = 0
        var subscribers: [Int: AsyncStream<Event>.Continuation] = [:]
    }

    // The lock guards the subscriber table; yields happen outside it.
    private let state = NIOLockedValueBox(State())

    public init() {}

    public func subscribe(bufferLimit: Int = 256) -> AsyncStream<Event> {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: .bufferingNewest(bufferLimit))
        let id = state.withLockedValue { s -> Int in
            s.nextID += 1
            s.subscribers[s.nextID] = continuation
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLockedValue { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Whether any stream is subscribed now (a publisher can skip making an event nobody reads).
    public var hasSubscribers: Bool { state.withLockedValue { !$0.subscribers.isEmpty } }

    public func publish(_ event: Event) {
        let targets = state.withLockedValue { Array($0.subscribers.values) }
        for c in targets { c.yield(event) }
    }

    public func finish() {
        let targets = state.withLockedValue { s -> [AsyncStream<Event>.Continuation] in
            defer { s.subscribers = [:] }
            return Array(s.subscribers.values)
        }
        for c in targets { c.finish() }
    }
}
