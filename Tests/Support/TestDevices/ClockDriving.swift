import MatterProtocol
import Synchronization

/// Runs `operation` while moving `clock` to each next deadline as soon as one is pending, up
/// to `limit` of clock time past now; returns how the operation ended and the clock time it
/// took from its first step (timers already pending may move the clock before it starts).
///
/// Only for an operation that, once started, waits on nothing but the clock (a request to a
/// silent node: its retransmissions and response timeout): every timer then fires in order,
/// and the time taken is the stack's own, whatever the machine's load. Not for work that
/// also waits on other tasks (a home's engine noticing a route down): the clock would run
/// ahead of them.
package func drive<T: Sendable>(
    _ clock: ManualClock, upTo limit: Duration, _ operation: @escaping @Sendable () async throws -> T
) async -> (result: Result<T, any Error>?, took: Duration) {
    let start = clock.now
    let outcome = Mutex<Result<T, any Error>?>(nil)
    let span = Mutex<(began: Duration?, ended: Duration?)>((nil, nil))
    let task = Task {
        span.withLock { $0.began = clock.now }
        let result: Result<T, any Error>
        do { result = .success(try await operation()) } catch { result = .failure(error) }
        span.withLock { $0.ended = clock.now }
        outcome.withLock { $0 = result }
    }
    // A bound on a broken run in real time, not a pace: the loop only yields or advances.
    let real = SystemClock()
    let watchdog = real.now + .seconds(60)
    while outcome.withLock({ $0 == nil }), real.now < watchdog {
        if let next = clock.nextDeadline {
            guard next <= start + limit else { break }
            await clock.advance(to: next)
        } else {
            await Task.yield()
        }
    }
    if outcome.withLock({ $0 == nil }) { task.cancel() }
    let (began, ended) = span.withLock { ($0.began ?? start, $0.ended ?? clock.now) }
    return (outcome.withLock { $0 }, ended - began)
}
