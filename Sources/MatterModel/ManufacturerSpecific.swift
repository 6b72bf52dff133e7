// Elements the spec leaves to manufacturers (Core spec 7.10 "Manufacturer Extensions"):
// cluster and attribute IDs with a vendor prefix. A clone of a real device serves them as
// dumped; the model knows nothing of them but their ID and the value's TLV shape.
import MatterTLV

extension ClusterID {
    /// A vendor's prefix (manufacturer or test) and a manufacturer-specific suffix.
    public var isManufacturerSpecific: Bool {
        IDSpace.isVendorPrefix(rawValue) && IDSpace.ClusterSuffix.manufacturer.contains(IDSpace.suffix(rawValue))
    }
}

extension AttributeID {
    /// A vendor's prefix (manufacturer or test) and a suffix below the global range.
    public var isManufacturerSpecific: Bool {
        IDSpace.isVendorPrefix(rawValue) && IDSpace.AttributeSuffix.nonGlobal.contains(IDSpace.suffix(rawValue))
    }

    /// A global attribute's ID (ClusterRevision, FeatureMap, …): the standard prefix, a global suffix.
    public var isGlobal: Bool {
        IDSpace.Prefix.standard.contains(IDSpace.prefix(rawValue)) && IDSpace.AttributeSuffix.global.contains(IDSpace.suffix(rawValue))
    }
}

extension IDSpace {
    /// A 32-bit ID's prefix: the vendor that defines it.
    public static func prefix(_ id: UInt32) -> UInt16 { UInt16(id >> 16) }
    /// A 32-bit ID's suffix: what kind of element it is.
    public static func suffix(_ id: UInt32) -> UInt16 { UInt16(truncatingIfNeeded: id) }
    /// A manufacturer's or a test vendor's prefix, not the standard's.
    static func isVendorPrefix(_ id: UInt32) -> Bool { Prefix.manufacturer.contains(prefix(id)) || Prefix.test.contains(prefix(id)) }
}

extension ClusterDefinition {
    /// A manufacturer-specific cluster: no features, no commands, the global attributes of
    /// `globalsFrom` (every cluster has the same five).
    public static func manufacturerSpecific(_ id: ClusterID, revision: UInt16, globalsFrom other: ClusterDefinition?) -> ClusterDefinition {
        ClusterDefinition(
            id: id, name: "ManufacturerSpecific" + hex(id.rawValue, width: 8).dropFirst(2), revision: revision,
            globalAttributes: other?.globalAttributes ?? [])
    }

    /// This definition plus a read-only attribute for each of `raw` it lacks, typed by the
    /// value's TLV shape, so reads and wildcard expansion treat them like any other.
    public func adding(rawAttributes raw: [AttributeID: TLVValue]) -> ClusterDefinition {
        var copy = self
        for (id, value) in raw.sorted(by: { $0.key < $1.key }) where attribute(id) == nil {
            copy.attributes.append(
                AttributeDefinition(
                    id: id, name: "Attribute" + hex(id.rawValue, width: 8).dropFirst(2), type: DataType.shape(of: value),
                    nullable: true, conformance: .optional))
        }
        return copy
    }
}

extension DataType {
    /// The widest type of a TLV value's shape (a dumped value states no width).
    public static func shape(of value: TLVValue) -> DataType {
        switch value {
        case .signed: .int(bits: 64)
        case .unsigned, .null: .uint(bits: 64)
        case .bool: .bool
        case .float: .single
        case .double: .double
        case .utf8: .string
        case .bytes: .octets
        case .structure: .structure("")
        case .array(let items), .list(let items): .list(items.first.map { shape(of: $0.value) } ?? .uint(bits: 64))
        }
    }
}

/// A cluster instance's global attributes as a real device serves them; nil: derived from
/// the model and the features, as for any simulated cluster.
public struct ServedGlobals: Sendable, Hashable {
    public var revision: UInt16?
    public var featureMap: UInt32?
    /// With a list, the instance has exactly these attributes (those without a value are left out).
    public var attributeList: [UInt32]?
    public var acceptedCommandList: [UInt32]?
    public var generatedCommandList: [UInt32]?

    public init(
        revision: UInt16? = nil, featureMap: UInt32? = nil, attributeList: [UInt32]? = nil,
        acceptedCommandList: [UInt32]? = nil, generatedCommandList: [UInt32]? = nil
    ) {
        self.revision = revision
        self.featureMap = featureMap
        self.attributeList = attributeList
        self.acceptedCommandList = acceptedCommandList
        self.generatedCommandList = generatedCommandList
    }

    public var isEmpty: Bool { self == ServedGlobals() }
}
