import Foundation
import MatterModel
import MatterTLV

/// What is done at a water valve itself (`matter-sim act NODE valve open|close`, `fault …`).
public enum ValveAction: Sendable, Hashable, CustomStringConvertible {
    /// Its manual lever, as Open (without a duration) and Close would move it.
    case lever(open: Bool)
    /// A fault appears (the bits of ValveFaultBitmap), or with an empty set is repaired.
    case fault(Clusters.ValveConfigurationAndControl.ValveFaultBitmap)

    public var description: String {
        switch self {
        case .lever(let open): open ? "open it by hand" : "close it by hand"
        case .fault(let bits): bits.isEmpty ? "repair its fault" : "a fault (ValveFault \(bits.rawValue))"
        }
    }
}

/// Valve Configuration and Control cluster (Application Cluster spec 4.6). Open (4.6.7.1)
/// sets TargetState Open and, with Level (LVL), TargetLevel (the request's, else
/// DefaultOpenLevel, else 100; a requested level that is neither a multiple of LevelStep nor 100
/// is a CONSTRAINT_ERROR, 4.6.7.1.2, TC-VALCC-3.4); CurrentState is Transitioning while the
/// valve moves (`moveTime` on the node clock), then Open at the level, and TargetState /
/// TargetLevel go back to null. OpenDuration is the request's (null: stays open) or
/// DefaultOpenDuration; RemainingDuration counts it down each second of the node clock (Q:
/// reported when it starts, ends or reaches 0, not each second) and at 0 the valve closes by
/// itself; with TimeSync (TS) AutoCloseTime is the UTC time in µs it will. Close (4.6.7.2)
/// clears the durations and moves the valve to Closed (level 0). Each CurrentState change raises
/// ValveStateChanged (with ValveLevel under LVL); a fault (ValveFault) raises ValveFault and
/// makes Open answer FAILURE with the cluster status FailureDueToFault.
final class ValveConfigurationAndControlServer: ValveConfigurationAndControlHandler, PhysicallyOperated {
    static let clusterID = Clusters.ValveConfigurationAndControl.id

    typealias Attribute = Clusters.ValveConfigurationAndControl.Attribute
    typealias Feature = Clusters.ValveConfigurationAndControl.Feature
    typealias State = Clusters.ValveConfigurationAndControl.ValveStateEnum
    typealias Events = Clusters.ValveConfigurationAndControl.Events

    /// How long the valve takes to open, close or change its level.
    static let moveTime = Duration.milliseconds(500)
    private static let moveTimer = "move"
    private static let countdownTimer = "countdown"

    private let features: Set<String>
    /// When the valve closes by itself on the node clock (nil: it does not).
    private var closesAt: Duration?

    init(features: Set<String>) {
        self.features = features
    }

    private var hasLevel: Bool { features.contains(Feature.level) }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.currentState: .uint(UInt64(State.closed.rawValue))
        case Attribute.currentLevel: hasLevel ? .uint(0) : nil
        case Attribute.valveFault: .uint(0)
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool {
        command == Clusters.ValveConfigurationAndControl.Command.open || command == Clusters.ValveConfigurationAndControl.Command.close
    }

    /// A valve is closed when it powers up: a countdown or move in progress was lost with the power.
    func startUp(_ context: ClusterContext) {
        for attribute in [Attribute.openDuration, Attribute.remainingDuration, Attribute.autoCloseTime, Attribute.targetState, Attribute.targetLevel] {
            context.set(attribute, .null)
        }
        if context.unsigned(Attribute.currentState) != UInt64(State.closed.rawValue) { move(to: .closed, level: 0, context) }
    }

    func open(_ request: Clusters.ValveConfigurationAndControl.Commands.Open, context: ClusterContext) -> InteractionStatus {
        if let fault = context.unsigned(Attribute.valveFault), fault != 0 {
            return InteractionStatus(.failure, clusterStatus: Clusters.ValveConfigurationAndControl.StatusCodeEnum.failureDueToFault.rawValue)
        }
        // TargetLevel needs Level (4.6.7.1.2); the node's model check leaves a present field to us.
        if request.targetLevel != nil, !hasLevel { return InteractionStatus(.invalidCommand) }
        // 4.6.7.1.2, 4.6.6.10: the valve opens to LevelStep × N or 100 %, no level between.
        if let wanted = request.targetLevel, wanted != 100, let step = context.unsigned(Attribute.levelStep), step > 1,
            UInt64(wanted) % step != 0
        {
            return InteractionStatus(.constraintError)
        }
        let duration: UInt32? =
            switch request.openDuration {
            case .some(.value(let seconds)): seconds
            case .some(.null): nil
            case nil: context.unsigned(Attribute.defaultOpenDuration).map { UInt32(clamping: $0) }
            }
        startCountdown(duration, context)
        move(to: .open, level: hasLevel ? level(request.targetLevel, context) : nil, context)
        return .success
    }

    func close(_ request: Clusters.ValveConfigurationAndControl.Commands.Close, context: ClusterContext) -> InteractionStatus {
        startCountdown(nil, context)
        move(to: .closed, level: 0, context)
        return .success
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .valve(let valve) = action else { throw PhysicalActionError("a water valve cannot \(action)") }
        switch valve {
        case .lever(let open):
            startCountdown(nil, context)
            move(to: open ? .open : .closed, level: open ? level(nil, context) : 0, context)
        case .fault(let bits):
            guard context.has(Attribute.valveFault) else { throw PhysicalActionError("this valve reports no faults (no ValveFault)") }
            guard context.set(Attribute.valveFault, .uint(UInt64(bits.rawValue))) else { return }
            context.record(Events.ValveFault(valveFault: bits))
        }
    }

    func timerFired(_ name: String, context: ClusterContext) {
        switch name {
        case Self.moveTimer: arrive(context)
        case Self.countdownTimer: countDown(context)
        default: break
        }
    }

    // MARK: - Moving

    /// The level an Open goes to: the request's, else DefaultOpenLevel, else 100 (4.6.7.1.2),
    /// on a multiple of LevelStep (100 is always reachable).
    private func level(_ requested: UInt8?, _ context: ClusterContext) -> UInt64 {
        let wanted = requested.map(UInt64.init) ?? context.unsigned(Attribute.defaultOpenLevel) ?? 100
        guard let step = context.unsigned(Attribute.levelStep), step > 1, wanted < 100 else { return min(wanted, 100) }
        return min(100, (wanted + step / 2) / step * step)
    }

    private func move(to state: State, level: UInt64?, _ context: ClusterContext) {
        context.set(Attribute.targetState, .uint(UInt64(state.rawValue)))
        if let level { context.set(Attribute.targetLevel, .uint(level)) }
        announce(.transitioning, context)
        context.startTimer(Self.moveTimer, after: Self.moveTime)
    }

    private func arrive(_ context: ClusterContext) {
        guard let target = context.unsigned(Attribute.targetState).flatMap({ State(rawValue: UInt8($0)) }) else { return }
        if let level = context.unsigned(Attribute.targetLevel) { context.set(Attribute.currentLevel, .uint(level)) }
        context.set(Attribute.targetState, .null)
        context.set(Attribute.targetLevel, .null)
        announce(target, context)
    }

    private func announce(_ state: State, _ context: ClusterContext) {
        guard context.set(Attribute.currentState, .uint(UInt64(state.rawValue))) else { return }
        let level = hasLevel ? context.unsigned(Attribute.currentLevel).map { UInt8(clamping: $0) } : nil
        context.record(Events.ValveStateChanged(valveState: state, valveLevel: level))
    }

    // MARK: - Open duration

    /// Starts the countdown of an open valve (nil: none; the durations go back to null).
    private func startCountdown(_ seconds: UInt32?, _ context: ClusterContext) {
        context.cancelTimer(Self.countdownTimer)
        context.set(Attribute.openDuration, seconds.map { .uint(UInt64($0)) } ?? .null)
        context.set(Attribute.remainingDuration, seconds.map { .uint(UInt64($0)) } ?? .null)
        guard let seconds else {
            closesAt = nil
            context.set(Attribute.autoCloseTime, .null)
            return
        }
        let deadline = context.now + .seconds(Int64(seconds))
        closesAt = deadline
        if features.contains(Feature.timeSync) {
            let closing = context.runtime.clock.date.addingTimeInterval(Double(seconds))
            context.set(Attribute.autoCloseTime, .uint(Self.matterEpochMicroseconds(closing)))
        }
        context.startTimer(Self.countdownTimer, after: .seconds(1))
    }

    private func countDown(_ context: ClusterContext) {
        guard let closesAt else { return }
        let left = max(.zero, closesAt - context.now)
        let seconds = UInt64(left.components.seconds) + (left.components.attoseconds > 0 ? 1 : 0)
        context.set(Attribute.remainingDuration, .uint(seconds), .progress)
        if seconds == 0 {
            startCountdown(nil, context)
            move(to: .closed, level: 0, context)
        } else {
            context.startTimer(Self.countdownTimer, after: .seconds(1))
        }
    }

    /// epoch-us: microseconds since the Matter epoch, 2000-01-01 00:00:00 UTC (Core 7.19.2.9).
    static func matterEpochMicroseconds(_ date: Date) -> UInt64 {
        let matterEpoch = Date(timeIntervalSince1970: 946_684_800)
        return UInt64(max(0, date.timeIntervalSince(matterEpoch)) * 1_000_000)
    }
}
