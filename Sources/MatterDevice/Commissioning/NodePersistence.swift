import Foundation
import Logging
import MatterModel
import MatterTLV

/// Everything commissioning leaves behind, saved as one record so fabrics, their ACL
/// entries and their keys are always written (and restored) together.
struct CommissioningSnapshot: Codable, Equatable {
    var fabrics: FabricTable
    var accessControlEntries: [AccessControlEntry]
    var groupKeySets: [GroupKeySet]
    var groupKeyMap: [GroupKeyMapEntry]
    /// Group membership (Groups cluster); absent in records written before it existed.
    var groupTable: [GroupTableEntry] = []

    init(fabrics: FabricTable, accessControlEntries: [AccessControlEntry], groupKeySets: [GroupKeySet],
         groupKeyMap: [GroupKeyMapEntry], groupTable: [GroupTableEntry] = []) {
        self.fabrics = fabrics
        self.accessControlEntries = accessControlEntries
        self.groupKeySets = groupKeySets
        self.groupKeyMap = groupKeyMap
        self.groupTable = groupTable
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        fabrics = try c.decode(FabricTable.self, forKey: .fabrics)
        accessControlEntries = try c.decode([AccessControlEntry].self, forKey: .accessControlEntries)
        groupKeySets = try c.decode([GroupKeySet].self, forKey: .groupKeySets)
        groupKeyMap = try c.decode([GroupKeyMapEntry].self, forKey: .groupKeyMap)
        groupTable = try c.decodeIfPresent([GroupTableEntry].self, forKey: .groupTable) ?? []
    }
}

/// One group of one fabric: the endpoints in it and its name (GroupKeyManagement's
/// GroupInfoMapStruct, Core spec 11.2.5.5).
struct GroupTableEntry: Codable, Equatable, Sendable {
    var fabricIndex: FabricIndex
    var groupID: UInt16
    var endpoints: [EndpointNumber]
    var name: String

    /// GroupInfoMapStruct: GroupId [1], Endpoints [2], GroupName [3], FabricIndex [254].
    var tlv: TLVValue {
        .contextStructure([(1, .uint(groupID)), (2, .arrayOf(endpoints.map { .uint($0) })), (3, .utf8(name)),
                           (254, .uint(fabricIndex))])
    }
}

/// One non-volatile attribute value, TLV-encoded.
struct PersistedAttribute: Codable, Equatable {
    var endpoint: EndpointNumber
    var cluster: UInt32
    var attribute: UInt32
    var tlv: Data
}

/// Writes the node's persistent state through a NodeStateStore: the commissioning
/// snapshot at once (it must survive a crash right after the response), non-volatile
/// attributes (quality N, Core spec 7.7) a little later in batches, since some change
/// many times a second during transitions.
final class NodePersistence {
    static let commissioningRecord = "commissioning"
    static let attributesRecord = "attributes"

    let store: NodeStateStore?
    private let logger: Logger
    /// Attributes saved and restored: non-volatile, not fixed, and not derived from
    /// the commissioning snapshot.
    private(set) var persistentPaths: Set<AttributePath> = []
    private(set) var dirty = false

    init(store: NodeStateStore?, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Clusters whose attributes mirror the commissioning snapshot (or the session): saving
    /// them separately would let the two disagree after a crash.
    static let derivedClusters: Set<ClusterID> = [
        OperationalCredentialsServer.clusterID, AccessControlServer.clusterID, GroupKeyManagementServer.clusterID,
        AdministratorCommissioningServer.clusterID, GeneralCommissioningServer.clusterID,
    ]

    struct AttributeKey: Hashable {
        var cluster: ClusterID
        var attribute: AttributeID
    }

    /// Fixed attributes a server makes up on first start, which must then never change:
    /// Basic Information's UniqueID (11.1.5.19) changes only with a factory reset.
    static let generatedOnce: Set<AttributeKey> = [
        AttributeKey(cluster: BasicInformationServer.clusterID, attribute: BasicInformationServer.Attribute.uniqueID),
    ]

    func register(_ composition: NodeComposition) {
        for endpoint in composition.endpoints {
            for cluster in composition.clusters(on: endpoint) where !Self.derivedClusters.contains(cluster) {
                let clusterPath = ClusterPath(endpoint: endpoint, cluster: cluster)
                guard let definition = composition.definition(of: clusterPath) else { continue }
                for id in composition.attributes(of: clusterPath) {
                    guard let attribute = definition.attribute(id) else { continue }
                    let nonVolatile = attribute.quality.contains(.nonVolatile) && !attribute.quality.contains(.fixed)
                    guard nonVolatile || Self.generatedOnce.contains(AttributeKey(cluster: cluster, attribute: id)) else { continue }
                    persistentPaths.insert(AttributePath(endpoint: endpoint, cluster: cluster, attribute: id))
                }
            }
        }
    }

    // MARK: Commissioning snapshot

    func loadCommissioning() throws -> CommissioningSnapshot? {
        try store?.load(CommissioningSnapshot.self, Self.commissioningRecord)
    }

    func saveCommissioning(_ snapshot: CommissioningSnapshot) {
        guard let store else { return }
        do {
            try store.save(snapshot, Self.commissioningRecord)
        } catch {
            logger.error("cannot save commissioning state: \(error)")
        }
    }

    // MARK: Attributes

    /// Stored values for persistent paths, decoded; undecodable entries are reported and skipped.
    func loadAttributes() throws -> [AttributePath: TLVValue] {
        guard let records = try store?.load([PersistedAttribute].self, Self.attributesRecord) else { return [:] }
        var values: [AttributePath: TLVValue] = [:]
        for record in records {
            let path = AttributePath(endpoint: record.endpoint, cluster: ClusterID(record.cluster), attribute: AttributeID(record.attribute))
            guard persistentPaths.contains(path) else { continue }
            do {
                values[path] = try TLVElement.decode(record.tlv).value
            } catch {
                logger.warning("stored value of \(path) is not TLV (\(error)); keeping the described value")
            }
        }
        return values
    }

    func markChanged(_ path: AttributePath) -> Bool {
        guard store != nil, persistentPaths.contains(path) else { return false }
        dirty = true
        return true
    }

    /// Forces the next save (after start-up, which changes values before persistence listens).
    func markAllChanged() {
        dirty = store != nil
    }

    /// Writes every persistent attribute if any changed since the last save.
    func saveAttributes(from attributeStore: AttributeStore) {
        guard let store, dirty else { return }
        dirty = false
        let records = persistentPaths.sorted { ($0.endpoint, $0.cluster, $0.attribute) < ($1.endpoint, $1.cluster, $1.attribute) }
            .compactMap { path -> PersistedAttribute? in
                guard let value = attributeStore.value(path) else { return nil }
                return PersistedAttribute(endpoint: path.endpoint, cluster: path.cluster.rawValue,
                                          attribute: path.attribute.rawValue, tlv: Data(TLVElement(value).encoded()))
            }
        do {
            try store.save(records, Self.attributesRecord)
        } catch {
            dirty = true
            logger.error("cannot save attributes: \(error)")
        }
    }
}
