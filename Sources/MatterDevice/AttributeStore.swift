import MatterModel
import MatterTLV

/// The node's single source of truth: every attribute value, and one data version
/// per cluster instance. Owned by the node actor and never shared outside it; all
/// updates funnel through `update`, which bumps the version and publishes the change.
final class AttributeStore {
    private var values: [AttributePath: TLVValue] = [:]
    private var versions: [ClusterPath: DataVersion] = [:]
    private var attributeIDs: [ClusterPath: [AttributeID]] = [:]
    private let broadcaster: ChangeBroadcaster
    /// Told of every change, synchronously on the node actor (persistence listens here).
    var onUpdate: ((AttributePath) -> Void)?

    init(broadcaster: ChangeBroadcaster) {
        self.broadcaster = broadcaster
    }

    /// Adds a cluster instance with its initial values. The data version starts at
    /// a random value (Core spec 7.10.3) so a restarted node is not mistaken for the old one.
    func addCluster(_ cluster: ClusterPath, values initial: [AttributeID: TLVValue]) {
        versions[cluster] = DataVersion.random(in: DataVersion.min...DataVersion.max)
        attributeIDs[cluster] = initial.keys.sorted()
        for (attribute, value) in initial {
            values[AttributePath(endpoint: cluster.endpoint, cluster: cluster.cluster, attribute: attribute)] = value
        }
    }

    func contains(_ path: AttributePath) -> Bool { values[path] != nil }

    func value(_ path: AttributePath) -> TLVValue? { values[path] }

    func dataVersion(_ cluster: ClusterPath) -> DataVersion? { versions[cluster] }

    /// The attributes present on a cluster instance, ascending.
    func attributes(of cluster: ClusterPath) -> [AttributeID] { attributeIDs[cluster] ?? [] }

    /// Sets an existing attribute. Returns false (and changes nothing) when the path
    /// is not in the store or the value is unchanged.
    @discardableResult
    func update(_ path: AttributePath, to value: TLVValue) -> Bool {
        guard let old = values[path], old != value else { return false }
        let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        let version = (versions[cluster] ?? 0) &+ 1
        versions[cluster] = version
        values[path] = value
        broadcaster.publish(AttributeChange(path: path, value: value, dataVersion: version))
        onUpdate?(path)
        return true
    }
}
