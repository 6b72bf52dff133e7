import MatterModel
import MatterTLV

/// A concrete command path (endpoint, cluster, command).
public struct ConcreteCommandPath: Hashable, Sendable, CustomStringConvertible {
    public var endpoint: EndpointNumber
    public var cluster: ClusterID
    public var command: CommandID

    public init(endpoint: EndpointNumber, cluster: ClusterID, command: CommandID) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.command = command
    }

    public var clusterPath: ClusterPath { ClusterPath(endpoint: endpoint, cluster: cluster) }
    public var description: String { "\(endpoint)/\(cluster)/\(command)" }
}

/// CommandPathIB (Matter Core spec 10.6.11), a TLV list. The endpoint is
/// absent only in group invokes.
public struct CommandPathIB: InformationBlock {
    enum Tag {
        static let endpoint: UInt8 = 0
        static let cluster: UInt8 = 1
        static let command: UInt8 = 2
    }

    public var endpoint: EndpointNumber?
    public var cluster: ClusterID
    public var command: CommandID

    public init(endpoint: EndpointNumber?, cluster: ClusterID, command: CommandID) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.command = command
    }

    public init(_ path: ConcreteCommandPath) {
        self.init(endpoint: path.endpoint, cluster: path.cluster, command: path.command)
    }

    public var concretePath: ConcreteCommandPath? {
        endpoint.map { ConcreteCommandPath(endpoint: $0, cluster: cluster, command: command) }
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.endpoint, uint: endpoint)
        b.add(Tag.cluster, uint: cluster.rawValue)
        b.add(Tag.command, uint: command.rawValue)
        return b.list
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .list)
        endpoint = try r.uint(Tag.endpoint, "endpoint")
        cluster = ClusterID(rawValue: try r.requiredUInt(Tag.cluster, "cluster"))
        command = CommandID(rawValue: try r.requiredUInt(Tag.command, "command"))
    }
}

/// CommandDataIB (spec 10.6.12): a command request, or a command's response.
public struct CommandDataIB: InformationBlock {
    enum Tag {
        static let path: UInt8 = 0
        static let fields: UInt8 = 1
        static let ref: UInt8 = 2
    }

    public var path: CommandPathIB
    /// The command's fields, a structure (absent when the command has none).
    public var fields: TLVValue?
    /// CommandRef: pairs requests with responses when one message carries several.
    public var ref: UInt16?

    public init(path: CommandPathIB, fields: TLVValue? = nil, ref: UInt16? = nil) {
        self.path = path
        self.fields = fields
        self.ref = ref
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.path, block: path)
        b.add(Tag.fields, fields)
        b.add(Tag.ref, uint: ref)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        path = try r.requiredBlock(Tag.path, "path")
        fields = r.value(Tag.fields)
        ref = try r.uint(Tag.ref, "ref")
    }
}

/// CommandStatusIB (spec 10.6.14): the status outcome of one command.
public struct CommandStatusIB: InformationBlock {
    enum Tag {
        static let path: UInt8 = 0
        static let status: UInt8 = 1
        static let ref: UInt8 = 2
    }

    public var path: CommandPathIB
    public var status: StatusIB
    public var ref: UInt16?

    public init(path: CommandPathIB, status: StatusIB, ref: UInt16? = nil) {
        self.path = path
        self.status = status
        self.ref = ref
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.path, block: path)
        b.add(Tag.status, block: status)
        b.add(Tag.ref, uint: ref)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        path = try r.requiredBlock(Tag.path, "path")
        status = try r.requiredBlock(Tag.status, "status")
        ref = try r.uint(Tag.ref, "ref")
    }
}

/// InvokeResponseIB (spec 10.6.13): a command response or a status, never both.
public enum InvokeResponseIB: InformationBlock {
    case command(CommandDataIB)
    case status(CommandStatusIB)

    enum Tag {
        static let command: UInt8 = 0
        static let status: UInt8 = 1
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        switch self {
        case .command(let c): b.add(Tag.command, block: c)
        case .status(let s): b.add(Tag.status, block: s)
        }
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        let command: CommandDataIB? = try r.block(Tag.command, "command")
        let status: CommandStatusIB? = try r.block(Tag.status, "status")
        switch (command, status) {
        case (let c?, nil): self = .command(c)
        case (nil, let s?): self = .status(s)
        default:
            throw IMDecodingError(.invalidCombination("needs exactly one of command and status"), field: "")
        }
    }

    /// The CommandRef this response answers.
    public var ref: UInt16? {
        switch self {
        case .command(let c): c.ref
        case .status(let s): s.ref
        }
    }
}
