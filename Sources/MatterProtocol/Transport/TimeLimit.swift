import Synchronization

/// Runs `body`, throwing `timeout()` once `limit` has passed on `clock` (never a hang). The
/// answer comes at the deadline even when `body` is slow to honour cancellation (an exchange
/// waiting out its own response timeout): `body` is cancelled and left to end. The deadline
/// is a scheduled clock action, so a `ManualClock`'s `advance` past it has answered when it
/// returns.
public func withTimeLimit<T: Sendable>(
    _ limit: Duration, on clock: any MatterClock, orThrow timeout: @escaping @Sendable () -> any Error,
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    let outcome = FirstOutcome<T>()
    let work = Task { outcome.finish(await Result { try await body() }) }
    let timer = clock.schedule(at: clock.now + limit) {
        if outcome.finish(.failure(timeout())) { work.cancel() }
    }
    defer { timer.cancel() }
    let result = await withTaskCancellationHandler {
        await outcome.value()
    } onCancel: {
        work.cancel()
        outcome.finish(.failure(CancellationError()))
    }
    return try result.get()
}

/// The first outcome of a race, handed to one waiter.
private final class FirstOutcome<T: Sendable>: Sendable {
    private struct State {
        var result: Result<T, any Error>?
        var waiter: CheckedContinuation<Result<T, any Error>, Never>?
    }
    private let state = Mutex(State())

    /// Records the outcome unless one is already there; whether this one won.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (won, waiter) = state.withLock { s -> (Bool, CheckedContinuation<Result<T, any Error>, Never>?) in
            guard s.result == nil else { return (false, nil) }
            s.result = result
            defer { s.waiter = nil }
            return (true, s.waiter)
        }
        waiter?.resume(returning: result)
        return won
    }

    func value() async -> Result<T, any Error> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> Result<T, any Error>? in
                if let r = s.result { return r }
                s.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
