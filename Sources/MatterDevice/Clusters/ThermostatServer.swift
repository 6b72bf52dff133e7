import MatterModel
import MatterTLV

/// Thermostat cluster (Application Cluster spec 4.3): heating and cooling setpoints kept
/// within their limits and, with AutoMode, at least MinSetpointDeadBand apart (a setpoint
/// written too close pushes the other one, 4.3.9.x); SystemMode limited to what the features
/// allow; SetpointRaiseLower; and a room on the node clock, so LocalTemperature moves: while
/// the thermostat heats (or cools) the room warms (or cools) by a step each tick until it
/// reaches the setpoint, and otherwise it drifts toward OutdoorTemperature when the profile
/// gives one (the rates are the profile's `behaviour.room`). ThermostatRunningState says
/// which relay is on.
final class ThermostatServer: ThermostatHandler {
    static let clusterID = Clusters.Thermostat.id

    typealias Feature = Clusters.Thermostat.Feature
    typealias Attribute = Clusters.Thermostat.Attribute
    typealias Command = Clusters.Thermostat.Command

    /// SystemModeEnum values this server acts on.
    enum Mode: UInt64 { case off = 0, auto = 1, cool = 3, heat = 4, emergencyHeat = 5, precooling = 6, fanOnly = 7 }

    /// The room without a profile's: 0.1 °C per 30 s either way, 2 % of the outdoor gap lost
    /// per tick. The hysteresis before a relay switches on is the thermostat's own.
    static let defaultRoom = RoomModel()
    static let hysteresis: Int64 = 25
    private static let roomTimer = "room"
    let room: RoomModel

    private let heat: Bool
    private let cool: Bool
    private let auto: Bool

    init(features: Set<String>, room: RoomModel? = nil) {
        self.room = room ?? Self.defaultRoom
        heat = features.contains(Feature.heating)
        cool = features.contains(Feature.cooling)
        auto = features.contains(Feature.autoMode)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.localTemperature: .signed(2000)
        case Attribute.controlSequenceOfOperation: .uint(heat && cool ? 4 : heat ? 2 : 0)
        case Attribute.systemMode: .uint(auto ? Mode.auto.rawValue : heat ? Mode.heat.rawValue : Mode.cool.rawValue)
        case Attribute.thermostatRunningState: .uint(0)
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool { command == Command.setpointRaiseLower }

    func startUp(_ context: ClusterContext) {
        context.startTimer(Self.roomTimer, after: room.tick)
        // A thermostat that starts in a cold (or hot) room switches its relay on at once.
        regulate(context)
    }

    // MARK: Writes

    func validateWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> InteractionStatus? {
        switch attribute {
        case Attribute.occupiedHeatingSetpoint, Attribute.occupiedCoolingSetpoint:
            guard let setpoint = value.intValue else { return InteractionStatus(.constraintError) }
            let heating = attribute == Attribute.occupiedHeatingSetpoint
            return settle(heating: heating, to: setpoint, context, apply: false) ? nil : InteractionStatus(.constraintError)
        case Attribute.systemMode:
            guard let mode = value.unsignedValue.flatMap(Mode.init(rawValue:)), allows(mode, context) else {
                return InteractionStatus(.constraintError)
            }
            return nil
        default:
            return nil
        }
    }

    func didWrite(_ attribute: AttributeID, context: ClusterContext) {
        switch attribute {
        case Attribute.occupiedHeatingSetpoint, Attribute.occupiedCoolingSetpoint:
            let heating = attribute == Attribute.occupiedHeatingSetpoint
            if let setpoint = context.value(attribute)?.intValue { _ = settle(heating: heating, to: setpoint, context, apply: true) }
            regulate(context)
        case Attribute.systemMode:
            regulate(context)
        default:
            break
        }
    }

    /// SystemMode: Heat needs Heating, Cool needs Cooling, Auto needs AutoMode (4.3.9.x).
    private func allows(_ mode: Mode, _ context: ClusterContext) -> Bool {
        switch mode {
        case .off, .fanOnly: true
        case .auto: auto
        case .heat, .emergencyHeat: heat
        case .cool, .precooling: cool
        }
    }

    /// Checks (and with `apply`, sets) a setpoint within its limits; with AutoMode the other
    /// setpoint moves to keep MinSetpointDeadBand between them, within its own limits.
    func settle(heating: Bool, to setpoint: Int64, _ context: ClusterContext, apply: Bool) -> Bool {
        let (low, high) = limits(heating: heating, context)
        guard setpoint >= low, setpoint <= high else { return false }
        var other: Int64?
        if auto {
            let band = deadband(context)
            let otherAttribute = heating ? Attribute.occupiedCoolingSetpoint : Attribute.occupiedHeatingSetpoint
            if let current = context.value(otherAttribute)?.intValue {
                let wanted = heating ? max(current, setpoint + band) : min(current, setpoint - band)
                let (otherLow, otherHigh) = limits(heating: !heating, context)
                guard wanted >= otherLow, wanted <= otherHigh else { return false }
                if wanted != current { other = wanted }
            }
        }
        if apply {
            context.set(heating ? Attribute.occupiedHeatingSetpoint : Attribute.occupiedCoolingSetpoint, .signed(setpoint))
            if let other { context.set(heating ? Attribute.occupiedCoolingSetpoint : Attribute.occupiedHeatingSetpoint, .signed(other)) }
        }
        return true
    }

    /// The setpoint limits: the Min/Max limit attributes where served, else the hardware's
    /// Abs limits (whose defaults the Min/Max ones take, 4.3.9.5-4.3.9.8, 4.3.9.21-4.3.9.24), else
    /// the spec's defaults.
    func limits(heating: Bool, _ context: ClusterContext) -> (Int64, Int64) {
        func value(_ limit: AttributeID, _ abs: AttributeID, _ fallback: Int64) -> Int64 {
            context.value(limit)?.intValue ?? context.value(abs)?.intValue ?? fallback
        }
        return heating
            ? (
                value(Attribute.minHeatSetpointLimit, Attribute.absMinHeatSetpointLimit, 700),
                value(Attribute.maxHeatSetpointLimit, Attribute.absMaxHeatSetpointLimit, 3000)
            )
            : (
                value(Attribute.minCoolSetpointLimit, Attribute.absMinCoolSetpointLimit, 1600),
                value(Attribute.maxCoolSetpointLimit, Attribute.absMaxCoolSetpointLimit, 3200)
            )
    }

    // MARK: Commands

    /// SetpointRaiseLower (4.3.10.1): each chosen setpoint moves by Amount (0.1 °C steps) from its
    /// value before the command and is clamped to its limits; with AutoMode the deadband is kept
    /// by moving the other setpoint, so the target is also clamped to where the other one can
    /// still be MinSetpointDeadBand away within its own limits, and the command is not refused.
    /// With Both the two move together: the one moving toward the other goes second, so the
    /// first never pushes it and each ends Amount from where it was (TC-TSTAT-2.2 steps 15-18).
    func setpointRaiseLower(_ request: Clusters.Thermostat.Commands.SetpointRaiseLower, context: ClusterContext) -> InteractionStatus {
        let amount = Int64(request.amount)
        let chosen: [Bool] =
            switch request.mode {
            case .heat: [true]
            case .cool: [false]
            case .both: amount > 0 ? [false, true] : [true, false]
            }
        let targets = chosen.filter { $0 ? heat : cool }.compactMap { heating -> (Bool, Int64)? in
            let attribute = heating ? Attribute.occupiedHeatingSetpoint : Attribute.occupiedCoolingSetpoint
            guard let current = context.value(attribute)?.intValue else { return nil }
            let (low, high) = reachable(heating: heating, context)
            return (heating, min(max(current + amount * 10, low), high))
        }
        for (heating, setpoint) in targets where !settle(heating: heating, to: setpoint, context, apply: true) {
            return InteractionStatus(.constraintError)
        }
        regulate(context)
        return .success
    }

    /// A setpoint's limits narrowed, with AutoMode, to where the other setpoint can keep the
    /// deadband within its own limits.
    private func reachable(heating: Bool, _ context: ClusterContext) -> (Int64, Int64) {
        let (low, high) = limits(heating: heating, context)
        guard auto else { return (low, high) }
        let (otherLow, otherHigh) = limits(heating: !heating, context)
        return heating ? (low, min(high, otherHigh - deadband(context))) : (max(low, otherLow + deadband(context)), high)
    }

    /// MinSetpointDeadBand in hundredths of a degree (the attribute is in tenths).
    private func deadband(_ context: ClusterContext) -> Int64 {
        (context.value(Attribute.minSetpointDeadBand)?.intValue ?? 25) * 10
    }

    // MARK: The room

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.roomTimer else { return }
        context.startTimer(Self.roomTimer, after: room.tick)
        guard var temperature = context.value(Attribute.localTemperature)?.intValue else { return }
        let running = context.unsigned(Attribute.thermostatRunningState) ?? 0
        if running & 0b01 != 0 {
            temperature += room.heatingStep
        } else if running & 0b10 != 0 {
            temperature -= room.coolingStep
        } else if let outdoor = context.value(Attribute.outdoorTemperature)?.intValue {
            let gap = outdoor - temperature
            temperature += gap == 0 ? 0 : (gap * room.leakPercent / 100 != 0 ? gap * room.leakPercent / 100 : gap.signum())
        }
        context.set(Attribute.localTemperature, .signed(temperature))
        regulate(context)
    }

    /// Switches the heating and cooling relays for the mode, the setpoints and the room.
    func regulate(_ context: ClusterContext) {
        guard let room = context.value(Attribute.localTemperature)?.intValue,
            let mode = context.unsigned(Attribute.systemMode).flatMap(Mode.init(rawValue:))
        else { return }
        let running = context.unsigned(Attribute.thermostatRunningState) ?? 0
        var heating = running & 0b01 != 0
        var cooling = running & 0b10 != 0
        let heatable = heat && [.heat, .emergencyHeat, .auto].contains(mode)
        let coolable = cool && [.cool, .precooling, .auto].contains(mode)
        if let setpoint = context.value(Attribute.occupiedHeatingSetpoint)?.intValue, heatable {
            if room < setpoint - Self.hysteresis { heating = true } else if room >= setpoint { heating = false }
        } else {
            heating = false
        }
        if let setpoint = context.value(Attribute.occupiedCoolingSetpoint)?.intValue, coolable {
            if room > setpoint + Self.hysteresis { cooling = true } else if room <= setpoint { cooling = false }
        } else {
            cooling = false
        }
        if heating && cooling { cooling = false }
        context.set(Attribute.thermostatRunningState, .uint((heating ? 0b01 : 0) | (cooling ? 0b10 : 0) | (running & ~0b11)))
    }
}

extension ThermostatServer: PhysicallyOperated {
    /// The dial: the setpoint of the mode the thermostat is in (cooling in Cool or Precooling,
    /// heating otherwise), within its limits; the deadband pushes the other one as a write does.
    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .dial(let celsius) = action else { throw PhysicalActionError("Thermostat cannot \(action)") }
        guard celsius.isFinite else { throw PhysicalActionError("the dial needs a temperature in °C, not \(celsius)") }
        let mode = context.unsigned(Attribute.systemMode).flatMap(Mode.init(rawValue:))
        let heating = heat && !(cool && (mode == .cool || mode == .precooling))
        let (low, high) = limits(heating: heating, context)
        // Checked as a Double first: a dial far outside Int64 (1e300) must not trap the conversion.
        let hundredths = (celsius * 100).rounded()
        guard hundredths >= Double(low), hundredths <= Double(high), let setpoint = Int64(exactly: hundredths),
            settle(heating: heating, to: setpoint, context, apply: true)
        else {
            throw PhysicalActionError(
                "the \(heating ? "heating" : "cooling") setpoint goes from \(Double(low) / 100) to \(Double(high) / 100) °C"
                    + (auto ? " and keeps the deadband to the other one" : "") + "; \(celsius) °C is outside it")
        }
        regulate(context)
    }
}
