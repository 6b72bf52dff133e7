import Foundation
import MatterProtocol
import Synchronization
import TestWaiting
import Testing
@testable import MatterDevice

@Suite struct ManualClockTests {
    @Test func scheduledActionsRunInDeadlineOrderWhileAdvancing() async {
        let clock = ManualClock()
        let log = Mutex<[String]>([])
        _ = clock.schedule(at: clock.now + .seconds(2)) { log.withLock { $0.append("b") } }
        _ = clock.schedule(at: clock.now + .seconds(1)) {
            log.withLock { $0.append("a") }
            // Scheduled from inside the step and still due within it.
            _ = clock.schedule(at: clock.now + .milliseconds(500)) { log.withLock { $0.append("a2") } }
        }
        let cancelled = clock.schedule(at: clock.now + .seconds(1)) { log.withLock { $0.append("never") } }
        cancelled.cancel()
        _ = clock.schedule(at: clock.now + .seconds(10)) { log.withLock { $0.append("later") } }

        await clock.advance(by: .seconds(3))
        #expect(log.withLock { $0 } == ["a", "a2", "b"])
        #expect(clock.now == .seconds(3))
        #expect(clock.pendingCount == 1)
    }

    @Test func sleepersWakeAtTheirDeadline() async throws {
        let clock = ManualClock()
        let woke = Mutex<Duration?>(nil)
        let registrations = clock.registrations()
        let sleeper = Task {
            try await clock.sleep(until: .seconds(1))
            woke.withLock { $0 = clock.now }
        }
        // Under load the sleeper's task may not have run yet: wait until it has registered.
        #expect(await until(registrations) { clock.pendingCount == 1 })
        #expect(clock.pendingCount == 1)
        // Half way: still asleep.
        await clock.advance(by: .milliseconds(500))
        #expect(clock.pendingCount == 1)
        #expect(woke.withLock { $0 } == nil)
        // At the deadline it wakes. The woken task runs when the scheduler lets it, so it may
        // read the clock after a later advance: it must read at least its deadline (reading
        // `now` after an advance by 2 s made this flaky under load).
        await clock.advance(by: .milliseconds(500))
        try await sleeper.value
        #expect(clock.pendingCount == 0)
        #expect(woke.withLock { $0 }.map { $0 >= .seconds(1) } == true)
    }

    /// A subscription that re-arms its timer after the test has advanced past the deadline
    /// must still fire, as a sleep until a past deadline ends at once.
    @Test func actionsAlreadyDueRunWithoutAnotherAdvance() async throws {
        let clock = ManualClock()
        await clock.advance(by: .seconds(5))
        // Bounded on real time: without the fix the action never runs.
        let firedAt: Duration = try await withTimeLimit(.seconds(10), on: SystemClock(), orThrow: { CancellationError() }) {
            await withCheckedContinuation { continuation in
                _ = clock.schedule(at: .seconds(3)) { continuation.resume(returning: clock.now) }
            }
        }
        #expect(firedAt == .seconds(5))
        #expect(clock.pendingCount == 0)
    }

    @Test func cancelledSleepersThrow() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: .seconds(1)) }
        sleeper.cancel()
        let result = await sleeper.result
        #expect(throws: CancellationError.self) { try result.get() }
        #expect(clock.pendingCount == 0)
    }
}

/// One clock for the stack and the automations (#38 item 4): a clock's `date` is its wall-time
/// origin plus its own time, so a manual clock's days move when told and a scaled one's faster.
@Suite struct ClockDateTests {
    @Test func aManualClocksDateMovesWithItsTimeFromItsOrigin() async {
        let origin = Date(timeIntervalSince1970: 1_772_434_740)  // 2026-03-02 06:59 UTC
        let clock = ManualClock(wallClockOrigin: origin)
        #expect(clock.date == origin)
        await clock.advance(by: .milliseconds(90_500))
        #expect(clock.date == origin.addingTimeInterval(90.5))
    }

    @Test func aScaledClocksDateRunsSpeedTimesFasterThanRealTime() async throws {
        let start = Date(timeIntervalSince1970: 0)
        let clock = ScaledClock(speed: 3600, start: start)
        // real time: clock: tests ScaledClock itself.
        let before = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(50))
        let real = before.duration(to: ContinuousClock.now)
        let seconds = Double(real.components.seconds) + Double(real.components.attoseconds) / 1e18
        // An hour of the clock's days per real second: at least 50 ms of real time is 180 s.
        #expect(clock.date.timeIntervalSince(start) >= 180)
        #expect(clock.date.timeIntervalSince(start) <= (seconds + 1) * 3600)
    }
}

@Suite struct SystemClockTests {
    @Test func scheduledActionsRunAfterTheirDeadline() async {
        let clock = SystemClock()
        let start = clock.now
        let firedAt: Duration = await withCheckedContinuation { continuation in
            _ = clock.schedule(at: start + .milliseconds(20)) { continuation.resume(returning: clock.now) }
        }
        #expect(firedAt - start >= .milliseconds(20))
    }

    @Test func cancelledActionsDoNotRun() async throws {
        let clock = SystemClock()
        let ran = Mutex(false)
        let timer = clock.schedule(at: clock.now + .milliseconds(10)) { ran.withLock { $0 = true } }
        timer.cancel()
        // real time: clock: tests SystemClock itself.
        try await Task.sleep(for: .milliseconds(100))
        #expect(ran.withLock { $0 } == false)
    }
}
