import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// A Pump (0x0303): Pump Configuration and Control (Application Cluster spec 4.2) run by the
// endpoint's OnOff, with its own Pressure and Flow Measurement, on a manual clock.
@Suite struct PumpTests {
    let clock = ManualClock()
    typealias Pump = Clusters.PumpConfigurationAndControl
    typealias A = Pump.Attribute

    func pump(features: Set<String> = [Pump.Feature.constantPressure, Pump.Feature.constantSpeed]) throws -> MatterNode {
        try makeNode(
            [
                rootEndpoint(),
                EndpointDescription(
                    number: 1, deviceTypes: [deviceType(DeviceTypes.pump)],
                    serverClusters: [
                        ClusterInstanceDescription(id: Clusters.Identify.id),
                        ClusterInstanceDescription(id: Clusters.OnOff.id, attributes: [Clusters.OnOff.Attribute.onOff: .bool(false)]),
                        ClusterInstanceDescription(
                            id: Pump.id, features: features,
                            attributes: [
                                A.maxPressure: .signed(4_000), A.maxSpeed: .uint(3_000), A.maxFlow: .uint(60),
                                A.minConstPressure: .signed(500), A.maxConstPressure: .signed(3_500),
                                A.minConstSpeed: .uint(1_000), A.maxConstSpeed: .uint(3_000),
                                A.operationMode: .uint(0), A.controlMode: .uint(UInt64(Pump.ControlModeEnum.constantPressure.rawValue)),
                            ]),
                        ClusterInstanceDescription(id: Clusters.PressureMeasurement.id),
                    ]),
            ], clock: clock)
    }

    func read(_ node: MatterNode, _ attribute: AttributeID) async -> TLVValue? { await node.value(1, Pump.id, attribute.rawValue) }
    func status(_ node: MatterNode) async -> Pump.PumpStatusBitmap {
        Pump.PumpStatusBitmap(rawValue: UInt16(clamping: await node.uint(1, Pump.id, A.pumpStatus.rawValue) ?? 0))
    }
    func pressure(_ node: MatterNode) async -> Int64? {
        await node.value(1, Clusters.PressureMeasurement.id, Clusters.PressureMeasurement.Attribute.measuredValue.rawValue)?.intValue
    }
    func onOff(_ node: MatterNode, _ on: Bool) async -> InvokeResult {
        await node.invoke(1, Clusters.OnOff.id, (on ? Clusters.OnOff.Command.on : Clusters.OnOff.Command.off).rawValue)
    }

    /// On ramps the pump up over `rampTime` to the constant-pressure setpoint (75 % of 500…3500
    /// = 2750 of 4000: 68.75 % output); Speed, Capacity, PumpStatus Running and the measured
    /// pressure follow; Off ramps it down to standstill.
    @Test func onRunsItUpToTheSetpointAndOffStopsIt() async throws {
        let node = try pump()
        #expect(await read(node, A.speed) == u(0))
        #expect(await onOff(node, true) == .success)
        await clock.advance(by: PumpConfigurationAndControlServer.rampTime / 2)
        let halfway = await node.uint(1, Pump.id, A.speed.rawValue) ?? 0
        #expect(halfway > 0 && halfway < 2_063)
        await clock.advance(by: PumpConfigurationAndControlServer.rampTime / 2)
        #expect(await read(node, A.speed) == u(2_063))  // 3000 × 0.6875
        #expect(await read(node, A.capacity) == .signed(138))  // 68.75 % in 0.5 % units
        #expect(await pressure(node) == 2_750)
        #expect(await status(node).contains(.running))
        #expect(await read(node, A.effectiveControlMode) == u(Pump.ControlModeEnum.constantPressure.rawValue))
        #expect(await onOff(node, false) == .success)
        await clock.advance(by: PumpConfigurationAndControlServer.rampTime)
        #expect(await read(node, A.speed) == u(0))
        #expect(await pressure(node) == 0)
        #expect(await !status(node).contains(.running))
        await node.stop()
    }

    /// 4.2.7.x: Maximum runs at full speed at constant speed (EffectiveControlMode); a control
    /// mode whose feature the pump lacks (ConstantFlow without FLW) is CONSTRAINT_ERROR.
    @Test func operationAndControlModesNeedTheirFeatures() async throws {
        let node = try pump()
        #expect(await node.write(1, Pump.id, A.controlMode.rawValue, u(Pump.ControlModeEnum.constantFlow.rawValue)).status == .constraintError)
        #expect(await node.write(1, Pump.id, A.operationMode.rawValue, u(Pump.OperationModeEnum.local.rawValue)).status == .constraintError)
        #expect(await node.write(1, Pump.id, A.operationMode.rawValue, u(Pump.OperationModeEnum.maximum.rawValue)) == .success)
        #expect(await read(node, A.effectiveOperationMode) == u(Pump.OperationModeEnum.maximum.rawValue))
        #expect(await read(node, A.effectiveControlMode) == u(Pump.ControlModeEnum.constantSpeed.rawValue))
        #expect(await onOff(node, true) == .success)
        await clock.advance(by: PumpConfigurationAndControlServer.rampTime)
        #expect(await read(node, A.speed) == u(3_000))
        #expect(await read(node, A.capacity) == .signed(200))
        await node.stop()
    }

    /// A blocked impeller stops a running pump (DeviceFault, PumpBlocked); cleared, it runs again.
    @Test func aBlockedImpellerStopsItUntilCleared() async throws {
        let node = try pump()
        #expect(await onOff(node, true) == .success)
        await clock.advance(by: PumpConfigurationAndControlServer.rampTime)
        let from = await node.events().last.map { $0.number + 1 } ?? 0
        try await node.act(.pump(.blocked))
        await clock.advance(by: PumpConfigurationAndControlServer.rampTime)
        #expect(await read(node, A.speed) == u(0))
        #expect(await status(node) == .deviceFault)
        #expect(await node.events(from: from).filter { $0.cluster == Pump.id }.map(\.event) == [Pump.Event.pumpBlocked])
        try await node.act(.pump(.clear))
        await clock.advance(by: PumpConfigurationAndControlServer.rampTime)
        #expect(await status(node) == .running)
        await #expect(throws: PhysicalActionError.self) { try await node.act(.pump(.clear)) }
        await node.stop()
    }
}
