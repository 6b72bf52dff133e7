import MatterModel
import MatterTLV

/// Boolean State cluster (Application Cluster spec 1.7): one true/false reading (for a
/// Contact Sensor, contact). A change raises StateChange (1.7.5.1).
final class BooleanStateServer: PhysicallyOperated {
    static let clusterID = Clusters.BooleanState.id

    typealias Attribute = Clusters.BooleanState.Attribute

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        attribute == Attribute.stateValue ? .bool(false) : nil
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .contact(let state) = action else { throw PhysicalActionError("Boolean State cannot \(action)") }
        guard context.bool(Attribute.stateValue) != state else { return }
        context.set(Attribute.stateValue, .bool(state))
        context.record(Clusters.BooleanState.Events.StateChange(stateValue: state))
    }
}
