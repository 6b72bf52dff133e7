import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Level Control (Application Cluster spec 1.6) on a dimmable light, on a manual clock.
@Suite struct LevelControlTests {
    let clock = ManualClock()

    // Attribute and command IDs used below.
    let currentLevel: UInt32 = 0x0000, remainingTime: UInt32 = 0x0001, options: UInt32 = 0x000F
    let moveToLevel: UInt32 = 0x00, move: UInt32 = 0x01, step: UInt32 = 0x02, stop: UInt32 = 0x03
    let moveToLevelWithOnOff: UInt32 = 0x04, moveWithOnOff: UInt32 = 0x05, stepWithOnOff: UInt32 = 0x06

    func moveToLevelFields(_ level: Int, tenths: Int?, mask: Int = 0, override: Int = 0) -> TLVValue {
        fields((0, u(level)), (1, tenths.map { u($0) } ?? .null), (2, u(mask)), (3, u(override)))
    }

    @Test func moveToLevelReachesTargetAfterTransitionTimeReportingQuietly() async throws {
        let node = try dimmableLight(level: 50, clock: clock)
        let changes = node.changes
        #expect(await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(150, tenths: 10)) == .success)
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 50)
        #expect(await node.uint(1, IDs.levelControl, remainingTime) == 10)

        await clock.advance(by: .milliseconds(500))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 100)
        #expect(await node.uint(1, IDs.levelControl, remainingTime) == 5)

        await clock.advance(by: .milliseconds(499))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 140)

        await clock.advance(by: .milliseconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 150)
        #expect(await node.uint(1, IDs.levelControl, remainingTime) == 0)

        // Reads follow every 100 ms step; reports follow quieter reporting (1.6.6.2, 1.6.6.3):
        // CurrentLevel at most once a second from the start, so a one-second transition only at
        // its end; RemainingTime not at all: 10 tenths is not "higher than 10", and the 0 it ends
        // at is the value last reported, so for a subscriber it never changed (Core 7.7.9).
        let seen = await drain(changes, stopping: node)
        #expect(seen.values(IDs.levelControl, currentLevel) == [150])
        #expect(seen.values(IDs.levelControl, remainingTime) == [])
    }

    @Test func everyChangeBumpsTheClusterDataVersionByOne() async throws {
        let node = try dimmableLight(level: 50, clock: clock)
        let cluster = ClusterPath(endpoint: 1, cluster: IDs.levelControl)
        let before = try #require(await node.dataVersion(of: cluster))
        let changes = node.changes
        _ = await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(60, tenths: 10))
        await clock.advance(by: .seconds(1))
        let seen = await drain(changes, stopping: node).filter { $0.path.cluster == IDs.levelControl }
        #expect(!seen.isEmpty)
        #expect(seen.map(\.dataVersion) == (1...UInt32(seen.count)).map { before &+ $0 })
        #expect(await node.dataVersion(of: cluster) == before &+ UInt32(seen.count))
    }

    @Test func nullTransitionTimeUsesOnOffTransitionTime() async throws {
        let node = try dimmableLight(level: 50, levelAttributes: [AttributeID(0x0010): u(20)], clock: clock)
        _ = await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(250, tenths: nil))
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 150)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 250)
    }

    @Test func moveRunsAtTheRateUntilMaxLevelAndStopHaltsIt() async throws {
        let node = try dimmableLight(level: 54, clock: clock)
        // Up at 100 units/s: 54 → 254 takes 2 s.
        #expect(await node.invoke(1, IDs.levelControl, move, fields((0, u(0)), (1, u(100)), (2, u(0)), (3, u(0)))) == .success)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 154)
        await clock.advance(by: .seconds(5))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 254)

        // Down at 50 units/s, stopped after 1 s.
        _ = await node.invoke(1, IDs.levelControl, move, fields((0, u(1)), (1, u(50)), (2, u(0)), (3, u(0))))
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 204)
        #expect(await node.uint(1, IDs.levelControl, remainingTime) ?? 0 > 0)
        #expect(await node.invoke(1, IDs.levelControl, stop, fields((0, u(0)), (1, u(0)))) == .success)
        #expect(await node.uint(1, IDs.levelControl, remainingTime) == 0)
        await clock.advance(by: .seconds(3))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 204)
    }

    @Test func moveWithZeroRateIsInvalid() async throws {
        let node = try dimmableLight(level: 54, clock: clock)
        let result = await node.invoke(1, IDs.levelControl, move, fields((0, u(0)), (1, u(0)), (2, u(0)), (3, u(0))))
        #expect(result == .status(InteractionStatus(.invalidCommand)))
    }

    @Test func stepMovesBySizeAndIsCutShortAtMaxLevel() async throws {
        let node = try dimmableLight(level: 100, clock: clock)
        _ = await node.invoke(1, IDs.levelControl, step, fields((0, u(0)), (1, u(20)), (2, u(10)), (3, u(0)), (4, u(0))))
        await clock.advance(by: .milliseconds(500))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 110)
        await clock.advance(by: .milliseconds(500))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 120)

        // Down 30 over 1 s.
        _ = await node.invoke(1, IDs.levelControl, step, fields((0, u(1)), (1, u(30)), (2, u(10)), (3, u(0)), (4, u(0))))
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 90)

        // From 244, a step of 40 stops at 254 after a quarter of the time.
        _ = await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(244, tenths: 0))
        _ = await node.invoke(1, IDs.levelControl, step, fields((0, u(0)), (1, u(40)), (2, u(40)), (3, u(0)), (4, u(0))))
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 254)
        #expect(await node.uint(1, IDs.levelControl, remainingTime) == 0)

        let zeroStep = await node.invoke(1, IDs.levelControl, step, fields((0, u(0)), (1, u(0)), (2, u(10)), (3, u(0)), (4, u(0))))
        #expect(zeroStep == .status(InteractionStatus(.invalidCommand)))
    }

    @Test func levelsAreClampedToMinLevelAndMaxLevel() async throws {
        let node = try dimmableLight(
            level: 100, levelAttributes: [AttributeID(0x0002): u(10), AttributeID(0x0003): u(200)], clock: clock)
        _ = await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(250, tenths: 0))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 200)
        _ = await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(3, tenths: 0))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 10)
        _ = await node.invoke(1, IDs.levelControl, move, fields((0, u(0)), (1, u(254)), (2, u(0)), (3, u(0))))
        await clock.advance(by: .seconds(2))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 200)
        // Level 255 is outside the field's constraint (1.6.7.1: max 254).
        let tooHigh = await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(255, tenths: 0))
        #expect(tooHigh == .status(InteractionStatus(.constraintError)))
    }

    @Test func commandsWithoutOnOffOnlyRunWhileOffWhenExecuteIfOffIsSet() async throws {
        let node = try dimmableLight(on: false, level: 100, clock: clock)
        // Options.ExecuteIfOff is 0: ignored, but still a success (1.6.6.9).
        #expect(await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(200, tenths: 0)) == .success)
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 100)

        // The command's mask/override set ExecuteIfOff for this command only.
        _ = await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(150, tenths: 0, mask: 1, override: 1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 150)
        #expect(await node.bool(1, IDs.onOff, 0) == false)

        // With the Options attribute set, commands run while off...
        #expect(await node.write(1, IDs.levelControl, options, u(1)) == .success)
        _ = await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(120, tenths: 0))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 120)
        // ...unless the command masks the bit off.
        _ = await node.invoke(1, IDs.levelControl, moveToLevel, moveToLevelFields(90, tenths: 0, mask: 1, override: 0))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 120)
    }

    @Test func withOnOffCommandsTurnOnWhenRaisingAndOffAtMinLevel() async throws {
        let node = try dimmableLight(on: false, level: 1, clock: clock)
        let changes = node.changes
        _ = await node.invoke(1, IDs.levelControl, moveToLevelWithOnOff, moveToLevelFields(200, tenths: 10))
        // On before the level starts to rise (1.6.7.6).
        #expect(await node.bool(1, IDs.onOff, 0) == true)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 200)

        // Down to MinLevel over 1 s: still on half-way, off at the end.
        _ = await node.invoke(1, IDs.levelControl, moveToLevelWithOnOff, moveToLevelFields(0, tenths: 10))
        await clock.advance(by: .milliseconds(500))
        #expect(await node.bool(1, IDs.onOff, 0) == true)
        await clock.advance(by: .milliseconds(500))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 1)
        #expect(await node.bool(1, IDs.onOff, 0) == false)

        // MoveWithOnOff up turns on again; StepWithOnOff down to the minimum turns off.
        _ = await node.invoke(1, IDs.levelControl, moveWithOnOff, fields((0, u(0)), (1, u(100)), (2, u(0)), (3, u(0))))
        #expect(await node.bool(1, IDs.onOff, 0) == true)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 101)
        _ = await node.invoke(1, IDs.levelControl, stepWithOnOff, fields((0, u(1)), (1, u(200)), (2, u(0)), (3, u(0)), (4, u(0))))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 1)
        #expect(await node.bool(1, IDs.onOff, 0) == false)

        let seen = await drain(changes, stopping: node)
        #expect(seen.bools(IDs.onOff, 0) == [true, false, true, false])
    }

    @Test func offFadesToMinLevelThenRestoresAndOnFadesBackUp() async throws {
        // OnOffTransitionTime 1 s, OnLevel null (1.6.4.1.1).
        let node = try dimmableLight(on: true, level: 201, levelAttributes: [AttributeID(0x0010): u(10)], clock: clock)
        let changes = node.changes
        #expect(await node.invoke(1, IDs.onOff, 0x00) == .success)  // Off
        await clock.advance(by: .milliseconds(500))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 101)
        // OnOff reads FALSE from the Off command on, while the level fades.
        #expect(await node.bool(1, IDs.onOff, 0) == false)
        await clock.advance(by: .milliseconds(500))
        #expect(await node.bool(1, IDs.onOff, 0) == false)
        // Off: the level goes back to the stored level for the next On.
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 201)

        #expect(await node.invoke(1, IDs.onOff, 0x01) == .success)  // On
        #expect(await node.bool(1, IDs.onOff, 0) == true)
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 1)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 201)

        let seen = await drain(changes, stopping: node)
        let levels = seen.values(IDs.levelControl, currentLevel)
        // Quieter reporting: the one-second fades report no step (181, 101, …), only their ends.
        #expect(levels.allSatisfy { $0 == 1 || $0 == 201 }, "\(levels)")
        #expect(levels.contains(1))
        #expect(levels.last == 201)
        #expect(seen.bools(IDs.onOff, 0) == [false, true])
    }

    @Test func onDuringOffFadeTurnsBackFromTheCurrentLevel() async throws {
        let node = try dimmableLight(on: true, level: 201, levelAttributes: [AttributeID(0x0010): u(10)], clock: clock)
        _ = await node.invoke(1, IDs.onOff, 0x00)  // Off
        await clock.advance(by: .milliseconds(500))
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 101)
        _ = await node.invoke(1, IDs.onOff, 0x02)  // Toggle: the light counts as off, so it turns on
        await clock.advance(by: .seconds(1))
        #expect(await node.bool(1, IDs.onOff, 0) == true)
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 201)
    }

    @Test func onGoesToOnLevelWhenDefined() async throws {
        let node = try dimmableLight(on: false, level: 80, levelAttributes: [AttributeID(0x0011): u(180)], clock: clock)
        _ = await node.invoke(1, IDs.onOff, 0x01)
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 180)
        // With OnLevel defined, Off leaves the level at the minimum.
        _ = await node.invoke(1, IDs.onOff, 0x00)
        #expect(await node.uint(1, IDs.levelControl, currentLevel) == 1)
    }

    @Test func startUpCurrentLevelAppliesAtStart() async throws {
        let toMinimum = try dimmableLight(level: 150, levelAttributes: [AttributeID(0x4000): u(0)], clock: clock)
        #expect(await toMinimum.uint(1, IDs.levelControl, currentLevel) == 1)
        let toValue = try dimmableLight(level: 150, levelAttributes: [AttributeID(0x4000): u(42)], clock: clock)
        #expect(await toValue.uint(1, IDs.levelControl, currentLevel) == 42)
        let keep = try dimmableLight(level: 150, levelAttributes: [AttributeID(0x4000): .null], clock: clock)
        #expect(await keep.uint(1, IDs.levelControl, currentLevel) == 150)
    }

    @Test func malformedFieldsAreInvalidCommands() async throws {
        let node = try dimmableLight(level: 50, clock: clock)
        let missingLevel = await node.invoke(1, IDs.levelControl, moveToLevel, fields((1, u(10)), (2, u(0)), (3, u(0))))
        #expect(missingLevel == .status(InteractionStatus(.invalidCommand)))
        let wrongType = await node.invoke(1, IDs.levelControl, moveToLevel, fields((0, .utf8("high")), (1, u(10)), (2, u(0)), (3, u(0))))
        #expect(wrongType == .status(InteractionStatus(.invalidCommand)))
        let notAStruct = await node.invoke(1, IDs.levelControl, moveToLevel, u(5))
        #expect(notAStruct == .status(InteractionStatus(.invalidCommand)))
    }
}
