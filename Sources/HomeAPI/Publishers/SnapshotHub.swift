import NIOConcurrencyHelpers
import OpenCombine

/// The latest value of something, as an OpenCombine publisher that replays it to new
/// subscribers (like CurrentValueSubject).
final class SnapshotHub<Value: Sendable & Equatable>: @unchecked Sendable {
    // @unchecked: `lock` serializes every send and every read of `latest`; the subject
    // itself guards its subscriber list with its own lock (OpenCombine's CurrentValueSubject).
    private let lock = NIOLock()
    private let subject: CurrentValueSubject<Value, Never>
    private var latest: Value

    init(_ initial: Value) {
        latest = initial
        subject = CurrentValueSubject(initial)
    }

    var value: Value { lock.withLock { latest } }

    /// Publishes `value` unless it equals the current one.
    func send(_ value: Value) {
        lock.withLock {
            guard value != latest else { return }
            latest = value
            subject.send(value)
        }
    }

    func publisher() -> AnyPublisher<Value, Never> {
        subject.eraseToAnyPublisher()
    }
}
