import MatterModel
import MatterTLV
import Synchronization

/// One attribute change: the new value and the data version its cluster instance
/// has after the change (Core spec 7.10.3 "Data Version").
public struct AttributeChange: Sendable, Hashable, CustomStringConvertible {
    public var path: AttributePath
    public var value: TLVValue
    public var dataVersion: DataVersion

    public init(path: AttributePath, value: TLVValue, dataVersion: DataVersion) {
        self.path = path
        self.value = value
        self.dataVersion = dataVersion
    }

    public var description: String { "\(path) = \(value) (v\(dataVersion))" }
}

/// Fans change events out to any number of subscribers. Each subscriber gets its
/// own unbounded stream: reports and persistence must not miss a change.
final class ChangeBroadcaster: Sendable {
    private struct State {
        var nextID = 0
        var subscribers: [Int: AsyncStream<AttributeChange>.Continuation] = [:]
        var finished = false
    }

    // Guards the subscriber table, which publish/subscribe/termination touch from any thread.
    private let state = Mutex(State())

    func subscribe() -> AsyncStream<AttributeChange> {
        let (stream, continuation) = AsyncStream<AttributeChange>.makeStream(bufferingPolicy: .unbounded)
        let id: Int? = state.withLock { s in
            guard !s.finished else { return nil }
            s.nextID += 1
            s.subscribers[s.nextID] = continuation
            return s.nextID
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { s in s.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    func publish(_ change: AttributeChange) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(change) }
    }

    /// Ends every stream; later subscribers get an empty stream.
    func finish() {
        let subscribers = state.withLock { s in
            s.finished = true
            defer { s.subscribers.removeAll() }
            return Array(s.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
