import MatterModel
import MatterProtocol
import MatterTLV

/// Boolean State Configuration cluster (Application Cluster spec 1.8): the alarm of a boolean
/// sensor (a leak detector's light and beeper). While the sensor is triggered (StateValue TRUE:
/// water, for a Water Leak Detector) every enabled alarm mode is active; when it is not, none is
/// and nothing stays suppressed (1.8.6.4, 1.8.6.5). EnableDisableAlarm chooses the modes,
/// SuppressAlarm (SPRS) silences active ones; each change of AlarmsActive or AlarmsSuppressed
/// raises AlarmsStateChanged (1.8.8.1).
final class BooleanStateConfigurationServer: StandardClusterServer {
    static let clusterID = Clusters.BooleanStateConfiguration.id

    typealias Attribute = Clusters.BooleanStateConfiguration.Attribute
    typealias Command = Clusters.BooleanStateConfiguration.Command
    typealias Event = Clusters.BooleanStateConfiguration.Event
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

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        guard let modes = fields.unsigned(0) else { return .failure(.invalidCommand) }
        // A mode the device does not have (1.8.7.1, 1.8.7.2).
        guard modes & ~supported == 0 else { return .failure(.constraintError) }
        let active = context.unsigned(Attribute.alarmsActive) ?? 0
        let suppressed = context.unsigned(Attribute.alarmsSuppressed) ?? 0
        switch command {
        case Command.suppressAlarm:
            // Only a sounding (active, hence enabled) mode can be suppressed (1.8.7.1; TC-BOOLCFG-5.1 step 7a).
            guard modes & ~active == 0 else { return .failure(.invalidInState) }
            apply(active: active, suppressed: suppressed | (modes & active), context)
        case Command.enableDisableAlarm:
            context.set(Attribute.alarmsEnabled, .uint(modes))
            // A mode disabled while it sounds stops at once.
            apply(active: active & modes, suppressed: suppressed & modes, context)
        default:
            return .failure(.unsupportedCommand)
        }
        return .success
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
        var fields = [TLVElement(tag: .context(0), .uint(active))]
        if features.contains(Feature.alarmSuppress) { fields.append(TLVElement(tag: .context(1), .uint(suppressed))) }
        context.recordEvent(Event.alarmsStateChanged, priority: .info, fields: fields)
    }
}
