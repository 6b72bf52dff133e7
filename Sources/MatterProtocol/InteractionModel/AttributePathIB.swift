import MatterModel
import MatterTLV

/// AttributePathIB (Matter Core spec 10.6.2), a TLV list. An absent endpoint,
/// cluster or attribute is a wildcard.
public struct AttributePathIB: InformationBlock, CustomStringConvertible {
    /// The ListIndex field: a number addresses one list entry (not supported
    /// in this revision), null appends an entry (spec 10.6.4, AttributeDataIB list semantics).
    public enum ListIndex: Hashable, Sendable {
        case append
        case index(UInt16)
    }

    enum Tag {
        static let enableTagCompression: UInt8 = 0
        static let node: UInt8 = 1
        static let endpoint: UInt8 = 2
        static let cluster: UInt8 = 3
        static let attribute: UInt8 = 4
        static let listIndex: UInt8 = 5
        static let wildcardPathFlags: UInt8 = 6
    }

    public var enableTagCompression: Bool?
    public var node: NodeID?
    public var endpoint: EndpointNumber?
    public var cluster: ClusterID?
    public var attribute: AttributeID?
    public var listIndex: ListIndex?
    /// Matter 1.3 WildcardPathFlags bitmap (skip root node, global attributes, ...).
    public var wildcardPathFlags: UInt32?

    public init(
        enableTagCompression: Bool? = nil, node: NodeID? = nil, endpoint: EndpointNumber? = nil,
        cluster: ClusterID? = nil, attribute: AttributeID? = nil, listIndex: ListIndex? = nil,
        wildcardPathFlags: UInt32? = nil
    ) {
        self.enableTagCompression = enableTagCompression
        self.node = node
        self.endpoint = endpoint
        self.cluster = cluster
        self.attribute = attribute
        self.listIndex = listIndex
        self.wildcardPathFlags = wildcardPathFlags
    }

    /// The path of one concrete attribute.
    public init(_ path: AttributePath, listIndex: ListIndex? = nil) {
        self.init(endpoint: path.endpoint, cluster: path.cluster, attribute: path.attribute, listIndex: listIndex)
    }

    /// The concrete attribute this path names, or nil when any part is a wildcard.
    public var concretePath: AttributePath? {
        guard let endpoint, let cluster, let attribute else { return nil }
        return AttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute)
    }

    public var isWildcard: Bool { endpoint == nil || cluster == nil || attribute == nil }

    /// Whether a concrete attribute falls under this (possibly wildcard) path.
    public func matches(_ path: AttributePath) -> Bool {
        (endpoint ?? path.endpoint) == path.endpoint
            && (cluster ?? path.cluster) == path.cluster
            && (attribute ?? path.attribute) == path.attribute
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.enableTagCompression, bool: enableTagCompression)
        b.add(Tag.node, uint: node)
        b.add(Tag.endpoint, uint: endpoint)
        b.add(Tag.cluster, uint: cluster?.rawValue)
        b.add(Tag.attribute, uint: attribute?.rawValue)
        switch listIndex {
        case .none: break
        case .append: b.add(Tag.listIndex, .null)
        case .index(let i): b.add(Tag.listIndex, uint: i)
        }
        b.add(Tag.wildcardPathFlags, uint: wildcardPathFlags)
        return b.list
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .list)
        enableTagCompression = try r.bool(Tag.enableTagCompression, "enableTagCompression")
        node = try r.uint(Tag.node, "node")
        endpoint = try r.uint(Tag.endpoint, "endpoint")
        cluster = try r.uint(Tag.cluster, "cluster", as: UInt32.self).map(ClusterID.init(rawValue:))
        attribute = try r.uint(Tag.attribute, "attribute", as: UInt32.self).map(AttributeID.init(rawValue:))
        switch r.value(Tag.listIndex) {
        case .none: listIndex = nil
        case .null?: listIndex = .append
        default: listIndex = .index(try r.requiredUInt(Tag.listIndex, "listIndex"))
        }
        wildcardPathFlags = try r.uint(Tag.wildcardPathFlags, "wildcardPathFlags")
    }

    public var description: String {
        func part<T: CustomStringConvertible>(_ v: T?) -> String { v.map(\.description) ?? "*" }
        var text = "\(part(endpoint))/\(part(cluster))/\(part(attribute))"
        switch listIndex {
        case .none: break
        case .append: text += "[+]"
        case .index(let i): text += "[\(i)]"
        }
        return text
    }
}
