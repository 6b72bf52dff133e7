import MatterModel
import MatterTLV

/// Color Control cluster (Application Cluster spec 3.2): hue and saturation (HS), enhanced
/// hue (EHUE), the colour loop (CL), CIE x/y (XY) and colour temperature in mireds (CT), as
/// the instance's features allow. Every MoveTo, Move and Step runs on the node clock in
/// 100 ms ticks like Level Control's, with RemainingTime counting down; hue wraps around,
/// everything else stops at its bounds. Each command sets ColorMode/EnhancedColorMode to its
/// own colour space (3.2.7.9). While OnOff is FALSE a command does nothing unless the
/// effective ExecuteIfOff option is set (3.2.6.x "Options"). Level Control drives the colour
/// temperature when its CoupleColorTempToLevel option is set (`levelChanged`).
final class ColorControlServer: ColorControlHandler {
    static let clusterID = Clusters.ColorControl.id

    typealias Feature = Clusters.ColorControl.Feature
    typealias Attribute = Clusters.ColorControl.Attribute
    typealias Command = Clusters.ColorControl.Command
    typealias Commands = Clusters.ColorControl.Commands
    typealias Options = Clusters.ColorControl.OptionsBitmap

    /// ColorModeEnum / EnhancedColorModeEnum.
    enum Mode: UInt64 { case hueSaturation = 0, xy = 1, temperature = 2, enhancedHueSaturation = 3 }

    static let tick = Duration.milliseconds(100)
    private static let transitionTimer = "transition"
    /// Largest CurrentX/CurrentY and mireds value: CurrentX's constraint in the model (3.2.7.x: max 0xFEFF).
    static let maxColorValue: Int64 = {
        guard case .range(_, let max?) = MatterModel.standard.cluster(Clusters.ColorControl.id)?.attribute(Attribute.currentX)?.constraint
        else {
            preconditionFailure("the model gives ColorControl's CurrentX no maximum")
        }
        return max
    }()
    private static let hueRange: ClosedRange<Int64> = 0...254
    private static let enhancedHueRange: ClosedRange<Int64> = 0...0xFFFF

    /// One attribute on its way: `change` over `duration`, or per second for ever when the
    /// duration is nil (a hue Move, the colour loop). Hue wraps within its range, the rest
    /// stops at the range's ends.
    private struct Motion {
        var attribute: AttributeID
        var from: Int64
        var change: Int64
        var duration: Duration?
        var range: ClosedRange<Int64>
        var wraps: Bool

        func value(after elapsed: Duration) -> Int64 {
            let moved: Int64
            if let duration {
                let total = duration.totalMilliseconds
                moved = elapsed.totalMilliseconds >= total ? change : change * elapsed.totalMilliseconds / total
            } else {
                moved = change * elapsed.totalMilliseconds / 1_000
            }
            let raw = from + moved
            guard wraps else { return min(max(raw, range.lowerBound), range.upperBound) }
            let size = range.upperBound - range.lowerBound + 1
            return ((raw - range.lowerBound) % size + size) % size + range.lowerBound
        }

        func isDone(after elapsed: Duration) -> Bool {
            guard let duration else { return false }
            return elapsed >= duration
        }
    }

    /// What runs now: the motions of the last command, and the colour loop apart from them
    /// (StopMoveStep leaves the loop running, 3.2.11.20).
    private var motions: [Motion] = []
    private var motionStart: Duration = .zero
    /// When a colour temperature command last came: a level change that began before it does
    /// not couple (`levelChanged`), so the newer command is not overwritten.
    private var temperatureCommandAt: Duration?
    private var loop: Motion?
    private var loopStart: Duration = .zero

    private let hueSaturation: Bool
    private let enhancedHue: Bool
    private let colorLoop: Bool
    private let xy: Bool
    private let temperature: Bool

    init(features: Set<String>) {
        hueSaturation = features.contains(Feature.hueSaturation)
        enhancedHue = features.contains(Feature.enhancedHue)
        colorLoop = features.contains(Feature.colorLoop)
        xy = features.contains(Feature.xy)
        temperature = features.contains(Feature.colorTemperature)
    }

    /// ColorCapabilities carries the feature bits (3.2.7.x).
    private var capabilities: UInt64 {
        let present: [(Bool, Clusters.ColorControl.ColorCapabilitiesBitmap)] = [
            (hueSaturation, .hueSaturation), (enhancedHue, .enhancedHue), (colorLoop, .colorLoop), (xy, .xy),
            (temperature, .colorTemperature),
        ]
        return UInt64(present.reduce(into: Clusters.ColorControl.ColorCapabilitiesBitmap()) { if $1.0 { $0.insert($1.1) } }.rawValue)
    }

    /// The colour space a light without a profile value starts in: the first it has of
    /// CT, XY, HS.
    private var defaultMode: Mode { temperature ? .temperature : xy ? .xy : .hueSaturation }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.remainingTime: .uint(0)
        case Attribute.colorMode: .uint(defaultMode.rawValue)
        case Attribute.enhancedColorMode: .uint(defaultMode.rawValue)
        case Attribute.numberOfPrimaries: .null
        case Attribute.colorCapabilities: .uint(capabilities)
        case Attribute.colorTempPhysicalMinMireds: temperature ? .uint(153) : nil
        case Attribute.colorTempPhysicalMaxMireds: temperature ? .uint(500) : nil
        case Attribute.coupleColorTempToLevelMinMireds: temperature ? .uint(153) : nil
        case Attribute.startUpColorTemperatureMireds: temperature ? .null : nil
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool {
        (Command.moveToHue.rawValue...Command.moveToColorTemperature.rawValue).contains(command.rawValue)
            || (Command.enhancedMoveToHue.rawValue...Command.colorLoopSet.rawValue).contains(command.rawValue)
            || [Command.stopMoveStep, Command.moveColorTemperature, Command.stepColorTemperature].contains(command)
    }

    /// StartUpColorTemperatureMireds (3.2.7.x): a non-null value within the physical range is
    /// the colour temperature to start at, in ColorTemperatureMireds mode. A colour loop that
    /// was running when the node stopped (the attributes are non-volatile) runs on.
    func startUp(_ context: ClusterContext) {
        context.set(Attribute.remainingTime, .uint(0))
        if temperature, let startUp = context.value(Attribute.startUpColorTemperatureMireds)?.integerValue {
            let bounds = physicalMireds(context)
            if bounds.contains(startUp) {
                context.set(Attribute.colorTemperatureMireds, .uint(startUp))
                setMode(.temperature, context)
            }
        }
        if colorLoop, context.unsigned(Attribute.colorLoopActive) == 1 {
            startLoop(from: value(Attribute.enhancedCurrentHue, context), context: context)
        }
    }

    // MARK: Commands (3.2.11)

    func moveToHue(_ request: Commands.MoveToHue, context: ClusterContext) -> InteractionStatus {
        moveToHue(
            Int64(request.hue), request.direction, request.transitionTime, (request.optionsMask, request.optionsOverride), enhanced: false,
            context)
    }

    func enhancedMoveToHue(_ request: Commands.EnhancedMoveToHue, context: ClusterContext) -> InteractionStatus {
        moveToHue(
            Int64(request.enhancedHue), request.direction, request.transitionTime, (request.optionsMask, request.optionsOverride),
            enhanced: true, context)
    }

    func moveHue(_ request: Commands.MoveHue, context: ClusterContext) -> InteractionStatus {
        moveHue(request.moveMode, Int64(request.rate), (request.optionsMask, request.optionsOverride), .hue, context)
    }

    func enhancedMoveHue(_ request: Commands.EnhancedMoveHue, context: ClusterContext) -> InteractionStatus {
        moveHue(request.moveMode, Int64(request.rate), (request.optionsMask, request.optionsOverride), .enhancedHue, context)
    }

    func moveSaturation(_ request: Commands.MoveSaturation, context: ClusterContext) -> InteractionStatus {
        moveHue(request.moveMode, Int64(request.rate), (request.optionsMask, request.optionsOverride), .saturation, context)
    }

    func stepHue(_ request: Commands.StepHue, context: ClusterContext) -> InteractionStatus {
        stepHue(
            request.stepMode, Int64(request.stepSize), UInt16(request.transitionTime), (request.optionsMask, request.optionsOverride), .hue,
            context)
    }

    func enhancedStepHue(_ request: Commands.EnhancedStepHue, context: ClusterContext) -> InteractionStatus {
        stepHue(
            request.stepMode, Int64(request.stepSize), request.transitionTime, (request.optionsMask, request.optionsOverride), .enhancedHue,
            context)
    }

    func stepSaturation(_ request: Commands.StepSaturation, context: ClusterContext) -> InteractionStatus {
        stepHue(
            request.stepMode, Int64(request.stepSize), UInt16(request.transitionTime), (request.optionsMask, request.optionsOverride),
            .saturation, context)
    }

    func moveToSaturation(_ request: Commands.MoveToSaturation, context: ClusterContext) -> InteractionStatus {
        guard shouldExecute((request.optionsMask, request.optionsOverride), context) else { return .success }
        let motion = to(Attribute.currentSaturation, Int64(request.saturation), over: .tenths(request.transitionTime), context)
        return start([motion], mode: .hueSaturation, context)
    }

    func moveToHueAndSaturation(_ request: Commands.MoveToHueAndSaturation, context: ClusterContext) -> InteractionStatus {
        moveToHueAndSaturation(
            Int64(request.hue), Int64(request.saturation), request.transitionTime, (request.optionsMask, request.optionsOverride),
            enhanced: false, context)
    }

    func enhancedMoveToHueAndSaturation(_ request: Commands.EnhancedMoveToHueAndSaturation, context: ClusterContext) -> InteractionStatus {
        moveToHueAndSaturation(
            Int64(request.enhancedHue), Int64(request.saturation), request.transitionTime, (request.optionsMask, request.optionsOverride),
            enhanced: true, context)
    }

    func moveToColor(_ request: Commands.MoveToColor, context: ClusterContext) -> InteractionStatus {
        guard shouldExecute((request.optionsMask, request.optionsOverride), context) else { return .success }
        let duration = Duration.tenths(request.transitionTime)
        return start(
            [
                to(Attribute.currentX, Int64(request.colorX), over: duration, context),
                to(Attribute.currentY, Int64(request.colorY), over: duration, context),
            ], mode: .xy, context)
    }

    func moveColor(_ request: Commands.MoveColor, context: ClusterContext) -> InteractionStatus {
        guard shouldExecute((request.optionsMask, request.optionsOverride), context) else { return .success }
        let rateX = Int64(request.rateX), rateY = Int64(request.rateY)
        // Both rates zero: the colour stops where it is (3.2.11.12).
        if rateX == 0 && rateY == 0 {
            stopMotions(context)
            return .success
        }
        let range = 0...Self.maxColorValue
        var moving: [Motion] = []
        for (attribute, rate) in [(Attribute.currentX, rateX), (Attribute.currentY, rateY)] where rate != 0 {
            moving.append(Self.move(attribute, from: value(attribute, context), rate: rate, within: range))
        }
        return start(moving, mode: .xy, context)
    }

    func stepColor(_ request: Commands.StepColor, context: ClusterContext) -> InteractionStatus {
        let stepX = Int64(request.stepX), stepY = Int64(request.stepY)
        // Both steps zero: an invalid command (3.2.11.13).
        guard stepX != 0 || stepY != 0 else { return InteractionStatus(.invalidCommand) }
        guard shouldExecute((request.optionsMask, request.optionsOverride), context) else { return .success }
        let duration = Duration.tenths(request.transitionTime)
        return start(
            [
                to(Attribute.currentX, value(Attribute.currentX, context) + stepX, over: duration, context),
                to(Attribute.currentY, value(Attribute.currentY, context) + stepY, over: duration, context),
            ], mode: .xy, context)
    }

    func moveToColorTemperature(_ request: Commands.MoveToColorTemperature, context: ClusterContext) -> InteractionStatus {
        guard shouldExecute((request.optionsMask, request.optionsOverride), context) else { return .success }
        let motion = to(
            Attribute.colorTemperatureMireds, Int64(request.colorTemperatureMireds), over: .tenths(request.transitionTime),
            within: physicalMireds(context), context)
        return start([motion], mode: .temperature, context)
    }

    func moveColorTemperature(_ request: Commands.MoveColorTemperature, context: ClusterContext) -> InteractionStatus {
        guard shouldExecute((request.optionsMask, request.optionsOverride), context) else { return .success }
        let rate = Int64(request.rate)
        if request.moveMode == .stop {
            stopMotions(context)
            return .success
        }
        guard rate > 0 else { return InteractionStatus(.invalidCommand) }
        let bounds = temperatureBounds(request.colorTemperatureMinimumMireds, request.colorTemperatureMaximumMireds, context)
        let motion = Self.move(
            Attribute.colorTemperatureMireds, from: value(Attribute.colorTemperatureMireds, context),
            rate: request.moveMode == .up ? rate : -rate, within: bounds)
        return start([motion], mode: .temperature, context)
    }

    func stepColorTemperature(_ request: Commands.StepColorTemperature, context: ClusterContext) -> InteractionStatus {
        let size = Int64(request.stepSize)
        guard size > 0 else { return InteractionStatus(.invalidCommand) }
        guard shouldExecute((request.optionsMask, request.optionsOverride), context) else { return .success }
        let bounds = temperatureBounds(request.colorTemperatureMinimumMireds, request.colorTemperatureMaximumMireds, context)
        let current = value(Attribute.colorTemperatureMireds, context)
        let motion = to(
            Attribute.colorTemperatureMireds, current + (request.stepMode == .up ? size : -size), over: .tenths(request.transitionTime),
            within: bounds, context)
        return start([motion], mode: .temperature, context)
    }

    func stopMoveStep(_ request: Commands.StopMoveStep, context: ClusterContext) -> InteractionStatus {
        guard shouldExecute((request.optionsMask, request.optionsOverride), context) else { return .success }
        stopMotions(context)
        return .success
    }

    /// Which attribute a Move or Step of hue or saturation drives.
    private enum HueTarget {
        case hue, enhancedHue, saturation

        var attribute: AttributeID {
            switch self {
            case .hue: Attribute.currentHue
            case .enhancedHue: Attribute.enhancedCurrentHue
            case .saturation: Attribute.currentSaturation
            }
        }

        var range: ClosedRange<Int64> { self == .enhancedHue ? ColorControlServer.enhancedHueRange : ColorControlServer.hueRange }
        var mode: Mode { self == .enhancedHue ? .enhancedHueSaturation : .hueSaturation }
    }

    private func moveToHue(
        _ hue: Int64, _ direction: Clusters.ColorControl.DirectionEnum, _ transitionTime: UInt16, _ options: OptionFields, enhanced: Bool,
        _ context: ClusterContext
    ) -> InteractionStatus {
        guard shouldExecute(options, context) else { return .success }
        let target: HueTarget = enhanced ? .enhancedHue : .hue
        let current = value(target.attribute, context)
        let change = Self.hueChange(from: current, to: hue, direction: direction, range: target.range)
        let motion = Motion(
            attribute: target.attribute, from: current, change: change, duration: .tenths(transitionTime), range: target.range, wraps: true)
        return start([motion], mode: target.mode, context)
    }

    private func moveHue(
        _ mode: Clusters.ColorControl.MoveModeEnum, _ rate: Int64, _ options: OptionFields, _ target: HueTarget, _ context: ClusterContext
    ) -> InteractionStatus {
        guard shouldExecute(options, context) else { return .success }
        // MoveMode Stop ends the movement (3.2.11.5.1); a zero rate with Up or Down is invalid.
        if mode == .stop {
            stop(target.attribute, context)
            return .success
        }
        guard rate > 0 else { return InteractionStatus(.invalidCommand) }
        let signedRate = mode == .up ? rate : -rate
        let current = value(target.attribute, context)
        let motion: Motion
        if target == .saturation {
            motion = Self.move(target.attribute, from: current, rate: signedRate, within: Self.hueRange)
        } else {
            motion = Motion(attribute: target.attribute, from: current, change: signedRate, duration: nil, range: target.range, wraps: true)
        }
        return start([motion], mode: target.mode, context)
    }

    private func stepHue(
        _ mode: Clusters.ColorControl.StepModeEnum, _ size: Int64, _ transitionTime: UInt16, _ options: OptionFields,
        _ target: HueTarget, _ context: ClusterContext
    ) -> InteractionStatus {
        // A step of zero has no effect and is an invalid command.
        guard size > 0 else { return InteractionStatus(.invalidCommand) }
        guard shouldExecute(options, context) else { return .success }
        let saturation = target == .saturation
        let range = target.range
        let current = value(target.attribute, context)
        let change = mode == .up ? size : -size
        let goal = saturation ? min(max(current + change, range.lowerBound), range.upperBound) : current + change
        let motion = Motion(
            attribute: target.attribute, from: current, change: goal - current, duration: .tenths(transitionTime), range: range,
            wraps: !saturation)
        return start([motion], mode: target.mode, context)
    }

    private func moveToHueAndSaturation(
        _ hue: Int64, _ saturation: Int64, _ transitionTime: UInt16, _ options: OptionFields, enhanced: Bool, _ context: ClusterContext
    ) -> InteractionStatus {
        guard shouldExecute(options, context) else { return .success }
        let target: HueTarget = enhanced ? .enhancedHue : .hue
        let duration = Duration.tenths(transitionTime)
        // The shortest way round (3.2.11.10).
        let current = value(target.attribute, context)
        let change = Self.hueChange(from: current, to: hue, direction: .shortest, range: target.range)
        return start(
            [
                Motion(attribute: target.attribute, from: current, change: change, duration: duration, range: target.range, wraps: true),
                to(Attribute.currentSaturation, saturation, over: duration, context),
            ], mode: target.mode, context)
    }

    /// ColorLoopSet (3.2.11.19): UpdateFlags says which of Direction, Time and StartHue to
    /// take, and whether to act. Activating keeps the current enhanced hue in
    /// ColorLoopStoredEnhancedHue, deactivating goes back to it; a running loop takes a new
    /// direction or time at once.
    func colorLoopSet(_ request: Commands.ColorLoopSet, context: ClusterContext) -> InteractionStatus {
        guard shouldExecute((request.optionsMask, request.optionsOverride), context) else { return .success }
        let flags = request.updateFlags
        if flags.contains(.updateDirection) { context.set(Attribute.colorLoopDirection, .uint(request.direction.rawValue)) }
        if flags.contains(.updateTime) { context.set(Attribute.colorLoopTime, .uint(request.time)) }
        if flags.contains(.updateStartHue) { context.set(Attribute.colorLoopStartEnhancedHue, .uint(request.startHue)) }
        let active = context.unsigned(Attribute.colorLoopActive) == 1
        let current = value(Attribute.enhancedCurrentHue, context)
        if flags.contains(.updateAction) {
            switch request.action {
            case .deactivate:
                guard active else { break }
                loop = nil
                context.set(Attribute.colorLoopActive, .uint(0))
                setHue(value(Attribute.colorLoopStoredEnhancedHue, context), enhanced: true, context)
            case .activateFromColorLoopStartEnhancedHue, .activateFromEnhancedCurrentHue:
                stopMotions(context)
                context.set(Attribute.colorLoopStoredEnhancedHue, .uint(current))
                context.set(Attribute.colorLoopActive, .uint(1))
                setMode(.enhancedHueSaturation, context)
                let from =
                    request.action == .activateFromColorLoopStartEnhancedHue ? value(Attribute.colorLoopStartEnhancedHue, context) : current
                startLoop(from: from, context: context)
            }
        } else if active, !flags.isDisjoint(with: [.updateDirection, .updateTime]) {
            startLoop(from: current, context: context)
        }
        reschedule(context)
        return .success
    }

    /// The loop goes once round the enhanced hue in ColorLoopTime seconds.
    private func startLoop(from hue: Int64, context: ClusterContext) {
        let seconds = max(1, value(Attribute.colorLoopTime, context))
        let perSecond = max(1, (Self.enhancedHueRange.upperBound + 1) / seconds)
        let increment = context.unsigned(Attribute.colorLoopDirection) == 1
        loop = Motion(
            attribute: Attribute.enhancedCurrentHue, from: hue, change: increment ? perSecond : -perSecond, duration: nil,
            range: Self.enhancedHueRange, wraps: true)
        loopStart = context.now
        setHue(hue, enhanced: true, context)
        reschedule(context)
    }

    // MARK: Level Control coupling (3.2.7.x "CoupleColorTempToLevelMinMireds", 1.6.6.9)

    /// Called by Level Control when CurrentLevel changed with CoupleColorTempToLevel set: in
    /// colour temperature mode, a brighter light is a cooler one. Level 254 gives
    /// CoupleColorTempToLevelMinMireds, level 1 ColorTempPhysicalMaxMireds, and in between
    /// the physical maximum less the coupled span in proportion to the level out of 254.
    /// `since`: when the level change began (a transition's start). A colour temperature
    /// command that came after it wins: the rest of that level transition leaves the colour
    /// alone (an On's fade does not undo a MoveToColorTemperature sent during it, TC-CC-6.1/6.2).
    func levelChanged(to level: Int, since: Duration, context: ClusterContext, _ change: QuietChange = .milestone) {
        guard temperature, context.unsigned(Attribute.colorMode) == Mode.temperature.rawValue else { return }
        if let temperatureCommandAt, temperatureCommandAt > since { return }
        let physical = physicalMireds(context)
        let coupledMinimum = min(max(value(Attribute.coupleColorTempToLevelMinMireds, context), physical.lowerBound), physical.upperBound)
        let mireds: Int64
        if level <= 1 {
            mireds = physical.upperBound
        } else if level >= 254 {
            mireds = coupledMinimum
        } else {
            mireds = physical.upperBound - (physical.upperBound - coupledMinimum) * Int64(level) / 254
        }
        motions.removeAll { $0.attribute == Attribute.colorTemperatureMireds }
        context.set(Attribute.colorTemperatureMireds, .uint(mireds), change)
    }

    // MARK: Transitions

    /// Runs a command's motions in its colour space (3.2.7.9: each command sets ColorMode).
    private func start(_ next: [Motion], mode: Mode, _ context: ClusterContext) -> InteractionStatus {
        // A hue command ends a running colour loop, which would otherwise overwrite the hue.
        if next.contains(where: { $0.attribute == Attribute.enhancedCurrentHue || $0.attribute == Attribute.currentHue }), loop != nil {
            loop = nil
            context.set(Attribute.colorLoopActive, .uint(0))
        }
        setMode(mode, context)
        if mode == .temperature { temperatureCommandAt = context.now }
        motions = next
        motionStart = context.now
        reschedule(context)
        return .success
    }

    private func stop(_ attribute: AttributeID, _ context: ClusterContext) {
        motions.removeAll { $0.attribute == attribute }
        reschedule(context)
    }

    /// StopMoveStep and the Stop move modes: every attribute stays where it is.
    private func stopMotions(_ context: ClusterContext) {
        motions = []
        reschedule(context)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.transitionTimer else { return }
        reschedule(context, .progress)
    }

    /// Applies every motion at the current time, drops those that are done, sets
    /// RemainingTime and waits for the next tick while anything still moves. A timer's tick is
    /// `.progress`: the Q attributes it moves are reported at most once a second, and at the end
    /// of their motion.
    private func reschedule(_ context: ClusterContext, _ change: QuietChange = .milestone) {
        // A command that sets something moving: quieter reporting counts from here.
        if change == .milestone, !motions.isEmpty || loop != nil { context.beginQuietChanges() }
        let elapsed = context.now - motionStart
        for motion in motions {
            apply(motion.attribute, motion.value(after: elapsed), context, motion.isDone(after: elapsed) ? .milestone : change)
        }
        motions.removeAll { $0.isDone(after: elapsed) }
        if let loop { apply(loop.attribute, loop.value(after: context.now - loopStart), context, change) }

        let remaining = motions.compactMap { $0.duration.map { $0 - elapsed } }.max() ?? .zero
        context.set(Attribute.remainingTime, .uint(Self.tenthsRemaining(remaining)), change)
        context.cancelTimer(Self.transitionTimer)
        guard !motions.isEmpty || loop != nil else {
            // Nothing moves any more (done or stopped): what a step left unreported is reported.
            context.settleQuietChanges()
            return
        }
        var next = context.now + Self.tick
        for motion in motions {
            if let duration = motion.duration { next = min(next, motionStart + duration) }
        }
        context.startTimer(Self.transitionTimer, at: max(next, context.now + .milliseconds(1)))
    }

    private func apply(_ attribute: AttributeID, _ value: Int64, _ context: ClusterContext, _ change: QuietChange) {
        if attribute == Attribute.enhancedCurrentHue {
            setHue(value, enhanced: true, context, change)
        } else {
            context.set(attribute, .uint(value), change)
        }
    }

    /// EnhancedCurrentHue carries CurrentHue in its high byte (3.2.7.x).
    private func setHue(_ hue: Int64, enhanced: Bool, _ context: ClusterContext, _ change: QuietChange = .milestone) {
        if enhanced {
            context.set(Attribute.enhancedCurrentHue, .uint(hue), change)
            context.set(Attribute.currentHue, .uint(min(hue >> 8, Self.hueRange.upperBound)), change)
        } else {
            context.set(Attribute.currentHue, .uint(hue), change)
        }
    }

    private func setMode(_ mode: Mode, _ context: ClusterContext) {
        context.set(Attribute.enhancedColorMode, .uint(mode.rawValue))
        context.set(Attribute.colorMode, .uint(mode == .enhancedHueSaturation ? Mode.hueSaturation.rawValue : mode.rawValue))
    }

    // MARK: Helpers

    /// A command's OptionsMask and OptionsOverride.
    typealias OptionFields = (mask: Options, override: Options)

    /// Options processing (3.2.6.x), as Level Control's.
    private func shouldExecute(_ options: OptionFields, _ context: ClusterContext) -> Bool {
        context.executesWhileOff(
            mask: UInt64(options.mask.rawValue), override: UInt64(options.override.rawValue), options: Attribute.options)
    }

    private func value(_ attribute: AttributeID, _ context: ClusterContext) -> Int64 {
        context.value(attribute)?.integerValue ?? 0
    }

    /// A MoveTo within bounds (0 to 0xFEFF for x/y, 0 to 254 for saturation unless given).
    private func to(
        _ attribute: AttributeID, _ target: Int64, over duration: Duration, within bounds: ClosedRange<Int64>? = nil,
        _ context: ClusterContext
    ) -> Motion {
        let range = bounds ?? (attribute == Attribute.currentSaturation ? Self.hueRange : 0...Self.maxColorValue)
        let current = value(attribute, context)
        let clamped = min(max(target, range.lowerBound), range.upperBound)
        return Motion(attribute: attribute, from: current, change: clamped - current, duration: duration, range: range, wraps: false)
    }

    /// A Move at `rate` units per second that stops at the bound it heads for.
    private static func move(_ attribute: AttributeID, from current: Int64, rate: Int64, within range: ClosedRange<Int64>) -> Motion {
        let start = min(max(current, range.lowerBound), range.upperBound)
        let target = rate > 0 ? range.upperBound : range.lowerBound
        let distance = abs(target - start)
        return Motion(
            attribute: attribute, from: start, change: target - start, duration: .milliseconds(distance * 1_000 / abs(rate)), range: range,
            wraps: false)
    }

    /// The signed way round the hue circle for DirectionEnum: Shortest, Longest, Up, Down.
    static func hueChange(
        from current: Int64, to target: Int64, direction: Clusters.ColorControl.DirectionEnum, range: ClosedRange<Int64>
    ) -> Int64 {
        let size = range.upperBound - range.lowerBound + 1
        let up = ((target - current) % size + size) % size
        guard up != 0 else { return 0 }
        let down = up - size
        switch direction {
        case .shortest: return up <= -down ? up : down
        case .longest: return up > -down ? up : down
        case .up: return up
        case .down: return down
        }
    }

    /// ColorTempPhysicalMinMireds…ColorTempPhysicalMaxMireds.
    private func physicalMireds(_ context: ClusterContext) -> ClosedRange<Int64> {
        let low = context.value(Attribute.colorTempPhysicalMinMireds)?.integerValue ?? 1
        let high = context.value(Attribute.colorTempPhysicalMaxMireds)?.integerValue ?? Self.maxColorValue
        return low...max(low, high)
    }

    /// A Move/Step's ColorTemperatureMinimumMireds/MaximumMireds: 0 means the physical bound,
    /// and neither goes past it (3.2.11.21.3).
    private func temperatureBounds(_ minimum: UInt16, _ maximum: UInt16, _ context: ClusterContext) -> ClosedRange<Int64> {
        let physical = physicalMireds(context)
        let low = minimum == 0 ? physical.lowerBound : Int64(minimum)
        let high = maximum == 0 ? physical.upperBound : Int64(maximum)
        let clampedLow = min(max(low, physical.lowerBound), physical.upperBound)
        let clampedHigh = min(max(high, clampedLow), physical.upperBound)
        return clampedLow...clampedHigh
    }

    /// RemainingTime in tenths of a second, rounded up, within its maximum (0xFFFE).
    private static func tenthsRemaining(_ remaining: Duration) -> Int64 {
        min(remaining.tenthsRoundedUp, 0xFFFE)
    }
}
