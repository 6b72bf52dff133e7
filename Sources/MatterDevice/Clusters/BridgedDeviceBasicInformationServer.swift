import MatterModel
import MatterProtocol
import MatterTLV

/// Bridged Device Basic Information cluster (Core spec 9.13) on a bridged node's endpoint: who
/// the device behind the bridge is, and whether the bridge reaches it. Unplugging the device
/// (`matter-sim act NODE unplug 2`) sets Reachable false and raises ReachableChanged (9.13.5.1);
/// plugging it back in sets it true again. Removing it from the bridge (`remove-bridged 2`)
/// raises Leave (9.13.5.3) and takes its endpoint out of the node and of every PartsList (the
/// Descriptors report it); `add-bridged 2` puts it back. Removal is not kept across a restart.
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
        switch action {
        case .bridged(let endpoint, let reachable) where endpoint == context.endpoint:
            guard !context.runtime.composition.absent.contains(endpoint) else {
                throw PhysicalActionError("bridged device \(endpoint) is not on the bridge (add-bridged \(endpoint) first)")
            }
            setReachable(reachable, context)
        case .bridgedPresence(let endpoint, let present) where endpoint == context.endpoint:
            guard context.layout.endpoint(endpoint)?.deviceTypes.contains(where: { $0.id == DeviceTypes.bridgedNode }) == true else {
                throw PhysicalActionError("endpoint \(endpoint) is not a bridged node")
            }
            if !present, !context.runtime.composition.absent.contains(endpoint) {
                context.recordEvent(Event.leave, priority: .info, fields: [])
                setReachable(false, context)
            }
            guard context.runtime.composition.absent.set(endpoint, absent: !present) else { return }
            if present { setReachable(true, context) }
            context.runtime.refreshPartsLists()
        default:
            throw PhysicalActionError("Bridged Device Basic Information cannot \(action)")
        }
    }

    private func setReachable(_ reachable: Bool, _ context: ClusterContext) {
        guard context.bool(Attribute.reachable) != reachable else { return }
        context.set(Attribute.reachable, .bool(reachable))
        context.record(Clusters.BridgedDeviceBasicInformation.Events.ReachableChanged(reachableNewValue: reachable))
    }
}
