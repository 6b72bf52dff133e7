import MatterModel
import MatterProtocol
import MatterTLV

/// A trait: the Home APIs' name for a Matter cluster on one endpoint of a device.
public protocol Trait: Hashable, Sendable {
    /// Stable name, e.g. "home.matter.6789.clusters.0006".
    static var identifier: String { get }
    var metadata: TraitMetadata { get }
}

/// Namespace of the Matter-derived traits, as `Matter.OnOffTrait`.
public enum Matter {}

/// Where a trait's data and commands live: one cluster on one endpoint of a node, with
/// the attribute values last reported. The engine is not part of its identity.
struct TraitContext: Sendable, Hashable {
    let deviceID: String
    let nodeID: UInt64
    let endpoint: EndpointNumber
    let cluster: ClusterID
    let attributes: [AttributeID: TLVValue]
    let connectivity: SourceConnectivity
    let engine: HomeEngine?
    /// Set for a device group's trait (`deviceID` is then the group's ID): commands and
    /// writes go to every member.
    var groupID: String? = nil

    static func == (a: TraitContext, b: TraitContext) -> Bool {
        a.deviceID == b.deviceID && a.endpoint == b.endpoint && a.cluster == b.cluster && a.attributes == b.attributes
            && a.connectivity == b.connectivity
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(deviceID)
        hasher.combine(endpoint)
        hasher.combine(cluster)
        hasher.combine(attributes)
        hasher.combine(connectivity)
    }

    var metadata: TraitMetadata { TraitMetadata(sourceConnectivity: connectivity) }

    func uint<T: FixedWidthInteger>(_ id: UInt32, as: T.Type = T.self) -> T? {
        attributes[AttributeID(id)]?.uintValue.flatMap { T(exactly: $0) }
    }
    func int<T: FixedWidthInteger>(_ id: UInt32, as: T.Type = T.self) -> T? {
        attributes[AttributeID(id)]?.intValue.flatMap { T(exactly: $0) }
    }
    func bool(_ id: UInt32) -> Bool? { attributes[AttributeID(id)]?.boolValue }
    func string(_ id: UInt32) -> String? { attributes[AttributeID(id)]?.stringValue }
    func float(_ id: UInt32) -> Float? { attributes[AttributeID(id)]?.floatValue }
    /// A nullable unsigned attribute: nil when null or absent.
    func nullableUInt<T: FixedWidthInteger>(_ id: UInt32, as: T.Type = T.self) -> T? { uint(id) }
    func has(_ id: UInt32) -> Bool { attributes[AttributeID(id)] != nil }

    /// Whether the cluster lists the command in its AcceptedCommandList (0xFFF9).
    func accepts(_ command: UInt32) -> Bool {
        guard case .array(let items)? = attributes[Clusters.Global.Attribute.acceptedCommandList] else { return false }
        return items.contains { $0.value.uintValue == UInt64(command) }
    }

    /// How long a Timed Invoke's window stays open (spec 8.8.2.2), for commands the model marks timed.
    static let timedInvokeWindow = Duration.seconds(10)

    /// Invokes a command of this cluster on the device, as a Timed Invoke when the data model
    /// says the command must be one (a lock's); returns the response command's fields (nil
    /// when the device answered with a status).
    /// Typed throws: the generated trait commands are public calls that throw only this.
    @discardableResult
    func invoke(_ command: UInt32, _ fields: [TLVElement] = []) async throws(HomeError) -> TLVValue? {
        let timed = MatterModel.standard.cluster(cluster)?.command(CommandID(command))?.timed ?? false
        guard let engine else { throw HomeError.failedPrecondition("this trait is detached from any home") }
        let path = ConcreteCommandPath(endpoint: endpoint, cluster: cluster, command: CommandID(command))
        return try await homeCall("command \(path) on \(deviceID)") {
            if let groupID {
                try await engine.groupInvoke(groupID: groupID, cluster: cluster, command: path.command, fields: .structure(fields))
                return nil
            }
            return try await engine.invoke(
                deviceID: deviceID, nodeID: nodeID, path, fields: .structure(fields), timed: timed ? Self.timedInvokeWindow : nil
            ).fields
        }
    }

    /// Writes an attribute of this cluster on the device (the generated setters' one way out).
    func write(_ attribute: UInt32, _ value: TLVValue) async throws(HomeError) {
        guard let engine else { throw HomeError.failedPrecondition("this trait is detached from any home") }
        let path = AttributePath(endpoint: endpoint, cluster: cluster, attribute: AttributeID(attribute))
        try await homeCall("write \(path) on \(deviceID)") {
            if let groupID {
                return try await engine.groupWrite(groupID: groupID, cluster: cluster, attribute: path.attribute, value: value)
            }
            try await engine.write(deviceID: deviceID, nodeID: nodeID, path, value)
        }
    }
}

/// Traits the engine can build from a cluster's reported attributes.
protocol ClusterTrait: Trait {
    static var clusterID: ClusterID { get }
    init(context: TraitContext)
}

extension ClusterTrait {
    static func traitIdentifier(cluster: UInt32) -> String {
        let digits = String(cluster, radix: 16)
        return "home.matter.6789.clusters." + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// The traits of one device type, by type: `traits[Matter.OnOffTrait.self]`.
public struct TraitCollection: Sendable, Hashable {
    let contexts: [ClusterID: TraitContext]

    public subscript<T: Trait>(_ type: T.Type) -> T? {
        guard let buildable = type as? any ClusterTrait.Type, let context = contexts[buildable.clusterID] else { return nil }
        return buildable.init(context: context) as? T
    }

    public func contains<T: Trait>(_ type: T.Type) -> Bool {
        guard let buildable = type as? any ClusterTrait.Type else { return false }
        return contexts[buildable.clusterID] != nil
    }

    /// Every trait of the collection.
    public var all: [any Trait] {
        contexts.keys.sorted().compactMap { id -> (any Trait)? in
            guard let context = contexts[id] else { return nil }
            return traitTypes.first { $0.clusterID == id }.map { $0.init(context: context) }
        }
    }
}

/// The trait types this library knows.
let traitTypes: [any ClusterTrait.Type] = generatedTraitTypes + generatedRootTraitTypes

/// Field helpers for command payloads.
func field(_ tag: UInt8, _ value: some BinaryInteger) -> TLVElement { .context(tag, .unsigned(UInt64(value))) }
func nullableField(_ tag: UInt8, _ value: (some BinaryInteger)?) -> TLVElement {
    .context(tag, value.map { .unsigned(UInt64($0)) } ?? .null)
}
