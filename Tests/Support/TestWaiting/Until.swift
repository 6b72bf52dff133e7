import MatterProtocol
import Synchronization

/// Waits until `condition` holds: checks it now, then again each time one of `changes` yields
/// (the part under test saying its state moved), so the wait lasts as long as the work does,
/// whatever the machine's load. Each stream must yield after the state it announces is
/// readable. The wait takes the streams for itself and ends them: give each wait fresh ones.
/// Gives up after `limit` of real time, a bound on a broken run rather than a pace; returns
/// whether the condition held.
package func until(
    _ changes: [AsyncStream<Void>], within limit: Duration = .seconds(10), _ condition: () async -> Bool
) async -> Bool {
    enum Wakeup { case changed, timedOut }
    let (wakeups, wake) = AsyncStream.makeStream(of: Wakeup.self)
    let forwarders = changes.map { stream in
        Task {
            for await _ in stream { wake.yield(.changed) }
        }
    }
    let clock = SystemClock()
    let watchdog = clock.schedule(at: clock.now + limit) { wake.yield(.timedOut) }
    defer {
        watchdog.cancel()
        for forwarder in forwarders { forwarder.cancel() }
        wake.finish()
    }
    if await condition() { return true }
    for await wakeup in wakeups {
        if await condition() { return true }
        if case .timedOut = wakeup { return false }
    }
    return await condition()
}

/// `until` over one stream of changes of any element type.
package func until<Changes: AsyncSequence & Sendable>(
    _ changes: Changes, within limit: Duration = .seconds(10), _ condition: () async -> Bool
) async -> Bool {
    await until([signals(changes)], within: limit, condition)
}

/// One `Void` per element of `sequence` (coalesced while unread), to combine unlike streams.
package func signals<Changes: AsyncSequence & Sendable>(_ sequence: Changes) -> AsyncStream<Void> {
    AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
        let task = Task {
            do {
                for try await _ in sequence { continuation.yield() }
            } catch {}
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
    }
}

/// A value the test's own callbacks write (lines printed, updates counted), with a stream of
/// its changes, so a test waits for the value instead of polling a locked box.
package final class Watched<Value: Sendable>: Sendable {
    private let state: Mutex<Value>
    private let changed = EventBroadcaster<Void>()

    package init(_ value: Value) { state = Mutex(value) }

    package var value: Value { state.withLock { $0 } }

    package func update<T>(_ change: (inout Value) -> T) -> T {
        defer { changed.publish(()) }
        return state.withLock { change(&$0) }
    }

    /// Yields after each update (coalesced while unread).
    package func changes() -> AsyncStream<Void> { changed.subscribe(bufferLimit: 1) }

    /// Waits (bounded by `limit` of real time) until `predicate` holds for the value.
    package func until(within limit: Duration = .seconds(10), _ predicate: (Value) -> Bool) async -> Bool {
        await TestWaiting.until([changes()], within: limit) { predicate(value) }
    }
}

/// Runs `wait` (a call that returns once what the test waits for has happened), bounded by
/// `limit` of real time; returns whether it returned in time.
package func within(_ limit: Duration = .seconds(10), _ wait: @escaping @Sendable () async -> Void) async -> Bool {
    let clock = SystemClock()
    let returned = try? await withTimeLimit(limit, on: clock, orThrow: { CancellationError() }) {
        await wait()
        return true
    }
    return returned ?? false
}

/// Checks `condition` every 20 ms for up to `limit`; returns whether it held. Only for state
/// that another process or the kernel holds and announces to nobody (a child's output, rows
/// it writes to a shared file, whether a raw socket was closed): everything in the test's
/// own process is waited on with `until`.
package func poll(within limit: Duration = .seconds(10), _ condition: () async -> Bool) async -> Bool {
    // real time: external: a child process's or the kernel's state, read by polling
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}
