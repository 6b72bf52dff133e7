import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Humidity, light, pressure and flow sensors (Application Cluster spec 2.2 and 2.4–2.6): each
// MeasuredValue in its cluster's encoding, within Min/MaxMeasuredValue, driven by the shared
// `SensorWalk` and by `act`.
@Suite struct MeasurementSensorTests {
    let clock = ManualClock()

    func sensor(
        _ deviceType: UInt32, _ cluster: ClusterID, _ attributes: [AttributeID: TLVValue] = [:], reading: SensorReading? = nil
    )
        throws -> MatterNode
    {
        try singleClusterNode(deviceType, cluster, attributes: attributes, behavior: ClusterBehavior(reading: reading), clock: clock)
    }

    func measured(_ node: MatterNode, _ cluster: ClusterID) async -> Int64? { await node.value(1, cluster, 0)?.integerValue }

    @Test func humidityWalksInHundredthsOfAPercentWithinItsBounds() async throws {
        let cluster = Clusters.RelativeHumidityMeasurement.id
        let walk = SensorReading.randomWalk(every: .seconds(60), step: 2, range: 40...50, seed: 3)
        let node = try sensor(0x0307, cluster, [AttributeID(0): u(4_500)], reading: walk)
        var seen: [Int64] = []
        for _ in 0..<100 {
            await clock.advance(by: .seconds(60))
            seen.append(try #require(await measured(node, cluster)))
        }
        #expect(seen.allSatisfy { (4_000...5_000).contains($0) })
        #expect(zip([4_500] + seen, seen).allSatisfy { abs($0 - $1) <= 200 })
        #expect(Set(seen).count > 10)
        // Unsigned on the wire, as the cluster's uint16 says.
        if case .unsigned? = await node.value(1, cluster, 0) {} else { Issue.record("MeasuredValue is not unsigned") }
        try await node.act(.humidity(55.5))
        #expect(await measured(node, cluster) == 5_550)
        await #expect(throws: PhysicalActionError.self) { try await node.act(.humidity(101)) }
    }

    @Test func illuminanceIsTenThousandTimesTheLogOfLuxPlusOne() async throws {
        let cluster = Clusters.IlluminanceMeasurement.id
        let node = try sensor(0x0106, cluster, [AttributeID(1): u(1), AttributeID(2): u(50_001)])
        try await node.act(.illuminance(1))
        #expect(await measured(node, cluster) == 1)
        try await node.act(.illuminance(300))
        #expect(await measured(node, cluster) == 24_772)
        try await node.act(.illuminance(10_000))
        #expect(await measured(node, cluster) == 40_001)
        // 100,000 lx is MaxMeasuredValue (50,001); a million is past it.
        await #expect(throws: PhysicalActionError.self) { try await node.act(.illuminance(1_000_000)) }
        #expect(await measured(node, cluster) == 40_001)
    }

    @Test func illuminanceFollowsItsScheduleClampedToWhatItMeasures() async throws {
        let cluster = Clusters.IlluminanceMeasurement.id
        let day: [SensorReading.SchedulePoint] = [.init(at: .zero, value: 0.2), .init(at: .seconds(60), value: 20_000)]
        let node = try sensor(
            0x0106, cluster, [AttributeID(1): u(1), AttributeID(2): u(50_001)], reading: .schedule(day, repeatEvery: .seconds(120)))
        // 0.2 lx is too dark to measure: the sensor's floor, MinMeasuredValue.
        #expect(await measured(node, cluster) == 1)
        await clock.advance(by: .seconds(60))
        #expect(await measured(node, cluster) == 43_011)
    }

    @Test func pressureIsSignedTenthsOfAKilopascal() async throws {
        let cluster = Clusters.PressureMeasurement.id
        let node = try sensor(
            0x0305, cluster, [AttributeID(0): .signed(1_013), AttributeID(1): .signed(300), AttributeID(2): .signed(1_100)])
        try await node.act(.pressure(99.5))
        #expect(await node.value(1, cluster, 0) == .signed(995))
        await #expect(throws: PhysicalActionError.self) { try await node.act(.pressure(120)) }
        await #expect(throws: PhysicalActionError.self) { try await node.act(.humidity(50)) }
    }

    @Test func flowFollowsItsScheduleInTenthsOfACubicMetrePerHour() async throws {
        let cluster = Clusters.FlowMeasurement.id
        let watering: [SensorReading.SchedulePoint] = [.init(at: .zero, value: 0), .init(at: .seconds(600), value: 1.2)]
        let node = try sensor(
            0x0306, cluster, [AttributeID(1): u(0), AttributeID(2): u(500)], reading: .schedule(watering, repeatEvery: nil))
        #expect(await measured(node, cluster) == 0)
        await clock.advance(by: .seconds(600))
        #expect(await measured(node, cluster) == 12)
        try await node.act(.flow(2.5))
        #expect(await measured(node, cluster) == 25)
    }
}
