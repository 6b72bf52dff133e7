import MatterModel
import MatterTLV

/// Level Control cluster (Application Cluster spec 1.6). Transitions run on the
/// node clock: CurrentLevel moves in steps every 100 ms (intermediate values are
/// reported) and RemainingTime counts down in tenths of a second.
final class LevelControlServer: LevelControlHandler {
    static let clusterID = Clusters.LevelControl.id

    typealias Feature = Clusters.LevelControl.Feature
    typealias Attribute = Clusters.LevelControl.Attribute
    typealias Command = Clusters.LevelControl.Command
    typealias Commands = Clusters.LevelControl.Commands
    typealias Options = Clusters.LevelControl.OptionsBitmap

    /// Interval between intermediate CurrentLevel updates.
    static let tick = Duration.milliseconds(100)
    private static let transitionTimer = "transition"
    private static let coupleColorTempToLevel = UInt64(Clusters.LevelControl.OptionsBitmap.coupleColorTempToLevel.rawValue)

    /// The OnOff feature (OO): On/Off commands on this endpoint drive the level.
    let coupledToOnOff: Bool
    private let lighting: Bool

    private enum Completion {
        case none
        /// A 'with On/Off' command reaching MinLevel turns the OnOff attribute off (1.6.7.6).
        case offAtMinimum
        /// The fade of an On/Off Off command (OnOff is already FALSE): at the end the
        /// level returns to the stored one unless OnLevel is defined (1.6.4.1.1).
        case finishTurningOff(restore: UInt8?)
    }

    private struct Transition {
        var from: Int
        var to: Int
        var start: Duration
        var duration: Duration
        var completion: Completion
    }

    private var transition: Transition?

    init(features: Set<String>) {
        coupledToOnOff = features.contains(Feature.onOff)
        lighting = features.contains(Feature.lighting)
    }

    /// Whether an Off command's fade is running (the light counts as off already).
    var isFadingOff: Bool {
        if case .finishTurningOff = transition?.completion { return true }
        return false
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.currentLevel: .uint(254)
        case Attribute.remainingTime: .uint(0)
        case Attribute.minLevel: .uint(lighting ? 1 : 0)
        case Attribute.maxLevel: .uint(254)
        case Attribute.options: .uint(0)
        case Attribute.onOffTransitionTime: .uint(0)
        case Attribute.onLevel: .null
        case Attribute.startUpCurrentLevel: .null
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool {
        (Command.moveToLevel.rawValue...Command.stopWithOnOff.rawValue).contains(command.rawValue)
    }

    /// StartUpCurrentLevel (1.6.6.15): 0 means MinLevel, null keeps the persisted
    /// level, anything else is the level to start at.
    func startUp(_ context: ClusterContext) {
        let bounds = self.bounds(context)
        var level = context.unsigned(Attribute.currentLevel).map { Int(clamping: $0) } ?? bounds.max
        if let startUp = context.unsigned(Attribute.startUpCurrentLevel) {
            level = startUp == 0 ? bounds.min : Int(clamping: startUp)
        }
        context.set(Attribute.currentLevel, .uint(clamp(level, bounds)))
    }

    func currentLevel(_ context: ClusterContext) -> UInt8? {
        context.unsigned(Attribute.currentLevel).flatMap { UInt8(exactly: $0) }
    }

    // MARK: Commands (1.6.7)

    func moveToLevel(_ request: Commands.MoveToLevel, context: ClusterContext) -> InteractionStatus {
        moveToLevel(
            request.level, request.transitionTime, options: (request.optionsMask, request.optionsOverride), withOnOff: false,
            context: context)
    }

    func moveToLevelWithOnOff(_ request: Commands.MoveToLevelWithOnOff, context: ClusterContext) -> InteractionStatus {
        moveToLevel(
            request.level, request.transitionTime, options: (request.optionsMask, request.optionsOverride), withOnOff: true,
            context: context)
    }

    func move(_ request: Commands.Move, context: ClusterContext) -> InteractionStatus {
        move(
            request.moveMode, rate: request.rate, options: (request.optionsMask, request.optionsOverride), withOnOff: false,
            context: context)
    }

    func moveWithOnOff(_ request: Commands.MoveWithOnOff, context: ClusterContext) -> InteractionStatus {
        move(
            request.moveMode, rate: request.rate, options: (request.optionsMask, request.optionsOverride), withOnOff: true, context: context
        )
    }

    func step(_ request: Commands.Step, context: ClusterContext) -> InteractionStatus {
        step(
            request.stepMode, size: request.stepSize, request.transitionTime, options: (request.optionsMask, request.optionsOverride),
            withOnOff: false, context: context)
    }

    func stepWithOnOff(_ request: Commands.StepWithOnOff, context: ClusterContext) -> InteractionStatus {
        step(
            request.stepMode, size: request.stepSize, request.transitionTime, options: (request.optionsMask, request.optionsOverride),
            withOnOff: true, context: context)
    }

    func stop(_ request: Commands.Stop, context: ClusterContext) -> InteractionStatus {
        stop(options: (request.optionsMask, request.optionsOverride), withOnOff: false, context: context)
    }

    func stopWithOnOff(_ request: Commands.StopWithOnOff, context: ClusterContext) -> InteractionStatus {
        stop(options: (request.optionsMask, request.optionsOverride), withOnOff: true, context: context)
    }

    /// A command's OptionsMask and OptionsOverride.
    typealias OptionFields = (mask: Options, override: Options)

    private func moveToLevel(
        _ level: UInt8, _ transitionTime: UInt16?, options: OptionFields, withOnOff: Bool, context: ClusterContext
    ) -> InteractionStatus {
        guard level <= 254 else { return InteractionStatus(.constraintError) }
        guard shouldExecute(withOnOff, options, context: context) else { return .success }
        // 1.6.7.1.1: a null TransitionTime falls back to OnOffTransitionTime, else as fast as possible.
        let duration = transitionTime.map { Duration.tenths(UInt64($0)) } ?? onOffTransitionTime(context)
        return startMove(to: Int(level), over: duration, withOnOff: withOnOff, context: context)
    }

    private func move(
        _ mode: Clusters.LevelControl.MoveModeEnum, rate: UInt8?, options: OptionFields, withOnOff: Bool, context: ClusterContext
    ) -> InteractionStatus {
        // 1.6.7.2.3: a zero rate has no effect and is an invalid command.
        if rate == 0 { return InteractionStatus(.invalidCommand) }
        guard shouldExecute(withOnOff, options, context: context) else { return .success }
        guard let current = currentLevel(context) else { return InteractionStatus(.failure) }
        let bounds = self.bounds(context)
        let target = mode == .up ? bounds.max : bounds.min
        // 1.6.7.2.2: a null rate means DefaultMoveRate, else as fast as possible.
        let rate = rate.map { UInt64($0) } ?? context.unsigned(Attribute.defaultMoveRate).flatMap { $0 > 0 ? $0 : nil }
        let distance = Int64(abs(target - Int(current)))
        let duration = rate.map { Duration.milliseconds(distance * 1000 / Int64(clamping: $0)) } ?? .zero
        return startMove(to: target, over: duration, withOnOff: withOnOff, context: context)
    }

    private func step(
        _ mode: Clusters.LevelControl.StepModeEnum, size: UInt8, _ transitionTime: UInt16?, options: OptionFields, withOnOff: Bool,
        context: ClusterContext
    ) -> InteractionStatus {
        // 1.6.7.3.4: a zero step has no effect and is an invalid command.
        guard size > 0 else { return InteractionStatus(.invalidCommand) }
        guard shouldExecute(withOnOff, options, context: context) else { return .success }
        guard let current = currentLevel(context) else { return InteractionStatus(.failure) }
        let target = clamp(Int(current) + (mode == .up ? Int(size) : -Int(size)), bounds(context))
        // A step cut short by MinLevel/MaxLevel takes proportionally less time.
        let actual = Int64(abs(target - Int(current)))
        let duration = transitionTime.map { Duration.tenths(UInt64($0)) * Int(actual) / Int(size) } ?? .zero
        return startMove(to: target, over: duration, withOnOff: withOnOff, context: context)
    }

    private func stop(options: OptionFields, withOnOff: Bool, context: ClusterContext) -> InteractionStatus {
        guard shouldExecute(withOnOff, options, context: context) else { return .success }
        // 1.6.7.4.1: the level stays where it is; RemainingTime goes to 0.
        transition = nil
        context.cancelTimer(Self.transitionTimer)
        context.set(Attribute.remainingTime, .uint(0))
        // The end of the movement: a level kept unreported is reported now.
        context.settleQuietChanges()
        context.peer(ColorControlServer.self)?.context.settleQuietChanges()
        return .success
    }

    /// Moves to a level with this cluster's own transition time (used for scene recall).
    func moveToLevel(_ level: UInt8, context: ClusterContext) {
        _ = startMove(to: Int(level), over: onOffTransitionTime(context), withOnOff: false, context: context)
    }

    /// Options processing (1.6.6.9): a command without On/Off does nothing while the
    /// OnOff attribute is FALSE, unless the effective ExecuteIfOff bit is set.
    private func shouldExecute(_ withOnOff: Bool, _ options: OptionFields, context: ClusterContext) -> Bool {
        withOnOff
            || context.executesWhileOff(
                mask: UInt64(options.mask.rawValue), override: UInt64(options.override.rawValue), options: Attribute.options)
    }

    private func startMove(to requested: Int, over duration: Duration, withOnOff: Bool, context: ClusterContext) -> InteractionStatus {
        guard let current = currentLevel(context) else { return InteractionStatus(.failure) }
        let bounds = self.bounds(context)
        let target = clamp(requested, bounds)
        if withOnOff, target > bounds.min, let onOff = context.peer(OnOffServer.self) {
            // 1.6.7.6: turn on before raising the level above the minimum.
            onOff.server.setOnOff(true, fromLevelControl: true, context: onOff.context)
        }
        let completion: Completion = withOnOff && target == bounds.min ? .offAtMinimum : .none
        begin(
            Transition(from: Int(current), to: target, start: context.now, duration: duration, completion: completion),
            context: context)
        return .success
    }

    // MARK: Coupling with On/Off (1.6.4.1.1 "Effect of On/Off Commands on the CurrentLevel attribute")

    /// On: from MinLevel up to OnLevel, or to the stored level when OnLevel is null,
    /// over OnTransitionTime (or OnOffTransitionTime). A fade-out in progress turns
    /// around from where it is.
    func turnOn(target override: UInt8?, context: ClusterContext) {
        let bounds = self.bounds(context)
        let current = Int(currentLevel(context) ?? UInt8(clamping: bounds.min))
        var stored = current
        if case .finishTurningOff(let restore)? = transition?.completion, let restore { stored = Int(restore) }
        let onLevel = context.unsigned(Attribute.onLevel).map { Int(clamping: $0) }
        let target = clamp(override.map { Int($0) } ?? onLevel ?? stored, bounds)
        let duration = transitionTime(Attribute.onTransitionTime, context)
        let from = isFadingOff ? current : bounds.min
        transition = nil
        context.cancelTimer(Self.transitionTimer)
        if duration > .zero { setLevel(from, context) }
        begin(Transition(from: from, to: target, start: context.now, duration: duration, completion: .none), context: context)
    }

    /// Off: fade to MinLevel over OffTransitionTime (or OnOffTransitionTime), then go
    /// back to the stored level if OnLevel is null. OnOff is FALSE from the start
    /// (set by the On/Off server, or here when a level command turns the light off).
    func turnOff(fade override: Duration?, context: ClusterContext) {
        let bounds = self.bounds(context)
        let current = Int(currentLevel(context) ?? UInt8(clamping: bounds.min))
        let onLevelDefined = context.unsigned(Attribute.onLevel) != nil
        var restore: UInt8? = onLevelDefined ? nil : UInt8(clamping: current)
        if case .finishTurningOff(let earlier)? = transition?.completion { restore = earlier }
        let duration = override ?? transitionTime(Attribute.offTransitionTime, context)
        transition = nil
        context.cancelTimer(Self.transitionTimer)
        if duration <= .zero {
            // Instant: no visible dip to MinLevel and back.
            if onLevelDefined { setLevel(bounds.min, context) }
            setOnOffAttribute(false, context: context)
            if let restore { setLevel(restore, context) }
            return
        }
        begin(
            Transition(
                from: current, to: bounds.min, start: context.now, duration: duration,
                completion: .finishTurningOff(restore: restore)), context: context)
    }

    // MARK: Transitions

    private func begin(_ next: Transition, context: ClusterContext) {
        transition = next
        context.cancelTimer(Self.transitionTimer)
        guard next.duration > .zero, next.from != next.to else {
            finish(context)
            return
        }
        context.set(Attribute.remainingTime, .uint(Self.tenthsRemaining(next.duration)))
        // Quieter reporting counts from the start (a coupled colour temperature moves too).
        context.beginQuietChanges()
        context.peer(ColorControlServer.self)?.context.beginQuietChanges()
        context.startTimer(Self.transitionTimer, after: min(Self.tick, next.duration))
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.transitionTimer, let current = transition else { return }
        let elapsed = context.now - current.start
        guard elapsed < current.duration else {
            finish(context)
            return
        }
        let total = max(1, current.duration.totalMilliseconds)
        let done = elapsed.totalMilliseconds
        // Integer division rounds toward the start level, so the target is only
        // reached when the transition time is up.
        let level = current.from + Int(Int64(current.to - current.from) * done / total)
        // A step of the transition: CurrentLevel and RemainingTime are Q (quieter reporting),
        // reported at most once a second, not on every tick.
        setLevel(level, context, .progress)
        context.set(Attribute.remainingTime, .uint(Self.tenthsRemaining(current.duration - elapsed)), .progress)
        context.startTimer(Self.transitionTimer, at: min(context.now + Self.tick, current.start + current.duration))
    }

    private func finish(_ context: ClusterContext) {
        guard let done = transition else { return }
        transition = nil
        context.cancelTimer(Self.transitionTimer)
        setLevel(done.to, context, since: done.start)
        context.set(Attribute.remainingTime, .uint(0))
        context.settleQuietChanges()
        switch done.completion {
        case .none:
            break
        case .offAtMinimum:
            if let onOff = context.peer(OnOffServer.self) {
                onOff.server.setOnOff(false, fromLevelControl: true, context: onOff.context)
            }
        case .finishTurningOff(let restore):
            setOnOffAttribute(false, context: context)
            if let restore { setLevel(restore, context) }
        }
    }

    // MARK: Helpers

    /// Sets CurrentLevel; with CoupleColorTempToLevel in Options, Color Control's colour
    /// temperature follows (1.6.6.9).
    /// `since`: when the change began (a transition's start; by default the running one's, or now).
    private func setLevel(
        _ level: some BinaryInteger, _ context: ClusterContext, _ change: QuietChange = .milestone, since: Duration? = nil
    ) {
        context.set(Attribute.currentLevel, .uint(level), change)
        guard (context.unsigned(Attribute.options) ?? 0) & Self.coupleColorTempToLevel != 0,
            let color = context.peer(ColorControlServer.self)
        else { return }
        color.server.levelChanged(
            to: Int(clamping: level), since: since ?? transition?.start ?? context.now, context: color.context, change)
    }

    private func setOnOffAttribute(_ on: Bool, context: ClusterContext) {
        context.peer(OnOffServer.self)?.context.set(OnOffServer.Attribute.onOff, .bool(on))
    }

    func bounds(_ context: ClusterContext) -> (min: Int, max: Int) {
        let low = Int(clamping: context.unsigned(Attribute.minLevel) ?? (lighting ? 1 : 0))
        let high = Int(clamping: context.unsigned(Attribute.maxLevel) ?? 254)
        return (min(low, 254), max(min(low, 254), min(high, 254)))
    }

    private func clamp(_ level: Int, _ bounds: (min: Int, max: Int)) -> Int {
        Swift.min(Swift.max(level, bounds.min), bounds.max)
    }

    private func onOffTransitionTime(_ context: ClusterContext) -> Duration {
        context.unsigned(Attribute.onOffTransitionTime).map { Duration.tenths($0) } ?? .zero
    }

    /// OnTransitionTime/OffTransitionTime when present and not null, else OnOffTransitionTime.
    private func transitionTime(_ attribute: AttributeID, _ context: ClusterContext) -> Duration {
        context.unsigned(attribute).map { Duration.tenths($0) } ?? onOffTransitionTime(context)
    }

    /// RemainingTime in tenths of a second, rounded up so it reaches 0 only at the end.
    private static func tenthsRemaining(_ remaining: Duration) -> Int64 {
        min(remaining.tenthsRoundedUp, Int64(UInt16.max))
    }
}

extension LevelControlServer: PhysicallyOperated {
    /// A dimmer turned to a brightness: MoveToLevelWithOnOff to that share of MaxLevel (0 %
    /// goes to MinLevel, which turns the light off), over the light's own transition time.
    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .dim(let percent) = action else { throw PhysicalActionError("Level Control cannot \(action)") }
        guard percent.isFinite, (0...100).contains(percent) else {
            throw PhysicalActionError("a dimmer turns from 0 to 100 %, not \(percent)")
        }
        let (low, high) = bounds(context)
        let level = percent == 0 ? low : max(low, min(high, Int((percent / 100 * Double(high)).rounded())))
        _ = moveToLevelWithOnOff(Commands.MoveToLevelWithOnOff(level: UInt8(clamping: level), transitionTime: nil), context: context)
    }
}
