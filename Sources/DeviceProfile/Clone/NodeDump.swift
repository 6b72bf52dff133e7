// A node dump as people have them: Home Assistant's Matter server node JSON
// (`{"node_id": …, "attributes": {"EP/CLUSTER/ATTR": value}}`) or Home Assistant's
// diagnostics file, which holds that node under `data.node`. Values stay JSON here; the
// cloner decodes them by the model's types.
import MatterModel
import MatterTLV

/// Why a dump cannot be cloned: where (a file, a JSON path, an attribute path) and what was expected.
public struct CloneError: Error, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }
    public var description: String { "\(path): \(message)" }
}

public struct NodeDump: Sendable {
    public enum Format: String, Sendable {
        case matterServerNode = "Home Assistant Matter server node"
        case diagnostics = "Home Assistant diagnostics"
    }

    public var format: Format
    public var nodeID: UInt64?
    /// Every dumped attribute, keyed by its path.
    public var attributes: [AttributePath: DumpJSON]

    public init(format: Format, nodeID: UInt64?, attributes: [AttributePath: DumpJSON]) {
        self.format = format
        self.nodeID = nodeID
        self.attributes = attributes
    }

    /// Reads a dump; `file` names it in errors.
    public static func read(_ text: String, file: String) throws(CloneError) -> NodeDump {
        let root: DumpJSON
        do {
            root = try DumpJSONParser.parse(text)
        } catch {
            throw CloneError(path: file, message: "not JSON (\(error)); expected a Home Assistant Matter node dump or diagnostics file")
        }
        if let node = root["data"]?["node"] {
            return try read(node: node, format: .diagnostics, at: "\(file): data.node")
        }
        if root["attributes"] != nil {
            return try read(node: root, format: .matterServerNode, at: file)
        }
        throw CloneError(
            path: file,
            message:
                "not a node dump: expected an object with \"attributes\" (Home Assistant's Matter server node) or \"data\": {\"node\": …} (Home Assistant diagnostics), got \(root.kind)"
        )
    }

    private static func read(node: DumpJSON, format: Format, at path: String) throws(CloneError) -> NodeDump {
        guard case .object(let entries)? = node["attributes"] else {
            throw CloneError(path: "\(path).attributes", message: "expected an object of \"ENDPOINT/CLUSTER/ATTRIBUTE\": value, got \(node["attributes"]?.kind ?? "nothing")")
        }
        var attributes: [AttributePath: DumpJSON] = [:]
        for (key, value) in entries {
            let parts = key.split(separator: "/", omittingEmptySubsequences: false)
            guard parts.count == 3, let endpoint = UInt16(parts[0]), let cluster = UInt32(parts[1]), let attribute = UInt32(parts[2]) else {
                throw CloneError(path: "\(path).attributes[\"\(key)\"]", message: "expected a key ENDPOINT/CLUSTER/ATTRIBUTE of decimal numbers")
            }
            attributes[AttributePath(endpoint: endpoint, cluster: ClusterID(cluster), attribute: AttributeID(attribute))] = value
        }
        guard !attributes.isEmpty else {
            throw CloneError(path: "\(path).attributes", message: "expected the node's attributes, got none")
        }
        let nodeID = node["node_id"]?.integer.flatMap { $0.negative ? nil : $0.magnitude }
        return NodeDump(format: format, nodeID: nodeID, attributes: attributes)
    }

    public var endpoints: [EndpointNumber] { Set(attributes.keys.map(\.endpoint)).sorted() }

    public func clusters(on endpoint: EndpointNumber) -> [ClusterID] {
        Set(attributes.keys.filter { $0.endpoint == endpoint }.map(\.cluster)).sorted()
    }

    public func attributes(of endpoint: EndpointNumber, _ cluster: ClusterID) -> [(AttributeID, DumpJSON)] {
        attributes.filter { $0.key.endpoint == endpoint && $0.key.cluster == cluster }.map { ($0.key.attribute, $0.value) }
            .sorted { $0.0 < $1.0 }
    }

    /// A dumped value as TLV: by the model's type where it knows the attribute, else by its shape.
    public func decodedValue(_ path: AttributePath, model: MatterModel = .standard) -> TLVValue? {
        guard let json = attributes[path] else { return nil }
        if let cluster = model.cluster(path.cluster), let attribute = cluster.attribute(path.attribute) {
            return try? DumpValueDecoder(cluster: cluster).decode(json, type: attribute.type)
        }
        return try? DumpValueDecoder.infer(json)
    }

    public func value(_ endpoint: EndpointNumber, _ cluster: UInt32, _ attribute: UInt32) -> DumpJSON? {
        attributes[AttributePath(endpoint: endpoint, cluster: ClusterID(cluster), attribute: AttributeID(attribute))]
    }
}
