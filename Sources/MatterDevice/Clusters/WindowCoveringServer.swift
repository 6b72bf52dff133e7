import MatterModel
import MatterTLV

/// Window Covering cluster (Application Cluster spec 5.3). Positions are in
/// percent100ths where 0 is fully open and 10000 fully closed (5.3.5.x); the
/// covering travels towards its target at the speed the description sets,
/// updating position and OperationalStatus every 100 ms.
final class WindowCoveringServer: WindowCoveringHandler {
    static let clusterID = Clusters.WindowCovering.id

    typealias Feature = Clusters.WindowCovering.Feature
    typealias Attribute = Clusters.WindowCovering.Attribute
    typealias Command = Clusters.WindowCovering.Command
    typealias Commands = Clusters.WindowCovering.Commands

    /// One axis of motion: lift or tilt, each with its own attribute set.
    enum Axis: CaseIterable {
        case lift, tilt

        var feature: String { self == .lift ? Feature.lift : Feature.tilt }
        var timerName: String { self == .lift ? "liftMotion" : "tiltMotion" }
        /// Bit position of this axis in OperationalStatus (5.3.5.16: global 0-1, lift 2-3, tilt 4-5).
        var statusShift: UInt64 { self == .lift ? 2 : 4 }

        var currentPosition: AttributeID { self == .lift ? Attribute.currentPositionLift : Attribute.currentPositionTilt }
        var numberOfActuations: AttributeID { self == .lift ? Attribute.numberOfActuationsLift : Attribute.numberOfActuationsTilt }
        var currentPercentage: AttributeID {
            self == .lift ? Attribute.currentPositionLiftPercentage : Attribute.currentPositionTiltPercentage
        }
        var targetPercent100ths: AttributeID {
            self == .lift ? Attribute.targetPositionLiftPercent100ths : Attribute.targetPositionTiltPercent100ths
        }
        var currentPercent100ths: AttributeID {
            self == .lift ? Attribute.currentPositionLiftPercent100ths : Attribute.currentPositionTiltPercent100ths
        }
        var installedOpenLimit: AttributeID { self == .lift ? Attribute.installedOpenLimitLift : Attribute.installedOpenLimitTilt }
        var installedClosedLimit: AttributeID { self == .lift ? Attribute.installedClosedLimitLift : Attribute.installedClosedLimitTilt }
    }

    /// OperationalStatus values of one axis (MovementStatus, 5.3.4.x).
    enum MovementStatus: UInt64 {
        case stopped = 0, opening = 1, closing = 2
    }

    /// ConfigStatus bits (5.3.5.8) and Mode bits (5.3.5.21).
    private enum ConfigStatusBit {
        typealias Bits = Clusters.WindowCovering.ConfigStatusBitmap
        static let operational = UInt64(Bits.operational.rawValue)
        static let liftMovementReversed = UInt64(Bits.liftMovementReversed.rawValue)
        static let liftPositionAware = UInt64(Bits.liftPositionAware.rawValue)
        static let tiltPositionAware = UInt64(Bits.tiltPositionAware.rawValue)
    }
    private enum ModeBit {
        typealias Bits = Clusters.WindowCovering.ModeBitmap
        static let motorDirectionReversed = UInt64(Bits.motorDirectionReversed.rawValue)
        static let calibrationMode = UInt64(Bits.calibrationMode.rawValue)
        static let maintenanceMode = UInt64(Bits.maintenanceMode.rawValue)
    }

    static let fullyOpen: Int64 = 0
    static let fullyClosed: Int64 = 10_000
    private static let tick = Duration.milliseconds(100)

    private struct Motion {
        var from: Int64
        var target: Int64
        var start: Duration
    }

    private let axes: [Axis]
    private let features: Set<String>
    /// Percent100ths per second for each axis.
    private let speeds: [Axis: Int64]
    /// The physical position, tracked even when the covering does not report it.
    private var positions: [Axis: Int64] = [:]
    private var motions: [Axis: Motion] = [:]

    init(instance: ClusterInstanceDescription) {
        features = instance.features
        axes = Axis.allCases.filter { instance.features.contains($0.feature) }
        let defaultSpeed = MotionSpeed.fullTravel(.seconds(10))
        speeds = [
            .lift: (instance.behavior.liftSpeed ?? defaultSpeed).percent100thsPerSecond,
            .tilt: (instance.behavior.tiltSpeed ?? defaultSpeed).percent100thsPerSecond,
        ]
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.type, Attribute.endProductType, Attribute.operationalStatus, Attribute.mode:
            return .uint(0)
        case Attribute.configStatus:
            var status = ConfigStatusBit.operational
            if features.contains(Feature.positionAwareLift) { status |= ConfigStatusBit.liftPositionAware }
            if features.contains(Feature.positionAwareTilt) { status |= ConfigStatusBit.tiltPositionAware }
            return .uint(status)
        default:
            break
        }
        for axis in Axis.allCases {
            switch attribute {
            case axis.currentPercent100ths, axis.targetPercent100ths, axis.currentPercentage, axis.currentPosition:
                return .uint(0)
            case axis.installedOpenLimit:
                return .uint(0)
            case axis.installedClosedLimit:
                return .uint(UInt16.max)
            default:
                continue
            }
        }
        return nil
    }

    func handles(_ command: CommandID) -> Bool {
        [
            Command.upOrOpen, Command.downOrClose, Command.stopMotion, Command.goToLiftValue,
            Command.goToLiftPercentage, Command.goToTiltValue, Command.goToTiltPercentage,
        ].contains(command)
    }

    /// Starts at the described (persisted) position, at rest.
    func startUp(_ context: ClusterContext) {
        for axis in axes {
            let position =
                context.unsigned(axis.currentPercent100ths).map { Int64(clamping: $0).clamped(to: 0...Self.fullyClosed) } ?? Self.fullyOpen
            positions[axis] = position
            context.set(axis.targetPercent100ths, .uint(position))
            publishPosition(axis, context: context)
        }
        updateConfigStatus(context)
        updateOperationalStatus(context)
    }

    func didWrite(_ attribute: AttributeID, context: ClusterContext) {
        if attribute == Attribute.mode { updateConfigStatus(context) }
    }

    // MARK: Commands (5.3.6)

    func upOrOpen(_ request: Commands.UpOrOpen, context: ClusterContext) -> InteractionStatus {
        if let busy = motionLock(context) { return busy }
        for axis in axes { move(axis, to: Self.fullyOpen, context: context) }
        return .success
    }

    func downOrClose(_ request: Commands.DownOrClose, context: ClusterContext) -> InteractionStatus {
        if let busy = motionLock(context) { return busy }
        for axis in axes { move(axis, to: Self.fullyClosed, context: context) }
        return .success
    }

    func stopMotion(_ request: Commands.StopMotion, context: ClusterContext) -> InteractionStatus {
        for axis in axes { stop(axis, context: context) }
        return .success
    }

    func goToLiftPercentage(_ request: Commands.GoToLiftPercentage, context: ClusterContext) -> InteractionStatus {
        goToPercentage(.lift, request.liftPercent100thsValue, context: context)
    }

    func goToTiltPercentage(_ request: Commands.GoToTiltPercentage, context: ClusterContext) -> InteractionStatus {
        goToPercentage(.tilt, request.tiltPercent100thsValue, context: context)
    }

    func goToLiftValue(_ request: Commands.GoToLiftValue, context: ClusterContext) -> InteractionStatus {
        goToValue(.lift, request.liftValue, context: context)
    }

    func goToTiltValue(_ request: Commands.GoToTiltValue, context: ClusterContext) -> InteractionStatus {
        goToValue(.tilt, request.tiltValue, context: context)
    }

    private func goToPercentage(_ axis: Axis, _ target: UInt16, context: ClusterContext) -> InteractionStatus {
        if let busy = motionLock(context) { return busy }
        guard axes.contains(axis) else { return InteractionStatus(.unsupportedCommand) }
        guard target <= Self.fullyClosed else { return InteractionStatus(.constraintError) }
        move(axis, to: Int64(target), context: context)
        return .success
    }

    private func goToValue(_ axis: Axis, _ value: UInt16, context: ClusterContext) -> InteractionStatus {
        if let busy = motionLock(context) { return busy }
        guard axes.contains(axis) else { return InteractionStatus(.unsupportedCommand) }
        guard let target = percent100ths(fromAbsolute: UInt64(value), axis, context) else { return InteractionStatus(.constraintError) }
        move(axis, to: target, context: context)
        return .success
    }

    /// A covering in maintenance mode refuses to move (5.3.5.21 Mode, MaintenanceMode).
    private func motionLock(_ context: ClusterContext) -> InteractionStatus? {
        (context.unsigned(Attribute.mode) ?? 0) & ModeBit.maintenanceMode != 0 ? InteractionStatus(.busy) : nil
    }

    /// Absolute positions lie between the installed open and closed limits (5.3.6.5).
    private func percent100ths(fromAbsolute value: UInt64, _ axis: Axis, _ context: ClusterContext) -> Int64? {
        let (open, closed) = installedLimits(axis, context)
        let position = Int64(clamping: value)
        guard open < closed, (open...closed).contains(position) else { return nil }
        return (position - open) * Self.fullyClosed / (closed - open)
    }

    // MARK: Motion

    private func move(_ axis: Axis, to target: Int64, context: ClusterContext) {
        let current = positions[axis] ?? Self.fullyOpen
        context.set(axis.targetPercent100ths, .uint(target))
        if target == current {
            motions[axis] = nil
            context.cancelTimer(axis.timerName)
        } else {
            let motion = Motion(from: current, target: target, start: context.now)
            motions[axis] = motion
            context.startTimer(axis.timerName, at: min(context.now + Self.tick, arrival(of: motion, axis)))
        }
        updateOperationalStatus(context)
    }

    private func stop(_ axis: Axis, context: ClusterContext) {
        motions[axis] = nil
        context.cancelTimer(axis.timerName)
        context.set(axis.targetPercent100ths, .uint(positions[axis] ?? Self.fullyOpen))
        updateOperationalStatus(context)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard let axis = axes.first(where: { $0.timerName == name }), let motion = motions[axis] else { return }
        let speed = speeds[axis] ?? 1
        let distance = abs(motion.target - motion.from)
        let elapsed = max(0, (context.now - motion.start).totalMilliseconds)
        let (product, overflow) = speed.multipliedReportingOverflow(by: elapsed)
        let travelled = overflow ? distance : product / 1000
        if travelled >= distance {
            positions[axis] = motion.target
            motions[axis] = nil
            publishPosition(axis, context: context)
            if let count = context.unsigned(axis.numberOfActuations) {
                context.set(axis.numberOfActuations, .uint(count < UInt64(UInt16.max) ? count + 1 : count))
            }
            updateOperationalStatus(context)
            return
        }
        positions[axis] = motion.from + (motion.target > motion.from ? travelled : -travelled)
        publishPosition(axis, context: context)
        // Next update after a tick, or exactly when the target is reached.
        context.startTimer(axis.timerName, at: min(context.now + Self.tick, arrival(of: motion, axis)))
    }

    /// When a motion reaches its target (rounded up to the millisecond).
    private func arrival(of motion: Motion, _ axis: Axis) -> Duration {
        let speed = speeds[axis] ?? 1
        let distance = abs(motion.target - motion.from)
        return motion.start + .milliseconds((distance * 1000 + speed - 1) / speed)
    }

    // MARK: Attribute upkeep

    private func publishPosition(_ axis: Axis, context: ClusterContext) {
        let position = positions[axis] ?? Self.fullyOpen
        context.set(axis.currentPercent100ths, .uint(position))
        context.set(axis.currentPercentage, .uint(position / 100))
        let (open, closed) = installedLimits(axis, context)
        if closed > open {
            context.set(axis.currentPosition, .uint(open + (closed - open) * position / Self.fullyClosed))
        }
    }

    /// InstalledOpenLimit/InstalledClosedLimit (uint16), with the spec defaults 0 and 0xFFFF.
    private func installedLimits(_ axis: Axis, _ context: ClusterContext) -> (open: Int64, closed: Int64) {
        let open = context.unsigned(axis.installedOpenLimit).map { min($0, UInt64(UInt16.max)) } ?? 0
        let closed = context.unsigned(axis.installedClosedLimit).map { min($0, UInt64(UInt16.max)) } ?? UInt64(UInt16.max)
        return (Int64(open), Int64(closed))
    }

    private func status(of axis: Axis) -> MovementStatus {
        guard let motion = motions[axis] else { return .stopped }
        return motion.target > motion.from ? .closing : .opening
    }

    /// OperationalStatus (5.3.5.16): the global bits follow the lift while it
    /// moves, else the tilt.
    private func updateOperationalStatus(_ context: ClusterContext) {
        let lift = status(of: .lift), tilt = status(of: .tilt)
        let global = lift != .stopped ? lift : tilt
        let value = global.rawValue | lift.rawValue << Axis.lift.statusShift | tilt.rawValue << Axis.tilt.statusShift
        context.set(Attribute.operationalStatus, .uint(value))
    }

    /// ConfigStatus mirrors Mode: not operational in calibration or maintenance,
    /// lift reversed when the motor direction is.
    private func updateConfigStatus(_ context: ClusterContext) {
        let mode = context.unsigned(Attribute.mode) ?? 0
        var status = context.unsigned(Attribute.configStatus) ?? 0
        if mode & (ModeBit.calibrationMode | ModeBit.maintenanceMode) != 0 {
            status &= ~ConfigStatusBit.operational
        } else {
            status |= ConfigStatusBit.operational
        }
        if mode & ModeBit.motorDirectionReversed != 0 {
            status |= ConfigStatusBit.liftMovementReversed
        } else {
            status &= ~ConfigStatusBit.liftMovementReversed
        }
        context.set(Attribute.configStatus, .uint(status))
    }
}

extension WindowCoveringServer: PhysicallyOperated {
    /// The cord or wall control: UpOrOpen, DownOrClose or StopMotion, done at the blind.
    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .cord(let pull) = action else { throw PhysicalActionError("Window Covering cannot \(action)") }
        let status =
            switch pull {
            case .open: upOrOpen(Commands.UpOrOpen(), context: context)
            case .close: downOrClose(Commands.DownOrClose(), context: context)
            case .stop: stopMotion(Commands.StopMotion(), context: context)
            }
        if status != .success { throw PhysicalActionError("the blind did not move: \(status)") }
    }
}
