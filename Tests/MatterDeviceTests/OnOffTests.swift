import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// On/Off (Application Cluster spec 1.5) with the Lighting feature.
@Suite struct OnOffTests {
    let clock = ManualClock()
    let onOff: UInt32 = 0x0000, globalSceneControl: UInt32 = 0x4000, onTime: UInt32 = 0x4001
    let offWaitTime: UInt32 = 0x4002, startUpOnOff: UInt32 = 0x4003
    let off: UInt32 = 0x00, on: UInt32 = 0x01, toggle: UInt32 = 0x02
    let offWithEffect: UInt32 = 0x40, onWithRecallGlobalScene: UInt32 = 0x41, onWithTimedOff: UInt32 = 0x42

    @Test func onOffAndToggle() async throws {
        let node = try dimmableLight(on: false, clock: clock)
        let changes = node.changes
        #expect(await node.invoke(1, IDs.onOff, on) == .success)
        #expect(await node.bool(1, IDs.onOff, onOff) == true)
        #expect(await node.invoke(1, IDs.onOff, toggle) == .success)
        #expect(await node.bool(1, IDs.onOff, onOff) == false)
        #expect(await node.invoke(1, IDs.onOff, toggle) == .success)
        #expect(await node.bool(1, IDs.onOff, onOff) == true)
        #expect(await node.invoke(1, IDs.onOff, on) == .success)
        #expect(await node.invoke(1, IDs.onOff, off) == .success)
        let seen = await drain(changes, stopping: node)
        // A second On while on changes nothing.
        #expect(seen.bools(IDs.onOff, onOff) == [true, false, true, false])
    }

    @Test func onWithTimedOffTurnsOffWhenOnTimeRunsOut() async throws {
        let node = try dimmableLight(on: false, clock: clock)
        // OnTime 2 s, OffWaitTime 1 s.
        let result = await node.invoke(1, IDs.onOff, onWithTimedOff, fields((0, u(0)), (1, u(20)), (2, u(10))))
        #expect(result == .success)
        #expect(await node.bool(1, IDs.onOff, onOff) == true)
        #expect(await node.uint(1, IDs.onOff, onTime) == 20)
        #expect(await node.uint(1, IDs.onOff, offWaitTime) == 10)

        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.onOff, onTime) == 10)
        #expect(await node.bool(1, IDs.onOff, onOff) == true)

        await clock.advance(by: .milliseconds(900))
        #expect(await node.uint(1, IDs.onOff, onTime) == 1)
        await clock.advance(by: .milliseconds(100))
        #expect(await node.uint(1, IDs.onOff, onTime) == 0)
        #expect(await node.bool(1, IDs.onOff, onOff) == false)
        // 1.5.7.6: reaching OnTime 0 sets OffWaitTime 0 as it turns off.
        #expect(await node.uint(1, IDs.onOff, offWaitTime) == 0)
        #expect(clock.pendingCount <= 1)
    }

    @Test func offDuringTimedOnStartsTheOffWaitGuard() async throws {
        let node = try dimmableLight(on: false, clock: clock)
        _ = await node.invoke(1, IDs.onOff, onWithTimedOff, fields((0, u(0)), (1, u(50)), (2, u(30))))
        await clock.advance(by: .seconds(1))
        _ = await node.invoke(1, IDs.onOff, off)
        #expect(await node.uint(1, IDs.onOff, onTime) == 0)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.onOff, offWaitTime) == 20)

        // In the guard, OnWithTimedOff only shortens OffWaitTime and leaves the light off.
        _ = await node.invoke(1, IDs.onOff, onWithTimedOff, fields((0, u(0)), (1, u(50)), (2, u(5))))
        #expect(await node.bool(1, IDs.onOff, onOff) == false)
        #expect(await node.uint(1, IDs.onOff, offWaitTime) == 5)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.onOff, offWaitTime) == 0)
    }

    /// TC-OO-2.3 step 15: a 300-tenth OffWaitTime reads 0 thirty seconds after the Off even
    /// when every tick's timer fires late (1.5.6.3: OffWaitTime counts tenths of a second).
    @Test func theTimedCountdownKeepsToTheClockWhenItsTimerFiresLate() async throws {
        let node = try dimmableLight(on: true, clock: LateClock(base: clock, lateness: .milliseconds(10)))
        _ = await node.invoke(1, IDs.onOff, onWithTimedOff, fields((0, u(1)), (1, u(300)), (2, u(300))))
        await clock.advance(by: .seconds(10))
        #expect((199...201).contains(await node.uint(1, IDs.onOff, onTime) ?? 0))
        _ = await node.invoke(1, IDs.onOff, off)
        await clock.advance(by: .seconds(15))
        #expect((149...151).contains(await node.uint(1, IDs.onOff, offWaitTime) ?? 0))
        await clock.advance(by: .seconds(15) + .milliseconds(20))
        #expect(await node.uint(1, IDs.onOff, offWaitTime) == 0)
    }

    @Test func acceptOnlyWhenOnIgnoresTheCommandWhileOff() async throws {
        let node = try dimmableLight(on: false, clock: clock)
        let result = await node.invoke(1, IDs.onOff, onWithTimedOff, fields((0, u(1)), (1, u(20)), (2, u(0))))
        #expect(result == .success)
        #expect(await node.bool(1, IDs.onOff, onOff) == false)
        #expect(await node.uint(1, IDs.onOff, onTime) == 0)
    }

    @Test func offWithEffectStoresTheGlobalSceneAndOnWithRecallRestoresIt() async throws {
        let node = try dimmableLight(on: true, level: 150, clock: clock)
        // DelayedAllOff / NoFade.
        #expect(await node.invoke(1, IDs.onOff, offWithEffect, fields((0, u(0)), (1, u(1)))) == .success)
        #expect(await node.bool(1, IDs.onOff, onOff) == false)
        #expect(await node.bool(1, IDs.onOff, globalSceneControl) == false)

        _ = await node.invoke(1, IDs.levelControl, 0x00, fields((0, u(30)), (1, u(0)), (2, u(1)), (3, u(1))))
        #expect(await node.uint(1, IDs.levelControl, 0) == 30)

        #expect(await node.invoke(1, IDs.onOff, onWithRecallGlobalScene) == .success)
        #expect(await node.bool(1, IDs.onOff, onOff) == true)
        #expect(await node.bool(1, IDs.onOff, globalSceneControl) == true)
        #expect(await node.uint(1, IDs.levelControl, 0) == 150)

        // While GlobalSceneControl is TRUE the command is ignored.
        _ = await node.invoke(1, IDs.levelControl, 0x00, fields((0, u(60)), (1, u(0)), (2, u(0)), (3, u(0))))
        _ = await node.invoke(1, IDs.onOff, onWithRecallGlobalScene)
        #expect(await node.uint(1, IDs.levelControl, 0) == 60)
    }

    @Test func offWithEffectFadesOverTheEffectTime() async throws {
        let node = try dimmableLight(on: true, level: 201, clock: clock)
        // DelayedAllOff / fade to off in 0.8 s.
        _ = await node.invoke(1, IDs.onOff, offWithEffect, fields((0, u(0)), (1, u(0))))
        await clock.advance(by: .milliseconds(400))
        #expect(await node.uint(1, IDs.levelControl, 0) == 101)
        await clock.advance(by: .milliseconds(400))
        #expect(await node.bool(1, IDs.onOff, onOff) == false)
    }

    @Test func startUpOnOffAppliesToThePersistedValue() async throws {
        let forcedOff = try dimmableLight(on: true, onOffAttributes: [AttributeID(startUpOnOff): u(0)], clock: clock)
        #expect(await forcedOff.bool(1, IDs.onOff, onOff) == false)
        let forcedOn = try dimmableLight(on: false, onOffAttributes: [AttributeID(startUpOnOff): u(1)], clock: clock)
        #expect(await forcedOn.bool(1, IDs.onOff, onOff) == true)
        let toggled = try dimmableLight(on: false, onOffAttributes: [AttributeID(startUpOnOff): u(2)], clock: clock)
        #expect(await toggled.bool(1, IDs.onOff, onOff) == true)
        let kept = try dimmableLight(on: true, onOffAttributes: [AttributeID(startUpOnOff): .null], clock: clock)
        #expect(await kept.bool(1, IDs.onOff, onOff) == true)
    }

    @Test func lightingCommandsNeedTheLightingFeature() async throws {
        let node = try dimmableLight(on: false, onOffFeatures: [], clock: clock)
        let result = await node.invoke(1, IDs.onOff, onWithTimedOff, fields((0, u(0)), (1, u(20)), (2, u(0))))
        #expect(result == .status(InteractionStatus(.unsupportedCommand)))
        #expect(uintList(await node.value(1, IDs.onOff, 0xFFF9)) == [0, 1, 2])
        #expect(await node.value(1, IDs.onOff, onTime) == nil)
    }
}
