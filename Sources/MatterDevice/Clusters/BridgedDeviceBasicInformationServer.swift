import MatterModel
import MatterProtocol
import MatterTLV

/// Bridged Device Basic Information cluster (Core spec 9.13) on a bridged node's endpoint: who
/// the device behind the bridge is, and whether the bridge reaches it. Unplugging the device
/// (`matter-sim act NODE unplug 2`) sets Reachable false and raises ReachableChanged (9.13.5.1);
/// plugging it back in sets it true again.
final class BridgedDeviceBasicInformationServer: PhysicallyOperated {
    static let clusterID = Clusters.BridgedDeviceBasicInformation.id

    typealias Attribute = Clusters.BridgedDeviceBasicInformation.Attribute
    typealias Event = Clusters.BridgedDeviceBasicInformation.Event

    private let uniqueID: String

    /// UniqueID (9.13.4: mandatory since 1.4) from the endpoint, unless the profile gives one.
    init(endpoint: EndpointNumber) {
        uniqueID = "bridged-\(endpoint)"
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.reachable: .bool(true)
        case Attribute.uniqueID: .utf8(uniqueID)
        default: nil
        }
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .bridged(let endpoint, let reachable) = action, endpoint == context.endpoint else {
            throw PhysicalActionError("Bridged Device Basic Information cannot \(action)")
        }
        guard context.bool(Attribute.reachable) != reachable else { return }
        context.set(Attribute.reachable, .bool(reachable))
        context.recordEvent(Event.reachableChanged, priority: .info, fields: [TLVElement(tag: .context(0), .bool(reachable))])
    }
}
