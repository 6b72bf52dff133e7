import MatterModel
import MatterProtocol
import MatterTLV

/// Power Source cluster (Core spec 11.7) for a battery (feature BAT): BatPercentRemaining, in
/// half-percent units (11.7.6.13), drains one unit every `drainInterval` of the node clock;
/// BatChargeLevel and BatReplacementNeeded follow it (Warning at `warningPercent`, Critical at
/// `criticalPercent`), and so does a Smoke CO Alarm's BatteryAlert on the same endpoint.
/// `matter-sim act NODE battery 15` puts in a battery at that charge. EndpointList stays empty:
/// the one battery powers the whole node (11.7.6.32).
final class PowerSourceServer: PhysicallyOperated {
    static let clusterID = Clusters.PowerSource.id

    typealias Attribute = Clusters.PowerSource.Attribute
    typealias Feature = Clusters.PowerSource.Feature
    typealias ChargeLevel = Clusters.PowerSource.BatChargeLevelEnum

    /// How long one half-percent of charge lasts: a full battery is empty after 200 of these
    /// (about eight days; a scenario's scaled clock shows it in minutes).
    static let drainInterval = Duration.seconds(3_600)
    static let warningPercent = 20.0
    static let criticalPercent = 5.0
    /// 100 %, in BatPercentRemaining's half-percent units.
    static let fullHalves: UInt64 = 200
    private static let drainTimer = "drain"

    private let features: Set<String>

    init(features: Set<String>) {
        self.features = features
    }

    private var battery: Bool { features.contains(Feature.battery) }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.status: .uint(UInt64(Clusters.PowerSource.PowerSourceStatusEnum.active.rawValue))
        case Attribute.description: .utf8(battery ? "Battery" : "Mains")
        case Attribute.endpointList: .array([])
        case Attribute.batPercentRemaining: battery ? .uint(200) : nil
        case Attribute.batChargeLevel: .uint(UInt64(ChargeLevel.ok.rawValue))
        case Attribute.batReplacementNeeded: .bool(false)
        case Attribute.batReplaceability: .uint(UInt64(Clusters.PowerSource.BatReplaceabilityEnum.userReplaceable.rawValue))
        default: nil
        }
    }

    func startUp(_ context: ClusterContext) {
        guard battery else { return }
        follow(context)
        context.startTimer(Self.drainTimer, after: Self.drainInterval)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.drainTimer else { return }
        if let remaining = context.unsigned(Attribute.batPercentRemaining), remaining > 0 {
            context.set(Attribute.batPercentRemaining, .uint(remaining - 1))
            follow(context)
        }
        context.startTimer(Self.drainTimer, after: Self.drainInterval)
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .battery(let percent) = action else { throw PhysicalActionError("Power Source cannot \(action)") }
        guard battery else { throw PhysicalActionError("this power source is not a battery (feature BAT)") }
        guard percent.isFinite, (0...100).contains(percent) else {
            throw PhysicalActionError("a battery holds 0 to 100 %, not \(percent)")
        }
        context.set(Attribute.batPercentRemaining, .uint(UInt64((percent * 2).rounded())))
        follow(context)
        // The new battery drains from now on.
        context.startTimer(Self.drainTimer, after: Self.drainInterval)
    }

    /// The charge moved by `halves` half-percents, within 0 to 100 %: a robot vacuum's run drains
    /// its battery faster than standing by, its dock charges it.
    func change(byHalves halves: Int, _ context: ClusterContext) {
        guard battery, let remaining = context.unsigned(Attribute.batPercentRemaining) else { return }
        context.set(Attribute.batPercentRemaining, .uint(UInt64(max(0, min(Int(Self.fullHalves), Int(remaining) + halves)))))
        follow(context)
    }

    /// BatChargeLevel and BatReplacementNeeded from BatPercentRemaining, passed on to the endpoint's alarm.
    private func follow(_ context: ClusterContext) {
        guard let halves = context.unsigned(Attribute.batPercentRemaining) else { return }
        let percent = Double(halves) / 2
        let level: ChargeLevel = percent <= Self.criticalPercent ? .critical : percent <= Self.warningPercent ? .warning : .ok
        context.set(Attribute.batChargeLevel, .uint(UInt64(level.rawValue)))
        context.set(Attribute.batReplacementNeeded, .bool(level != .ok))
        if let alarm = context.peer(SmokeCoAlarmServer.self) {
            let alert: SmokeCoAlarmServer.AlarmState =
                switch level {
                case .ok: .normal
                case .warning: .warning
                case .critical: .critical
                }
            alarm.server.batteryChanged(to: alert, context: alarm.context)
        }
    }
}
