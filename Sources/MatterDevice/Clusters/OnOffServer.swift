import MatterModel
import MatterTLV

/// On/Off cluster (Application Cluster spec 1.5). With the Lighting feature it adds
/// the global scene, timed on/off (OnTime/OffWaitTime) and StartUpOnOff; with a
/// Level Control cluster (OnOff feature) on the same endpoint, turning on and off
/// goes through the level (1.6.4.1.1).
final class OnOffServer: OnOffHandler {
    static let clusterID = Clusters.OnOff.id

    typealias Feature = Clusters.OnOff.Feature
    typealias Attribute = Clusters.OnOff.Attribute
    typealias Command = Clusters.OnOff.Command

    private static let timedOnOffTimer = "timedOnOff"
    private static let tick = Duration.milliseconds(100)
    /// OnTime/OffWaitTime value meaning "no timed behaviour" (1.5.7.6).
    private static let noTimeLimit: UInt64 = 0xFFFF

    private let lighting: Bool
    /// The level stored as the global scene by OffWithEffect (1.5.7.4); this node
    /// has no Scenes cluster, so the global scene is the light's level.
    private var globalSceneLevel: UInt8?

    init(features: Set<String>) {
        lighting = features.contains(Feature.lighting)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.onOff: .bool(false)
        case Attribute.globalSceneControl: .bool(true)
        case Attribute.onTime, Attribute.offWaitTime: .uint(0)
        case Attribute.startUpOnOff: .null
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool {
        switch command {
        case Command.off, Command.on, Command.toggle: true
        case Command.offWithEffect, Command.onWithRecallGlobalScene, Command.onWithTimedOff: lighting
        default: false
        }
    }

    /// StartUpOnOff (1.5.6.6): applied to the persisted OnOff value at power-up;
    /// null keeps it. Enum: Off 0, On 1, Toggle 2.
    func startUp(_ context: ClusterContext) {
        guard lighting, let startUp = context.unsigned(Attribute.startUpOnOff) else { return }
        let previous = context.bool(Attribute.onOff) ?? false
        switch startUp {
        case 0: context.set(Attribute.onOff, .bool(false))
        case 1: context.set(Attribute.onOff, .bool(true))
        case 2: context.set(Attribute.onOff, .bool(!previous))
        default: break
        }
    }

    func off(_ request: Clusters.OnOff.Commands.Off, context: ClusterContext) -> InteractionStatus {
        setOnOff(false, context: context)
        return .success
    }

    func on(_ request: Clusters.OnOff.Commands.On, context: ClusterContext) -> InteractionStatus {
        setOnOff(true, context: context)
        return .success
    }

    func toggle(_ request: Clusters.OnOff.Commands.Toggle, context: ClusterContext) -> InteractionStatus {
        setOnOff(!isOn(context), context: context)
        return .success
    }

    /// On as the user sees it: a light fading out after Off already counts as off.
    func isOn(_ context: ClusterContext) -> Bool {
        guard context.bool(Attribute.onOff) == true else { return false }
        return !(context.peer(LevelControlServer.self)?.server.isFadingOff ?? false)
    }

    /// The common path of every on/off change (1.5.7.1–1.5.7.3). `fromLevelControl`
    /// is set when a level command with OnOff coupling drives it, so the level is
    /// not moved again.
    func setOnOff(_ on: Bool, fromLevelControl: Bool = false, levelOverride: LevelOverride = .unchanged, context: ClusterContext) {
        guard on != isOn(context) else { return }
        let level =
            fromLevelControl
            ? nil
            : context.peer(LevelControlServer.self).flatMap { peer in
                peer.server.coupledToOnOff ? peer : nil
            }
        if on {
            if lighting {
                // 1.5.7.2: with OnTime 0 the off-wait guard ends too.
                if context.unsigned(Attribute.onTime) == 0 {
                    context.set(Attribute.offWaitTime, .uint(0))
                    context.cancelTimer(Self.timedOnOffTimer)
                }
                context.set(Attribute.globalSceneControl, .bool(true))
            }
            context.set(Attribute.onOff, .bool(true))
            if let level {
                level.server.turnOn(target: levelOverride.target, context: level.context)
            }
        } else {
            if lighting { context.set(Attribute.onTime, .uint(0)) }
            // The node enters its Off state on receipt (1.5.7.1): OnOff reads FALSE at
            // once, as controllers expect right after the response; a coupled level
            // then fades to its minimum behind it (1.6.4.1.1).
            context.set(Attribute.onOff, .bool(false))
            if let level {
                level.server.turnOff(fade: levelOverride.fade, context: level.context)
            }
        }
        // A pump's OnOff runs it (Pump device type).
        if let pump = context.peer(PumpConfigurationAndControlServer.self) { pump.server.switched(pump.context) }
    }

    /// How a command with an effect shapes the level coupled to on/off.
    struct LevelOverride {
        var target: UInt8?
        var fade: Duration?
        static let unchanged = LevelOverride()
    }

    /// 1.5.7.4 OffWithEffect: store the global scene, then turn off with the effect.
    func offWithEffect(_ request: Clusters.OnOff.Commands.OffWithEffect, context: ClusterContext) -> InteractionStatus {
        if context.bool(Attribute.globalSceneControl) == true {
            if let level = context.peer(LevelControlServer.self) {
                globalSceneLevel = level.server.currentLevel(level.context)
            }
            context.set(Attribute.globalSceneControl, .bool(false))
        }
        let fade = Self.effectFade(identifier: request.effectIdentifier, variant: request.effectVariant)
        setOnOff(false, levelOverride: LevelOverride(fade: fade), context: context)
        return .success
    }

    /// Fade-out time of each OffWithEffect variant (1.5.5.x effect enums), summed
    /// over the effect's phases: the simulation fades linearly.
    private static func effectFade(identifier: Clusters.OnOff.EffectIdentifierEnum, variant: UInt8) -> Duration {
        switch (identifier, variant) {
        case (.delayedAllOff, 0): .milliseconds(800)  // DelayedAllOff: fade to off in 0.8 s
        case (.delayedAllOff, 1): .zero  // DelayedAllOff: no fade
        case (.delayedAllOff, 2): .milliseconds(12_800)  // DelayedAllOff: 50 % dim in 0.8 s, then off in 12 s
        case (.dyingLight, 0): .milliseconds(1_500)  // DyingLight: 20 % up in 0.5 s, then off in 1 s
        default: .milliseconds(800)
        }
    }

    /// 1.5.7.5 OnWithRecallGlobalScene: ignored while GlobalSceneControl is TRUE.
    func onWithRecallGlobalScene(_ request: Clusters.OnOff.Commands.OnWithRecallGlobalScene, context: ClusterContext) -> InteractionStatus {
        guard context.bool(Attribute.globalSceneControl) == false else { return .success }
        if isOn(context) {
            if let target = globalSceneLevel, let level = context.peer(LevelControlServer.self) {
                level.server.moveToLevel(target, context: level.context)
            }
        } else {
            setOnOff(true, levelOverride: LevelOverride(target: globalSceneLevel), context: context)
        }
        context.set(Attribute.globalSceneControl, .bool(true))
        return .success
    }

    /// 1.5.7.6 OnWithTimedOff.
    func onWithTimedOff(_ request: Clusters.OnOff.Commands.OnWithTimedOff, context: ClusterContext) -> InteractionStatus {
        let acceptOnlyWhenOn = request.onOffControl.contains(.acceptOnlyWhenOn)
        let requestedOnTime = UInt64(request.onTime)
        let requestedOffWaitTime = UInt64(request.offWaitTime)
        let on = isOn(context)
        if acceptOnlyWhenOn && !on { return .success }

        let offWaitTime = context.unsigned(Attribute.offWaitTime) ?? 0
        if offWaitTime > 0 && !on {
            // In the off-wait guard: only shorten it.
            context.set(Attribute.offWaitTime, .uint(min(offWaitTime, requestedOffWaitTime)))
        } else {
            let onTime = context.unsigned(Attribute.onTime) ?? 0
            context.set(Attribute.onTime, .uint(max(onTime, requestedOnTime)))
            context.set(Attribute.offWaitTime, .uint(requestedOffWaitTime))
            setOnOff(true, context: context)
        }
        let onTime = context.unsigned(Attribute.onTime) ?? 0
        let newOffWaitTime = context.unsigned(Attribute.offWaitTime) ?? 0
        if onTime < Self.noTimeLimit && newOffWaitTime < Self.noTimeLimit {
            nextTenth = context.now + Self.tick
            context.startTimer(Self.timedOnOffTimer, at: nextTenth)
        }
        return .success
    }

    /// When the timed on/off countdown's next tenth is due, on a grid from its start: a timer
    /// that fires late (a loaded machine) does not push the rest of the countdown later, and
    /// tenths it missed are counted at once (TC-OO-2.3 reads OffWaitTime 0 thirty seconds after
    /// a 300-tenth wait began).
    private var nextTenth: Duration = .zero

    /// The tenths due now (at least the one the timer fired for), and the next one armed.
    private func dueTenths(_ context: ClusterContext) -> UInt64 {
        var due: UInt64 = 1
        if context.now > nextTenth { due += UInt64((context.now - nextTenth) / Self.tick) }
        nextTenth += Self.tick * Int(clamping: due)
        return due
    }

    /// Every 1/10 s (1.5.7.6): while on, OnTime counts down and turns the light off
    /// at 0 (clearing OffWaitTime); while off, OffWaitTime counts down to 0.
    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.timedOnOffTimer else { return }
        let due = dueTenths(context)
        if isOn(context) {
            var onTime = context.unsigned(Attribute.onTime) ?? 0
            if onTime > 0 {
                onTime -= min(onTime, due)
                context.set(Attribute.onTime, .uint(onTime))
            }
            if onTime == 0 {
                context.set(Attribute.offWaitTime, .uint(0))
                setOnOff(false, context: context)
            }
            context.startTimer(Self.timedOnOffTimer, at: nextTenth)
        } else {
            var offWaitTime = context.unsigned(Attribute.offWaitTime) ?? 0
            if offWaitTime > 0 {
                offWaitTime -= min(offWaitTime, due)
                context.set(Attribute.offWaitTime, .uint(offWaitTime))
            }
            if offWaitTime > 0 { context.startTimer(Self.timedOnOffTimer, at: nextTenth) }
        }
    }
}

extension OnOffServer: PhysicallyOperated {
    /// The device's own button: a press toggles it, through the same path as Toggle.
    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .toggle = action else { throw PhysicalActionError("On/Off cannot \(action)") }
        _ = toggle(Clusters.OnOff.Commands.Toggle(), context: context)
    }
}
