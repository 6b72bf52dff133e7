import MatterModel
import MatterTLV

/// Descriptor cluster (Core spec 9.5): what an endpoint is and what it contains.
/// All values derive from the node's layout.
final class DescriptorServer: StandardClusterServer {
    static let clusterID = Clusters.Descriptor.id

    typealias Attribute = Clusters.Descriptor.Attribute

    private let endpoint: NodeLayout.Endpoint?
    private let parts: [EndpointNumber]

    init(endpoint number: EndpointNumber, layout: NodeLayout, instance: ClusterInstanceDescription) {
        endpoint = layout.endpoint(number)
        parts = layout.parts(of: number)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.deviceTypeList:
            // DeviceTypeStruct (9.5.5.1): DeviceType [0], Revision [1].
            return TLVValue.arrayOf(
                (endpoint?.deviceTypes ?? []).map { (deviceType: DeviceTypeInstance) -> TLVValue in
                    TLVValue.contextStructure([(0, .uint(deviceType.id.rawValue)), (1, .uint(deviceType.revision))])
                })
        case Attribute.serverList:
            return TLVValue.arrayOf((endpoint?.serverClusters ?? []).map { .uint($0.rawValue) })
        case Attribute.clientList:
            return TLVValue.arrayOf((endpoint?.clientClusters ?? []).map { .uint($0.rawValue) })
        case Attribute.partsList:
            return TLVValue.arrayOf(parts.map { .uint($0) })
        default:
            // TagList only when the description gives it (with the TAGLIST feature).
            return nil
        }
    }
}
