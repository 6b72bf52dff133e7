import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Air Quality Sensor and Air Purifier (Application Cluster spec 2.8–2.10, 4.4): concentrations
// with their level, peak and average; AirQuality as the worst grade of them; a fan in Auto that
// runs as the air asks; filters that wear while the fan runs and come back with ResetCondition.
@Suite struct AirQualityTests {
    let clock = ManualClock()
    typealias C = Clusters.Pm25ConcentrationMeasurement.Attribute
    typealias Grade = Clusters.AirQuality.AirQualityEnum
    static let co2 = Clusters.CarbonDioxideConcentrationMeasurement.id
    static let pm25 = Clusters.Pm25ConcentrationMeasurement.id
    static let airQuality = Clusters.AirQuality.id
    static let fan = Clusters.FanControl.id
    static let hepa = Clusters.HepaFilterMonitoring.id
    static let allGrades: Set<String> = ["FAIR", "MOD", "VPOOR", "XPOOR"]
    static let allLevels: Set<String> = ["MEA", "LEV", "MED", "CRI", "PEA", "AVG"]

    func node(_ clusters: [ClusterInstanceDescription], type: UInt32 = 0x002C) throws -> MatterNode {
        try makeNode(
            [
                rootEndpoint(),
                EndpointDescription(
                    number: 1, deviceTypes: [deviceType(DeviceTypeID(type))],
                    serverClusters: [ClusterInstanceDescription(id: IDs.identify)] + clusters),
            ], clock: clock)
    }

    func airSensor(grades: Set<String> = allGrades, co2Walk: SensorReading? = nil) throws -> MatterNode {
        try node([
            ClusterInstanceDescription(id: Self.airQuality, features: grades),
            ClusterInstanceDescription(id: Self.co2, features: Self.allLevels, behavior: ClusterBehavior(reading: co2Walk)),
            ClusterInstanceDescription(id: Self.pm25, features: ["MEA", "LEV"]),
        ])
    }

    func grade(_ node: MatterNode) async -> Grade? {
        await node.uint(1, Self.airQuality, Clusters.AirQuality.Attribute.airQuality.rawValue).flatMap { Grade(rawValue: UInt8($0)) }
    }
    func float(_ node: MatterNode, _ cluster: ClusterID, _ attribute: AttributeID) async -> Float? {
        await node.value(1, cluster, attribute.rawValue)?.floatValue
    }
    func level(_ node: MatterNode, _ cluster: ClusterID) async -> UInt64? { await node.uint(1, cluster, C.levelValue.rawValue) }

    @Test func theAirIsGradedByItsWorstConcentration() async throws {
        let node = try airSensor()
        #expect(await grade(node) == .good)
        try await node.act(.concentration(.co2, 1_100))
        #expect(await float(node, Self.co2, C.measuredValue) == 1_100)
        #expect(await grade(node) == .moderate)
        #expect(await level(node, Self.co2) == 2)  // Medium
        try await node.act(.concentration(.pm25, 60))
        #expect(await grade(node) == .veryPoor)
        // PM2.5 has no MediumLevel or CriticalLevel: very poor air is High either way.
        #expect(await level(node, Self.pm25) == 3)
        try await node.act(.concentration(.co2, 2_500))
        #expect(await grade(node) == .extremelyPoor)
        #expect(await level(node, Self.co2) == 4)  // Critical
        try await node.act(.concentration(.co2, 500))
        try await node.act(.concentration(.pm25, 5))
        #expect(await grade(node) == .good)
        #expect(await level(node, Self.co2) == 1)  // Low
        await #expect(throws: PhysicalActionError.self) { try await node.act(.concentration(.co2, -1)) }
        await #expect(throws: PhysicalActionError.self) { try await node.act(.concentration(.pm10, 10)) }
    }

    @Test func aGradeTheFeaturesLackCountsAsTheNearestTowardPoor() async throws {
        let node = try airSensor(grades: [])
        try await node.act(.concentration(.co2, 900))  // Fair
        #expect(await grade(node) == .poor)
        try await node.act(.concentration(.co2, 2_500))  // Extremely poor
        #expect(await grade(node) == .poor)
        try await node.act(.concentration(.co2, 600))
        #expect(await grade(node) == .good)
    }

    @Test func peakAndAverageCoverTheirWindows() async throws {
        let node = try airSensor()
        try await node.act(.concentration(.co2, 1_100))
        await clock.advance(by: .seconds(1_800))
        try await node.act(.concentration(.co2, 600))
        #expect(await float(node, Self.co2, C.peakMeasuredValue) == 1_100)
        // The hour holds the start value (400 ppm, half the first grade's bound), 1100 and 600.
        #expect(await float(node, Self.co2, C.averageMeasuredValue) == 700)
        await clock.advance(by: .seconds(1_801))
        try await node.act(.concentration(.co2, 700))
        #expect(await float(node, Self.co2, C.peakMeasuredValue) == 700)
        #expect(await float(node, Self.co2, C.averageMeasuredValue) == 650)
    }

    @Test func aConcentrationWalksWithinItsRange() async throws {
        let node = try airSensor(co2Walk: .randomWalk(every: .seconds(30), step: 50, range: 450...1_100, seed: 11))
        var seen: [Float] = []
        for _ in 0..<50 {
            await clock.advance(by: .seconds(30))
            seen.append(try #require(await float(node, Self.co2, C.measuredValue)))
        }
        #expect(seen.allSatisfy { (450...1_100).contains($0) })
        #expect(Set(seen).count > 10)
    }

    func purifier(condition: UInt64 = 100) throws -> MatterNode {
        try node(
            [
                ClusterInstanceDescription(
                    id: Self.fan, features: ["SPD", "AUT"],
                    attributes: [
                        Clusters.FanControl.Attribute.fanModeSequence: u(2), Clusters.FanControl.Attribute.speedMax: u(10),
                        Clusters.FanControl.Attribute.fanMode: u(Clusters.FanControl.FanModeEnum.auto.rawValue),
                    ]),
                ClusterInstanceDescription(
                    id: Self.hepa, features: ["CON"], attributes: [Clusters.HepaFilterMonitoring.Attribute.condition: u(condition)]),
                ClusterInstanceDescription(id: Self.airQuality, features: Self.allGrades),
                ClusterInstanceDescription(id: Self.pm25, features: ["MEA"]),
            ], type: 0x002D)
    }

    func percentCurrent(_ node: MatterNode) async -> UInt64? {
        await node.uint(1, Self.fan, Clusters.FanControl.Attribute.percentCurrent.rawValue)
    }

    @Test func aPurifierInAutoRunsAsFastAsTheAirAsks() async throws {
        let node = try purifier()
        #expect(await percentCurrent(node) == 20)  // Good air
        try await node.act(.concentration(.pm25, 60))  // Very poor
        await clock.advance(by: .seconds(1))
        #expect(await percentCurrent(node) == 100)
        try await node.act(.concentration(.pm25, 30))  // Moderate
        await clock.advance(by: .seconds(1))
        #expect(await percentCurrent(node) == 60)
    }

    /// An Air Quality Sensor the purifier includes is a device type on an endpoint of its own
    /// (one application device type per endpoint, TC-DESC-2.1 step 1b.2); the fan in Auto still
    /// goes by it.
    @Test func aPurifierInAutoGoesByTheAirQualitySensorOnItsOwnEndpoint() async throws {
        let node = try makeNode(
            [
                rootEndpoint(),
                EndpointDescription(
                    number: 1, deviceTypes: [deviceType(DeviceTypeID(0x002D))],
                    serverClusters: [
                        ClusterInstanceDescription(id: IDs.identify),
                        ClusterInstanceDescription(
                            id: Self.fan, features: ["SPD", "AUT"],
                            attributes: [
                                Clusters.FanControl.Attribute.fanModeSequence: u(2), Clusters.FanControl.Attribute.speedMax: u(10),
                                Clusters.FanControl.Attribute.fanMode: u(Clusters.FanControl.FanModeEnum.auto.rawValue),
                            ]),
                    ]),
                EndpointDescription(
                    number: 2, deviceTypes: [deviceType(DeviceTypeID(0x002C))],
                    serverClusters: [
                        ClusterInstanceDescription(id: IDs.identify),
                        ClusterInstanceDescription(id: Self.airQuality, features: Self.allGrades),
                        ClusterInstanceDescription(id: Self.pm25, features: ["MEA"]),
                    ]),
            ], clock: clock)
        await clock.advance(by: .seconds(1))
        #expect(await percentCurrent(node) == 20)  // Good air, not the 50 % of a fan with no sensor
        try await node.act(.concentration(.pm25, 60))  // Very poor
        await clock.advance(by: .seconds(1))
        #expect(await percentCurrent(node) == 100)
    }

    @Test func aFilterWearsWhileTheFanRunsAndResetConditionRenewsIt() async throws {
        typealias F = Clusters.HepaFilterMonitoring.Attribute
        let node = try purifier(condition: 11)
        func condition() async -> UInt64? { await node.uint(1, Self.hepa, F.condition.rawValue) }
        func indication() async -> UInt64? { await node.uint(1, Self.hepa, F.changeIndication.rawValue) }
        #expect(await node.write(1, Self.fan, Clusters.FanControl.Attribute.fanMode.rawValue, u(0)) == .success)
        await clock.advance(by: .seconds(3_600))
        #expect(await condition() == 11)  // off: no wear
        #expect(await node.write(1, Self.fan, Clusters.FanControl.Attribute.percentSetting.rawValue, u(100)) == .success)
        // 2000 hours at full speed use it up: 1 % every 20 hours (Condition rounds up).
        await clock.advance(by: .seconds(20 * 3_600 + 1_800))
        #expect(await condition() == 10)
        #expect(await indication() == 0)
        await clock.advance(by: .seconds(20 * 3_600))
        #expect(await condition() == 9)
        #expect(await indication() == 1)  // Warning
        #expect(await node.invoke(1, Self.hepa, Clusters.HepaFilterMonitoring.Command.resetCondition.rawValue) == .success)
        #expect(await (condition(), indication()) == (100, 0))
        try await node.act(.replaceFilter(.hepa))
        await #expect(throws: PhysicalActionError.self) { try await node.act(.replaceFilter(.carbon)) }
    }
}
