import MatterModel
import Synchronization

/// What a node is made of: endpoints, their server clusters, and each cluster
/// instance's attributes and commands. Fixed once the node is built, so the
/// Interaction Model can expand wildcard paths without waiting on the node; only a bridge
/// takes a bridged device's endpoint out and puts it back (`absent`, shared by every copy).
public struct NodeComposition: Sendable {
    struct ClusterEntry: Sendable {
        var definition: ClusterDefinition
        var features: Set<String>
        var attributes: [AttributeID]
        var acceptedCommands: [CommandID]
        var generatedCommands: [CommandID]
    }

    /// Endpoints taken out at run time: a bridged device removed from its bridge.
    final class AbsentEndpoints: Sendable {
        private let numbers = Mutex<Set<EndpointNumber>>([])
        var all: Set<EndpointNumber> { numbers.withLock { $0 } }
        func contains(_ endpoint: EndpointNumber) -> Bool { numbers.withLock { $0.contains(endpoint) } }
        /// True when it changed.
        func set(_ endpoint: EndpointNumber, absent: Bool) -> Bool {
            numbers.withLock { absent ? $0.insert(endpoint).inserted : $0.remove(endpoint) != nil }
        }
    }

    /// Ascending, without the absent ones.
    public var endpoints: [EndpointNumber] {
        let gone = absent.all
        return gone.isEmpty ? allEndpoints : allEndpoints.filter { !gone.contains($0) }
    }
    private let allEndpoints: [EndpointNumber]
    let absent = AbsentEndpoints()
    private let clustersByEndpoint: [EndpointNumber: [ClusterID]]
    let entries: [ClusterPath: ClusterEntry]

    init(entries: [ClusterPath: ClusterEntry], endpoints: [EndpointNumber]) {
        self.entries = entries
        self.allEndpoints = endpoints.sorted()
        var byEndpoint: [EndpointNumber: [ClusterID]] = [:]
        for path in entries.keys { byEndpoint[path.endpoint, default: []].append(path.cluster) }
        clustersByEndpoint = byEndpoint.mapValues { $0.sorted() }
    }

    /// Server clusters on an endpoint, ascending; empty for an unknown or absent endpoint.
    public func clusters(on endpoint: EndpointNumber) -> [ClusterID] {
        absent.contains(endpoint) ? [] : clustersByEndpoint[endpoint] ?? []
    }

    /// Attributes of a cluster instance (global ones included), ascending.
    public func attributes(of cluster: ClusterPath) -> [AttributeID] {
        entries[cluster]?.attributes ?? []
    }

    public func acceptedCommands(of cluster: ClusterPath) -> [CommandID] {
        entries[cluster]?.acceptedCommands ?? []
    }

    public func generatedCommands(of cluster: ClusterPath) -> [CommandID] {
        entries[cluster]?.generatedCommands ?? []
    }

    public func definition(of cluster: ClusterPath) -> ClusterDefinition? {
        entries[cluster]?.definition
    }

    public func features(of cluster: ClusterPath) -> Set<String> {
        entries[cluster]?.features ?? []
    }

    /// Expands a possibly-wildcard attribute path (nil = wildcard) into the concrete
    /// paths that exist, silently skipping what does not (Core spec 8.9.2.2).
    public func expand(endpoint: EndpointNumber?, cluster: ClusterID?, attribute: AttributeID?) -> [AttributePath] {
        var result: [AttributePath] = []
        for endpointNumber in endpoint.map({ [$0] }) ?? endpoints {
            for clusterID in cluster.map({ [$0] }) ?? clusters(on: endpointNumber) {
                let clusterPath = ClusterPath(endpoint: endpointNumber, cluster: clusterID)
                let present = attributes(of: clusterPath)
                for attributeID in attribute.map({ [$0] }) ?? present where present.contains(attributeID) {
                    result.append(AttributePath(endpoint: endpointNumber, cluster: clusterID, attribute: attributeID))
                }
            }
        }
        return result
    }
}
