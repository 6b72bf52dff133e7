import MatterModel
import MatterTLV

/// Switch cluster (Application Cluster spec 1.13). A latching switch moves to its next
/// position and raises SwitchLatched. A momentary switch plays a press out on the node
/// clock as the spec's event flows describe (1.13.9): InitialPress on the first press,
/// MultiPressOngoing on the next ones (MSM without AS), ShortRelease on each release
/// (MSR), LongPress and LongRelease for a held press (MSL), and MultiPressComplete once
/// no further press came within the multi-press window (MSM; not after a long press).
final class SwitchServer: PhysicallyOperated {
    static let clusterID = Clusters.Switch.id

    typealias Feature = Clusters.Switch.Feature
    typealias Attribute = Clusters.Switch.Attribute
    typealias Events = Clusters.Switch.Events

    /// How long a short press holds the button down, the pause between presses of a
    /// multi-press, how long a held press lasts past the long-press threshold, and the
    /// quiet time after a release that ends a multi-press.
    static let pressHold = Duration.milliseconds(100)
    static let pressGap = Duration.milliseconds(150)
    static let longPressThreshold = Duration.milliseconds(700)
    static let longHold = Duration.milliseconds(1_200)
    static let multiPressWindow = Duration.milliseconds(400)

    /// The position a press moves a momentary switch to.
    static let pressedPosition: UInt64 = 1

    private static let stepTimer = "press"

    private enum Step {
        case press(number: Int)
        case longPressed
        case release(number: Int, long: Bool)
        case complete(total: Int)
    }

    private let features: Set<String>
    /// The rest of the press being played out, each with its delay after the previous step.
    private var pending: [(delay: Duration, step: Step)] = []

    init(features: Set<String>) {
        self.features = features
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.numberOfPositions: .uint(2)
        case Attribute.currentPosition: .uint(0)
        case Attribute.multiPressMax: features.contains(Feature.momentarySwitchMultiPress) ? .uint(2) : nil
        default: nil
        }
    }

    /// A press in progress is cut short by a power loss: the switch starts released.
    func startUp(_ context: ClusterContext) {
        if features.contains(Feature.momentarySwitch) { context.set(Attribute.currentPosition, .uint(0)) }
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .press(let press) = action else { throw PhysicalActionError("Switch cannot \(action)") }
        if features.contains(Feature.latchingSwitch) {
            let positions = max(2, context.unsigned(Attribute.numberOfPositions) ?? 2)
            let count = if case .short(let n) = press { n } else { 1 }
            // Each press moves the switch one position on: more presses than it has positions
            // only go round again (and an unbounded count spun the node's executor).
            guard count >= 1, UInt64(count) < positions else {
                throw PhysicalActionError(
                    "this latching switch has \(positions) positions: 1 to \(positions - 1) presses move it on, not \(count)")
            }
            var position = context.unsigned(Attribute.currentPosition) ?? 0
            for _ in 0..<count {
                position = (position % positions + 1) % positions
                context.set(Attribute.currentPosition, .uint(position))
                context.record(Events.SwitchLatched(newPosition: UInt8(clamping: position)))
            }
            return
        }
        guard features.contains(Feature.momentarySwitch) else {
            throw PhysicalActionError("this switch declares neither LatchingSwitch nor MomentarySwitch")
        }
        guard pending.isEmpty else { throw PhysicalActionError("the switch is still being pressed") }
        switch press {
        case .long:
            pending = [(.zero, .press(number: 1))]
            if features.contains(Feature.momentarySwitchLongPress) { pending.append((Self.longPressThreshold, .longPressed)) }
            pending.append(
                (
                    features.contains(Feature.momentarySwitchLongPress) ? Self.longHold - Self.longPressThreshold : Self.longHold,
                    .release(number: 1, long: true)
                ))
        case .short(let count):
            let most =
                features.contains(Feature.momentarySwitchMultiPress) ? Int(clamping: context.unsigned(Attribute.multiPressMax) ?? 2) : 1
            guard count >= 1, count <= most else {
                throw PhysicalActionError("this switch counts 1 to \(most) presses in a row, not \(count)")
            }
            pending = []
            for number in 1...count {
                pending.append((number == 1 ? .zero : Self.pressGap, .press(number: number)))
                pending.append((Self.pressHold, .release(number: number, long: false)))
            }
            if features.contains(Feature.momentarySwitchMultiPress) { pending.append((Self.multiPressWindow, .complete(total: count))) }
        }
        runSteps(context)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.stepTimer, !pending.isEmpty else { return }
        pending[0].delay = .zero
        runSteps(context)
    }

    /// Runs every step due now and sets the timer for the next one.
    private func runSteps(_ context: ClusterContext) {
        while let next = pending.first {
            guard next.delay == .zero else {
                context.startTimer(Self.stepTimer, after: next.delay)
                return
            }
            pending.removeFirst()
            run(next.step, context)
        }
    }

    private func run(_ step: Step, _ context: ClusterContext) {
        let position = UInt8(clamping: Self.pressedPosition)
        switch step {
        case .press(let number):
            context.set(Attribute.currentPosition, .uint(position))
            // Every press starts with InitialPress; a later press of a multi-press sequence adds
            // MultiPressOngoing (1.13.7.2, 1.13.7.6; TC-SWTCH-2.5 step 5a). An Action Switch (AS)
            // reports only the sequence's first press and its completion.
            if number == 1 || !features.contains(Feature.actionSwitch) {
                context.record(Events.InitialPress(newPosition: position))
            }
            if number > 1, features.contains(Feature.momentarySwitchMultiPress), !features.contains(Feature.actionSwitch) {
                context.record(Events.MultiPressOngoing(newPosition: position, currentNumberOfPressesCounted: UInt8(clamping: number)))
            }
        case .longPressed:
            context.record(Events.LongPress(newPosition: position))
        case .release(_, let long):
            context.set(Attribute.currentPosition, .uint(0))
            if long, features.contains(Feature.momentarySwitchLongPress) {
                context.record(Events.LongRelease(previousPosition: position))
            } else if features.contains(Feature.momentarySwitchRelease) {
                context.record(Events.ShortRelease(previousPosition: position))
            }
        case .complete(let total):
            context.record(Events.MultiPressComplete(previousPosition: position, totalNumberOfPressesCounted: UInt8(clamping: total)))
        }
    }
}
