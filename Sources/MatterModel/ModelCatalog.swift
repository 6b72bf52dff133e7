// The model's clusters and device types by ID and by name, each built from its row of
// matter-model.json either all at load or each on first use. A node uses a dozen of the 114
// clusters, and building all of them was a third of a `matter-sim run`'s start-up in a debug
// build: with 28 processes of a home starting at once after a power cut (issue #43), that
// held the last node back seconds.
import Synchronization

final class ModelCatalog: Sendable {
    let globals: [AttributeDefinition]
    /// Spec names, in file order (lookups by name go through these, not the definitions).
    let clusterNames: [String]
    let deviceTypeNames: [String]
    private let clusterIDs: [ClusterID]
    private let clusterSlots: [ClusterID: Int]
    private let deviceTypeSlots: [DeviceTypeID: Int]
    /// The rows still to build from (empty once everything is built).
    private let clusterRows: [ClusterRow]
    private let deviceTypeRows: [DeviceTypeRow]
    private let builtClusters: Mutex<[ClusterDefinition?]>
    private let builtDeviceTypes: Mutex<[DeviceTypeDefinition?]>

    /// Builds and checks every row now: the first bad row throws (`ModelLoadError`).
    convenience init(building file: ModelFile) throws {
        let built = try ModelBuilder.build(file)
        try self.init(
            globals: built.globals, clusters: built.clusters.map { ($0.id, $0.name) },
            deviceTypes: built.deviceTypes.map { ($0.id, $0.name) }, clusterRows: [], deviceTypeRows: [],
            built: (built.clusters, built.deviceTypes))
    }

    /// Reads only the IDs and names now (duplicates still throw); each definition is built
    /// when first asked for, and a row that does not build then stops the process, so this is
    /// for a file a test builds whole (the bundled one).
    convenience init(onFirstUse file: ModelFile) throws {
        let noTypes = ModelBuilder.TypeScope(enums: [], bitmaps: [], structs: [])
        let globals = try file.globalAttributes.enumerated().map { i, row in
            try ModelBuilder.attribute(row, scope: noTypes, path: "globalAttributes[\(i)]")
        }
        try self.init(
            globals: globals,
            clusters: try file.clusters.enumerated().map { i, row in
                (ClusterID(try ModelBuilder.hexID(row.id, path: "clusters[\(i)].id")), row.name)
            },
            deviceTypes: try file.deviceTypes.enumerated().map { i, row in
                (DeviceTypeID(try ModelBuilder.hexID(row.id, path: "deviceTypes[\(i)].id")), row.name)
            },
            clusterRows: file.clusters, deviceTypeRows: file.deviceTypes, built: nil)
    }

    private init(
        globals: [AttributeDefinition], clusters: [(ClusterID, String)], deviceTypes: [(DeviceTypeID, String)],
        clusterRows: [ClusterRow], deviceTypeRows: [DeviceTypeRow],
        built: ([ClusterDefinition], [DeviceTypeDefinition])?
    ) throws {
        var clusterSlots: [ClusterID: Int] = [:]
        for (i, (id, _)) in clusters.enumerated() {
            guard clusterSlots[id] == nil else { throw ModelLoadError(path: "clusters[\(i)]", message: "duplicate cluster id \(id)") }
            clusterSlots[id] = i
        }
        var deviceTypeSlots: [DeviceTypeID: Int] = [:]
        for (i, (id, _)) in deviceTypes.enumerated() {
            guard deviceTypeSlots[id] == nil else {
                throw ModelLoadError(path: "deviceTypes[\(i)]", message: "duplicate device type id \(id)")
            }
            deviceTypeSlots[id] = i
        }
        self.globals = globals
        self.clusterNames = clusters.map(\.1)
        self.deviceTypeNames = deviceTypes.map(\.1)
        self.clusterIDs = clusters.map(\.0)
        self.clusterSlots = clusterSlots
        self.deviceTypeSlots = deviceTypeSlots
        self.clusterRows = clusterRows
        self.deviceTypeRows = deviceTypeRows
        builtClusters = Mutex(built?.0 ?? Array(repeating: nil, count: clusters.count))
        builtDeviceTypes = Mutex(built?.1 ?? Array(repeating: nil, count: deviceTypes.count))
    }

    func clusterSlot(_ id: ClusterID) -> Int? { clusterSlots[id] }
    func deviceTypeSlot(_ id: DeviceTypeID) -> Int? { deviceTypeSlots[id] }

    /// The cluster in slot `i` (file order), built now if it was not yet.
    func cluster(at i: Int) -> ClusterDefinition {
        if let built = builtClusters.withLock({ $0[i] }) { return built }
        // Built outside the lock: two threads may build the same row, and both get equal values.
        let built = Self.orStop { try ModelBuilder.cluster(clusterRows[i], globals: globals, path: "clusters[\(i)]") }
        return builtClusters.withLock { slots in
            if slots[i] == nil { slots[i] = built }
            return slots[i] ?? built
        }
    }

    /// The device type in slot `i`, built now (with the clusters it names) if it was not yet.
    func deviceType(at i: Int) -> DeviceTypeDefinition {
        if let built = builtDeviceTypes.withLock({ $0[i] }) { return built }
        let lookup = ModelBuilder.ClusterLookup(
            named: { [clusterNames, clusterIDs] name in clusterNames.firstIndex(of: name).map { clusterIDs[$0] } },
            byID: { [self] id in clusterSlots[id].map(cluster(at:)) })
        let built = Self.orStop { try ModelBuilder.deviceType(deviceTypeRows[i], clusters: lookup, path: "deviceTypes[\(i)]") }
        return builtDeviceTypes.withLock { slots in
            if slots[i] == nil { slots[i] = built }
            return slots[i] ?? built
        }
    }

    /// How many definitions are built so far (tests: what first use builds).
    var builtCounts: (clusters: Int, deviceTypes: Int) {
        (builtClusters.withLock { $0.count { $0 != nil } }, builtDeviceTypes.withLock { $0.count { $0 != nil } })
    }

    var allClusters: [ClusterDefinition] { clusterNames.indices.map(cluster(at:)) }
    var allDeviceTypes: [DeviceTypeDefinition] { deviceTypeNames.indices.map(deviceType(at:)) }

    private static func orStop<T>(_ build: () throws -> T) -> T {
        do {
            return try build()
        } catch {
            fatalError("MatterModel: bundled matter-model.json is invalid: \(error)")
        }
    }
}
