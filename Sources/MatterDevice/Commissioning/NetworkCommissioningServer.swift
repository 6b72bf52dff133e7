import MatterModel
import MatterTLV

/// Network Commissioning cluster (Core spec 11.9) for an Ethernet interface (feature ET):
/// one network, always connected, nothing to configure.
final class NetworkCommissioningServer: StandardClusterServer {
    static let clusterID = Clusters.NetworkCommissioning.id

    typealias Attribute = Clusters.NetworkCommissioning.Attribute

    private let interface: NetworkInterfaceInfo

    init(interface: NetworkInterfaceInfo) {
        self.interface = interface
    }

    /// The NetworkID of an Ethernet network is the interface name (11.9.5.2), 1 to 32 bytes.
    var networkID: [UInt8] {
        let name = Array(interface.name.utf8.prefix(32))
        return name.isEmpty ? Array("ethernet".utf8) : name
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.maxNetworks: .uint(1)
        // NetworkInfoStruct: NetworkID [0], Connected [1].
        case Attribute.networks: .arrayOf([.contextStructure([(0, .bytes(networkID)), (1, .bool(true))])])
        case Attribute.interfaceEnabled: .bool(true)
        // Null until a network operation ran (11.9.6.5-7); Ethernet has none.
        case Attribute.lastNetworkingStatus, Attribute.lastNetworkID, Attribute.lastConnectErrorValue: .null
        default: nil
        }
    }
}
