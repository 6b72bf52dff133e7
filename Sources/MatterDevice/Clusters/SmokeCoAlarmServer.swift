import MatterModel
import MatterProtocol
import MatterTLV

/// What reaches a smoke/CO alarm or is done at it (`matter-sim act NODE smoke|co|clear|test|mute|
/// interconnect`), or what its own checks find (a hardware fault, its end of service: test event
/// triggers only).
public enum AlarmSense: Sendable, Hashable, CustomStringConvertible {
    /// Smoke, or carbon monoxide, at the sensor: a warning (pre-alarm) or a critical alarm.
    case smoke(AlarmSeverity)
    case co(AlarmSeverity)
    /// The air is clean again: smoke and CO back to Normal (and a hush ends).
    case clear
    /// One of them is gone: its state back to Normal, the other as it was.
    case cleared(AlarmKind)
    /// The test button: a self-test, as SelfTestRequest starts one.
    case test
    /// The hush button, pressed while the alarm sounds a warning.
    case mute
    /// The hush ends before the alarm does (DeviceMuted NotMuted, MuteEnded).
    case unmute
    /// An interconnected alarm elsewhere sounds smoke or CO at a severity, or stops (nil).
    case interconnect(AlarmKind, AlarmSeverity?)
    /// Every interconnected alarm has stopped.
    case interconnectCleared
    /// The alarm's self-check finds a hardware fault (true), or no longer does.
    case hardwareFault(Bool)
    /// The alarm reaches the end of its service life (true), or is serviced.
    case endOfService(Bool)

    public var description: String {
        switch self {
        case .smoke(let severity): "smoke (\(severity))"
        case .co(let severity): "carbon monoxide (\(severity))"
        case .clear: "clear the air"
        case .cleared(let kind): "clear the air of \(kind)"
        case .test: "press its test button"
        case .mute: "press its hush button"
        case .unmute: "end the hush"
        case .interconnect(let kind, let severity?): "an interconnected alarm sounds \(kind) (\(severity))"
        case .interconnect(let kind, nil): "the interconnected \(kind) alarm stops"
        case .interconnectCleared: "the interconnected alarms stop"
        case .hardwareFault(let fault): fault ? "a hardware fault" : "the hardware fault is gone"
        case .endOfService(let expired): expired ? "the end of its service life" : "a serviced alarm"
        }
    }
}

/// What an alarm senses: smoke or carbon monoxide.
public enum AlarmKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case smoke, co
    public var description: String { self == .smoke ? "smoke" : "carbon monoxide" }
}

/// An alarm's level (AlarmStateEnum without Normal).
public enum AlarmSeverity: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case warning, critical
    public var description: String { rawValue }
    var state: Clusters.SmokeCoAlarm.AlarmStateEnum { self == .warning ? .warning : .critical }
}

/// Smoke CO Alarm cluster (Application Cluster spec 2.11). SmokeState and COState follow what
/// reaches the sensor; BatteryAlert follows the battery (Power Source, when the endpoint has
/// one); ExpressedState shows the condition of highest priority (2.11.6.1: the order is the
/// manufacturer's, ours is `expressedPriority`); SelfTestRequest runs a test on the node clock
/// (TestInProgress, ExpressedState Testing, then SelfTestComplete). Events: SmokeAlarm and
/// COAlarm (critical priority) when a state rises to Warning or Critical, LowBattery likewise,
/// AlarmMuted / MuteEnded with DeviceMuted, and AllClear when ExpressedState returns to Normal.
final class SmokeCoAlarmServer: SmokeCoAlarmHandler, PhysicallyOperated {
    static let clusterID = Clusters.SmokeCoAlarm.id

    typealias Attribute = Clusters.SmokeCoAlarm.Attribute
    typealias Event = Clusters.SmokeCoAlarm.Event
    typealias Feature = Clusters.SmokeCoAlarm.Feature
    typealias Expressed = Clusters.SmokeCoAlarm.ExpressedStateEnum
    typealias AlarmState = Clusters.SmokeCoAlarm.AlarmStateEnum

    /// How long a self-test sounds the horn.
    static let selfTestDuration = Duration.seconds(5)
    private static let selfTestTimer = "self-test"

    /// Highest first, as the connectedhomeip sample orders them: an alarm before a fault, a
    /// fault before the test, the test before end of service and a low battery.
    static let expressedPriority: [Expressed] = [
        .smokeAlarm, .interconnectSmoke, .coAlarm, .interconnectCO, .hardwareFault, .testing, .endOfService, .batteryAlert,
    ]

    /// While one of these is expressed a self-test is refused with BUSY (2.11.7.1).
    private static let busyStates: Set<Expressed> = [.smokeAlarm, .coAlarm, .testing, .interconnectSmoke, .interconnectCO]

    private let features: Set<String>

    init(features: Set<String>) {
        self.features = features
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.expressedState, Attribute.smokeState, Attribute.coState, Attribute.batteryAlert, Attribute.endOfServiceAlert:
            .uint(0)
        case Attribute.testInProgress, Attribute.hardwareFaultAlert: .bool(false)
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool { command == Clusters.SmokeCoAlarm.Command.selfTestRequest }

    /// A test cut short by a power loss is over; ExpressedState follows the states it starts with.
    func startUp(_ context: ClusterContext) {
        context.set(Attribute.testInProgress, .bool(false))
        context.set(Attribute.expressedState, .uint(UInt64(expressed(context).rawValue)))
    }

    func selfTestRequest(_ request: Clusters.SmokeCoAlarm.Commands.SelfTestRequest, context: ClusterContext) -> InteractionStatus {
        startSelfTest(context) ? .success : InteractionStatus(.busy)
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .alarm(let sense) = action else { throw PhysicalActionError("Smoke CO Alarm cannot \(action)") }
        switch sense {
        case .smoke(let severity):
            guard features.contains(Feature.smokeAlarm) else { throw PhysicalActionError("this alarm has no smoke sensor (feature SMOKE)") }
            raise(Attribute.smokeState, to: severity.state, event: Event.smokeAlarm, context)
        case .co(let severity):
            guard features.contains(Feature.coAlarm) else { throw PhysicalActionError("this alarm has no CO sensor (feature CO)") }
            raise(Attribute.coState, to: severity.state, event: Event.coAlarm, context)
        case .clear:
            context.set(Attribute.smokeState, .uint(0))
            context.set(Attribute.coState, .uint(0))
            unmute(context)
        case .cleared(let kind):
            context.set(kind == .smoke ? Attribute.smokeState : Attribute.coState, .uint(0))
            // A hush lasts while something still sounds.
            if ![Attribute.smokeState, Attribute.coState].contains(where: { (context.unsigned($0) ?? 0) != 0 }) { unmute(context) }
        case .test:
            guard startSelfTest(context) else {
                throw PhysicalActionError("the alarm is sounding or already testing: a self-test is not started now", inState: true)
            }
            return
        case .mute:
            guard context.has(Attribute.deviceMuted) else { throw PhysicalActionError("this alarm cannot be hushed (no DeviceMuted)") }
            let states = [Attribute.smokeState, Attribute.coState].compactMap { context.unsigned($0) }
            guard states.contains(UInt64(AlarmState.warning.rawValue)) else {
                throw PhysicalActionError("only a sounding warning can be hushed; a critical alarm cannot", inState: true)
            }
            guard context.unsigned(Attribute.deviceMuted) != 1 else { return }
            context.set(Attribute.deviceMuted, .uint(1))
            context.recordEvent(Event.alarmMuted, priority: .info, fields: [])
        case .unmute:
            guard context.has(Attribute.deviceMuted) else { throw PhysicalActionError("this alarm cannot be hushed (no DeviceMuted)") }
            unmute(context)
        case .interconnect(let kind, let severity):
            let attribute = kind == .smoke ? Attribute.interconnectSmokeAlarm : Attribute.interconnectCOAlarm
            guard context.has(attribute) else {
                throw PhysicalActionError("this alarm is not interconnected for \(kind) (no \(kind == .smoke ? "InterconnectSmokeAlarm" : "InterconnectCOAlarm"))")
            }
            let event = kind == .smoke ? Event.interconnectSmokeAlarm : Event.interconnectCOAlarm
            raise(attribute, to: severity?.state ?? .normal, event: event, context)
        case .interconnectCleared:
            let attributes = [Attribute.interconnectSmokeAlarm, Attribute.interconnectCOAlarm].filter { context.has($0) }
            guard !attributes.isEmpty else { throw PhysicalActionError("this alarm is not interconnected (no InterconnectSmokeAlarm)") }
            for attribute in attributes { context.set(attribute, .uint(0)) }
        case .hardwareFault(let fault):
            // 2.11.6.7, 2.11.8.4: HardwareFaultAlert, and the HardwareFault event when it is found.
            guard context.bool(Attribute.hardwareFaultAlert) != fault else { break }
            context.set(Attribute.hardwareFaultAlert, .bool(fault))
            if fault { context.recordEvent(Event.hardwareFault, priority: .info, fields: []) }
        case .endOfService(let expired):
            // 2.11.6.8, 2.11.8.5: EndOfServiceAlert Expired, and the EndOfService event when it is reached.
            let value = UInt64(expired ? Clusters.SmokeCoAlarm.EndOfServiceEnum.expired.rawValue : 0)
            guard context.unsigned(Attribute.endOfServiceAlert) != value else { break }
            context.set(Attribute.endOfServiceAlert, .uint(value))
            if expired { context.recordEvent(Event.endOfService, priority: .info, fields: []) }
        }
        updateExpressedState(context)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.selfTestTimer, context.bool(Attribute.testInProgress) == true else { return }
        context.set(Attribute.testInProgress, .bool(false))
        context.recordEvent(Event.selfTestComplete, priority: .info, fields: [])
        updateExpressedState(context)
    }

    /// The battery's level from the endpoint's Power Source: LowBattery when it rises to a warning.
    func batteryChanged(to level: AlarmState, context: ClusterContext) {
        raise(Attribute.batteryAlert, to: level, event: Event.lowBattery, context)
        updateExpressedState(context)
    }

    // MARK: State

    private func startSelfTest(_ context: ClusterContext) -> Bool {
        guard !Self.busyStates.contains(currentExpressed(context)) else { return false }
        context.set(Attribute.testInProgress, .bool(true))
        context.startTimer(Self.selfTestTimer, after: Self.selfTestDuration)
        updateExpressedState(context)
        return true
    }

    /// Sets an alarm state; a rise to Warning or Critical raises its event (2.11.8).
    private func raise(_ attribute: AttributeID, to level: AlarmState, event: EventID, _ context: ClusterContext) {
        guard context.has(attribute), context.unsigned(attribute) != UInt64(level.rawValue) else { return }
        context.set(attribute, .uint(UInt64(level.rawValue)))
        if level != .normal {
            // Smoke and CO alarms are life-safety events: critical priority; a low battery is info.
            let priority: EventDataIB.Priority = attribute == Attribute.batteryAlert ? .info : .critical
            context.recordEvent(event, priority: priority, fields: [TLVElement(tag: .context(0), .uint(UInt64(level.rawValue)))])
        }
        if attribute != Attribute.batteryAlert, level == .critical { unmute(context) }
    }

    private func unmute(_ context: ClusterContext) {
        guard context.unsigned(Attribute.deviceMuted) == 1 else { return }
        context.set(Attribute.deviceMuted, .uint(0))
        context.recordEvent(Event.muteEnded, priority: .info, fields: [])
    }

    private func currentExpressed(_ context: ClusterContext) -> Expressed {
        context.unsigned(Attribute.expressedState).flatMap { UInt8(exactly: $0) }.flatMap(Expressed.init(rawValue:)) ?? .normal
    }

    /// The condition of highest priority among those present.
    private func expressed(_ context: ClusterContext) -> Expressed {
        func alarming(_ attribute: AttributeID) -> Bool { (context.unsigned(attribute) ?? 0) != 0 }
        let present: [Expressed: Bool] = [
            .smokeAlarm: alarming(Attribute.smokeState), .interconnectSmoke: alarming(Attribute.interconnectSmokeAlarm),
            .coAlarm: alarming(Attribute.coState), .interconnectCO: alarming(Attribute.interconnectCOAlarm),
            .hardwareFault: context.bool(Attribute.hardwareFaultAlert) == true,
            .testing: context.bool(Attribute.testInProgress) == true,
            .endOfService: alarming(Attribute.endOfServiceAlert), .batteryAlert: alarming(Attribute.batteryAlert),
        ]
        return Self.expressedPriority.first { present[$0] == true } ?? .normal
    }

    /// ExpressedState follows the states; its return to Normal raises AllClear (2.11.8.11).
    private func updateExpressedState(_ context: ClusterContext) {
        let before = currentExpressed(context)
        let now = expressed(context)
        guard now != before else { return }
        context.set(Attribute.expressedState, .uint(UInt64(now.rawValue)))
        if now == .normal { context.recordEvent(Event.allClear, priority: .info, fields: []) }
    }
}
