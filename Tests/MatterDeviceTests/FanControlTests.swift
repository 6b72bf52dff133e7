import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Fan Control (Application Cluster spec 4.4): FanMode, PercentSetting and SpeedSetting kept
// consistent whichever is written, the motor (PercentCurrent, SpeedCurrent) at the setting at once
// or, where the profile gives it inertia, following on a manual clock, the Step command's Wrap and
// LowestOff, Rock/Wind support, and the remote (`act`).
@Suite struct FanControlTests {
    let clock = ManualClock()
    static let fan = Clusters.FanControl.id
    typealias A = Clusters.FanControl.Attribute
    typealias Mode = Clusters.FanControl.FanModeEnum

    /// A motor with inertia: 100 % per second (`behaviour: fan: acceleration: 100`), 10 % per 100 ms.
    static let inertia = MotionSpeed.percent100thsPerSecond(10_000)

    /// A fan; its motor has `inertia` unless given nil (a shipped profile's: at the setting at once).
    func fan(
        features: Set<String> = ["SPD", "AUT", "STEP", "RCK", "WND"],
        sequence: Clusters.FanControl.FanModeSequenceEnum = .offLowMedHighAuto,
        attributes: [AttributeID: TLVValue] = [:],
        acceleration: MotionSpeed? = Self.inertia
    ) throws -> MatterNode {
        var values: [AttributeID: TLVValue] = [A.fanModeSequence: u(sequence.rawValue)]
        if features.contains("SPD") { values[A.speedMax] = u(10) }
        return try singleClusterNode(
            0x002B, Self.fan, features: features, attributes: values.merging(attributes) { $1 },
            behavior: ClusterBehavior(fanAcceleration: acceleration), clock: clock)
    }

    func read(_ node: MatterNode, _ attribute: AttributeID) async -> TLVValue? { await node.value(1, Self.fan, attribute.rawValue) }
    func uint(_ node: MatterNode, _ attribute: AttributeID) async -> UInt64? { await node.uint(1, Self.fan, attribute.rawValue) }
    func write(_ node: MatterNode, _ attribute: AttributeID, _ value: TLVValue) async -> InteractionStatus {
        await node.write(1, Self.fan, attribute.rawValue, value)
    }
    func mode(_ node: MatterNode) async -> Mode? { await uint(node, A.fanMode).flatMap { Mode(rawValue: UInt8($0)) } }
    /// (FanMode, PercentSetting, SpeedSetting); nil for null.
    func settings(_ node: MatterNode) async -> (Mode?, UInt64?, UInt64?) {
        await (mode(node), uint(node, A.percentSetting), uint(node, A.speedSetting))
    }
    func step(_ node: MatterNode, increase: Bool, wrap: Bool? = nil, lowestOff: Bool? = nil) async -> InvokeResult {
        var members: [(UInt8, TLVValue)] = [(0, u(increase ? 0 : 1))]
        if let wrap { members.append((1, .bool(wrap))) }
        if let lowestOff { members.append((2, .bool(lowestOff))) }
        return await node.invoke(
            1, Self.fan, Clusters.FanControl.Command.step.rawValue, .structure(members.map { TLVElement(tag: .context($0.0), $0.1) }))
    }

    @Test func aModeSetsTheSettingsToTheTopOfItsBandAndTheMotorFollowsInASecond() async throws {
        let node = try fan()
        #expect(await settings(node) == (.off, 0, 0))
        #expect(await write(node, A.fanMode, u(Mode.high.rawValue)) == .success)
        #expect(await settings(node) == (.high, 100, 10))
        #expect(await uint(node, A.percentCurrent) == 0)
        await clock.advance(by: .milliseconds(500))
        #expect(await uint(node, A.percentCurrent) == 50)
        #expect(await uint(node, A.speedCurrent) == 5)
        await clock.advance(by: .milliseconds(500))
        #expect(await (uint(node, A.percentCurrent), uint(node, A.speedCurrent)) == (100, 10))
        // Medium is 34-66 %: 66 %, speed ceil(6.6) = 7; Low is 1-33 %: 33 %, speed 4.
        #expect(await write(node, A.fanMode, u(Mode.medium.rawValue)) == .success)
        #expect(await settings(node) == (.medium, 66, 7))
        await clock.advance(by: .seconds(1))
        #expect(await (uint(node, A.percentCurrent), uint(node, A.speedCurrent)) == (66, 7))
        #expect(await write(node, A.fanMode, u(Mode.low.rawValue)) == .success)
        #expect(await settings(node) == (.low, 33, 4))
        #expect(await write(node, A.fanMode, u(Mode.off.rawValue)) == .success)
        #expect(await settings(node) == (.off, 0, 0))
        await clock.advance(by: .seconds(1))
        #expect(await (uint(node, A.percentCurrent), uint(node, A.speedCurrent)) == (0, 0))
    }

    /// 4.4.6.4: PercentCurrent is the actual speed, which follows the setting; settings written
    /// faster than the motor's 100 ms tick (TC-FAN-3.1 writes 1 to 100 in a few seconds) must not
    /// hold it still.
    @Test func settingsWrittenFasterThanTheMotorTicksDoNotHoldItStill() async throws {
        let node = try fan()
        for percent in stride(from: 5, through: 100, by: 5) {
            #expect(await write(node, A.percentSetting, u(UInt64(percent))) == .success)
            await clock.advance(by: .milliseconds(50))
        }
        // Ten ticks in that second, 10 % each, each toward a goal that kept rising.
        #expect(await uint(node, A.percentCurrent) ?? 0 >= 80)
    }

    /// 4.4.6.4/4.4.6.7: PercentCurrent and SpeedCurrent are the actual speed. Without inertia in
    /// the profile the motor runs at the setting at once, so every report after a write moves the
    /// way the writes go (TC-FAN-3.1/3.2 subscribe right after writing FanMode High and then step
    /// down: a motor still spinning up reported 90, 100, 90, ... and failed them).
    @Test func withoutInertiaTheMotorRunsAtTheSettingAtOnce() async throws {
        let node = try fan(acceleration: nil)
        #expect(await write(node, A.fanMode, u(Mode.high.rawValue)) == .success)
        #expect(await (uint(node, A.percentCurrent), uint(node, A.speedCurrent)) == (100, 10))
        for percent in stride(from: 99, through: 0, by: -11) {
            #expect(await write(node, A.percentSetting, u(UInt64(percent))) == .success)
            #expect(await uint(node, A.percentCurrent) == UInt64(percent))
        }
        #expect(await write(node, A.speedSetting, u(7)) == .success)
        #expect(await (uint(node, A.percentCurrent), uint(node, A.speedCurrent)) == (70, 7))
        #expect(await write(node, A.fanMode, u(Mode.off.rawValue)) == .success)
        #expect(await (uint(node, A.percentCurrent), uint(node, A.speedCurrent)) == (0, 0))
    }

    /// A slower motor (10 % per second) takes ten seconds from standstill to full speed.
    @Test func theProfilesAccelerationTimesTheMotor() async throws {
        let node = try fan(acceleration: .percent100thsPerSecond(1_000))
        #expect(await write(node, A.fanMode, u(Mode.high.rawValue)) == .success)
        await clock.advance(by: .seconds(5))
        #expect(await uint(node, A.percentCurrent) == 50)
        await clock.advance(by: .seconds(5))
        #expect(await uint(node, A.percentCurrent) == 100)
    }

    @Test func autoNullsTheSettingsAndOnAndSmartStandForHighAndAuto() async throws {
        let node = try fan()
        #expect(await write(node, A.fanMode, u(Mode.auto.rawValue)) == .success)
        #expect(await mode(node) == .auto)
        #expect(await read(node, A.percentSetting) == .null)
        #expect(await read(node, A.speedSetting) == .null)
        // Without an Air Quality cluster to go by, the fan picks half speed.
        await clock.advance(by: .seconds(1))
        #expect(await uint(node, A.percentCurrent) == 50)
        #expect(await write(node, A.fanMode, u(Mode.on.rawValue)) == .success)
        #expect(await settings(node) == (.high, 100, 10))
        #expect(await write(node, A.fanMode, u(Mode.smart.rawValue)) == .success)
        #expect(await mode(node) == .auto)
    }

    @Test func percentAndSpeedWritesSetTheOtherAndTheMode() async throws {
        let node = try fan()
        #expect(await write(node, A.percentSetting, u(45)) == .success)
        #expect(await settings(node) == (.medium, 45, 5))
        #expect(await write(node, A.speedSetting, u(3)) == .success)
        #expect(await settings(node) == (.low, 30, 3))
        #expect(await write(node, A.speedSetting, u(9)) == .success)
        #expect(await settings(node) == (.high, 90, 9))
        #expect(await write(node, A.percentSetting, u(0)) == .success)
        #expect(await settings(node) == (.off, 0, 0))
        // Past SpeedMax and past 100 %: refused, nothing changes.
        #expect(await write(node, A.speedSetting, u(11)) == InteractionStatus(.constraintError))
        #expect(await write(node, A.percentSetting, u(101)) == InteractionStatus(.constraintError))
        #expect(await settings(node) == (.off, 0, 0))
        // Null changes nothing (4.4.6.3, 4.4.6.6).
        #expect(await write(node, A.percentSetting, u(70)) == .success)
        #expect(await write(node, A.percentSetting, .null) == .success)
        #expect(await write(node, A.speedSetting, .null) == .success)
        #expect(await settings(node) == (.high, 70, 7))
    }

    @Test func aSequenceWithoutMediumOrAutoRefusesThemAndSplitsTheRangeInTwo() async throws {
        let node = try fan(features: ["SPD"], sequence: .offLowHigh)
        #expect(await write(node, A.fanMode, u(Mode.medium.rawValue)) == InteractionStatus(.constraintError))
        #expect(await write(node, A.fanMode, u(Mode.auto.rawValue)) == InteractionStatus(.constraintError))
        #expect(await write(node, A.fanMode, u(Mode.smart.rawValue)) == .success)
        #expect(await settings(node) == (.high, 100, 10))
        #expect(await write(node, A.fanMode, u(Mode.low.rawValue)) == .success)
        #expect(await settings(node) == (.low, 50, 5))
        #expect(await write(node, A.percentSetting, u(51)) == .success)
        #expect(await mode(node) == .high)
    }

    @Test func stepMovesOneSpeedAndStopsOrWrapsAtTheEnds() async throws {
        let node = try fan()
        #expect(await write(node, A.speedSetting, u(9)) == .success)
        #expect(await step(node, increase: true) == .success)
        #expect(await uint(node, A.speedSetting) == 10)
        #expect(await step(node, increase: true) == .success)
        #expect(await uint(node, A.speedSetting) == 10)
        // Wrap goes round to the bottom, which is Off with LowestOff (its default).
        #expect(await step(node, increase: true, wrap: true) == .success)
        #expect(await settings(node) == (.off, 0, 0))
        #expect(await step(node, increase: false) == .success)
        #expect(await uint(node, A.speedSetting) == 0)
        #expect(await step(node, increase: false, wrap: true) == .success)
        #expect(await settings(node) == (.high, 100, 10))
        // Without LowestOff the bottom is speed 1.
        #expect(await write(node, A.speedSetting, u(1)) == .success)
        #expect(await step(node, increase: false, lowestOff: false) == .success)
        #expect(await settings(node) == (.low, 10, 1))
        #expect(await step(node, increase: false, wrap: true, lowestOff: false) == .success)
        #expect(await uint(node, A.speedSetting) == 10)
    }

    @Test func withoutMultiSpeedStepMovesTenPercent() async throws {
        let node = try fan(features: ["STEP"], sequence: .offLowMedHigh)
        #expect(await step(node, increase: true) == .success)
        #expect(await settings(node) == (.low, 10, nil))
        #expect(await write(node, A.percentSetting, u(95)) == .success)
        #expect(await step(node, increase: true) == .success)
        #expect(await uint(node, A.percentSetting) == 100)
    }

    @Test func rockAndWindTakeOnlyTheBitsTheyAreSupported() async throws {
        let node = try fan(attributes: [A.rockSupport: u(0b011), A.windSupport: u(0b10)])
        #expect(await write(node, A.rockSetting, u(0b100)) == InteractionStatus(.constraintError))
        #expect(await write(node, A.rockSetting, u(0b001)) == .success)
        #expect(await write(node, A.windSetting, u(0b01)) == InteractionStatus(.constraintError))
        #expect(await write(node, A.windSetting, u(0b10)) == .success)
        #expect(await uint(node, A.windSetting) == 0b10)
    }

    @Test func naturalWindGustsAndSleepWindSlowsDown() async throws {
        let node = try fan()
        #expect(await write(node, A.fanMode, u(Mode.high.rawValue)) == .success)
        await clock.advance(by: .seconds(1))
        #expect(await write(node, A.windSetting, u(Clusters.FanControl.WindBitmap.naturalWind.rawValue)) == .success)
        var seen: [UInt64] = []
        for _ in 0..<24 {
            await clock.advance(by: .milliseconds(500))
            seen.append(try #require(await uint(node, A.percentCurrent)))
        }
        #expect(seen.allSatisfy { (55...100).contains($0) })
        #expect(Set(seen).count > 4)
        #expect(await uint(node, A.percentSetting) == 100)
        // Sleep wind: a tenth of the setting less every 10 minutes, never below 30 %.
        #expect(await write(node, A.windSetting, u(Clusters.FanControl.WindBitmap.sleepWind.rawValue)) == .success)
        await clock.advance(by: .seconds(1))
        #expect(await uint(node, A.percentCurrent) == 100)
        await clock.advance(by: .seconds(600))
        #expect(await uint(node, A.percentCurrent) == 90)
        await clock.advance(by: .seconds(6 * 600))
        #expect(await uint(node, A.percentCurrent) == 30)
        await clock.advance(by: .seconds(600))
        #expect(await uint(node, A.percentCurrent) == 30)
        #expect(await write(node, A.windSetting, u(0)) == .success)
        await clock.advance(by: .seconds(1))
        #expect(await uint(node, A.percentCurrent) == 100)
    }

    @Test func theRemoteSetsAModeOrASpeed() async throws {
        let node = try fan(features: ["SPD"], sequence: .offLowMedHigh)
        try await node.act(.fan(.mode(.high)))
        #expect(await settings(node) == (.high, 100, 10))
        try await node.act(.fan(.percent(40)))
        #expect(await settings(node) == (.medium, 40, 4))
        await #expect(throws: PhysicalActionError.self) { try await node.act(.fan(.mode(.auto))) }
        await #expect(throws: PhysicalActionError.self) { try await node.act(.fan(.percent(120))) }
    }

    @Test func aProfileGivingOnlyTheModeStartsWithItsSettings() async throws {
        let node = try fan(attributes: [A.fanMode: u(Mode.medium.rawValue)])
        #expect(await settings(node) == (.medium, 66, 7))
        #expect(await uint(node, A.percentCurrent) == 66)
    }
}
