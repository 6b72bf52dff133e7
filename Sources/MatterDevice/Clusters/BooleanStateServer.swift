import MatterModel
import MatterTLV

/// Boolean State cluster (Application Cluster spec 1.7): one true/false reading (for a
/// Contact Sensor, contact; for a Water Leak Detector, water). A change raises StateChange
/// (1.7.5.1) and, with Boolean State Configuration beside it, sets off or ends its alarms.
final class BooleanStateServer: PhysicallyOperated {
    static let clusterID = Clusters.BooleanState.id

    typealias Attribute = Clusters.BooleanState.Attribute

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        attribute == Attribute.stateValue ? .bool(false) : nil
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        let state: Bool
        switch action {
        case .contact(let contact): state = contact
        case .leak(let wet): state = wet
        default: throw PhysicalActionError("Boolean State cannot \(action)")
        }
        guard context.bool(Attribute.stateValue) != state else { return }
        context.set(Attribute.stateValue, .bool(state))
        context.record(Clusters.BooleanState.Events.StateChange(stateValue: state))
        if let alarm = context.peer(BooleanStateConfigurationServer.self) {
            alarm.server.sensorChanged(triggered: state, context: alarm.context)
        }
    }
}
