import MatterModel
import MatterTLV

/// Basic Information cluster (Core spec 11.1): who made the node and what it runs.
/// The description supplies identity; anything it leaves out gets a neutral
/// default so every mandatory attribute is present.
final class BasicInformationServer: StandardClusterServer {
    static let clusterID = Clusters.BasicInformation.id

    typealias Attribute = Clusters.BasicInformation.Attribute

    /// Matter 1.4: data model revision 18, specification version 1.4.0.0 (11.1.5.22).
    static let dataModelRevision: UInt16 = 18
    static let specificationVersion = MatterSpecification.specificationVersion
    /// Test vendor and product IDs (Core spec 2.5.2), for nodes that give none.
    static let testVendorID = IDSpace.Prefix.test.lowerBound
    static let testProductID = IDSpace.testProductIDs.lowerBound

    private static let nodeLabelMaxLength = 32

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.dataModelRevision: .uint(Self.dataModelRevision)
        case Attribute.vendorName: .utf8("Matter Simulator")
        case Attribute.vendorID: .uint(Self.testVendorID)
        case Attribute.productName: .utf8("Simulated Device")
        case Attribute.productID: .uint(Self.testProductID)
        case Attribute.nodeLabel: .utf8("")
        // 11.1.5.7: "XX" when the location is unknown.
        case Attribute.location: .utf8("XX")
        case Attribute.hardwareVersion: .uint(0)
        case Attribute.hardwareVersionString: .utf8("0")
        case Attribute.softwareVersion: .uint(0)
        case Attribute.softwareVersionString: .utf8("0")
        // 11.1.5.20 CapabilityMinimaStruct: CaseSessionsPerFabric [0], SubscriptionsPerFabric [1], at least 3 each.
        case Attribute.capabilityMinima: .contextStructure([(0, .uint(3)), (1, .uint(3))])
        case Attribute.specificationVersion: .uint(Self.specificationVersion)
        case Attribute.maxPathsPerInvoke: .uint(1)
        // 11.1.5.19: a persistent random identifier; the persisted value replaces it on restart.
        case Attribute.uniqueID: .utf8(Self.randomUniqueID())
        default: nil
        }
    }

    /// NodeLabel is at most 32 bytes (11.1.5.6); Location is an ISO 3166-1 alpha-2
    /// code, exactly two characters (11.1.5.7).
    func validateWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> InteractionStatus? {
        switch attribute {
        case Attribute.nodeLabel:
            guard let label = value.stringValue else { return InteractionStatus(.invalidDataType) }
            return label.utf8.count <= Self.nodeLabelMaxLength ? nil : InteractionStatus(.constraintError)
        case Attribute.location:
            guard let location = value.stringValue else { return InteractionStatus(.invalidDataType) }
            return location.utf8.count == 2 ? nil : InteractionStatus(.constraintError)
        default:
            return nil
        }
    }

    private static func randomUniqueID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(UInt8.random(in: 0...15, using: &generator), radix: 16, uppercase: true) }.joined()
    }
}
