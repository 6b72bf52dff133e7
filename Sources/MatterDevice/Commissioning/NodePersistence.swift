import Foundation
import Logging
import MatterCrypto
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

    init(
        fabrics: FabricTable, accessControlEntries: [AccessControlEntry], groupKeySets: [GroupKeySet],
        groupKeyMap: [GroupKeyMapEntry], groupTable: [GroupTableEntry] = []
    ) {
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
        .contextStructure([
            (1, .uint(groupID)), (2, .arrayOf(endpoints.map { .uint($0) })), (3, .utf8(name)),
            (254, .uint(fabricIndex)),
        ])
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
/// many times a second during transitions, or before the response of a command or write
/// that changed them.
///
/// Attributes live in a snapshot (attributes.json, every persistent value) and a journal
/// (attributes.journal, one line per save with the values that changed). A save before a
/// response is then one append; the snapshot is rewritten at start-up and once the journal
/// holds `journalLimit` lines, and the journal is emptied after it (and kept open). Loading
/// replays the journal over the snapshot, so a crash between the two steps changes nothing.
final class NodePersistence {
    static let commissioningRecord = "commissioning"
    static let attributesRecord = "attributes"
    static let journalLimit = 1000

    let store: NodeStateStore?
    private let logger: Logger
    /// Attributes saved and restored: non-volatile, not fixed, and not derived from
    /// the commissioning snapshot.
    private(set) var persistentPaths: Set<AttributePath> = []
    /// Changed since the last save.
    private(set) var changed: Set<AttributePath> = []
    /// The next save rewrites the snapshot.
    private var snapshotDue = false
    private var journal: Journal?
    private var journalLines = 0

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
        AttributeKey(cluster: BasicInformationServer.clusterID, attribute: BasicInformationServer.Attribute.uniqueID)
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

    /// Throws when the record cannot be written: the caller decides whether that fails
    /// what it is doing (CommissioningComplete does) or is only logged.
    func saveCommissioning(_ snapshot: CommissioningSnapshot) throws {
        try store?.save(snapshot, Self.commissioningRecord)
    }

    // MARK: Attributes

    /// Stored values for persistent paths, decoded: the snapshot, then the journal's lines in
    /// order. Undecodable entries are reported and skipped.
    func loadAttributes() throws -> [AttributePath: TLVValue] {
        guard let store else { return [:] }
        var values: [AttributePath: TLVValue] = [:]
        func restore(_ path: AttributePath, _ tlv: Data, from place: String) {
            guard persistentPaths.contains(path) else { return }
            do {
                values[path] = try TLVElement.decode(tlv).value
            } catch {
                logger.warning("stored value of \(path) in \(place) is not TLV (\(error)); keeping the previous value")
            }
        }
        for record in try store.load([PersistedAttribute].self, Self.attributesRecord) ?? [] {
            restore(
                AttributePath(endpoint: record.endpoint, cluster: ClusterID(record.cluster), attribute: AttributeID(record.attribute)),
                record.tlv, from: "the snapshot")
        }
        let journalPath = store.journalURL(Self.attributesRecord).path
        for (number, line) in try store.journalLines(Self.attributesRecord).enumerated() {
            guard let entries = Self.journalEntries(line) else {
                logger.warning("\(journalPath) line \(number + 1): not ENDPOINT/CLUSTER/ATTRIBUTE=HEX entries; skipped")
                continue
            }
            for (path, tlv) in entries { restore(path, tlv, from: "\(journalPath) line \(number + 1)") }
        }
        return values
    }

    func markChanged(_ path: AttributePath) -> Bool {
        guard store != nil, persistentPaths.contains(path) else { return false }
        changed.insert(path)
        return true
    }

    /// Forces the next save to rewrite the snapshot (after start-up, which changes values
    /// before persistence listens).
    func markAllChanged() {
        snapshotDue = store != nil
    }

    /// Saves what changed since the last save: one journal line, or the whole snapshot.
    func saveAttributes(from attributeStore: AttributeStore) {
        guard let store, snapshotDue || !changed.isEmpty else { return }
        if snapshotDue || journalLines >= Self.journalLimit {
            saveSnapshot(store, attributeStore)
        } else {
            appendJournal(store, attributeStore)
        }
    }

    private func saveSnapshot(_ store: NodeStateStore, _ attributeStore: AttributeStore) {
        let records = Self.inOrder(persistentPaths)
            .compactMap { path -> PersistedAttribute? in
                guard let value = attributeStore.value(path) else { return nil }
                return PersistedAttribute(
                    endpoint: path.endpoint, cluster: path.cluster.rawValue,
                    attribute: path.attribute.rawValue, tlv: Data(TLVElement(value).encoded()))
            }
        do {
            try store.save(records, Self.attributesRecord)
            // The snapshot holds every line of the journal now: empty the journal and keep it
            // open, so that a node's first save before a response is one write(2) too, not a
            // file to create (ext4 took about 350 µs for that, beside a fleet's work).
            if let journal { try journal.empty() } else { journal = try store.openJournal(Self.attributesRecord, emptied: true) }
            journalLines = 0
            snapshotDue = false
            changed = []
        } catch {
            snapshotDue = true
            logger.error("cannot save attributes: \(error)")
        }
    }

    private func appendJournal(_ store: NodeStateStore, _ attributeStore: AttributeStore) {
        var line = ""
        for path in Self.inOrder(changed) {
            guard let value = attributeStore.value(path) else { continue }
            if !line.isEmpty { line += " " }
            line += Self.journalEntry(path, TLVElement(value).encoded())
        }
        do {
            if !line.isEmpty {
                if journal == nil { journal = try store.openJournal(Self.attributesRecord) }
                try journal!.append(line + "\n")
                journalLines += 1
            }
            changed = []
        } catch {
            // Keep the changes for the next save, which rewrites the snapshot.
            snapshotDue = true
            logger.error("cannot append to the attribute journal: \(error)")
        }
    }

    /// Endpoint, cluster, attribute order: files that read the same for the same values.
    private static func inOrder(_ paths: Set<AttributePath>) -> [AttributePath] {
        paths.sorted { ($0.endpoint, $0.cluster, $0.attribute) < ($1.endpoint, $1.cluster, $1.attribute) }
    }

    // MARK: Journal lines: "ENDPOINT/CLUSTER/ATTRIBUTE=HEX" entries separated by spaces, ids in hex.

    static func journalEntry(_ path: AttributePath, _ tlv: [UInt8]) -> String {
        "\(path.endpoint)/\(String(path.cluster.rawValue, radix: 16))/\(String(path.attribute.rawValue, radix: 16))=\(tlv.hexString)"
    }

    static func journalEntries(_ line: Substring) -> [(AttributePath, Data)]? {
        var entries: [(AttributePath, Data)] = []
        for entry in line.split(separator: " ") {
            let sides = entry.split(separator: "=", omittingEmptySubsequences: false)
            guard sides.count == 2 else { return nil }
            let ids = sides[0].split(separator: "/", omittingEmptySubsequences: false)
            guard ids.count == 3, let endpoint = EndpointNumber(ids[0]), let cluster = UInt32(ids[1], radix: 16),
                let attribute = UInt32(ids[2], radix: 16), !sides[1].isEmpty,
                let tlv = [UInt8](hexString: String(sides[1]))
            else { return nil }
            entries.append((AttributePath(endpoint: endpoint, cluster: ClusterID(cluster), attribute: AttributeID(attribute)), Data(tlv)))
        }
        return entries.isEmpty ? nil : entries
    }
}
