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
protocol ResourceMonitoringServer: PhysicallyOperated {
    /// The filter this cluster watches.
    static var kind: FilterKind { get }
    /// The life left in percent, finer than Condition's whole percents.
    var remaining: Double { get set }
}

/// HEPA Filter Monitoring: ResetCondition arrives through its generated typed handler.
final class HepaFilterMonitoringServer: ResourceMonitoringServer, HepaFilterMonitoringHandler {
    static let kind = FilterKind.hepa
    var remaining = 100.0

    func resetCondition(_ request: Clusters.HepaFilterMonitoring.Commands.ResetCondition, context: ClusterContext) -> InteractionStatus {
        reset(context)
        return .success
    }
}

/// Activated Carbon Filter Monitoring: the same behaviour under its own cluster ID and handler.
final class ActivatedCarbonFilterMonitoringServer: ResourceMonitoringServer, ActivatedCarbonFilterMonitoringHandler {
    static let kind = FilterKind.carbon
    var remaining = 100.0

    func resetCondition(
        _ request: Clusters.ActivatedCarbonFilterMonitoring.Commands.ResetCondition, context: ClusterContext
    ) -> InteractionStatus {
        reset(context)
        return .success
    }
}

// Both filter clusters share these IDs and enums (2.8.6).
private typealias Attribute = Clusters.HepaFilterMonitoring.Attribute
private typealias Indication = Clusters.HepaFilterMonitoring.ChangeIndicationEnum
private let wearTimer = "wear"

extension ResourceMonitoringServer {
    static var wearTick: Duration { .seconds(60) }
    static var warningBelow: Int64 { 10 }

    var kind: FilterKind { Self.kind }

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
        context.startTimer(wearTimer, after: Self.wearTick)
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .replaceFilter(let kind) = action, kind == self.kind else {
            throw PhysicalActionError("\(kind) filter cannot \(action)")
        }
        reset(context)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == wearTimer else { return }
        context.startTimer(wearTimer, after: Self.wearTick)
        let running = context.peer(FanControlServer.self)?.context.unsigned(Clusters.FanControl.Attribute.percentCurrent) ?? 0
        guard running > 0, remaining > 0 else { return }
        let share = Double(Self.wearTick.totalMilliseconds) / Double(kind.lifetime.totalMilliseconds)
        remaining = max(0, remaining - 100 * share * Double(min(running, 100)) / 100)
        publish(context)
    }

    fileprivate func reset(_ context: ClusterContext) {
        remaining = 100
        publish(context)
    }

    /// Condition in whole percents (rounded up: a filter with any life left is not at 0) and
    /// the indication it gives.
    fileprivate func publish(_ context: ClusterContext) {
        let condition = Int64(remaining.rounded(.up))
        context.set(Attribute.condition, .uint(condition))
        let indication: Indication = condition <= 0 ? .critical : condition < Self.warningBelow ? .warning : .ok
        context.set(Attribute.changeIndication, .uint(indication.rawValue))
    }
}
