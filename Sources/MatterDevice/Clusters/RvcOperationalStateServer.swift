import MatterModel
import MatterTLV

/// What is done at a robot vacuum itself (`matter-sim act NODE vacuum …`).
public enum VacuumAction: Sendable, Hashable, CustomStringConvertible {
    /// Its clean button: starts a run (Run Mode Cleaning), or resumes a paused one.
    case start
    /// Its pause button.
    case pause
    /// Its home button: back to the dock, as GoHome.
    case home
    /// It meets a problem (stuck, a full dust bin…): Error, OperationalError event.
    case error(Clusters.RvcOperationalState.ErrorStateEnum)
    /// A person frees it (clears the error): it waits, Paused, for Resume.
    case clear
    /// A person picks it up and puts it on its dock: the run ends there.
    case dock

    public var description: String {
        switch self {
        case .start: "press its clean button"
        case .pause: "press its pause button"
        case .home: "press its home button"
        case .error(let error): "an error (\(error))"
        case .clear: "free it (clear its error)"
        case .dock: "pick it up and put it on its dock"
        }
    }
}

/// RVC Operational State (Application Cluster spec 7.4, on Operational State 1.14) of a robot
/// vacuum, on the node clock. A clean run (Run Mode Cleaning) is Running for `cleanRun` (half
/// as long again in Deep clean), a mapping run (Run Mode Mapping) for `mapRun`; then the vacuum
/// seeks its charger for `returnTime`, charges (Charging) and is Docked when full. The battery
/// (the endpoint's Power Source) drains one half-percent every `drainEvery` while it moves and
/// fills one every `chargeEvery` on the dock; at `lowBattery` a run heads home by itself, and a
/// run is not started below it. Pause, Resume and GoHome answer OperationalCommandResponse
/// (CommandInvalidInState where the state does not allow them, 1.14.7; SeekingCharger is pause-
/// but not resume-compatible, 7.4.4.1). An error (`act NODE vacuum stuck`) is Error with
/// OperationalError and its event; freed, it waits Paused. The run's end, at the dock, is an
/// OperationCompletion with its total and paused time. Phases: Cleaning, Returning, Charging,
/// Mapping.
final class RvcOperationalStateServer: RvcOperationalStateHandler, PhysicallyOperated {
    typealias Attribute = Clusters.RvcOperationalState.Attribute
    typealias State = Clusters.RvcOperationalState.OperationalStateEnum
    typealias ErrorState = Clusters.RvcOperationalState.ErrorStateEnum
    typealias Response = Clusters.RvcOperationalState.Commands.OperationalCommandResponse

    static let phases = ["Cleaning", "Returning", "Charging", "Mapping"]
    enum Phase: UInt64 { case cleaning = 0, returning, charging, mapping }
    static let states: [State] = [.stopped, .running, .paused, .error, .seekingCharger, .charging, .docked]

    static let cleanRun = Duration.seconds(600)
    static let mapRun = Duration.seconds(300)
    static let returnTime = Duration.seconds(20)
    static let drainEvery = 6
    static let chargeEvery = 2
    /// 15 %, in BatPercentRemaining's half-percent units.
    static let lowBattery: UInt64 = 30
    private static let tickTimer = "tick"

    /// Seconds of the current run: cleaning, paused or in error, and on the way home.
    private var cleaned = 0
    private var pausedSeconds = 0
    private var returned = 0
    private var ticks = 0
    /// A run is under way (its end is an OperationCompletion).
    private var inRun = false
    /// What a Resume goes back to: Running or SeekingCharger.
    private var resumeTo: State = .running
    /// The run under way maps the home (Run Mode Mapping) rather than cleaning it.
    private var mapping = false

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.phaseList: Self.phases.tlv
        case Attribute.currentPhase: .uint(Phase.charging.rawValue)
        case Attribute.operationalStateList:
            Self.states.map { Clusters.RvcOperationalState.OperationalStateStruct(operationalStateID: $0.rawValue) }.tlv
        case Attribute.operationalState: .uint(UInt64(State.docked.rawValue))
        case Attribute.operationalError: Self.errorStruct(.noError)
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool {
        [Clusters.RvcOperationalState.Command.pause, Clusters.RvcOperationalState.Command.resume, Clusters.RvcOperationalState.Command.goHome]
            .contains(command)
    }

    /// It powers up on its dock: charging unless full, no error, Run Mode Idle.
    func startUp(_ context: ClusterContext) {
        inRun = false
        context.set(Attribute.operationalError, Self.errorStruct(.noError))
        setRunMode(RvcRunModeServer.idle, context)
        arriveHome(context)
    }

    // MARK: Commands (1.14.7)

    func pause(_ request: Clusters.RvcOperationalState.Commands.Pause, context: ClusterContext) -> CommandReply<Response> {
        let state = self.state(context)
        switch state {
        case .paused: return Self.reply(.noError)
        case .running, .seekingCharger:
            resumeTo = state
            set(.paused, context)
            return Self.reply(.noError)
        default: return Self.reply(.commandInvalidInState)
        }
    }

    /// 1.14.7.4: Running already is NoError; only Paused resumes. 7.4.4.1 (Table 40): SeekingCharger
    /// is not resume-compatible, and Charging or Docked only within a run that recharges (this
    /// vacuum ends its run at the dock), so those are CommandInvalidInState.
    func resume(_ request: Clusters.RvcOperationalState.Commands.Resume, context: ClusterContext) -> CommandReply<Response> {
        switch state(context) {
        case .running: return Self.reply(.noError)
        case .paused:
            set(resumeTo, context)
            return Self.reply(.noError)
        default: return Self.reply(.commandInvalidInState)
        }
    }

    /// 7.4.5.1: seeking the charger already is NoError; Charging, Docked (and Error) cannot seek it.
    func goHome(_ request: Clusters.RvcOperationalState.Commands.GoHome, context: ClusterContext) -> CommandReply<Response> {
        switch state(context) {
        case .seekingCharger: return Self.reply(.noError)
        case .running, .paused, .stopped:
            goHome(context)
            return Self.reply(.noError)
        default: return Self.reply(.commandInvalidInState)
        }
    }

    // MARK: The run

    /// Starts a clean (or mapping) run; a refusal is Run Mode's ChangeToModeResponse status.
    func startRun(_ context: ClusterContext, mapping: Bool = false) -> UInt8? {
        let state = self.state(context)
        if state == .error {
            let error = context.value(Attribute.operationalError).flatMap { try? Clusters.RvcOperationalState.ErrorStateStruct(tlv: $0) }
            // Run Mode's status codes for an error are the error's own IDs (Stuck 0x41…, 7.2.7.1.1).
            let id = error?.errorStateID ?? 0
            return Clusters.RvcRunMode.StatusCode(rawValue: id) != nil ? id : ModeChangeStatus.genericFailure
        }
        if let battery = battery(context), battery <= Self.lowBattery {
            return Clusters.RvcRunMode.StatusCode.batteryLow.rawValue
        }
        inRun = true
        self.mapping = mapping
        cleaned = 0
        pausedSeconds = 0
        returned = 0
        set(.running, context)
        return nil
    }

    /// Heads for the dock (GoHome, Run Mode Idle, the run's end or a low battery).
    func goHome(_ context: ClusterContext) {
        guard [.running, .paused, .stopped].contains(state(context)) else { return }
        returned = 0
        set(.seekingCharger, context)
        setRunMode(RvcRunModeServer.idle, context)
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .vacuum(let vacuum) = action else { throw PhysicalActionError("a robot vacuum cannot \(action)") }
        switch vacuum {
        case .start:
            if state(context) == .paused {
                set(resumeTo, context)
            } else if let run = context.peer(RvcRunModeServer.self) {
                let status = run.server.change(to: RvcRunModeServer.cleaning, run.context)
                guard status == ModeChangeStatus.success else { throw PhysicalActionError("it does not start (status \(status))") }
            }
        case .pause:
            guard case .response(let response) = pause(.init(), context: context), response.commandResponseState.errorStateID == 0 else {
                throw PhysicalActionError("it is not moving: nothing to pause")
            }
        case .home:
            guard [.running, .paused, .stopped, .seekingCharger].contains(state(context)) else {
                throw PhysicalActionError("it is already home")
            }
            goHome(context)
        case .error(let error):
            guard error != .noError else { throw PhysicalActionError("an error needs a kind; `clear` frees it") }
            if state(context) != .error { resumeTo = state(context) == .seekingCharger ? .seekingCharger : .running }
            context.set(Attribute.operationalError, Self.errorStruct(error))
            set(.error, context)
            context.record(Clusters.RvcOperationalState.Events.OperationalError(errorState: .init(errorStateID: error.rawValue)))
        case .clear:
            guard state(context) == .error else { throw PhysicalActionError("it has no error to clear") }
            context.set(Attribute.operationalError, Self.errorStruct(.noError))
            set(.paused, context)
        case .dock:
            context.set(Attribute.operationalError, Self.errorStruct(.noError))
            setRunMode(RvcRunModeServer.idle, context)
            arriveHome(context)
        }
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.tickTimer else { return }
        ticks += 1
        switch state(context) {
        case .running:
            cleaned += 1
            drain(context)
            if cleaned >= runSeconds(context) || (battery(context) ?? .max) <= Self.lowBattery { goHome(context) }
        case .seekingCharger:
            returned += 1
            drain(context)
            if returned >= Int(Self.returnTime.components.seconds) { arriveHome(context) }
        case .paused, .error:
            pausedSeconds += 1
        case .charging:
            if ticks % Self.chargeEvery == 0, let power = context.peer(PowerSourceServer.self) {
                power.server.change(byHalves: 1, power.context)
            }
            if (battery(context) ?? PowerSourceServer.fullHalves) >= PowerSourceServer.fullHalves { set(.docked, context) }
        default: break
        }
        scheduleTick(context)
    }

    // MARK: State

    private func state(_ context: ClusterContext) -> State {
        context.unsigned(Attribute.operationalState).flatMap { State(rawValue: UInt8(clamping: $0)) } ?? .stopped
    }

    /// Sets OperationalState with its phase and the battery's charge state, and keeps the clock ticking while it matters.
    private func set(_ state: State, _ context: ClusterContext) {
        context.set(Attribute.operationalState, .uint(UInt64(state.rawValue)))
        let phase: Phase? =
            switch state {
            case .running: mapping ? .mapping : .cleaning
            case .seekingCharger: .returning
            case .charging, .docked: .charging
            default: nil
            }
        if let phase { context.set(Attribute.currentPhase, .uint(phase.rawValue)) }
        if let power = context.peer(PowerSourceServer.self) {
            let charge: Clusters.PowerSource.BatChargeStateEnum =
                switch state {
                case .charging: .isCharging
                case .docked: .isAtFullCharge
                default: .isNotCharging
                }
            power.context.set(Clusters.PowerSource.Attribute.batChargeState, .uint(UInt64(charge.rawValue)))
        }
        scheduleTick(context)
    }

    private func scheduleTick(_ context: ClusterContext) {
        if [.docked, .stopped].contains(state(context)) {
            context.cancelTimer(Self.tickTimer)
        } else if !context.isTimerPending(Self.tickTimer) {
            context.startTimer(Self.tickTimer, after: .seconds(1))
        }
    }

    /// At the dock: Charging (Docked once full); a run that was under way ends (OperationCompletion).
    private func arriveHome(_ context: ClusterContext) {
        let full = (battery(context) ?? PowerSourceServer.fullHalves) >= PowerSourceServer.fullHalves
        set(full ? .docked : .charging, context)
        guard inRun else { return }
        inRun = false
        context.record(
            Clusters.RvcOperationalState.Events.OperationCompletion(
                completionErrorCode: ErrorState.noError.rawValue,
                totalOperationalTime: .value(UInt32(cleaned + pausedSeconds + returned)), pausedTime: .value(UInt32(pausedSeconds))))
    }

    private func runSeconds(_ context: ClusterContext) -> Int {
        if mapping { return Int(Self.mapRun.components.seconds) }
        let seconds = Int(Self.cleanRun.components.seconds)
        let mode = context.peer(RvcCleanModeServer.self)?.context.unsigned(RvcCleanModeServer.currentModeAttribute)
        return mode == UInt64(RvcCleanModeServer.deepClean) ? seconds * 3 / 2 : seconds
    }

    private func drain(_ context: ClusterContext) {
        guard ticks % Self.drainEvery == 0, let power = context.peer(PowerSourceServer.self) else { return }
        power.server.change(byHalves: -1, power.context)
    }

    private func battery(_ context: ClusterContext) -> UInt64? {
        context.peer(PowerSourceServer.self)?.context.unsigned(Clusters.PowerSource.Attribute.batPercentRemaining)
    }

    private func setRunMode(_ mode: UInt8, _ context: ClusterContext) {
        context.peer(RvcRunModeServer.self)?.context.set(RvcRunModeServer.currentModeAttribute, .uint(UInt64(mode)))
    }

    static func errorStruct(_ error: ErrorState) -> TLVValue {
        Clusters.RvcOperationalState.ErrorStateStruct(errorStateID: error.rawValue).tlv
    }

    static func reply(_ error: ErrorState) -> CommandReply<Response> {
        .response(Response(commandResponseState: .init(errorStateID: error.rawValue)))
    }
}
