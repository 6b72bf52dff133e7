import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Thermostat (Application Cluster spec 4.3): setpoints within limits and the AutoMode deadband,
// SystemMode by feature, SetpointRaiseLower, and the room model on a manual clock.
@Suite struct ThermostatTests {
    let clock = ManualClock()
    static let thermostat = ClusterID(0x0201)
    enum A {
        static let local: UInt32 = 0x0000
        static let cooling: UInt32 = 0x0011
        static let heating: UInt32 = 0x0012
        static let mode: UInt32 = 0x001C
        static let running: UInt32 = 0x0029
    }

    func thermostat(features: Set<String> = ["HEAT", "COOL", "AUTO"], attributes: [AttributeID: TLVValue] = [:]) throws -> MatterNode {
        try singleClusterNode(0x0301, Self.thermostat, features: features, attributes: attributes, clock: clock)
    }

    func int(_ node: MatterNode, _ attribute: UInt32) async -> Int64? { await node.value(1, Self.thermostat, attribute)?.intValue }

    @Test func setpointsStayWithinTheirLimitsAndTheDeadbandPushesTheOther() async throws {
        let node = try thermostat()
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (2000, 2600))
        #expect(await node.write(1, Self.thermostat, A.heating, .signed(3100)) == InteractionStatus(.constraintError))
        #expect(await node.write(1, Self.thermostat, A.heating, .signed(2200)) == .success)
        #expect(await int(node, A.cooling) == 2600)
        // 2.5 °C deadband: heating to 2500 pushes cooling to 2750.
        #expect(await node.write(1, Self.thermostat, A.heating, .signed(2500)) == .success)
        #expect(await int(node, A.cooling) == 2750)
        // Cooling down to 1700 would need heating at 1450: pushed too.
        #expect(await node.write(1, Self.thermostat, A.cooling, .signed(1700)) == .success)
        #expect(await int(node, A.heating) == 1450)
        // Cooling at its floor (1600) needs heating at 1350, which its limit (700) allows; heating at
        // 3000 needs cooling at 3250, past its limit (3200): refused, nothing changes.
        #expect(await node.write(1, Self.thermostat, A.heating, .signed(3000)) == InteractionStatus(.constraintError))
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (1450, 1700))
    }

    /// TC-TSTAT-2.1 (steps 13a, 16) compares the setpoints with the Abs limits under AutoMode; a
    /// device without MinHeatSetpointLimit & co. is held to its Abs limits (4.3.9.21: their default).
    @Test func withoutMinMaxLimitsTheAbsLimitsHoldTheSetpoints() async throws {
        let node = try thermostat(attributes: [AttributeID(0x0003): .signed(1000), AttributeID(0x0006): .signed(3000)])
        #expect(await node.write(1, Self.thermostat, A.heating, .signed(900)) == InteractionStatus(.constraintError))
        #expect(await node.write(1, Self.thermostat, A.heating, .signed(1000)) == .success)
        #expect(await node.write(1, Self.thermostat, A.cooling, .signed(3100)) == InteractionStatus(.constraintError))
        #expect(await node.write(1, Self.thermostat, A.cooling, .signed(3000)) == .success)
    }

    @Test func systemModeFollowsTheFeatures() async throws {
        let node = try thermostat(features: ["COOL"])
        #expect(await node.uint(1, Self.thermostat, A.mode) == 3)  // Cool
        #expect(await node.write(1, Self.thermostat, A.mode, .unsigned(4)) == InteractionStatus(.constraintError))  // Heat
        #expect(await node.write(1, Self.thermostat, A.mode, .unsigned(1)) == InteractionStatus(.constraintError))  // Auto
        #expect(await node.write(1, Self.thermostat, A.mode, .unsigned(0)) == .success)  // Off
    }

    @Test func theRoomWarmsToTheHeatingSetpointAndTheRelayStops() async throws {
        let node = try thermostat(attributes: [AttributeID(0x0000): .signed(1800), AttributeID(0x001C): .unsigned(4)])
        #expect(await node.write(1, Self.thermostat, A.heating, .signed(2100)) == .success)
        #expect(await node.uint(1, Self.thermostat, A.running) == 0b01)  // Heat
        await clock.advance(by: ThermostatServer.defaultRoom.tick * 10)
        #expect(await int(node, A.local) == 1900)
        await clock.advance(by: ThermostatServer.defaultRoom.tick * 30)
        #expect(await int(node, A.local) == 2100)
        #expect(await node.uint(1, Self.thermostat, A.running) == 0)
    }

    @Test func offTheRoomDriftsTowardTheOutdoorTemperature() async throws {
        let node = try thermostat(attributes: [
            AttributeID(0x0000): .signed(2000), AttributeID(0x0001): .signed(1000), AttributeID(0x001C): .unsigned(0),
        ])
        await clock.advance(by: ThermostatServer.defaultRoom.tick)
        #expect(await int(node, A.local) == 1980)
        await clock.advance(by: ThermostatServer.defaultRoom.tick * 500)
        #expect(await int(node, A.local) == 1000)
        #expect(await node.uint(1, Self.thermostat, A.running) == 0)
    }

    @Test func theProfilesRoomSetsHowFastItWarmsAndLeaks() async throws {
        let room = RoomModel(tick: .seconds(60), heatingStep: 50, coolingStep: 10, leakPercent: 10)
        let node = try singleClusterNode(
            0x0301, Self.thermostat, features: ["HEAT"],
            attributes: [AttributeID(0x0000): .signed(1800), AttributeID(0x0001): .signed(800)],
            behavior: ClusterBehavior(room: room), clock: clock)
        // Below the heating setpoint (20 °C) from the start: the relay is on at once.
        #expect(await node.uint(1, Self.thermostat, A.running) == 0b01)
        await clock.advance(by: .seconds(59))
        #expect(await int(node, A.local) == 1800)

        await clock.advance(by: .seconds(1))
        #expect(await int(node, A.local) == 1850)
        await clock.advance(by: .seconds(180))
        #expect(await int(node, A.local) == 2000)
        // Off: 10 % of the 12 °C gap to outdoors in the next minute.
        #expect(await node.write(1, Self.thermostat, A.mode, .unsigned(0)) == .success)
        await clock.advance(by: .seconds(60))
        #expect(await int(node, A.local) == 1880)
    }

    @Test func setpointRaiseLowerMovesTheChosenSetpointsInTenthsOfADegree() async throws {
        let node = try thermostat()
        #expect(await node.invoke(1, Self.thermostat, 0x00, fields((0, u(0)), (1, .signed(10)))) == .success)
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (2100, 2600))
        #expect(await node.invoke(1, Self.thermostat, 0x00, fields((0, u(2)), (1, .signed(-5)))) == .success)
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (2050, 2550))
    }

    /// TC-TSTAT-2.2 step 18 (4.3.10.1): Both moves each setpoint by Amount from its own value.
    /// From 21/25 °C with a 2.5 °C deadband, +3 °C is 24/28 °C: the heating setpoint must not
    /// push the cooling one first (it ended at 29.5 °C).
    @Test func setpointRaiseLowerBothMovesTheTwoTogether() async throws {
        let node = try thermostat(attributes: [AttributeID(A.heating): .signed(2100), AttributeID(A.cooling): .signed(2500)])
        #expect(await node.invoke(1, Self.thermostat, 0x00, fields((0, u(2)), (1, .signed(30)))) == .success)
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (2400, 2800))
        #expect(await node.invoke(1, Self.thermostat, 0x00, fields((0, u(2)), (1, .signed(-30)))) == .success)
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (2100, 2500))
        // Cool alone moves the cooling setpoint by Amount and pushes heating to keep the deadband.
        #expect(await node.invoke(1, Self.thermostat, 0x00, fields((0, u(1)), (1, .signed(-30)))) == .success)
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (1950, 2200))
    }

    /// 4.3.10.1: a raise past what the limits and the deadband allow is clamped, not refused:
    /// heating at 29 °C raised 3 °C stops at 29.5 °C (cooling's 32 °C limit less the deadband)
    /// and pushes cooling to 32 °C; cooling lowered past its floor stops at 16 °C, heating pushed.
    @Test func setpointRaiseLowerClampsToTheLimitsAndTheDeadband() async throws {
        let node = try thermostat(attributes: [AttributeID(A.heating): .signed(2900), AttributeID(A.cooling): .signed(3150)])
        #expect(await node.invoke(1, Self.thermostat, 0x00, fields((0, u(0)), (1, .signed(30)))) == .success)
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (2950, 3200))
        #expect(await node.invoke(1, Self.thermostat, 0x00, fields((0, u(1)), (1, .signed(-127)))) == .success)
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (1680, 1930))
        #expect(await node.invoke(1, Self.thermostat, 0x00, fields((0, u(1)), (1, .signed(-127)))) == .success)
        #expect(await (int(node, A.heating), int(node, A.cooling)) == (1350, 1600))
    }
}
