import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// What a person does at a light, a blind and a thermostat (`MatterNode.act`): the button, the
// dimmer, the cord and the dial go through the same paths as the commands they stand for, on a
// manual clock.
@Suite struct PhysicalActsTests {
    let clock = ManualClock()
    static let thermostat = ClusterID(0x0201)

    @Test func aLightsButtonTogglesItAndItsDimmerSetsTheLevelWithOnOff() async throws {
        let node = try dimmableLight(on: false, level: 100, clock: clock)
        #expect(try await node.act(.toggle) == 1)
        #expect(await node.bool(1, IDs.onOff, 0x0000) == true)
        try await node.act(.toggle)
        #expect(await node.bool(1, IDs.onOff, 0x0000) == false)
        // 50 % of MaxLevel (254) while off: MoveToLevelWithOnOff turns the light on.
        try await node.act(.dim(percent: 50))
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.levelControl, 0x0000) == 127)
        #expect(await node.bool(1, IDs.onOff, 0x0000) == true)
        // 0 % goes to MinLevel, which turns it off.
        try await node.act(.dim(percent: 0))
        await clock.advance(by: .seconds(1))
        #expect(await node.bool(1, IDs.onOff, 0x0000) == false)
        await #expect(throws: PhysicalActionError.self) { try await node.act(.dim(percent: 140)) }
        // A light has no cord.
        await #expect(throws: PhysicalActionError.self) { try await node.act(.cord(.open)) }
    }

    @Test func aBlindsCordClosesItStopsItAndOpensIt() async throws {
        // 10 % of the travel per second.
        let node = try windowCovering(clock: clock)
        let current: UInt32 = 0x000E  // CurrentPositionLiftPercent100ths
        try await node.act(.cord(.close))
        await clock.advance(by: .seconds(3))
        let stoppedAt = try #require(await node.uint(1, IDs.windowCovering, current))
        #expect((2_000...4_000).contains(stoppedAt))
        try await node.act(.cord(.stop))
        let held = await node.uint(1, IDs.windowCovering, current)
        await clock.advance(by: .seconds(5))
        #expect(await node.uint(1, IDs.windowCovering, current) == held)
        try await node.act(.cord(.open))
        await clock.advance(by: .seconds(10))
        #expect(await node.uint(1, IDs.windowCovering, current) == 0)
    }

    @Test func aThermostatsDialSetsTheSetpointOfItsMode() async throws {
        let node = try singleClusterNode(0x0301, Self.thermostat, features: ["HEAT", "COOL", "AUTO"], clock: clock)
        func int(_ attribute: UInt32) async -> Int64? { await node.value(1, Self.thermostat, attribute)?.intValue }
        // Auto: the heating setpoint, the deadband (2.5 °C) pushing cooling up.
        try await node.act(.dial(celsius: 24.5))
        #expect(await (int(0x0012), int(0x0011)) == (2450, 2700))
        // Cool: the cooling setpoint.
        #expect(await node.write(1, Self.thermostat, 0x001C, .unsigned(3)) == .success)
        try await node.act(.dial(celsius: 26))
        #expect(await (int(0x0012), int(0x0011)) == (2350, 2600))  // heating pushed down by the deadband
        await #expect(throws: PhysicalActionError.self) { try await node.act(.dial(celsius: 40)) }
        #expect(await int(0x0011) == 2600)
    }

    /// Issue #37 item 2: `dial 1e17` (and 1e300) trapped the Int64 conversion and with it the
    /// whole `matter-sim home`; they are outside the setpoint limits, an error like 40 °C.
    @Test func aDialFarOutsideAnyIntegerIsRefusedNotATrap() async throws {
        let node = try singleClusterNode(0x0301, Self.thermostat, features: ["HEAT"], clock: clock)
        for celsius in [1e17, 1e300, -1e300, Double(Int64.max), -Double(Int64.max) * 2] {
            await #expect(throws: PhysicalActionError.self) { try await node.act(.dial(celsius: celsius)) }
        }
        #expect(await node.value(1, Self.thermostat, 0x0012)?.intValue == 2000)
        try await node.act(.dial(celsius: 21))
        #expect(await node.value(1, Self.thermostat, 0x0012)?.intValue == 2100)
    }
}
