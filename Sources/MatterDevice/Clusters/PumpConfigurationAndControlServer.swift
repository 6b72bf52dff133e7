import MatterModel
import MatterTLV

/// What happens at a pump itself (`matter-sim act NODE pump blocked|dry|clear`).
public enum PumpAction: Sendable, Hashable, CustomStringConvertible {
    /// Something jams the impeller: PumpBlocked, DeviceFault; the pump stops.
    case blocked
    /// The pump runs out of water: DryRunning, SupplyFault; the pump stops.
    case dryRunning
    /// The fault is put right: the pump runs again if it is on.
    case clear

    public var description: String {
        switch self {
        case .blocked: "block its impeller"
        case .dryRunning: "run it dry"
        case .clear: "put its fault right"
        }
    }
}

/// Pump Configuration and Control (Application Cluster spec 4.2) on a Pump (0x0303). The
/// endpoint's OnOff runs it; OperationMode (Normal, Minimum, Maximum) and ControlMode (a mode
/// needs its feature, else CONSTRAINT_ERROR) set how hard: Normal holds the control mode's
/// setpoint at `normalSetpoint` of its MinConst…MaxConst range, Minimum runs at MinConstSpeed,
/// Maximum at full speed (both at constant speed: EffectiveControlMode ConstantSpeed). Speed,
/// Capacity (0.5 % units) and the endpoint's Pressure and Flow Measurement move to the output
/// over `rampTime` on the node clock; PumpStatus says Running. A blocked impeller or a dry run
/// (`act`) stops it with DeviceFault or SupplyFault and raises PumpBlocked or DryRunning.
/// LifetimeRunningHours counts each full hour it runs.
final class PumpConfigurationAndControlServer: PhysicallyOperated {
    static let clusterID = Clusters.PumpConfigurationAndControl.id
    typealias Attribute = Clusters.PumpConfigurationAndControl.Attribute
    typealias Feature = Clusters.PumpConfigurationAndControl.Feature
    typealias ControlMode = Clusters.PumpConfigurationAndControl.ControlModeEnum
    typealias OperationMode = Clusters.PumpConfigurationAndControl.OperationModeEnum
    typealias Status = Clusters.PumpConfigurationAndControl.PumpStatusBitmap
    typealias Event = Clusters.PumpConfigurationAndControl.Event

    static let normalSetpoint = 0.75
    static let rampTime = Duration.seconds(2)
    static let rampSteps = 4
    private static let rampTimer = "ramp"
    private static let hourTimer = "running-hour"

    private let features: Set<String>
    /// The output the pump moves from and to (0…1 of full), and the ramp's step.
    private var output = 0.0
    private var rampFrom = 0.0
    private var rampStep = 0

    init(features: Set<String>) {
        self.features = features
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.pumpStatus, Attribute.speed, Attribute.capacity: .uint(0)
        default: nil
        }
    }

    func startUp(_ context: ClusterContext) {
        output = 0
        settleModes(context)
        apply(0, context)
        if running(context) { rampTo(target(context), context) }
    }

    /// The feature each control mode and operation mode needs (4.2.6.x).
    private func allowed(control: ControlMode) -> Bool {
        switch control {
        case .constantSpeed: features.contains(Feature.constantSpeed)
        case .constantPressure: features.contains(Feature.constantPressure)
        case .proportionalPressure: features.contains(Feature.compensatedPressure)
        case .constantFlow: features.contains(Feature.constantFlow)
        case .constantTemperature: features.contains(Feature.constantTemperature)
        case .automatic: features.contains(Feature.automatic)
        }
    }

    private func allowed(operation: OperationMode) -> Bool {
        switch operation {
        case .normal: true
        case .minimum, .maximum: features.contains(Feature.constantSpeed)
        case .local: features.contains(Feature.localOperation)
        }
    }

    func validateWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> InteractionStatus? {
        let raw = value.unsignedValue.map { UInt8(clamping: $0) }
        switch attribute {
        case Attribute.controlMode:
            guard let mode = raw.flatMap({ ControlMode(rawValue: $0) }), allowed(control: mode) else { return InteractionStatus(.constraintError) }
        case Attribute.operationMode:
            guard let mode = raw.flatMap({ OperationMode(rawValue: $0) }), allowed(operation: mode) else { return InteractionStatus(.constraintError) }
        default: break
        }
        return nil
    }

    func didWrite(_ attribute: AttributeID, context: ClusterContext) {
        guard attribute == Attribute.controlMode || attribute == Attribute.operationMode else { return }
        settleModes(context)
        if running(context) { rampTo(target(context), context) }
    }

    /// The endpoint's OnOff turned the pump on or off.
    func switched(_ context: ClusterContext) {
        rampTo(running(context) ? target(context) : 0, context)
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .pump(let pump) = action else { throw PhysicalActionError("a pump cannot \(action)") }
        var status = Status(rawValue: UInt16(clamping: context.unsigned(Attribute.pumpStatus) ?? 0))
        switch pump {
        case .blocked:
            status.insert(.deviceFault)
            context.recordEvent(Event.pumpBlocked, priority: .info, fields: [])
        case .dryRunning:
            status.insert(.supplyFault)
            context.recordEvent(Event.dryRunning, priority: .info, fields: [])
        case .clear:
            guard !status.isDisjoint(with: [.deviceFault, .supplyFault]) else { throw PhysicalActionError("the pump has no fault") }
            status.subtract([.deviceFault, .supplyFault])
        }
        context.set(Attribute.pumpStatus, .uint(UInt64(status.rawValue)))
        rampTo(running(context) ? target(context) : 0, context)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        switch name {
        case Self.rampTimer:
            rampStep += 1
            let goal = running(context) ? target(context) : 0
            let reached = rampStep >= Self.rampSteps
            apply(reached ? goal : rampFrom + (goal - rampFrom) * Double(rampStep) / Double(Self.rampSteps), context)
            if !reached { context.startTimer(Self.rampTimer, after: Self.rampTime / Self.rampSteps) }
        case Self.hourTimer:
            guard output > 0 else { return }
            let hours = context.unsigned(Attribute.lifetimeRunningHours) ?? 0
            context.set(Attribute.lifetimeRunningHours, .uint(hours + 1))
            context.startTimer(Self.hourTimer, after: .seconds(3_600))
        default: break
        }
    }

    // MARK: Output

    /// On, and no fault holds it.
    private func running(_ context: ClusterContext) -> Bool {
        let status = Status(rawValue: UInt16(clamping: context.unsigned(Attribute.pumpStatus) ?? 0))
        let on = context.peer(OnOffServer.self).map { $0.server.isOn($0.context) } ?? true
        return on && status.isDisjoint(with: [.deviceFault, .supplyFault])
    }

    /// EffectiveOperationMode and EffectiveControlMode: Minimum and Maximum run at constant speed.
    private func settleModes(_ context: ClusterContext) {
        let operation = context.unsigned(Attribute.operationMode).flatMap { OperationMode(rawValue: UInt8(clamping: $0)) } ?? .normal
        let control = context.unsigned(Attribute.controlMode).flatMap { ControlMode(rawValue: UInt8(clamping: $0)) } ?? .constantSpeed
        context.set(Attribute.effectiveOperationMode, .uint(UInt64(operation.rawValue)))
        let effective: ControlMode = operation == .minimum || operation == .maximum ? .constantSpeed : control
        context.set(Attribute.effectiveControlMode, .uint(UInt64(effective.rawValue)))
    }

    /// The output (0…1 of full) the modes ask for.
    private func target(_ context: ClusterContext) -> Double {
        func value(_ attribute: AttributeID) -> Double? {
            context.value(attribute)?.intValue.map(Double.init) ?? context.unsigned(attribute).map(Double.init)
        }
        /// The setpoint within [min, max] as a share of the full range up to `full`.
        func share(_ min: AttributeID, _ max: AttributeID, of full: AttributeID) -> Double? {
            guard let low = value(min), let high = value(max), let top = value(full), top > 0 else { return nil }
            return (low + (high - low) * Self.normalSetpoint) / top
        }
        let operation = context.unsigned(Attribute.effectiveOperationMode).flatMap { OperationMode(rawValue: UInt8(clamping: $0)) }
        switch operation {
        case .maximum: return 1
        case .minimum:
            return value(Attribute.minConstSpeed).flatMap { low in value(Attribute.maxSpeed).map { low / max($0, 1) } } ?? 0.25
        default: break
        }
        let control = context.unsigned(Attribute.effectiveControlMode).flatMap { ControlMode(rawValue: UInt8(clamping: $0)) }
        let wanted: Double? =
            switch control {
            case .constantPressure: share(Attribute.minConstPressure, Attribute.maxConstPressure, of: Attribute.maxPressure)
            case .constantFlow: share(Attribute.minConstFlow, Attribute.maxConstFlow, of: Attribute.maxFlow)
            case .constantSpeed: share(Attribute.minConstSpeed, Attribute.maxConstSpeed, of: Attribute.maxSpeed)
            default: nil
            }
        return min(1, max(0, wanted ?? Self.normalSetpoint))
    }

    private func rampTo(_ goal: Double, _ context: ClusterContext) {
        rampFrom = output
        rampStep = 0
        context.cancelTimer(Self.rampTimer)
        guard goal != output else { return }
        context.startTimer(Self.rampTimer, after: Self.rampTime / Self.rampSteps)
    }

    /// Speed, Capacity, PumpStatus Running and the endpoint's pressure and flow at `level` of full output.
    private func apply(_ level: Double, _ context: ClusterContext) {
        let wasRunning = output > 0
        output = level
        let maxSpeed = Double(context.unsigned(Attribute.maxSpeed) ?? 0)
        context.set(Attribute.speed, .uint(UInt64((maxSpeed * level).rounded())))
        context.set(Attribute.capacity, .signed(Int64((200 * level).rounded())))
        var status = Status(rawValue: UInt16(clamping: context.unsigned(Attribute.pumpStatus) ?? 0))
        if level > 0 { status.insert(.running) } else { status.remove(.running) }
        context.set(Attribute.pumpStatus, .uint(UInt64(status.rawValue)))
        if let pressure = context.peer(PressureMeasurementServer.self), let top = context.value(Attribute.maxPressure)?.intValue {
            pressure.context.set(PressureMeasurementServer.measuredValue, .signed(Int64((Double(top) * level).rounded())))
        }
        if let flow = context.peer(FlowMeasurementServer.self), let top = context.unsigned(Attribute.maxFlow) {
            flow.context.set(FlowMeasurementServer.measuredValue, .uint(UInt64((Double(top) * level).rounded())))
        }
        if level > 0, !wasRunning {
            context.startTimer(Self.hourTimer, after: .seconds(3_600))
        } else if level == 0 {
            context.cancelTimer(Self.hourTimer)
        }
    }
}
