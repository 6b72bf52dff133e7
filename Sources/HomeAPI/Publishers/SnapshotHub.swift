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

    private var finished = false

    /// Publishes `value` unless it equals the current one or the hub has finished (a late
    /// value kept after `finish` would rebuild the cycle `finish` breaks).
    func send(_ value: Value) {
        lock.withLock {
            guard !finished, value != latest else { return }
            latest = value
            subject.send(value)
        }
    }

    /// Ends the publisher (subscribers see it finish, later ones get no value) and keeps
    /// `empty` instead of the last value: a snapshot's devices hold the engine that holds
    /// this hub, and that cycle would keep a closed home's engine and database alive.
    func finish(keeping empty: Value) {
        lock.withLock {
            finished = true
            subject.send(completion: .finished)
            subject.value = empty  // not sent: the subject has finished
            latest = empty
        }
    }

    func publisher() -> AnyPublisher<Value, Never> {
        subject.eraseToAnyPublisher()
    }
}
