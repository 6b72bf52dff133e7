import MatterModel
import MatterTLV

/// Fan Control cluster (Application Cluster spec 4.4). FanMode, PercentSetting and (with
/// MultiSpeed) SpeedSetting are kept consistent whichever is written (4.4.6):
/// * FanMode Off sets the settings to 0; Low, Medium and High set them to the top of the
///   mode's band of the FanModeSequence (Low/Medium/High: 1–33, 34–66, 67–100 %; without
///   Medium: 1–50, 51–100 %; High alone: 1–100 %); Auto sets them to null and the fan picks
///   its speed (from the node's Air Quality when it has one: a purifier runs faster in
///   poor air). On is taken as High, Smart as Auto where the sequence has it, else High
///   (4.4.6.1); a mode the sequence lacks is a CONSTRAINT_ERROR.
/// * PercentSetting p sets SpeedSetting to ceil(SpeedMax × p / 100) and FanMode to the mode
///   whose band holds p (0: Off); SpeedSetting s sets PercentSetting to floor(s × 100 /
///   SpeedMax) the same way. Writing null to either changes nothing (4.4.6.3, 4.4.6.6).
/// * PercentCurrent and SpeedCurrent are the motor, the actual speed (4.4.6.4, 4.4.6.7). It runs
///   at the setting at once, as connectedhomeip's example fan does and TC-FAN-3.1/3.2 expect
///   (they subscribe right after writing FanMode and want every later report to move the way
///   the writes go). A profile may give the motor inertia (`behaviour: fan: acceleration`,
///   percent of full speed per second): then it moves toward the setting 10 % per tick on
///   the node clock (at 100 %/s a tick is 100 ms: a second from standstill to full speed).
/// * Step (4.4.7.1) moves SpeedSetting by one speed (without MultiSpeed, PercentSetting by
///   10 %), up or down; past the top or bottom it stops there, or with Wrap goes round to the
///   other end; the bottom is Off with LowestOff (the default), else the lowest speed.
/// * RockSetting and WindSetting take only bits their Support attributes have. With NaturalWind
///   the motor follows gusts (55–100 % of the setting, a new one every 2 s); with SleepWind it
///   slows by a tenth of the setting every 10 minutes, down to 30 % (4.4.6.11: the pattern is
///   the manufacturer's).
final class FanControlServer: FanControlHandler, PhysicallyOperated {
    static let clusterID = Clusters.FanControl.id

    typealias Attribute = Clusters.FanControl.Attribute
    typealias Feature = Clusters.FanControl.Feature
    typealias Mode = Clusters.FanControl.FanModeEnum
    typealias ModeSequence = Clusters.FanControl.FanModeSequenceEnum

    static let spinStep: Int64 = 10
    /// How long the motor takes for one `spinStep`; nil: no inertia, it runs at the setting.
    let spinTick: Duration?
    /// Without MultiSpeed, Step moves PercentSetting by this much.
    static let percentStep: Int64 = 10
    private static let spinTimer = "spin"
    private static let windTimer = "wind"
    static let gusts: [Int64] = [100, 70, 85, 55, 90, 65]
    static let gustTick = Duration.seconds(2)
    static let sleepTick = Duration.seconds(600)
    /// Which gust blows now, and when sleep wind began.
    private var gust = 0
    private var sleepSince: Duration?

    private let features: Set<String>

    init(features: Set<String>, acceleration: MotionSpeed? = nil) {
        self.features = features
        // 10 % at P hundredths of a percent per second: 1,000,000 / P ms (100 ms at 100 %/s).
        spinTick = acceleration.map { .milliseconds(max(1, 1_000_000 / $0.percent100thsPerSecond)) }
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.fanModeSequence:
            .uint(features.contains(Feature.auto) ? ModeSequence.offLowMedHighAuto.rawValue : ModeSequence.offLowMedHigh.rawValue)
        case Attribute.speedMax: .uint(10)
        case Attribute.rockSupport:
            .uint(Clusters.FanControl.RockBitmap([.rockLeftRight, .rockUpDown, .rockRound]).rawValue)
        case Attribute.windSupport: .uint(Clusters.FanControl.WindBitmap([.sleepWind, .naturalWind]).rawValue)
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool { command == Clusters.FanControl.Command.step }

    /// The settings follow the stored FanMode (a profile may give only the mode), and the fan
    /// already runs at its setting.
    func startUp(_ context: ClusterContext) {
        let mode = currentMode(context)
        let setting = context.value(Attribute.percentSetting)?.integerValue
        switch mode {
        case .off, .auto: apply(mode, context)
        default:
            if setting.map({ self.mode(forPercent: $0, context) }) != mode { apply(mode, context) }
        }
        setCurrent(target(context), context)
    }

    func validateWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> InteractionStatus? {
        switch attribute {
        case Attribute.fanMode:
            guard let raw = value.unsignedValue, let mode = Mode(rawValue: UInt8(clamping: raw)), resolved(mode, context) != nil else {
                return InteractionStatus(.constraintError)
            }
            return nil
        case Attribute.rockSetting: return subset(value, of: Attribute.rockSupport, context)
        case Attribute.windSetting: return subset(value, of: Attribute.windSupport, context)
        default: return nil
        }
    }

    func didWrite(_ attribute: AttributeID, context: ClusterContext) {
        guard attribute == Attribute.windSetting else { return }
        gust = 0
        sleepSince = context.now
        context.cancelTimer(Self.windTimer)
        startWind(context)
        spin(context)
    }

    func commitWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> Bool {
        switch attribute {
        case Attribute.fanMode:
            if let raw = value.unsignedValue, let mode = Mode(rawValue: UInt8(clamping: raw)).flatMap({ resolved($0, context) }) {
                apply(mode, context)
            }
            return true
        case Attribute.percentSetting:
            if let percent = value.integerValue { setPercent(percent, context) }
            return true
        case Attribute.speedSetting:
            if let speed = value.integerValue { setSpeed(speed, context) }
            return true
        default:
            return false
        }
    }

    func step(_ request: Clusters.FanControl.Commands.Step, context: ClusterContext) -> InteractionStatus {
        let wrap = request.wrap ?? false
        let lowestOff = request.lowestOff ?? true
        let increase = request.direction == .increase
        if let speedMax = speedMax(context) {
            let current =
                context.value(Attribute.speedSetting)?.integerValue ?? context.value(Attribute.speedCurrent)?.integerValue ?? 0
            setSpeed(Self.stepped(current, by: 1, top: speedMax, increase: increase, wrap: wrap, lowestOff: lowestOff), context)
        } else {
            let current =
                context.value(Attribute.percentSetting)?.integerValue ?? context.value(Attribute.percentCurrent)?.integerValue ?? 0
            setPercent(
                Self.stepped(current, by: Self.percentStep, top: 100, increase: increase, wrap: wrap, lowestOff: lowestOff), context)
        }
        return .success
    }

    func timerFired(_ name: String, context: ClusterContext) {
        if name == Self.windTimer {
            gust += 1
            startWind(context)
            spin(context)
            return
        }
        guard name == Self.spinTimer, let spinTick else { return }
        let goal = target(context)
        let current = context.value(Attribute.percentCurrent)?.integerValue ?? 0
        let next = current < goal ? min(current + Self.spinStep, goal) : max(current - Self.spinStep, goal)
        setCurrent(next, context)
        if next != goal { context.startTimer(Self.spinTimer, after: spinTick) }
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .fan(let setting) = action else { throw PhysicalActionError("Fan Control cannot \(action)") }
        switch setting {
        case .mode(let mode):
            guard let resolved = resolved(mode, context) else {
                throw PhysicalActionError("this fan has no \(mode) mode (its FanModeSequence is \(sequence(context)))")
            }
            apply(resolved, context)
        case .percent(let percent):
            guard percent <= 100 else { throw PhysicalActionError("a fan's speed is 0 to 100 %, not \(percent) %") }
            setPercent(Int64(percent), context)
        }
    }

    /// The endpoint's air changed: a fan in Auto picks its speed again.
    func airQualityChanged(_ context: ClusterContext) {
        if currentMode(context) == .auto { spin(context) }
    }

    // MARK: Modes, percent and speed

    /// The mode a written one stands for, nil when the fan cannot run in it.
    func resolved(_ mode: Mode, _ context: ClusterContext) -> Mode? {
        switch mode {
        case .off, .high: mode
        case .on: .high
        case .smart: hasAuto(context) ? .auto : .high
        case .auto: hasAuto(context) ? .auto : nil
        case .low, .medium: bands(context).contains { $0.mode == mode } ? mode : nil
        }
    }

    private func apply(_ mode: Mode, _ context: ClusterContext) {
        context.set(Attribute.fanMode, .uint(mode.rawValue))
        switch mode {
        case .off:
            context.set(Attribute.percentSetting, .uint(0))
            context.set(Attribute.speedSetting, .uint(0))
        case .auto:
            context.set(Attribute.percentSetting, .null)
            context.set(Attribute.speedSetting, .null)
        default:
            let percent = bands(context).first { $0.mode == mode }?.percent.upperBound ?? 100
            context.set(Attribute.percentSetting, .uint(percent))
            if let speedMax = speedMax(context) { context.set(Attribute.speedSetting, .uint(Self.speed(percent: percent, max: speedMax))) }
        }
        spin(context)
    }

    private func setPercent(_ percent: Int64, _ context: ClusterContext) {
        let percent = percent.clamped(to: 0...100)
        context.set(Attribute.fanMode, .uint(mode(forPercent: percent, context).rawValue))
        context.set(Attribute.percentSetting, .uint(percent))
        if let speedMax = speedMax(context) { context.set(Attribute.speedSetting, .uint(Self.speed(percent: percent, max: speedMax))) }
        spin(context)
    }

    private func setSpeed(_ speed: Int64, _ context: ClusterContext) {
        guard let speedMax = speedMax(context) else { return }
        let speed = speed.clamped(to: 0...speedMax)
        let percent = speed * 100 / speedMax
        context.set(Attribute.fanMode, .uint(mode(forPercent: percent, context).rawValue))
        context.set(Attribute.percentSetting, .uint(percent))
        context.set(Attribute.speedSetting, .uint(speed))
        spin(context)
    }

    /// ceil(SpeedMax × percent / 100) (4.4.6.3).
    static func speed(percent: Int64, max speedMax: Int64) -> Int64 {
        (speedMax * percent + 99) / 100
    }

    static func stepped(_ current: Int64, by step: Int64, top: Int64, increase: Bool, wrap: Bool, lowestOff: Bool) -> Int64 {
        let lowest = lowestOff ? 0 : step
        if increase {
            let next = current + step
            return next > top ? (wrap ? lowest : top) : next
        }
        let next = current - step
        return next < lowest ? (wrap ? top : lowest) : next
    }

    private func mode(forPercent percent: Int64, _ context: ClusterContext) -> Mode {
        guard percent > 0 else { return .off }
        return bands(context).first { $0.percent.contains(percent) }?.mode ?? .high
    }

    /// The speed modes of the FanModeSequence with the percentages each covers.
    private func bands(_ context: ClusterContext) -> [(mode: Mode, percent: ClosedRange<Int64>)] {
        switch sequence(context) {
        case .offLowMedHigh, .offLowMedHighAuto: [(.low, 1...33), (.medium, 34...66), (.high, 67...100)]
        case .offLowHigh, .offLowHighAuto: [(.low, 1...50), (.high, 51...100)]
        case .offHigh, .offHighAuto: [(.high, 1...100)]
        }
    }

    private func hasAuto(_ context: ClusterContext) -> Bool {
        guard features.contains(Feature.auto) else { return false }
        return [.offLowMedHighAuto, .offLowHighAuto, .offHighAuto].contains(sequence(context))
    }

    private func sequence(_ context: ClusterContext) -> ModeSequence {
        ModeSequence(rawValue: UInt8(clamping: context.unsigned(Attribute.fanModeSequence) ?? 0)) ?? .offLowMedHigh
    }

    private func currentMode(_ context: ClusterContext) -> Mode {
        Mode(rawValue: UInt8(clamping: context.unsigned(Attribute.fanMode) ?? 0)) ?? .off
    }

    private func speedMax(_ context: ClusterContext) -> Int64? {
        guard features.contains(Feature.multiSpeed), let max = context.value(Attribute.speedMax)?.integerValue, max > 0 else { return nil }
        return max
    }

    // MARK: The motor

    /// The percent the motor runs toward: the setting, or in Auto what the air asks for, as
    /// the wind shapes it.
    private func target(_ context: ClusterContext) -> Int64 {
        let base = chosen(context)
        let wind = Clusters.FanControl.WindBitmap(rawValue: UInt8(clamping: context.unsigned(Attribute.windSetting) ?? 0))
        if wind.contains(.naturalWind) { return base * Self.gusts[gust % Self.gusts.count] / 100 }
        if wind.contains(.sleepWind), let since = sleepSince {
            let tenths = (context.now - since).totalMilliseconds / Self.sleepTick.totalMilliseconds
            return base * max(30, 100 - 10 * tenths) / 100
        }
        return base
    }

    /// The wind's next change: a gust, or sleep wind's next slowing.
    private func startWind(_ context: ClusterContext) {
        let wind = Clusters.FanControl.WindBitmap(rawValue: UInt8(clamping: context.unsigned(Attribute.windSetting) ?? 0))
        if wind.contains(.naturalWind) {
            context.startTimer(Self.windTimer, after: Self.gustTick)
        } else if wind.contains(.sleepWind) {
            context.startTimer(Self.windTimer, after: Self.sleepTick)
        }
    }

    /// The speed chosen: the setting, or in Auto what the air asks for.
    private func chosen(_ context: ClusterContext) -> Int64 {
        if let setting = context.value(Attribute.percentSetting)?.integerValue { return setting.clamped(to: 0...100) }
        guard currentMode(context) == .auto else { return 0 }
        let grade = context.nodePeer(AirQualityServer.self)?.context.unsigned(Clusters.AirQuality.Attribute.airQuality)
        switch grade.flatMap({ Clusters.AirQuality.AirQualityEnum(rawValue: UInt8(clamping: $0)) }) {
        case .good?: return 20
        case .fair?: return 40
        case .moderate?: return 60
        case .poor?: return 80
        case .veryPoor?, .extremelyPoor?: return 100
        case .unknown?, nil: return 50
        }
    }

    private func spin(_ context: ClusterContext) {
        guard let spinTick else {
            setCurrent(target(context), context)
            return
        }
        let current = context.value(Attribute.percentCurrent)?.integerValue ?? 0
        if current == target(context) {
            setCurrent(current, context)
            context.cancelTimer(Self.spinTimer)
        } else if !context.isTimerPending(Self.spinTimer) {
            // A turning motor keeps its tick: restarted by every new setting, settings written
            // faster than the tick froze it (TC-FAN-3.1 writes one every few ms).
            context.startTimer(Self.spinTimer, after: spinTick)
        }
    }

    /// PercentCurrent, and SpeedCurrent with it: the set speed once the motor runs at the setting.
    private func setCurrent(_ percent: Int64, _ context: ClusterContext) {
        context.set(Attribute.percentCurrent, .uint(percent))
        guard let speedMax = speedMax(context) else { return }
        if percent == context.value(Attribute.percentSetting)?.integerValue,
            let setting = context.value(Attribute.speedSetting)?.integerValue
        {
            context.set(Attribute.speedCurrent, .uint(setting))
        } else {
            context.set(Attribute.speedCurrent, .uint(Self.speed(percent: percent, max: speedMax)))
        }
    }

    private func subset(_ value: TLVValue, of support: AttributeID, _ context: ClusterContext) -> InteractionStatus? {
        guard let bits = value.unsignedValue else { return InteractionStatus(.constraintError) }
        return bits & ~(context.unsigned(support) ?? 0) == 0 ? nil : InteractionStatus(.constraintError)
    }
}
