import MatterModel
import MatterTLV

/// ClusterPathIB (Matter Core spec 10.6.7), a TLV list naming one cluster instance.
public struct ClusterPathIB: InformationBlock {
    enum Tag {
        static let node: UInt8 = 0
        static let endpoint: UInt8 = 1
        static let cluster: UInt8 = 2
    }

    public var node: NodeID?
    public var endpoint: EndpointNumber
    public var cluster: ClusterID

    public init(node: NodeID? = nil, endpoint: EndpointNumber, cluster: ClusterID) {
        self.node = node
        self.endpoint = endpoint
        self.cluster = cluster
    }

    public init(_ path: ClusterPath) {
        self.init(endpoint: path.endpoint, cluster: path.cluster)
    }

    public var clusterPath: ClusterPath { ClusterPath(endpoint: endpoint, cluster: cluster) }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.node, uint: node)
        b.add(Tag.endpoint, uint: endpoint)
        b.add(Tag.cluster, uint: cluster.rawValue)
        return b.list
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .list)
        node = try r.uint(Tag.node, "node")
        endpoint = try r.requiredUInt(Tag.endpoint, "endpoint")
        cluster = ClusterID(rawValue: try r.requiredUInt(Tag.cluster, "cluster"))
    }
}

/// DataVersionFilterIB (spec 10.6.3): the client already holds this version of
/// the cluster, so its attribute data need not be sent again.
public struct DataVersionFilterIB: InformationBlock {
    enum Tag {
        static let path: UInt8 = 0
        static let dataVersion: UInt8 = 1
    }

    public var path: ClusterPathIB
    public var dataVersion: DataVersion

    public init(path: ClusterPathIB, dataVersion: DataVersion) {
        self.path = path
        self.dataVersion = dataVersion
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.path, block: path)
        b.add(Tag.dataVersion, uint: dataVersion)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        path = try r.requiredBlock(Tag.path, "path")
        dataVersion = try r.requiredUInt(Tag.dataVersion, "dataVersion")
    }
}
