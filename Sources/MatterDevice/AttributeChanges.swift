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

/// The node's attribute change stream.
typealias ChangeBroadcaster = Broadcaster<AttributeChange>

/// Fans events out to any number of subscribers. Each subscriber gets its own
/// unbounded stream: reports, persistence and the runtime must not miss an event.
final class Broadcaster<Element: Sendable>: Sendable {
    private struct State {
        var nextID = 0
        var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
        var finished = false
    }

    // Guards the subscriber table, which publish/subscribe/termination touch from any thread.
    private let state = Mutex(State())

    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream<Element>.makeStream(bufferingPolicy: .unbounded)
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

    func publish(_ element: Element) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(element) }
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
