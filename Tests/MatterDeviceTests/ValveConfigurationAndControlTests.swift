import Foundation
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Valve Configuration and Control (Application Cluster spec 4.6) on a Water Valve (0x0042), on a
// manual clock: Open / Close through the generated handler, the move through Transitioning,
// TargetLevel on LevelStep, the open duration counting down to an automatic close (reported
// quietly), AutoCloseTime with TimeSync, faults, and the events.
@Suite struct ValveConfigurationAndControlTests {
    let clock = ManualClock()
    typealias Valve = Clusters.ValveConfigurationAndControl
    typealias A = Valve.Attribute
    static let waterValve: UInt32 = 0x0042

    func valve(features: Set<String> = ["LVL"], attributes: [AttributeID: TLVValue] = [:]) throws -> MatterNode {
        let values: [AttributeID: TLVValue] = [A.levelStep: u(10), A.valveFault: u(0)]
        return try singleClusterNode(
            Self.waterValve, Valve.id, features: features, attributes: values.merging(attributes) { $1 }, clock: clock)
    }

    func read(_ node: MatterNode, _ attribute: AttributeID) async -> TLVValue? { await node.value(1, Valve.id, attribute.rawValue) }
    func open(_ node: MatterNode, _ request: Valve.Commands.Open = .init()) async -> InvokeResult {
        await node.invoke(1, Valve.id, Valve.Command.open.rawValue, request.tlv)
    }
    func close(_ node: MatterNode) async -> InvokeResult { await node.invoke(1, Valve.id, Valve.Command.close.rawValue) }
    func state(_ node: MatterNode) async -> (current: TLVValue?, target: TLVValue?, level: TLVValue?) {
        await (read(node, A.currentState), read(node, A.targetState), read(node, A.currentLevel))
    }
    func start(_ node: MatterNode) async -> UInt64 { await node.events().last.map { $0.number + 1 } ?? 0 }
    func events(_ node: MatterNode, from: UInt64) async -> [(EventID, TLVValue)] {
        await node.events(from: from).filter { $0.cluster == Valve.id }.map { ($0.event, $0.data) }
    }

    /// 4.6.7.1: Open with OpenDuration 3 and TargetLevel 50 moves through Transitioning to Open
    /// at 50 %; RemainingDuration counts down and at 0 the valve closes. Each CurrentState change
    /// is a ValveStateChanged with the level.
    @Test func openMovesToTheLevelAndTheOpenDurationRunsOutIntoAClose() async throws {
        let node = try valve()
        #expect(await state(node).current == u(Valve.ValveStateEnum.closed.rawValue))
        let from = await start(node)
        #expect(await open(node, .init(openDuration: .value(3), targetLevel: 50)) == .success)
        #expect(await state(node).current == u(Valve.ValveStateEnum.transitioning.rawValue))
        #expect(await state(node).target == u(Valve.ValveStateEnum.open.rawValue))
        #expect(await read(node, A.targetLevel) == u(50))
        #expect(await read(node, A.openDuration) == u(3))
        #expect(await read(node, A.remainingDuration) == u(3))
        await clock.advance(by: ValveConfigurationAndControlServer.moveTime)
        #expect(await state(node) == (u(Valve.ValveStateEnum.open.rawValue), .null, u(50)))
        #expect(await read(node, A.targetLevel) == .null)
        await clock.advance(by: .seconds(1))
        #expect(await read(node, A.remainingDuration) == u(2))
        await clock.advance(by: .milliseconds(1_500))  // 3 s after the Open
        #expect(await state(node).current == u(Valve.ValveStateEnum.transitioning.rawValue))
        #expect(await read(node, A.remainingDuration) == .null)
        #expect(await read(node, A.openDuration) == .null)
        await clock.advance(by: ValveConfigurationAndControlServer.moveTime)
        #expect(await state(node) == (u(Valve.ValveStateEnum.closed.rawValue), .null, u(0)))
        let raised = await events(node, from: from)
        #expect(raised.map(\.0) == Array(repeating: Valve.Event.valveStateChanged, count: 4))
        let states = raised.compactMap { try? Valve.Events.ValveStateChanged(tlv: $0.1) }
        #expect(states.map(\.valveState) == [.transitioning, .open, .transitioning, .closed])
        #expect(states.map(\.valveLevel) == [0, 50, 50, 0])
        await node.stop()
    }

    /// 4.6.7.1.2 / 4.6.6.10 (TC-VALCC-3.4 step 5): with LevelStep 10 an Open to a level that is
    /// neither a multiple of 10 nor 100 is a CONSTRAINT_ERROR and moves nothing; the old valve
    /// rounded 45 to 50 and answered SUCCESS.
    @Test func aTargetLevelOffTheLevelStepIsAConstraintError() async throws {
        let node = try valve()
        for level: UInt8 in [1, 45, 99] {
            #expect(await open(node, .init(targetLevel: level)) == .status(InteractionStatus(.constraintError)), "\(level)")
        }
        #expect(await state(node).target == .null)
        for level: UInt8 in [10, 90, 100] {
            #expect(await open(node, .init(targetLevel: level)) == .success, "\(level)")
            #expect(await read(node, A.targetLevel) == u(level))
        }
        await node.stop()
    }

    /// 4.6.6.4 (Q): RemainingDuration is reported when it starts and when it reaches 0, not
    /// each second of the countdown.
    @Test func theCountdownIsReportedAtItsStartAndEndOnly() async throws {
        let node = try valve()
        let changes = node.changes
        #expect(await open(node, .init(openDuration: .value(5))) == .success)
        await clock.advance(by: .seconds(6))
        let seen = await drain(changes, stopping: node)
        #expect(seen.values(Valve.id, A.remainingDuration.rawValue) == [5, 0])
        #expect(seen.values(Valve.id, A.currentState.rawValue).last == UInt64(Valve.ValveStateEnum.closed.rawValue))
    }

    /// 4.6.7.1.1: without OpenDuration the valve opens for DefaultOpenDuration; a null one keeps
    /// it open until Close, which clears the durations (4.6.7.2).
    @Test func defaultAndNullOpenDurations() async throws {
        let node = try valve(attributes: [A.defaultOpenDuration: u(10), A.defaultOpenLevel: u(80)])
        #expect(await open(node) == .success)
        #expect(await read(node, A.openDuration) == u(10))
        #expect(await read(node, A.targetLevel) == u(80))
        #expect(await open(node, .init(openDuration: .null)) == .success)
        #expect(await read(node, A.openDuration) == .null)
        #expect(await read(node, A.remainingDuration) == .null)
        await clock.advance(by: .seconds(3_600))
        #expect(await state(node).current == u(Valve.ValveStateEnum.open.rawValue))
        #expect(await close(node) == .success)
        await clock.advance(by: ValveConfigurationAndControlServer.moveTime)
        #expect(await state(node) == (u(Valve.ValveStateEnum.closed.rawValue), .null, u(0)))
        await node.stop()
    }

    /// With TimeSync, AutoCloseTime is when the open duration runs out, in µs since the Matter
    /// epoch on the node's wall clock; Close clears it.
    @Test func autoCloseTimeIsTheUTCTimeTheValveWillClose() async throws {
        let node = try valve(features: ["TS", "LVL"])
        #expect(await open(node, .init(openDuration: .value(60))) == .success)
        let expected = ValveConfigurationAndControlServer.matterEpochMicroseconds(clock.date.addingTimeInterval(60))
        #expect(await read(node, A.autoCloseTime) == u(expected))
        #expect(await close(node) == .success)
        #expect(await read(node, A.autoCloseTime) == .null)
        await node.stop()
    }

    /// A fault at the valve (`act NODE fault leaking`) sets ValveFault and raises the ValveFault
    /// event; Open then answers FAILURE with FailureDueToFault until it is repaired. Close still closes.
    @Test func aFaultRaisesItsEventAndOpenFailsUntilItIsRepaired() async throws {
        let node = try valve()
        let from = await start(node)
        _ = try await node.act(.valve(.fault(.leaking)))
        #expect(await read(node, A.valveFault) == u(Valve.ValveFaultBitmap.leaking.rawValue))
        let failure = InteractionStatus(.failure, clusterStatus: Valve.StatusCodeEnum.failureDueToFault.rawValue)
        #expect(await open(node) == .status(failure))
        #expect(await close(node) == .success)
        _ = try await node.act(.valve(.fault([])))
        #expect(await open(node) == .success)
        let faults = await events(node, from: from).filter { $0.0 == Valve.Event.valveFault }
        #expect(faults.compactMap { try? Valve.Events.ValveFault(tlv: $0.1).valveFault } == [.leaking, []])
        await node.stop()
    }

    /// The lever (`act NODE valve open|close`) moves the valve as the commands do, to
    /// DefaultOpenLevel, and ends a countdown.
    @Test func theLeverOpensAndClosesIt() async throws {
        let node = try valve()
        _ = try await node.act(.valve(.lever(open: true)))
        await clock.advance(by: ValveConfigurationAndControlServer.moveTime)
        #expect(await state(node) == (u(Valve.ValveStateEnum.open.rawValue), .null, u(100)))
        _ = try await node.act(.valve(.lever(open: false)))
        await clock.advance(by: ValveConfigurationAndControlServer.moveTime)
        #expect(await state(node) == (u(Valve.ValveStateEnum.closed.rawValue), .null, u(0)))
        await node.stop()
    }
}
