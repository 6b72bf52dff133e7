import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// A Robotic Vacuum Cleaner (0x0074): RVC Run Mode, RVC Clean Mode and RVC Operational State
// (Application Cluster spec 7.2-7.4) with its rechargeable battery (Power Source), on a manual
// clock: a clean run that progresses, heads home, charges and docks; the commands' answers by
// state; errors and their events; the battery draining while it runs.
@Suite struct RoboticVacuumTests {
    let clock = ManualClock()
    typealias Run = Clusters.RvcRunMode
    typealias Clean = Clusters.RvcCleanMode
    typealias Op = Clusters.RvcOperationalState
    typealias Power = Clusters.PowerSource
    typealias State = Op.OperationalStateEnum

    func vacuum(batteryHalves: UInt64 = 200) throws -> MatterNode {
        try makeNode(
            [
                rootEndpoint(),
                EndpointDescription(
                    number: 1, deviceTypes: [deviceType(DeviceTypes.roboticVacuumCleaner)],
                    serverClusters: [
                        ClusterInstanceDescription(id: Clusters.Identify.id),
                        ClusterInstanceDescription(id: Run.id), ClusterInstanceDescription(id: Clean.id),
                        ClusterInstanceDescription(id: Op.id),
                        ClusterInstanceDescription(
                            id: Power.id, features: [Power.Feature.battery, Power.Feature.rechargeable],
                            attributes: [Power.Attribute.batPercentRemaining: .uint(batteryHalves)]),
                    ]),
            ], clock: clock)
    }

    func state(_ node: MatterNode) async -> State? {
        await node.uint(1, Op.id, Op.Attribute.operationalState.rawValue).flatMap { State(rawValue: UInt8(clamping: $0)) }
    }
    func phase(_ node: MatterNode) async -> UInt64? { await node.uint(1, Op.id, Op.Attribute.currentPhase.rawValue) }
    func runMode(_ node: MatterNode) async -> UInt64? { await node.uint(1, Run.id, Run.Attribute.currentMode.rawValue) }
    func battery(_ node: MatterNode) async -> UInt64? { await node.uint(1, Power.id, Power.Attribute.batPercentRemaining.rawValue) }

    /// ChangeToMode on Run Mode (or Clean Mode): the response's Status.
    func changeMode(_ node: MatterNode, _ cluster: ClusterID, to mode: UInt8) async -> UInt8? {
        let result = await node.invoke(1, cluster, Run.Command.changeToMode.rawValue, Run.Commands.ChangeToMode(newMode: mode).tlv)
        guard case .response(_, let tlv) = result else { return nil }
        return try? Run.Commands.ChangeToModeResponse(tlv: tlv).status
    }

    /// An operational command's ErrorStateID.
    func operational(_ node: MatterNode, _ command: CommandID) async -> Op.ErrorStateEnum? {
        guard case .response(_, let tlv) = await node.invoke(1, Op.id, command.rawValue) else { return nil }
        return (try? Op.Commands.OperationalCommandResponse(tlv: tlv)).flatMap { Op.ErrorStateEnum(rawValue: $0.commandResponseState.errorStateID) }
    }

    func start(_ node: MatterNode) async -> UInt64 { await node.events().last.map { $0.number + 1 } ?? 0 }

    /// 7.2/7.4: Cleaning starts a run (Running, phase Cleaning); after `cleanRun` it heads home
    /// (SeekingCharger, phase Returning, Run Mode Idle), docks after `returnTime` and charges
    /// (OperationCompletion with the run's time), then is Docked once full. The battery drains
    /// one half-percent per `drainEvery` seconds of moving and fills on the dock.
    @Test func aCleanRunProgressesHeadsHomeChargesAndDocks() async throws {
        let node = try vacuum()
        #expect(await state(node) == .docked)
        let from = await start(node)
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.cleaning) == ModeChangeStatus.success)
        #expect(await state(node) == .running)
        #expect(await phase(node) == RvcOperationalStateServer.Phase.cleaning.rawValue)
        #expect(await runMode(node) == UInt64(RvcRunModeServer.cleaning))
        await clock.advance(by: RvcOperationalStateServer.cleanRun)
        #expect(await state(node) == .seekingCharger)
        #expect(await phase(node) == RvcOperationalStateServer.Phase.returning.rawValue)
        #expect(await runMode(node) == UInt64(RvcRunModeServer.idle))
        let drained = 200 - (await battery(node) ?? 200)
        #expect(drained == UInt64(RvcOperationalStateServer.cleanRun.components.seconds) / UInt64(RvcOperationalStateServer.drainEvery))
        await clock.advance(by: RvcOperationalStateServer.returnTime)
        #expect(await state(node) == .charging)
        #expect(await node.uint(1, Power.id, Power.Attribute.batChargeState.rawValue) == UInt64(Power.BatChargeStateEnum.isCharging.rawValue))
        let completions = await node.events(from: from).filter { $0.cluster == Op.id && $0.event == Op.Event.operationCompletion }
        let completion = try #require(completions.first.map { try Op.Events.OperationCompletion(tlv: $0.data) })
        #expect(completions.count == 1)
        #expect(completion.completionErrorCode == Op.ErrorStateEnum.noError.rawValue)
        #expect(completion.totalOperationalTime == .value(620))
        #expect(completion.pausedTime == .value(0))
        await clock.advance(by: .seconds(600))
        #expect(await state(node) == .docked)
        #expect(await battery(node) == 200)
        await node.stop()
    }

    /// 1.14.7 / 7.4.5.1: Pause and GoHome are invalid on the dock; Pause, Resume and GoHome move
    /// a run between Running, Paused and SeekingCharger; GoHome while seeking is NoError.
    @Test func pauseResumeAndGoHomeAnswerByState() async throws {
        let node = try vacuum()
        #expect(await operational(node, Op.Command.pause) == .commandInvalidInState)
        #expect(await operational(node, Op.Command.goHome) == .commandInvalidInState)
        #expect(await operational(node, Op.Command.resume) == .commandInvalidInState)
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.cleaning) == ModeChangeStatus.success)
        #expect(await operational(node, Op.Command.pause) == .noError)
        #expect(await state(node) == .paused)
        await clock.advance(by: .seconds(30))
        #expect(await operational(node, Op.Command.resume) == .noError)
        #expect(await state(node) == .running)
        #expect(await operational(node, Op.Command.goHome) == .noError)
        #expect(await state(node) == .seekingCharger)
        #expect(await runMode(node) == UInt64(RvcRunModeServer.idle))
        #expect(await operational(node, Op.Command.goHome) == .noError)
        #expect(await operational(node, Op.Command.pause) == .noError)
        #expect(await operational(node, Op.Command.resume) == .noError)
        #expect(await state(node) == .seekingCharger)
        await node.stop()
    }

    /// An error (stuck) is OperationalState Error with OperationalError and its event; Resume is
    /// refused and a new run answers the error's own status; freed, it waits Paused and resumes.
    @Test func anErrorHoldsTheRunUntilItIsFreed() async throws {
        let node = try vacuum()
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.cleaning) == ModeChangeStatus.success)
        let from = await start(node)
        try await node.act(.vacuum(.error(.stuck)))
        #expect(await state(node) == .error)
        let error = await node.value(1, Op.id, Op.Attribute.operationalError.rawValue)
        #expect(try error.map { try Op.ErrorStateStruct(tlv: $0).errorStateID } == Op.ErrorStateEnum.stuck.rawValue)
        let events = await node.events(from: from).filter { $0.cluster == Op.id && $0.event == Op.Event.operationalError }
        #expect(try events.map { try Op.Events.OperationalError(tlv: $0.data).errorState.errorStateID } == [Op.ErrorStateEnum.stuck.rawValue])
        #expect(await operational(node, Op.Command.resume) == .commandInvalidInState)
        #expect(await operational(node, Op.Command.goHome) == .commandInvalidInState)
        try await node.act(.vacuum(.clear))
        #expect(await state(node) == .paused)
        #expect(await operational(node, Op.Command.resume) == .noError)
        #expect(await state(node) == .running)
        await #expect(throws: PhysicalActionError.self) { try await node.act(.vacuum(.clear)) }
        await node.stop()
    }

    /// 7.2.7.1: an unknown mode is UnsupportedMode; a start below `lowBattery` is BatteryLow; Run
    /// Mode Idle while cleaning sends it home. 7.3: Clean Mode is InvalidInMode during a run.
    @Test func modeChangesFollowTheRunAndTheBattery() async throws {
        let node = try vacuum()
        #expect(await changeMode(node, Run.id, to: 9) == ModeChangeStatus.unsupportedMode)
        #expect(await changeMode(node, Clean.id, to: RvcCleanModeServer.deepClean) == ModeChangeStatus.success)
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.cleaning) == ModeChangeStatus.success)
        #expect(await changeMode(node, Clean.id, to: RvcCleanModeServer.quiet) == ModeChangeStatus.invalidInMode)
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.idle) == ModeChangeStatus.success)
        #expect(await state(node) == .seekingCharger)
        await node.stop()

        let low = try vacuum(batteryHalves: RvcOperationalStateServer.lowBattery)
        #expect(await changeMode(low, Run.id, to: RvcRunModeServer.cleaning) == Run.StatusCode.batteryLow.rawValue)
        #expect(await state(low) == .charging)
        await low.stop()
    }

    /// RVC Clean Mode 7.3 (revision 2, kept by 3 in Matter 1.4) on Mode Base 1.10.7.2.1: without
    /// DirectModeChange a change while RVC Run Mode is not Idle is InvalidInMode, which must carry
    /// a StatusText, and CurrentMode stays; revision 1's CleaningInProgress (0x40) is no longer
    /// the cluster's. TC-RVCCLEANM-2.2 step 7b.
    @Test func aCleanModeChangeDuringARunIsInvalidInModeWithAStatusText() async throws {
        let node = try vacuum()
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.cleaning) == ModeChangeStatus.success)
        let result = await node.invoke(1, Clean.id, Clean.Command.changeToMode.rawValue, Clean.Commands.ChangeToMode(newMode: RvcCleanModeServer.quiet).tlv)
        guard case .response(_, let tlv) = result else {
            Issue.record("no ChangeToModeResponse: \(result)")
            return
        }
        let response = try Clean.Commands.ChangeToModeResponse(tlv: tlv)
        #expect(response.status == ModeChangeStatus.invalidInMode)
        #expect(!(response.statusText ?? "").isEmpty)
        #expect(await node.uint(1, Clean.id, Clean.Attribute.currentMode.rawValue) == UInt64(RvcCleanModeServer.vacuum))
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.idle) == ModeChangeStatus.success)
        #expect(await changeMode(node, Clean.id, to: RvcCleanModeServer.quiet) == ModeChangeStatus.success)
        await node.stop()
    }

    /// 7.4.4.1 (Table 40, RVC Resume Compatibility): SeekingCharger is pause-compatible but not
    /// resume-compatible, so Resume there is CommandInvalidInState and it keeps seeking (1.14.7.4:
    /// only Running answers NoError without resuming). TC-RVCOPSTATE-2.3 step 45.
    @Test func resumeWhileSeekingTheChargerIsInvalidInState() async throws {
        let node = try vacuum()
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.cleaning) == ModeChangeStatus.success)
        #expect(await operational(node, Op.Command.resume) == .noError)
        #expect(await operational(node, Op.Command.goHome) == .noError)
        #expect(await operational(node, Op.Command.resume) == .commandInvalidInState)
        #expect(await state(node) == .seekingCharger)
        await node.stop()
    }

    /// 7.2 (Mapping mode tag): a mapping run is Running in phase Mapping for `mapRun`, then heads
    /// home; 7.2.7.1: without DirectModeChange a change from Mapping to Cleaning (non-Idle to
    /// non-Idle) is InvalidInMode. TC-RVCRUNM-2.2 needs these two modes without the Idle tag.
    @Test func aMappingRunMapsAndRefusesASwitchToCleaning() async throws {
        let node = try vacuum()
        let modes = try #require(await node.value(1, Run.id, Run.Attribute.supportedModes.rawValue))
        guard case .array(let items) = modes else {
            Issue.record("SupportedModes is not a list")
            return
        }
        let options = try items.map { try Run.ModeOptionStruct(tlv: $0.value) }
        let busy = options.filter { !$0.modeTags.contains { $0.value == Run.ModeTag.idle.rawValue } }
        #expect(busy.map(\.mode) == [RvcRunModeServer.cleaning, RvcRunModeServer.mapping])
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.mapping) == ModeChangeStatus.success)
        #expect(await state(node) == .running)
        #expect(await phase(node) == RvcOperationalStateServer.Phase.mapping.rawValue)
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.cleaning) == ModeChangeStatus.invalidInMode)
        #expect(await runMode(node) == UInt64(RvcRunModeServer.mapping))
        await clock.advance(by: RvcOperationalStateServer.mapRun)
        #expect(await state(node) == .seekingCharger)
        #expect(await runMode(node) == UInt64(RvcRunModeServer.idle))
        await node.stop()
    }

    /// At `lowBattery` a run heads home by itself, and the run still ends in an OperationCompletion.
    @Test func aLowBatteryMidRunSendsItHome() async throws {
        let node = try vacuum(batteryHalves: RvcOperationalStateServer.lowBattery + 2)
        #expect(await changeMode(node, Run.id, to: RvcRunModeServer.cleaning) == ModeChangeStatus.success)
        await clock.advance(by: .seconds(3 * RvcOperationalStateServer.drainEvery))
        #expect(await state(node) == .seekingCharger)
        #expect(await battery(node) ?? 0 <= RvcOperationalStateServer.lowBattery)
        await node.stop()
    }

    /// The buttons (`act NODE vacuum start|home|dock`) do what the commands do; carried to its
    /// dock mid-run it charges (Docked once full) and the run ends there.
    @Test func theButtonsStartAndStopARun() async throws {
        let node = try vacuum()
        let from = await start(node)
        try await node.act(.vacuum(.start))
        #expect(await state(node) == .running)
        await clock.advance(by: .seconds(RvcOperationalStateServer.drainEvery))
        try await node.act(.vacuum(.home))
        #expect(await state(node) == .seekingCharger)
        try await node.act(.vacuum(.dock))
        #expect(await state(node) == .charging)
        let ends = await node.events(from: from).filter { $0.cluster == Op.id && $0.event == Op.Event.operationCompletion }
        #expect(ends.count == 1)
        await #expect(throws: PhysicalActionError.self) { try await node.act(.vacuum(.home)) }
        await node.stop()
    }
}
