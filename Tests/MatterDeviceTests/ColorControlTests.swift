import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Color Control (Application Cluster spec 3.2) on an extended colour light, on a manual clock:
// transitions in each colour space, hue wrapping, the ExecuteIfOff option, StopMoveStep, the
// colour loop, the coupling with Level Control and StartUpColorTemperatureMireds.
@Suite struct ColorControlTests {
    let clock = ManualClock()
    static let color = ClusterID(0x0300)
    enum A {
        static let hue: UInt32 = 0x0000, saturation: UInt32 = 0x0001, remaining: UInt32 = 0x0002
        static let x: UInt32 = 0x0003, y: UInt32 = 0x0004, mireds: UInt32 = 0x0007, mode: UInt32 = 0x0008
        static let enhancedHue: UInt32 = 0x4000, enhancedMode: UInt32 = 0x4001, loopActive: UInt32 = 0x4002
        static let loopStored: UInt32 = 0x4006, capabilities: UInt32 = 0x400A
    }
    enum C {
        static let moveToHue: UInt32 = 0x00, moveHue: UInt32 = 0x01, moveToHueAndSaturation: UInt32 = 0x06
        static let moveToColor: UInt32 = 0x07, moveColor: UInt32 = 0x08, stepColor: UInt32 = 0x09
        static let moveToColorTemperature: UInt32 = 0x0A, enhancedMoveToHue: UInt32 = 0x40, colorLoopSet: UInt32 = 0x44
        static let stopMoveStep: UInt32 = 0x47, moveColorTemperature: UInt32 = 0x4B, stepColorTemperature: UInt32 = 0x4C
    }

    func light(
        on: Bool = true, features: Set<String> = ["HS", "EHUE", "CL", "XY", "CT"], level: UInt64 = 254, levelOptions: UInt64 = 0,
        color: [AttributeID: TLVValue] = [:]
    ) throws -> MatterNode {
        var attributes: [AttributeID: TLVValue] = [
            AttributeID(0x400B): u(153), AttributeID(0x400C): u(500), AttributeID(0x400D): u(200), AttributeID(0x0007): u(370),
        ]
        attributes.merge(color) { _, given in given }
        return try makeNode(
            [
                rootEndpoint(),
                EndpointDescription(
                    number: 1, deviceTypes: [deviceType(DeviceTypeID(0x010D))],
                    serverClusters: [
                        ClusterInstanceDescription(id: IDs.identify),
                        ClusterInstanceDescription(id: IDs.onOff, features: ["LT"], attributes: [AttributeID(0x0000): .bool(on)]),
                        ClusterInstanceDescription(
                            id: IDs.levelControl, features: ["OO", "LT"],
                            attributes: [AttributeID(0x0000): .unsigned(level), AttributeID(0x000F): .unsigned(levelOptions)]),
                        ClusterInstanceDescription(id: Self.color, features: features, attributes: attributes),
                    ]),
            ], clock: clock)
    }

    func get(_ node: MatterNode, _ attribute: UInt32) async -> UInt64? { await node.uint(1, Self.color, attribute) }

    @Test func capabilitiesAndAcceptedCommandsFollowTheFeatures() async throws {
        let node = try light(features: ["CT"])
        #expect(await get(node, A.capabilities) == 0x10)
        #expect(await get(node, A.mode) == 2)
        let accepted = uintList(await node.value(1, Self.color, IDs.acceptedCommandList.rawValue))
        #expect(accepted == [0x0A, 0x47, 0x4B, 0x4C])
        #expect(
            await node.invoke(1, Self.color, C.moveToColor, fields((0, u(100)), (1, u(100)), (2, u(0)), (3, u(0)), (4, u(0))))
                == InvokeResult.failure(.unsupportedCommand))
    }

    @Test func moveToColorTemperatureRunsOnTheClockWithinThePhysicalRange() async throws {
        let node = try light()
        let move = fields((0, u(270)), (1, u(10)), (2, u(0)), (3, u(0)))
        #expect(await node.invoke(1, Self.color, C.moveToColorTemperature, move) == .success)
        #expect(await get(node, A.remaining) == 10)
        await clock.advance(by: .milliseconds(500))
        #expect(await get(node, A.mireds) == 320)
        #expect(await get(node, A.remaining) == 5)
        await clock.advance(by: .milliseconds(500))
        #expect(await (get(node, A.mireds), get(node, A.remaining)) == (270, 0))
        // Past ColorTempPhysicalMinMireds: clamped to it.
        _ = await node.invoke(1, Self.color, C.moveToColorTemperature, fields((0, u(100)), (1, u(0)), (2, u(0)), (3, u(0))))
        #expect(await get(node, A.mireds) == 153)
        #expect(await (get(node, A.mode), get(node, A.enhancedMode)) == (2, 2))
    }

    @Test func eachCommandSwitchesTheColorModeToItsColorSpace() async throws {
        let node = try light()
        _ = await node.invoke(1, Self.color, C.moveToColor, fields((0, u(30_000)), (1, u(20_000)), (2, u(0)), (3, u(0)), (4, u(0))))
        #expect(await (get(node, A.x), get(node, A.y), get(node, A.mode), get(node, A.enhancedMode)) == (30_000, 20_000, 1, 1))
        _ = await node.invoke(1, Self.color, C.moveToHueAndSaturation, fields((0, u(100)), (1, u(200)), (2, u(0)), (3, u(0)), (4, u(0))))
        #expect(await (get(node, A.hue), get(node, A.saturation), get(node, A.mode), get(node, A.enhancedMode)) == (100, 200, 0, 0))
        // A saturation command is a hue-and-saturation one too (MoveSaturation, 0x04).
        _ = await node.invoke(1, Self.color, C.moveToColor, fields((0, u(100)), (1, u(100)), (2, u(0)), (3, u(0)), (4, u(0))))
        _ = await node.invoke(1, Self.color, 0x04, fields((0, u(1)), (1, u(10)), (2, u(0)), (3, u(0))))
        #expect(await get(node, A.mode) == 0)
        _ = await node.invoke(1, Self.color, C.enhancedMoveToHue, fields((0, u(0x8000)), (1, u(0)), (2, u(0)), (3, u(0)), (4, u(0))))
        #expect(await (get(node, A.enhancedHue), get(node, A.hue), get(node, A.mode), get(node, A.enhancedMode)) == (0x8000, 0x80, 0, 3))
    }

    @Test func hueGoesTheWayTheDirectionSays() async throws {
        let node = try light(color: [AttributeID(0x0000): u(250)])
        // Shortest from 250 to 10 is up through 254 and 0: 15 steps over 1.5 s.
        _ = await node.invoke(1, Self.color, C.moveToHue, fields((0, u(10)), (1, u(0)), (2, u(15)), (3, u(0)), (4, u(0))))
        await clock.advance(by: .milliseconds(500))
        #expect(await get(node, A.hue) == 0)
        await clock.advance(by: .seconds(1))
        #expect(await get(node, A.hue) == 10)
        // Down from 10 to 20 goes the long way: 245 steps.
        _ = await node.invoke(1, Self.color, C.moveToHue, fields((0, u(20)), (1, u(3)), (2, u(245)), (3, u(0)), (4, u(0))))
        await clock.advance(by: .milliseconds(1_000))
        #expect(await get(node, A.hue) == 0)
        await clock.advance(by: .milliseconds(23_500))
        #expect(await get(node, A.hue) == 20)
        // A hue Move at 20 per second wraps around until stopped.
        _ = await node.invoke(1, Self.color, C.moveHue, fields((0, u(1)), (1, u(20)), (2, u(0)), (3, u(0))))
        await clock.advance(by: .seconds(13))
        #expect(await get(node, A.hue) == (20 + 260) % 255)
        _ = await node.invoke(1, Self.color, C.moveHue, fields((0, u(0)), (1, u(0)), (2, u(0)), (3, u(0))))
        let stopped = await get(node, A.hue)
        await clock.advance(by: .seconds(2))
        #expect(await get(node, A.hue) == stopped)
        // A zero rate with Up is an invalid command.
        #expect(
            await node.invoke(1, Self.color, C.moveHue, fields((0, u(1)), (1, u(0)), (2, u(0)), (3, u(0))))
                == InvokeResult.failure(.invalidCommand))
    }

    @Test func moveAndStepStopAtTheirBoundsAndStopMoveStepHolds() async throws {
        let node = try light()
        // Down at 100 mireds per second from 370, bounded below by 300: 0.7 s.
        _ = await node.invoke(
            1, Self.color, C.moveColorTemperature, fields((0, u(3)), (1, u(100)), (2, u(300)), (3, u(0)), (4, u(0)), (5, u(0))))
        await clock.advance(by: .seconds(2))
        #expect(await get(node, A.mireds) == 300)
        // Up, stopped half-way by StopMoveStep.
        _ = await node.invoke(
            1, Self.color, C.moveColorTemperature, fields((0, u(1)), (1, u(100)), (2, u(0)), (3, u(0)), (4, u(0)), (5, u(0))))
        await clock.advance(by: .milliseconds(500))
        #expect(await node.invoke(1, Self.color, C.stopMoveStep, fields((0, u(0)), (1, u(0)))) == .success)
        #expect(await (get(node, A.mireds), get(node, A.remaining)) == (350, 0))
        await clock.advance(by: .seconds(5))
        #expect(await get(node, A.mireds) == 350)
        // A step past the maximum given stops at it.
        _ = await node.invoke(
            1, Self.color, C.stepColorTemperature, fields((0, u(1)), (1, u(200)), (2, u(0)), (3, u(0)), (4, u(400)), (5, u(0)), (6, u(0))))
        #expect(await get(node, A.mireds) == 400)
        // x/y: a Move at −1000/s on x only; a Step of nothing is invalid.
        _ = await node.invoke(1, Self.color, C.moveToColor, fields((0, u(3_000)), (1, u(3_000)), (2, u(0)), (3, u(0)), (4, u(0))))
        _ = await node.invoke(1, Self.color, C.moveColor, fields((0, .signed(-1_000)), (1, .signed(0)), (2, u(0)), (3, u(0))))
        await clock.advance(by: .seconds(1))
        #expect(await (get(node, A.x), get(node, A.y)) == (2_000, 3_000))
        await clock.advance(by: .seconds(5))
        #expect(await get(node, A.x) == 0)
        #expect(
            await node.invoke(1, Self.color, C.stepColor, fields((0, .signed(0)), (1, .signed(0)), (2, u(0)), (3, u(0)), (4, u(0))))
                == InvokeResult.failure(.invalidCommand))
        _ = await node.invoke(1, Self.color, C.stepColor, fields((0, .signed(500)), (1, .signed(-500)), (2, u(0)), (3, u(0)), (4, u(0))))
        #expect(await (get(node, A.x), get(node, A.y)) == (500, 2_500))
    }

    /// TC-CC-2.2 step 34/40: MoveColorTemperature Down at 65535 mireds/s is done within
    /// milliseconds, RemainingTime going 0 → 1 tenth (not reportable, 3.2.7.4) → 0. That 0 is
    /// the value last reported, so it is not reported again (Core 7.7.9 Quieter Reporting): the
    /// case counts the reports of the next two transitions and wants exactly theirs.
    @Test func aMoveDoneWithinATickReportsNoRemainingTime() async throws {
        let node = try light()
        let changes = node.changes
        _ = await node.invoke(
            1, Self.color, C.moveColorTemperature, fields((0, u(3)), (1, u(65535)), (2, u(0)), (3, u(0)), (4, u(0)), (5, u(0))))
        await clock.advance(by: .seconds(1))
        #expect(await (get(node, A.mireds), get(node, A.remaining)) == (153, 0))
        let seen = await drain(changes, stopping: node)
        #expect(seen.values(Self.color, A.remaining) == [])
        #expect(seen.values(Self.color, A.mireds).last == 153)
    }

    @Test func whileOffACommandRunsOnlyWithExecuteIfOff() async throws {
        let node = try light(on: false)
        _ = await node.invoke(1, Self.color, C.moveToColorTemperature, fields((0, u(200)), (1, u(0)), (2, u(0)), (3, u(0))))
        #expect(await get(node, A.mireds) == 370)
        // OptionsMask selects ExecuteIfOff and OptionsOverride sets it.
        _ = await node.invoke(1, Self.color, C.moveToColorTemperature, fields((0, u(200)), (1, u(0)), (2, u(1)), (3, u(1))))
        #expect(await get(node, A.mireds) == 200)
        // The Options attribute sets it for every command; a mask with a clear override wins.
        #expect(await node.write(1, Self.color, 0x000F, u(1)) == .success)
        _ = await node.invoke(1, Self.color, C.moveToColorTemperature, fields((0, u(300)), (1, u(0)), (2, u(0)), (3, u(0))))
        #expect(await get(node, A.mireds) == 300)
        _ = await node.invoke(1, Self.color, C.moveToColorTemperature, fields((0, u(400)), (1, u(0)), (2, u(1)), (3, u(0))))
        #expect(await get(node, A.mireds) == 300)
    }

    @Test func theColorLoopCirclesTheEnhancedHueAndStopsBackWhereItStarted() async throws {
        let node = try light(color: [AttributeID(0x4000): u(1_000), AttributeID(0x4004): u(10), AttributeID(0x4003): u(1)])
        // UpdateAction | UpdateStartHue, activate from the start hue 0x2000.
        let activate = fields((0, u(0x09)), (1, u(1)), (2, u(1)), (3, u(0)), (4, u(0x2000)), (5, u(0)), (6, u(0)))
        #expect(await node.invoke(1, Self.color, C.colorLoopSet, activate) == .success)
        #expect(await (get(node, A.loopActive), get(node, A.loopStored), get(node, A.enhancedHue)) == (1, 1_000, 0x2000))
        #expect(await get(node, A.enhancedMode) == 3)
        // Round once in 10 s: 6553 per second.
        await clock.advance(by: .seconds(2))
        #expect(await get(node, A.enhancedHue) == UInt64(0x2000 + 2 * 6_553))
        // StopMoveStep leaves the loop running.
        _ = await node.invoke(1, Self.color, C.stopMoveStep, fields((0, u(0)), (1, u(0))))
        await clock.advance(by: .seconds(1))
        #expect(await get(node, A.enhancedHue) == UInt64(0x2000 + 3 * 6_553))
        await clock.advance(by: .seconds(8))
        #expect(await get(node, A.enhancedHue) == UInt64((0x2000 + 11 * 6_553) % 65_536))
        let deactivate = fields((0, u(0x01)), (1, u(0)), (2, u(0)), (3, u(0)), (4, u(0)), (5, u(0)), (6, u(0)))
        _ = await node.invoke(1, Self.color, C.colorLoopSet, deactivate)
        #expect(await (get(node, A.loopActive), get(node, A.enhancedHue)) == (0, 1_000))
        await clock.advance(by: .seconds(3))
        #expect(await get(node, A.enhancedHue) == 1_000)
    }

    @Test func dimmingWithCoupleColorTempToLevelWarmsTheLight() async throws {
        // Level Control's Options bit 1 (CoupleColorTempToLevel); physical 153–500, coupled minimum 200.
        let node = try light(level: 254, levelOptions: 0x02)
        let moveToLevel: (UInt64) -> TLVValue = { fields((0, u($0)), (1, u(0)), (2, u(0)), (3, u(0))) }
        _ = await node.invoke(1, IDs.levelControl, 0x00, moveToLevel(1))
        #expect(await get(node, A.mireds) == 500)
        _ = await node.invoke(1, IDs.levelControl, 0x00, moveToLevel(254))
        #expect(await get(node, A.mireds) == 200)
        _ = await node.invoke(1, IDs.levelControl, 0x00, moveToLevel(128))
        #expect(await get(node, A.mireds) == UInt64(500 - 300 * 128 / 254))
        // Not in colour temperature mode: no coupling.
        _ = await node.invoke(1, Self.color, C.moveToColor, fields((0, u(100)), (1, u(100)), (2, u(0)), (3, u(0)), (4, u(0))))
        let before = await get(node, A.mireds)
        _ = await node.invoke(1, IDs.levelControl, 0x00, moveToLevel(10))
        #expect(await get(node, A.mireds) == before)
    }

    /// TC-CC-6.1/6.2: a colour temperature command sent during a coupled level transition (the
    /// fade of an On) wins: the rest of that transition does not set the colour back to the
    /// level's (1.6.6.9 couples level changes; the newer command's target stands).
    @Test func aTemperatureCommandDuringACoupledLevelTransitionIsNotUndoneByIt() async throws {
        let node = try light(level: 254, levelOptions: 0x02)
        _ = await node.invoke(1, IDs.levelControl, 0x00, fields((0, u(128)), (1, u(10)), (2, u(0)), (3, u(0))))
        await clock.advance(by: .milliseconds(100))
        _ = await node.invoke(1, Self.color, C.moveToColorTemperature, fields((0, u(310)), (1, u(0)), (2, u(0)), (3, u(0))))
        await clock.advance(by: .milliseconds(100))
        #expect(await get(node, A.mireds) == 310)
        _ = await node.invoke(1, Self.color, C.moveToColorTemperature, fields((0, u(250)), (1, u(30)), (2, u(0)), (3, u(0))))
        await clock.advance(by: .seconds(5))
        #expect(await (get(node, A.mireds), node.uint(1, IDs.levelControl, 0x0000)) == (250, 128))
        // A level change that begins after it couples again.
        _ = await node.invoke(1, IDs.levelControl, 0x00, fields((0, u(254)), (1, u(0)), (2, u(0)), (3, u(0))))
        #expect(await get(node, A.mireds) == 200)
    }

    @Test func startUpColorTemperatureMiredsSetsTheTemperatureAndMode() async throws {
        let node = try light(color: [AttributeID(0x4010): u(180), AttributeID(0x0008): u(1), AttributeID(0x4001): u(1)])
        #expect(await (get(node, A.mireds), get(node, A.mode), get(node, A.enhancedMode)) == (180, 2, 2))
        let outside = try light(color: [AttributeID(0x4010): u(600), AttributeID(0x0008): u(1), AttributeID(0x4001): u(1)])
        #expect(await (get(outside, A.mireds), get(outside, A.mode)) == (370, 1))
    }
}
