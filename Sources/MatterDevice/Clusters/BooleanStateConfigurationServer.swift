import MatterModel
import MatterProtocol
import MatterTLV

/// Boolean State Configuration cluster (Application Cluster spec 1.8): the alarm of a boolean
/// sensor (a leak detector's light and beeper). While the sensor is triggered (StateValue TRUE:
/// water, for a Water Leak Detector) every enabled alarm mode is active; when it is not, none is
/// and nothing stays suppressed (1.8.6.4, 1.8.6.5). EnableDisableAlarm chooses the modes,
/// SuppressAlarm (SPRS) silences active ones; each change of AlarmsActive or AlarmsSuppressed
/// raises AlarmsStateChanged (1.8.8.1).
final class BooleanStateConfigurationServer: BooleanStateConfigurationHandler {
    typealias Attribute = Clusters.BooleanStateConfiguration.Attribute
    typealias Command = Clusters.BooleanStateConfiguration.Command
    typealias Feature = Clusters.BooleanStateConfiguration.Feature
    typealias AlarmMode = Clusters.BooleanStateConfiguration.AlarmModeBitmap

    private let features: Set<String>
    /// The alarm modes the features bring: Visual (VIS), Audible (AUD).
    private let supported: UInt64

    init(features: Set<String>) {
        self.features = features
        var modes: UInt64 = 0
        if features.contains(Feature.visual) { modes |= UInt64(AlarmMode.visual.rawValue) }
        if features.contains(Feature.audible) { modes |= UInt64(AlarmMode.audible.rawValue) }
        supported = modes
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.alarmsSupported, Attribute.alarmsEnabled: .uint(supported)
        case Attribute.alarmsActive, Attribute.alarmsSuppressed, Attribute.sensorFault: .uint(0)
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool { command == Command.suppressAlarm || command == Command.enableDisableAlarm }

    /// The sensor's state at start-up sets the alarms (a leak that is still there sounds again).
    func startUp(_ context: ClusterContext) {
        let triggered = context.peer(BooleanStateServer.self)?.context.bool(BooleanStateServer.Attribute.stateValue) == true
        sensorChanged(triggered: triggered, context: context, announce: false)
    }

    func suppressAlarm(_ request: Clusters.BooleanStateConfiguration.Commands.SuppressAlarm, context: ClusterContext) -> InteractionStatus {
        let modes = UInt64(request.alarmsToSuppress.rawValue)
        if let refused = refusal(modes) { return refused }
        let active = context.unsigned(Attribute.alarmsActive) ?? 0
        // Only a sounding (active, hence enabled) mode can be suppressed (1.8.7.1; TC-BOOLCFG-5.1 step 7a).
        guard modes & ~active == 0 else { return InteractionStatus(.invalidInState) }
        apply(active: active, suppressed: (context.unsigned(Attribute.alarmsSuppressed) ?? 0) | (modes & active), context)
        return .success
    }

    func enableDisableAlarm(
        _ request: Clusters.BooleanStateConfiguration.Commands.EnableDisableAlarm, context: ClusterContext
    ) -> InteractionStatus {
        let modes = UInt64(request.alarmsToEnableDisable.rawValue)
        if let refused = refusal(modes) { return refused }
        context.set(Attribute.alarmsEnabled, .uint(modes))
        // A mode disabled while it sounds stops at once.
        let active = context.unsigned(Attribute.alarmsActive) ?? 0
        apply(active: active & modes, suppressed: (context.unsigned(Attribute.alarmsSuppressed) ?? 0) & modes, context)
        return .success
    }

    /// A mode the device does not have (1.8.7.1, 1.8.7.2).
    private func refusal(_ modes: UInt64) -> InteractionStatus? {
        modes & ~supported == 0 ? nil : InteractionStatus(.constraintError)
    }

    /// Boolean State's reading changed: the enabled alarms sound while the sensor is triggered.
    func sensorChanged(triggered: Bool, context: ClusterContext, announce: Bool = true) {
        let enabled = context.unsigned(Attribute.alarmsEnabled) ?? supported
        let suppressed = triggered ? context.unsigned(Attribute.alarmsSuppressed) ?? 0 : 0
        apply(active: triggered ? enabled & supported : 0, suppressed: suppressed, context, announce: announce)
    }

    private func apply(active: UInt64, suppressed: UInt64, _ context: ClusterContext, announce: Bool = true) {
        let changedActive = context.unsigned(Attribute.alarmsActive) != active
        let changedSuppressed = context.has(Attribute.alarmsSuppressed) && context.unsigned(Attribute.alarmsSuppressed) != suppressed
        guard changedActive || changedSuppressed else { return }
        context.set(Attribute.alarmsActive, .uint(active))
        context.set(Attribute.alarmsSuppressed, .uint(suppressed))
        guard announce else { return }
        context.record(
            Clusters.BooleanStateConfiguration.Events.AlarmsStateChanged(
                alarmsActive: AlarmMode(rawValue: UInt8(truncatingIfNeeded: active)),
                alarmsSuppressed: features.contains(Feature.alarmSuppress) ? AlarmMode(rawValue: UInt8(truncatingIfNeeded: suppressed)) : nil))
    }
}
