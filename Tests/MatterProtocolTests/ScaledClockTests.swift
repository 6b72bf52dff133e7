import MatterProtocol
import Testing

/// `matter-sim home --scenario --speed N`: the nodes' clock runs N times faster than real time.
@Suite("Scaled clock")
struct ScaledClockTests {
    @Test func anHourAtTenThousandTimesPassesInAFractionOfASecond() async throws {
        let clock = ScaledClock(speed: 10_000)
        let start = clock.now
        // A real-time clock would hold this for an hour; the test's own time limit is the bound.
        try await clock.sleep(until: start + .seconds(3600))
        #expect(clock.now >= start + .seconds(3600))
        // Scheduled actions run on the same faster time.
        let (fired, fire) = AsyncStream.makeStream(of: Duration.self)
        _ = clock.schedule(at: clock.now + .seconds(600)) { fire.yield(clock.now) }
        var iterator = fired.makeAsyncIterator()
        let at = await iterator.next()
        #expect(at != nil && at! >= start + .seconds(4200))
    }

    @Test func atSpeedOneItIsRealTime() async throws {
        let clock = ScaledClock(speed: 1), system = SystemClock()
        let (a, b) = (clock.now, system.now)
        try await clock.sleep(until: a + .milliseconds(50))
        // At least the 50 ms it slept, on both clocks alike.
        #expect(clock.now - a >= .milliseconds(50))
        #expect(system.now - b >= .milliseconds(50))
    }
}
