import MatterModel
import MatterTLV

/// Attributes every cluster instance has (Core spec 7.13 "Global Elements"),
/// derived from the model and the enabled features rather than described.
enum GlobalAttribute {
    static let generatedCommandList = Clusters.Global.Attribute.generatedCommandList
    static let acceptedCommandList = Clusters.Global.Attribute.acceptedCommandList
    static let attributeList = Clusters.Global.Attribute.attributeList
    static let featureMap = Clusters.Global.Attribute.featureMap
    static let clusterRevision = Clusters.Global.Attribute.clusterRevision

    static let all: Set<AttributeID> = [
        generatedCommandList, acceptedCommandList, attributeList, featureMap, clusterRevision,
    ]

    static func isGlobal(_ attribute: AttributeID) -> Bool { all.contains(attribute) }

    /// The global attribute values of a cluster instance whose other attributes are `present`.
    static func values(
        definition: ClusterDefinition,
        features: Set<String>,
        present: some Sequence<AttributeID>,
        accepted: [CommandID],
        generated: [CommandID]
    ) -> [AttributeID: TLVValue] {
        let attributeIDs = Set(present).union(all).sorted()
        return [
            clusterRevision: .uint(definition.revision),
            featureMap: .uint(definition.featureMap(codes: features)),
            attributeList: .arrayOf(attributeIDs.map { .uint($0.rawValue) }),
            acceptedCommandList: .arrayOf(accepted.map { .uint($0.rawValue) }),
            generatedCommandList: .arrayOf(generated.map { .uint($0.rawValue) }),
        ]
    }
}
