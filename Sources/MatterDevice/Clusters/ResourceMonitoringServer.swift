import MatterModel
import MatterTLV

/// The filters an air purifier holds: one Resource Monitoring cluster each (Application
/// Cluster spec 2.8: one definition, one cluster ID per resource).
public enum FilterKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case hepa, carbon

    public var description: String { rawValue }

    var clusterID: ClusterID {
        self == .hepa ? Clusters.HepaFilterMonitoring.id : Clusters.ActivatedCarbonFilterMonitoring.id
    }

    /// How long the filter lasts with the fan at full speed (a slower fan wears it slower).
    var lifetime: Duration {
        self == .hepa ? .seconds(2_000 * 3_600) : .seconds(1_000 * 3_600)
    }

    init?(clusterID: ClusterID) {
        guard let found = Self.allCases.first(where: { $0.clusterID == clusterID }) else { return nil }
        self = found
    }
}

/// A filter's Resource Monitoring cluster (HEPA or Activated Carbon Filter Monitoring,
/// Application Cluster spec 2.8): the filter wears while the endpoint's fan runs, in
/// proportion to its PercentCurrent, checked every minute on the node clock; Condition (the
/// life left, DegradationDirection Down) falls from 100 %, ChangeIndication turns Warning below
/// 10 % and Critical at 0. ResetCondition (2.8.7.1), or replacing the filter by hand
/// (`act NODE replace hepa`), puts in a new one: Condition 100, ChangeIndication Ok.
final class ResourceMonitoringServer: PhysicallyOperable {
    // Both filter clusters share these IDs and enums (2.8.6).
    typealias Attribute = Clusters.HepaFilterMonitoring.Attribute
    typealias Indication = Clusters.HepaFilterMonitoring.ChangeIndicationEnum

    static let wearTick = Duration.seconds(60)
    private static let wearTimer = "wear"
    static let warningBelow: Int64 = 10

    let kind: FilterKind
    /// The life left in percent, finer than Condition's whole percents.
    private var remaining = 100.0

    init(kind: FilterKind) {
        self.kind = kind
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.condition: .uint(100)
        case Attribute.degradationDirection: .uint(Clusters.HepaFilterMonitoring.DegradationDirectionEnum.down.rawValue)
        case Attribute.changeIndication: .uint(Indication.ok.rawValue)
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool { command == Clusters.HepaFilterMonitoring.Command.resetCondition }

    func startUp(_ context: ClusterContext) {
        if let condition = context.value(Attribute.condition)?.integerValue { remaining = Double(condition.clamped(to: 0...100)) }
        publish(context)
        context.startTimer(Self.wearTimer, after: Self.wearTick)
    }

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        guard command == Clusters.HepaFilterMonitoring.Command.resetCondition else { return .failure(.unsupportedCommand) }
        reset(context)
        return .success
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .replaceFilter(let kind) = action, kind == self.kind else {
            throw PhysicalActionError("\(kind) filter cannot \(action)")
        }
        reset(context)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.wearTimer else { return }
        context.startTimer(Self.wearTimer, after: Self.wearTick)
        let running = context.peer(FanControlServer.self)?.context.unsigned(Clusters.FanControl.Attribute.percentCurrent) ?? 0
        guard running > 0, remaining > 0 else { return }
        let share = Double(Self.wearTick.totalMilliseconds) / Double(kind.lifetime.totalMilliseconds)
        remaining = max(0, remaining - 100 * share * Double(min(running, 100)) / 100)
        publish(context)
    }

    private func reset(_ context: ClusterContext) {
        remaining = 100
        publish(context)
    }

    /// Condition in whole percents (rounded up: a filter with any life left is not at 0) and
    /// the indication it gives.
    private func publish(_ context: ClusterContext) {
        let condition = Int64(remaining.rounded(.up))
        context.set(Attribute.condition, .uint(condition))
        let indication: Indication = condition <= 0 ? .critical : condition < Self.warningBelow ? .warning : .ok
        context.set(Attribute.changeIndication, .uint(indication.rawValue))
    }
}
