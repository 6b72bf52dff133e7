import MatterModel
import MatterTLV

/// Identify cluster (Application Cluster spec 1.2): IdentifyTime counts down once a
/// second while the device identifies itself.
final class IdentifyServer: StandardClusterServer {
    static let clusterID = Clusters.Identify.id

    typealias Attribute = Clusters.Identify.Attribute
    typealias Command = Clusters.Identify.Command

    /// EffectIdentifierEnum (1.2.5.1).
    typealias Effect = Clusters.Identify.EffectIdentifierEnum

    private static let countdown = "countdown"
    private static let effectTimer = "effect"

    /// The trigger effect running now, if any (not an attribute; for logs and tests).
    private(set) var activeEffect: Effect?

    func handles(_ command: CommandID) -> Bool {
        command == Command.identify || command == Command.triggerEffect
    }

    /// TriggerEffect checks its own fields: an EffectVariant the server does not know is not
    /// a constraint error but the default variant (1.2.6.2.2, TC-I-2.3 step 3a).
    func answersConstraintErrors(_ command: CommandID) -> Bool { command == Command.triggerEffect }

    func startUp(_ context: ClusterContext) {
        restartCountdown(context)
    }

    func didWrite(_ attribute: AttributeID, context: ClusterContext) {
        if attribute == Attribute.identifyTime { restartCountdown(context) }
    }

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        switch command {
        case Command.identify:
            // 1.2.6.1: starts, restarts or (with 0) stops identification.
            guard let time = fields.unsigned(0), time <= UInt64(UInt16.max) else { return .failure(.invalidCommand) }
            context.set(Attribute.identifyTime, .uint(time))
            restartCountdown(context)
            return .success
        case Command.triggerEffect:
            // 1.2.6.2: an effect identifier outside the enum is a constraint error; any variant
            // runs as the default one (a simulated effect has no variants to show).
            guard let raw = fields.unsigned(0), let effect = UInt8(exactly: raw).flatMap(Effect.init(rawValue:)) else {
                return .failure(.constraintError)
            }
            trigger(effect, context: context)
            return .success
        default:
            return .failure(.unsupportedCommand)
        }
    }

    func timerFired(_ name: String, context: ClusterContext) {
        switch name {
        case Self.countdown:
            let remaining = context.unsigned(Attribute.identifyTime) ?? 0
            let next = remaining > 0 ? remaining - 1 : 0
            // A second of the countdown is progress: only its end is reported (Q).
            context.set(Attribute.identifyTime, .uint(next), .progress)
            if next > 0 { context.startTimer(Self.countdown, after: .seconds(1)) }
        case Self.effectTimer:
            context.logger.info("endpoint \(context.endpoint): identify effect \(String(describing: activeEffect)) ended")
            activeEffect = nil
        default:
            break
        }
    }

    private func restartCountdown(_ context: ClusterContext) {
        if (context.unsigned(Attribute.identifyTime) ?? 0) > 0 {
            context.startTimer(Self.countdown, after: .seconds(1))
        } else {
            context.cancelTimer(Self.countdown)
        }
    }

    private func trigger(_ effect: Effect, context: ClusterContext) {
        switch effect {
        case .finishEffect, .stopEffect:
            // Finish lets the current cycle end, stop ends it now; with no visible
            // cycles in a simulation both end the effect at once.
            context.cancelTimer(Self.effectTimer)
            activeEffect = nil
        default:
            activeEffect = effect
            context.logger.info("endpoint \(context.endpoint): identify effect \(effect)")
            context.startTimer(Self.effectTimer, after: effect.duration)
        }
    }
}

extension Clusters.Identify.EffectIdentifierEnum {
    /// How long a simulated effect lasts; the spec leaves it to the device.
    var duration: Duration {
        switch self {
        case .blink, .okay: .seconds(1)
        case .breathe: .seconds(15)
        case .channelChange: .seconds(8)
        case .finishEffect, .stopEffect: .zero
        }
    }
}
