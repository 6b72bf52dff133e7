import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// A thermometer's reading from its profile (`SensorReading`) on a manual clock: a schedule that
// repeats, a bounded random walk that is the same for the same seed, and `act` forcing a value.
@Suite struct SensorReadingTests {
    let clock = ManualClock()
    static let temperature = ClusterID(0x0402)

    func thermometer(_ reading: SensorReading, measured: Int64 = 2_000) throws -> MatterNode {
        try singleClusterNode(
            0x0302, Self.temperature, attributes: [AttributeID(0): .signed(measured)], behavior: ClusterBehavior(reading: reading),
            clock: clock)
    }

    func reading(_ node: MatterNode) async -> Int64? { await node.value(1, Self.temperature, 0)?.intValue }

    @Test func aScheduleSetsEachPointInTurnAndStartsOverAfterItsPeriod() async throws {
        let points: [SensorReading.SchedulePoint] = [
            .init(at: .zero, value: 18.5), .init(at: .seconds(60), value: 21), .init(at: .seconds(90), value: 19.25),
        ]
        let node = try thermometer(.schedule(points, repeatEvery: .seconds(120)))
        #expect(await reading(node) == 1_850)
        await clock.advance(by: .seconds(59))
        #expect(await reading(node) == 1_850)
        await clock.advance(by: .seconds(1))
        #expect(await reading(node) == 2_100)
        await clock.advance(by: .seconds(30))
        #expect(await reading(node) == 1_925)
        // The next round: 18.5 again at 120 s, 21 at 180 s.
        await clock.advance(by: .seconds(30))
        #expect(await reading(node) == 1_850)
        await clock.advance(by: .seconds(60))
        #expect(await reading(node) == 2_100)
        // A forced reading holds until the next point.
        try await node.act(.temperature(30), on: 1)
        await clock.advance(by: .seconds(20))
        #expect(await reading(node) == 3_000)
        await clock.advance(by: .seconds(10))
        #expect(await reading(node) == 1_925)
    }

    @Test func aRandomWalkStaysWithinItsBoundsMovesByAtMostItsStepAndRepeatsForItsSeed() async throws {
        let walk = SensorReading.randomWalk(every: .seconds(10), step: 0.5, range: 19...21, seed: 42)
        let node = try thermometer(walk)
        var seen: [Int64] = []
        for _ in 0..<200 {
            await clock.advance(by: .seconds(10))
            seen.append(try #require(await reading(node)))
        }
        #expect(seen.allSatisfy { (1_900...2_100).contains($0) })
        #expect(zip([2_000] + seen, seen).allSatisfy { abs($0 - $1) <= 50 })
        // It moves, and reaches both ends of its range in 2000 s.
        #expect(Set(seen).count > 20 && seen.contains(1_900) && seen.contains(2_100))

        let twinClock = ManualClock()
        let twin = try singleClusterNode(
            0x0302, Self.temperature, attributes: [AttributeID(0): .signed(2_000)], behavior: ClusterBehavior(reading: walk),
            clock: twinClock)
        var again: [Int64] = []
        for _ in 0..<200 {
            await twinClock.advance(by: .seconds(10))
            again.append(try #require(await reading(twin)))
        }
        #expect(again == seen)
    }

    @Test func aForcedReadingHoldsForOneStepAndTheWalkGoesOnFromIt() async throws {
        let node = try thermometer(.randomWalk(every: .seconds(10), step: 0.5, range: 0...40, seed: 7))
        await clock.advance(by: .seconds(5))
        try await node.act(.temperature(30), on: 1)
        await clock.advance(by: .seconds(9))
        #expect(await reading(node) == 3_000)
        await clock.advance(by: .seconds(1))
        let next = try #require(await reading(node))
        #expect(abs(next - 3_000) <= 50)
    }
}
