import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Smoke CO Alarm (Application Cluster spec 2.11), Boolean State Configuration (1.8) on a
// Water Leak Detector, and Power Source (Core spec 11.7) on a battery device: what a person
// does at them, their commands and their events, on a manual clock.
@Suite struct SafetySensorTests {
    let clock = ManualClock()
    typealias Smoke = Clusters.SmokeCoAlarm
    typealias Config = Clusters.BooleanStateConfiguration
    typealias Power = Clusters.PowerSource
    static let booleanState = Clusters.BooleanState.id

    /// One endpoint with the given clusters (Identify beside them).
    func node(_ type: DeviceTypeID, _ clusters: [ClusterInstanceDescription]) throws -> MatterNode {
        try makeNode(
            [
                rootEndpoint(),
                EndpointDescription(
                    number: 1, deviceTypes: [deviceType(type)],
                    serverClusters: [ClusterInstanceDescription(id: Clusters.Identify.id)] + clusters),
            ], clock: clock)
    }

    func smokeAlarm(battery: Bool = false, interconnected: Bool = false) throws -> MatterNode {
        var attributes: [AttributeID: TLVValue] = [Smoke.Attribute.deviceMuted: .uint(0)]
        if interconnected {
            attributes[Smoke.Attribute.interconnectSmokeAlarm] = .uint(0)
            attributes[Smoke.Attribute.interconnectCOAlarm] = .uint(0)
        }
        var clusters = [
            ClusterInstanceDescription(id: Smoke.id, features: [Smoke.Feature.smokeAlarm, Smoke.Feature.coAlarm], attributes: attributes)
        ]
        if battery { clusters.append(Self.battery(percentHalves: 200)) }
        return try node(DeviceTypes.smokeCoAlarm, clusters)
    }

    static func battery(percentHalves: UInt64) -> ClusterInstanceDescription {
        ClusterInstanceDescription(
            id: Power.id, features: [Power.Feature.battery, Power.Feature.replaceable],
            attributes: [
                Power.Attribute.batPercentRemaining: .uint(percentHalves), Power.Attribute.batReplacementDescription: .utf8("CR2032"),
                Power.Attribute.batQuantity: .uint(1),
            ])
    }

    func value(_ node: MatterNode, _ cluster: ClusterID, _ attribute: AttributeID) async -> UInt64? {
        await node.uint(1, cluster, attribute.rawValue)
    }

    func expressed(_ node: MatterNode) async -> Smoke.ExpressedStateEnum? {
        await value(node, Smoke.id, Smoke.Attribute.expressedState).flatMap { UInt8(exactly: $0) }.flatMap(Smoke.ExpressedStateEnum.init)
    }

    /// The events of `cluster` since `from`: (event, priority, field 0).
    func events(_ node: MatterNode, _ cluster: ClusterID, from: UInt64) async -> [(EventID, EventDataIB.Priority, TLVValue?)] {
        await node.events(from: from).filter { $0.cluster == cluster }.map { event in
            var first: TLVValue?
            if case .structure(let members) = event.data { first = members.first { $0.tag == .context(0) }?.value }
            return (event.event, event.priority, first)
        }
    }

    func start(_ node: MatterNode) async -> UInt64 { await node.events().last.map { $0.number + 1 } ?? 0 }

    // MARK: Smoke CO Alarm

    /// 2.11.8.1/2.11.8.2: SmokeAlarm and COAlarm (critical priority) each time the state rises to
    /// Warning or Critical; ExpressedState shows smoke over CO; AllClear once it is Normal again.
    @Test func smokeAndCOAlarmsRaiseCriticalEventsAndExpressedStateFollowsThePriority() async throws {
        let node = try smokeAlarm()
        let from = await start(node)
        try await node.act(.alarm(.co(.warning)))
        #expect(await value(node, Smoke.id, Smoke.Attribute.coState) == 1)
        #expect(await expressed(node) == .coAlarm)
        try await node.act(.alarm(.smoke(.critical)))
        #expect(await value(node, Smoke.id, Smoke.Attribute.smokeState) == 2)
        #expect(await expressed(node) == .smokeAlarm)  // smoke before CO
        try await node.act(.alarm(.smoke(.critical)))  // no change: no second event
        try await node.act(.alarm(.clear))
        #expect(await expressed(node) == .normal)
        #expect(await value(node, Smoke.id, Smoke.Attribute.smokeState) == 0)
        let raised = await events(node, Smoke.id, from: from)
        #expect(raised.map(\.0) == [Smoke.Event.coAlarm, Smoke.Event.smokeAlarm, Smoke.Event.allClear])
        #expect(raised.map(\.1) == [.critical, .critical, .info])
        #expect(raised[0].2 == .uint(1) && raised[1].2 == .uint(2))
    }

    /// 2.11.7.1: a self-test runs on the clock (TestInProgress, ExpressedState Testing), ends with
    /// SelfTestComplete and AllClear; a second request while it runs, or one during an alarm, is BUSY.
    @Test func selfTestRunsOnTheClockAndIsRefusedWhileBusy() async throws {
        let node = try smokeAlarm()
        let from = await start(node)
        let request = UInt32(Smoke.Command.selfTestRequest.rawValue)
        #expect(await node.invoke(1, Smoke.id, request) == .success)
        #expect(await node.bool(1, Smoke.id, Smoke.Attribute.testInProgress.rawValue) == true)
        #expect(await expressed(node) == .testing)
        #expect(await node.invoke(1, Smoke.id, request) == .status(InteractionStatus(.busy)))
        await clock.advance(by: SmokeCoAlarmServer.selfTestDuration - .milliseconds(1))
        #expect(await node.bool(1, Smoke.id, Smoke.Attribute.testInProgress.rawValue) == true)
        await clock.advance(by: .milliseconds(1))
        #expect(await node.bool(1, Smoke.id, Smoke.Attribute.testInProgress.rawValue) == false)
        #expect(await expressed(node) == .normal)
        #expect(await events(node, Smoke.id, from: from).map(\.0) == [Smoke.Event.selfTestComplete, Smoke.Event.allClear])
        // During an alarm the test is refused, by command and at the button.
        try await node.act(.alarm(.smoke(.warning)))
        #expect(await node.invoke(1, Smoke.id, request) == .status(InteractionStatus(.busy)))
        await #expect(throws: PhysicalActionError.self) { try await node.act(.alarm(.test)) }
        #expect(await node.bool(1, Smoke.id, Smoke.Attribute.testInProgress.rawValue) == false)
    }

    /// The hush button mutes a warning (AlarmMuted), not a critical alarm; a rise to critical
    /// or the air clearing ends the hush (MuteEnded).
    @Test func aWarningCanBeHushedAndTheHushEndsWithCriticalOrClear() async throws {
        let node = try smokeAlarm()
        let from = await start(node)
        await #expect(throws: PhysicalActionError.self) { try await node.act(.alarm(.mute)) }  // nothing sounds
        try await node.act(.alarm(.smoke(.warning)))
        try await node.act(.alarm(.mute))
        #expect(await value(node, Smoke.id, Smoke.Attribute.deviceMuted) == 1)
        try await node.act(.alarm(.smoke(.critical)))
        #expect(await value(node, Smoke.id, Smoke.Attribute.deviceMuted) == 0)
        await #expect(throws: PhysicalActionError.self) { try await node.act(.alarm(.mute)) }
        let raised = await events(node, Smoke.id, from: from).map(\.0)
        #expect(raised == [Smoke.Event.smokeAlarm, Smoke.Event.alarmMuted, Smoke.Event.smokeAlarm, Smoke.Event.muteEnded])
    }

    /// The battery's charge reaches the alarm: BatteryAlert Warning with LowBattery, ExpressedState
    /// BatteryAlert (below an alarm in priority), Normal again with a fresh battery.
    @Test func aLowBatteryRaisesBatteryAlertAndLowBattery() async throws {
        let node = try smokeAlarm(battery: true)
        let from = await start(node)
        try await node.act(.battery(percent: 15))
        #expect(await value(node, Smoke.id, Smoke.Attribute.batteryAlert) == 1)
        #expect(await expressed(node) == .batteryAlert)
        try await node.act(.alarm(.co(.critical)))
        #expect(await expressed(node) == .coAlarm)
        try await node.act(.alarm(.clear))
        #expect(await expressed(node) == .batteryAlert)
        try await node.act(.battery(percent: 100))
        #expect(await expressed(node) == .normal)
        let raised = await events(node, Smoke.id, from: from)
        #expect(raised.map(\.0) == [Smoke.Event.lowBattery, Smoke.Event.coAlarm, Smoke.Event.allClear])
        #expect(raised[0].1 == .info && raised[0].2 == .uint(1))
    }

    /// Core 11.12.7.1: with the node's test event trigger key (`matter-sim run --test-event-key`),
    /// a certification case's trigger does what an operator would at the device (TC-SMOKECO-2.2
    /// to 2.6, TC-BOOLCFG-4.2 to 5.2); another key is CONSTRAINT_ERROR, an unknown trigger
    /// INVALID_COMMAND.
    @Test func testEventTriggersWithTheNodesKeyDoWhatAnOperatorWould() async throws {
        let identify = ClusterInstanceDescription(id: Clusters.Identify.id)
        let node = try keyedNode([
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(DeviceTypes.smokeCoAlarm)],
                serverClusters: [identify, ClusterInstanceDescription(id: Smoke.id, features: [Smoke.Feature.smokeAlarm])]),
            EndpointDescription(
                number: 2, deviceTypes: [deviceType(DeviceTypes.waterLeakDetector)],
                serverClusters: [
                    identify,
                    ClusterInstanceDescription(id: Self.booleanState, attributes: [Clusters.BooleanState.Attribute.stateValue: .bool(false)]),
                    ClusterInstanceDescription(id: Config.id, features: ["VIS"]),
                ]),
        ])
        func trigger(_ code: UInt64, key: [UInt8] = Self.triggerKey) async -> InvokeResult { await Self.trigger(node, code, key: key) }
        #expect(await node.bool(0, CommissioningIDs.generalDiagnostics, 0x0008) == true)  // TestEventTriggersEnabled
        #expect(await trigger(0x005C_0000_0000_009C, key: Array(repeating: 1, count: 16)) == .status(InteractionStatus(.constraintError)))
        #expect(await value(node, Smoke.id, Smoke.Attribute.smokeState) == 0)
        #expect(await trigger(0x005C_0000_0000_009C) == .status(.success))  // critical smoke
        #expect(await value(node, Smoke.id, Smoke.Attribute.smokeState) == 2)
        #expect(await trigger(0x005C_0000_0000_00A0) == .status(.success))  // smoke clear
        #expect(await value(node, Smoke.id, Smoke.Attribute.smokeState) == 0)
        #expect(await trigger(0xFFFF_FFFF_0000_0090) == .status(.success))  // the older code of a smoke warning
        #expect(await value(node, Smoke.id, Smoke.Attribute.smokeState) == 1)
        #expect(await trigger(0x005C_0000_0000_0095) == .status(InteractionStatus(.invalidCommand)))  // no battery here
        #expect(await trigger(0x0080_0000_0000_0000) == .status(.success))  // the sensor triggers
        #expect(await node.bool(2, Self.booleanState, 0) == true)
        #expect(await trigger(0x0080_0000_0000_0001) == .status(.success))
        #expect(await node.bool(2, Self.booleanState, 0) == false)
        #expect(await trigger(0xFFFF_FFFF_0000_0001) == .status(InteractionStatus(.invalidCommand)))
        await node.stop()
    }

    /// The test event trigger key of `keyedNode`.
    static let triggerKey = Array(UInt8(0)..<16)

    /// A node with the test event trigger key (`matter-sim run --test-event-key`) and the given
    /// application endpoints.
    func keyedNode(_ endpoints: [EndpointDescription]) throws -> MatterNode {
        var configuration = CommissioningConfiguration()
        configuration.testEventTriggerKey = Self.triggerKey
        let root = EndpointDescription(
            number: 0, deviceTypes: [deviceType(IDs.rootNode)],
            serverClusters: [ClusterInstanceDescription(id: IDs.basicInformation)] + ClusterInstanceDescription.rootNodeCommissioningClusters)
        return try MatterNode(
            description: NodeDescription(endpoints: [root] + endpoints), clock: clock, logger: quietLogger, commissioning: configuration)
    }

    /// General Diagnostics TestEventTrigger, as a certification case sends it.
    static func trigger(_ node: MatterNode, _ code: UInt64, key: [UInt8] = triggerKey) async -> InvokeResult {
        await node.status(0, CommissioningIDs.generalDiagnostics, 0x00, fields((0, .bytes(key)), (1, u(code))), session: paseSession(1))
    }

    /// The shipped alarm's clusters (interconnected, on a battery) with the trigger key, and a way
    /// to send it a trigger as TC-SMOKECO-2.4 to 2.6 do.
    func triggeredSmokeAlarm() throws -> (MatterNode, (UInt64) async -> InvokeResult) {
        let node = try keyedNode([
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(DeviceTypes.smokeCoAlarm)],
                serverClusters: [
                    ClusterInstanceDescription(id: Clusters.Identify.id),
                    ClusterInstanceDescription(
                        id: Smoke.id, features: [Smoke.Feature.smokeAlarm, Smoke.Feature.coAlarm],
                        attributes: [
                            Smoke.Attribute.deviceMuted: .uint(0), Smoke.Attribute.interconnectSmokeAlarm: .uint(0),
                            Smoke.Attribute.interconnectCOAlarm: .uint(0),
                        ]),
                    Self.battery(percentHalves: 200),
                ])
        ])
        return (node, { code in await Self.trigger(node, code) })
    }

    /// TC-SMOKECO-2.4 steps 17-34 (2.11.6.7, 2.11.6.8, 2.11.8.4, 2.11.8.5): the hardware-fault and
    /// end-of-service triggers (0x93/0xA3, 0x9A/0xAA in the older namespace the case sends) set
    /// HardwareFaultAlert and EndOfServiceAlert with their events, ExpressedState HardwareFault (5)
    /// and EndOfService (6), and AllClear when each is cleared. The old node knew neither trigger:
    /// INVALID_COMMAND at step 18.
    @Test func hardwareFaultAndEndOfServiceTriggersRaiseTheirAlertsAndEvents() async throws {
        let (node, trigger) = try triggeredSmokeAlarm()
        let from = await start(node)
        #expect(await trigger(0xFFFF_FFFF_0000_0093) == .status(.success))
        #expect(await node.bool(1, Smoke.id, Smoke.Attribute.hardwareFaultAlert.rawValue) == true)
        #expect(await expressed(node) == .hardwareFault)
        #expect(await trigger(0xFFFF_FFFF_0000_00A3) == .status(.success))
        #expect(await node.bool(1, Smoke.id, Smoke.Attribute.hardwareFaultAlert.rawValue) == false)
        #expect(await expressed(node) == .normal)
        #expect(await trigger(0xFFFF_FFFF_0000_009A) == .status(.success))
        #expect(await value(node, Smoke.id, Smoke.Attribute.endOfServiceAlert) == 1)
        #expect(await expressed(node) == .endOfService)
        #expect(await trigger(0xFFFF_FFFF_0000_00AA) == .status(.success))
        #expect(await value(node, Smoke.id, Smoke.Attribute.endOfServiceAlert) == 0)
        #expect(await expressed(node) == .normal)
        #expect(
            await events(node, Smoke.id, from: from).map(\.0) == [
                Smoke.Event.hardwareFault, Smoke.Event.allClear, Smoke.Event.endOfService, Smoke.Event.allClear,
            ])
        await node.stop()
    }

    /// TC-SMOKECO-2.5 (2.11.6.5, 2.11.8.7/2.11.8.8/2.11.8.9): the interconnect triggers raise
    /// InterconnectSmokeAlarm/InterconnectCOAlarm (Warning, with their events; ExpressedState 7
    /// and 8); the mute-clear trigger (0xAB) ends a hush (MuteEnded); a hush at a critical alarm
    /// is taken (SUCCESS, step 54) but leaves DeviceMuted NotMuted. The old node answered
    /// INVALID_COMMAND to 0xAB (step 49) and to the hush at a critical alarm.
    @Test func interconnectAndMuteTriggersDoWhatTheCaseExpects() async throws {
        let (node, trigger) = try triggeredSmokeAlarm()
        let from = await start(node)
        #expect(await trigger(0x005C_0000_0000_0092) == .status(.success))
        #expect(await value(node, Smoke.id, Smoke.Attribute.interconnectSmokeAlarm) == 1)
        #expect(await expressed(node) == .interconnectSmoke)
        #expect(await trigger(0x005C_0000_0000_00A2) == .status(.success))
        #expect(await trigger(0x005C_0000_0000_0094) == .status(.success))
        #expect(await expressed(node) == .interconnectCO)
        #expect(await trigger(0x005C_0000_0000_00A4) == .status(.success))
        #expect(await expressed(node) == .normal)
        // A warning hushed, the hush cleared; then critical, and a hush that cannot take.
        #expect(await trigger(0x005C_0000_0000_0090) == .status(.success))
        #expect(await trigger(0x005C_0000_0000_009B) == .status(.success))
        #expect(await value(node, Smoke.id, Smoke.Attribute.deviceMuted) == 1)
        #expect(await trigger(0x005C_0000_0000_00AB) == .status(.success))
        #expect(await value(node, Smoke.id, Smoke.Attribute.deviceMuted) == 0)
        #expect(await trigger(0x005C_0000_0000_009C) == .status(.success))
        #expect(await trigger(0x005C_0000_0000_009B) == .status(.success))
        #expect(await value(node, Smoke.id, Smoke.Attribute.deviceMuted) == 0)
        let raised = await events(node, Smoke.id, from: from)
        #expect(
            raised.map(\.0) == [
                Smoke.Event.interconnectSmokeAlarm, Smoke.Event.allClear, Smoke.Event.interconnectCOAlarm, Smoke.Event.allClear,
                Smoke.Event.smokeAlarm, Smoke.Event.alarmMuted, Smoke.Event.muteEnded, Smoke.Event.smokeAlarm,
            ])
        #expect(raised[0].1 == .critical && raised[0].2 == .uint(1))
        await node.stop()
    }

    /// TC-SMOKECO-2.6 (2.11.6.1: ExpressedState is the condition of highest priority): each clear
    /// trigger ends its own condition only. The old node cleared smoke and CO together with either
    /// (and had no interconnect), so after step 20's smoke clear it expressed BatteryAlert (3)
    /// where InterconnectSmoke (7) still sounded.
    @Test func eachClearTriggerEndsItsOwnConditionAndTheNextHighestIsExpressed() async throws {
        let (node, trigger) = try triggeredSmokeAlarm()
        for code: UInt64 in [0x95, 0x92, 0x94, 0x91, 0x90] {
            #expect(await trigger(0x005C_0000_0000_0000 | code) == .status(.success))
        }
        #expect(await expressed(node) == .smokeAlarm)
        #expect(await trigger(0x005C_0000_0000_00A0) == .status(.success))  // smoke clear
        #expect(await value(node, Smoke.id, Smoke.Attribute.coState) == 1)
        #expect(await expressed(node) == .interconnectSmoke)
        #expect(await trigger(0x005C_0000_0000_00A1) == .status(.success))  // CO clear
        #expect(await expressed(node) == .interconnectSmoke)
        #expect(await trigger(0x005C_0000_0000_00A4) == .status(.success))  // interconnect CO clear
        #expect(await expressed(node) == .interconnectSmoke)
        #expect(await trigger(0x005C_0000_0000_00A2) == .status(.success))  // interconnect smoke clear
        #expect(await expressed(node) == .batteryAlert)
        await node.stop()
    }

    /// `matter-sim act NODE interconnect smoke|co|clear`: another alarm of the home sounds; an
    /// alarm without the interconnect attributes says so.
    @Test func anInterconnectedAlarmSoundsWhatAnotherAlarmSenses() async throws {
        let node = try smokeAlarm(interconnected: true)
        try await node.act(.alarm(.interconnect(.co, .warning)))
        #expect(await expressed(node) == .interconnectCO)
        try await node.act(.alarm(.interconnectCleared))
        #expect(await value(node, Smoke.id, Smoke.Attribute.interconnectCOAlarm) == 0)
        #expect(await expressed(node) == .normal)
        let plain = try smokeAlarm()
        await #expect(throws: PhysicalActionError.self) { try await plain.act(.alarm(.interconnect(.smoke, .warning))) }
    }

    // MARK: Water Leak Detector

    func leakDetector(features: Set<String> = ["VIS", "AUD", "SPRS"]) throws -> MatterNode {
        try node(
            DeviceTypes.waterLeakDetector,
            [
                ClusterInstanceDescription(id: Self.booleanState, attributes: [Clusters.BooleanState.Attribute.stateValue: .bool(false)]),
                ClusterInstanceDescription(id: Config.id, features: features),
            ])
    }

    /// 1.8.6.4: while water is there every enabled alarm mode is active, and none once dry;
    /// AlarmsStateChanged with each change (1.8.8.1), StateChange from Boolean State.
    @Test func aLeakSetsOffTheEnabledAlarmsAndDryingEndsThem() async throws {
        let node = try leakDetector()
        let from = await start(node)
        #expect(await value(node, Config.id, Config.Attribute.alarmsSupported) == 3)
        try await node.act(.leak(true))
        #expect(await node.bool(1, Self.booleanState, 0) == true)
        #expect(await value(node, Config.id, Config.Attribute.alarmsActive) == 3)
        try await node.act(.leak(false))
        #expect(await value(node, Config.id, Config.Attribute.alarmsActive) == 0)
        let raised = await events(node, Config.id, from: from)
        #expect(raised.map(\.0) == [Config.Event.alarmsStateChanged, Config.Event.alarmsStateChanged])
        #expect(raised.map(\.2) == [.uint(3), .uint(0)])
        #expect(await events(node, Self.booleanState, from: from).count == 2)
    }

    /// 1.8.7.1/1.8.7.2: SuppressAlarm silences an active mode until the leak is over;
    /// EnableDisableAlarm turns a sounding mode off at once; a mode the device lacks is a
    /// CONSTRAINT_ERROR.
    @Test func suppressAndDisableChangeTheActiveAlarms() async throws {
        let node = try leakDetector()
        let suppress = UInt32(Config.Command.suppressAlarm.rawValue)
        let enable = UInt32(Config.Command.enableDisableAlarm.rawValue)
        try await node.act(.leak(true))
        #expect(await node.invoke(1, Config.id, suppress, fields((0, u(2)))) == .success)
        #expect(await value(node, Config.id, Config.Attribute.alarmsSuppressed) == 2)
        #expect(await node.invoke(1, Config.id, enable, fields((0, u(2)))) == .success)  // visual off
        #expect(await value(node, Config.id, Config.Attribute.alarmsActive) == 2)
        #expect(await value(node, Config.id, Config.Attribute.alarmsEnabled) == 2)
        #expect(await node.invoke(1, Config.id, enable, fields((0, u(4)))) == .status(InteractionStatus(.constraintError)))
        try await node.act(.leak(false))
        #expect(await value(node, Config.id, Config.Attribute.alarmsSuppressed) == 0)
        // Only the enabled (audible) mode sounds at the next leak.
        try await node.act(.leak(true))
        #expect(await value(node, Config.id, Config.Attribute.alarmsActive) == 2)
    }

    /// 1.8.7.1: SuppressAlarm names a mode that is sounding; one that is not (no leak, or the
    /// mode not enabled) is INVALID_IN_STATE (TC-BOOLCFG-5.1 step 7a).
    @Test func suppressingAnAlarmThatIsNotSoundingIsInvalidInState() async throws {
        let node = try leakDetector()
        let suppress = UInt32(Config.Command.suppressAlarm.rawValue)
        #expect(await node.invoke(1, Config.id, suppress, fields((0, u(1)))) == .status(InteractionStatus(.invalidInState)))
        try await node.act(.leak(true))
        try await node.act(.leak(false))
        #expect(await node.invoke(1, Config.id, suppress, fields((0, u(1)))) == .status(InteractionStatus(.invalidInState)))
        #expect(await value(node, Config.id, Config.Attribute.alarmsSuppressed) == 0)
        await node.stop()
    }

    // MARK: Power Source

    /// 11.7.6.13: BatPercentRemaining in half-percent units drains on the node clock;
    /// BatChargeLevel and BatReplacementNeeded follow it.
    @Test func theBatteryDrainsOnTheClockAndItsChargeLevelFollows() async throws {
        let node = try node(
            DeviceTypes.contactSensor, [ClusterInstanceDescription(id: Self.booleanState), Self.battery(percentHalves: 42)])
        #expect(await value(node, Power.id, Power.Attribute.batChargeLevel) == 0)
        await clock.advance(by: PowerSourceServer.drainInterval)
        #expect(await value(node, Power.id, Power.Attribute.batPercentRemaining) == 41)
        await clock.advance(by: PowerSourceServer.drainInterval)
        #expect(await value(node, Power.id, Power.Attribute.batPercentRemaining) == 40)  // 20 %: Warning
        #expect(await value(node, Power.id, Power.Attribute.batChargeLevel) == 1)
        #expect(await node.bool(1, Power.id, Power.Attribute.batReplacementNeeded.rawValue) == true)
        try await node.act(.battery(percent: 5))
        #expect(await value(node, Power.id, Power.Attribute.batPercentRemaining) == 10)
        #expect(await value(node, Power.id, Power.Attribute.batChargeLevel) == 2)
        try await node.act(.battery(percent: 0))
        await clock.advance(by: PowerSourceServer.drainInterval * 3)
        #expect(await value(node, Power.id, Power.Attribute.batPercentRemaining) == 0)  // never below empty
        await #expect(throws: PhysicalActionError.self) { try await node.act(.battery(percent: 101)) }
        try await node.act(.battery(percent: 100))
        #expect(await value(node, Power.id, Power.Attribute.batPercentRemaining) == 200)
        #expect(await value(node, Power.id, Power.Attribute.batChargeLevel) == 0)
        #expect(await node.bool(1, Power.id, Power.Attribute.batReplacementNeeded.rawValue) == false)
    }
}
