import MatterModel
import MatterTLV

/// Identify cluster (Application Cluster spec 1.2): IdentifyTime counts down once a
/// second while the device identifies itself.
final class IdentifyServer: IdentifyHandler {
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

    /// TriggerEffect's fields reach the server unchecked: an EffectVariant it does not know is
    /// not a constraint error (1.2.6.2.2), so the model's enum check is its decoding's here.
    func answersConstraintErrors(_ command: CommandID) -> Bool { command == Command.triggerEffect }

    func startUp(_ context: ClusterContext) {
        restartCountdown(context)
    }

    func didWrite(_ attribute: AttributeID, context: ClusterContext) {
        if attribute == Attribute.identifyTime { restartCountdown(context) }
    }

    /// 1.2.6.1: starts, restarts or (with 0) stops identification.
    func identify(_ request: Clusters.Identify.Commands.Identify, context: ClusterContext) -> InteractionStatus {
        context.set(Attribute.identifyTime, .uint(request.identifyTime))
        restartCountdown(context)
        return .success
    }

    /// 1.2.6.2: an effect identifier outside the enum is a constraint error (the decoding's).
    func triggerEffect(_ request: Clusters.Identify.Commands.TriggerEffect, context: ClusterContext) -> InteractionStatus {
        trigger(request.effectIdentifier, context: context)
        return .success
    }

    /// An EffectVariant the server does not know is no error: the effect runs as its default
    /// variant (1.2.6.2.2; TC-I-2.3 step 3a). Every other decoding error is the decoding's.
    func reply(to error: TLVDecodingError, decoding command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        guard command == Command.triggerEffect, case .unknownEnumValue = error.problem, error.field.hasPrefix("EffectVariant"),
            case .structure(let elements) = fields.value,
            let request = try? Clusters.Identify.Commands.TriggerEffect(
                tlv: .structure(elements.map { $0.tag == .context(1) ? TLVElement(tag: .context(1), .uint(0)) : $0 }))
        else { return .failure(error.status) }
        return .status(triggerEffect(request, context: context))
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
