// The model's clusters and device types by ID and by name, each built from its row of
// matter-model.json either all at load or each on first use. A node uses a dozen of the 114
// clusters, and building all of them was a third of a `matter-sim run`'s start-up in a debug
// build: with 28 processes of a home starting at once after a power cut (issue #43), that
// held the last node back seconds.
import Foundation
import Synchronization

final class ModelCatalog: Sendable {
    let globals: [AttributeDefinition]
    /// Spec names, in file order (lookups by name go through these, not the definitions).
    let clusterNames: [String]
    let deviceTypeNames: [String]
    private let clusterIDs: [ClusterID]
    private let clusterSlots: [ClusterID: Int]
    private let deviceTypeSlots: [DeviceTypeID: Int]
    /// The rows still to build from (none once everything is built).
    private let rows: RowSource
    private let builtClusters: Mutex<[ClusterDefinition?]>
    private let builtDeviceTypes: Mutex<[DeviceTypeDefinition?]>

    /// Builds and checks every row now: the first bad row throws (`ModelLoadError`).
    convenience init(building file: ModelFile) throws {
        let built = try ModelBuilder.build(file)
        try self.init(
            globals: built.globals, clusters: built.clusters.map { ($0.id, $0.name) },
            deviceTypes: built.deviceTypes.map { ($0.id, $0.name) }, rows: .decoded(clusters: [], deviceTypes: []),
            built: (built.clusters, built.deviceTypes))
    }

    /// Reads only the IDs and names now (duplicates still throw); each definition is built
    /// when first asked for, from its own slice of `json` (`ModelFileSlices`), and a row that
    /// does not build then stops the process, so this is for a file a test builds whole (the
    /// bundled one). Returns the file's spec version too.
    static func onFirstUse(_ json: Data) throws -> (ModelCatalog, specVersion: String?) {
        let heads = try JSONDecoder().decode(ModelFileHeads.self, from: json)
        let rows: RowSource
        if let slices = ModelFileSlices.elements(of: ["clusters", "deviceTypes"], in: json),
            slices["clusters"]?.count == heads.clusters.count, slices["deviceTypes"]?.count == heads.deviceTypes.count
        {
            rows = .slices(json, clusters: slices["clusters"] ?? [], deviceTypes: slices["deviceTypes"] ?? [])
        } else {
            // Not laid out as expected: every row decoded now, still built on first use.
            let file = try JSONDecoder().decode(ModelFile.self, from: json)
            rows = .decoded(clusters: file.clusters, deviceTypes: file.deviceTypes)
        }
        let noTypes = ModelBuilder.TypeScope(enums: [], bitmaps: [], structs: [])
        let globals = try heads.globalAttributes.enumerated().map { i, row in
            try ModelBuilder.attribute(row, scope: noTypes, path: "globalAttributes[\(i)]")
        }
        let catalog = try ModelCatalog(
            globals: globals,
            clusters: try heads.clusters.enumerated().map { i, row in
                (ClusterID(try ModelBuilder.hexID(row.id, path: "clusters[\(i)].id")), row.name)
            },
            deviceTypes: try heads.deviceTypes.enumerated().map { i, row in
                (DeviceTypeID(try ModelBuilder.hexID(row.id, path: "deviceTypes[\(i)].id")), row.name)
            },
            rows: rows, built: nil)
        return (catalog, heads.specVersion)
    }

    /// Where rows still to build come from.
    enum RowSource {
        /// Each row's own bytes of the file, decoded when it is built.
        case slices(Data, clusters: [Range<Int>], deviceTypes: [Range<Int>])
        case decoded(clusters: [ClusterRow], deviceTypes: [DeviceTypeRow])

        func cluster(_ i: Int) throws -> ClusterRow {
            switch self {
            case .slices(let json, let clusters, _): try JSONDecoder().decode(ClusterRow.self, from: Self.slice(json, clusters[i]))
            case .decoded(let clusters, _): clusters[i]
            }
        }

        func deviceType(_ i: Int) throws -> DeviceTypeRow {
            switch self {
            case .slices(let json, _, let deviceTypes): try JSONDecoder().decode(DeviceTypeRow.self, from: Self.slice(json, deviceTypes[i]))
            case .decoded(_, let deviceTypes): deviceTypes[i]
            }
        }

        private static func slice(_ json: Data, _ range: Range<Int>) -> Data {
            json[(json.startIndex + range.lowerBound)..<(json.startIndex + range.upperBound)]
        }
    }

    private init(
        globals: [AttributeDefinition], clusters: [(ClusterID, String)], deviceTypes: [(DeviceTypeID, String)],
        rows: RowSource,
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
        self.rows = rows
        builtClusters = Mutex(built?.0 ?? Array(repeating: nil, count: clusters.count))
        builtDeviceTypes = Mutex(built?.1 ?? Array(repeating: nil, count: deviceTypes.count))
    }

    func clusterSlot(_ id: ClusterID) -> Int? { clusterSlots[id] }
    func deviceTypeSlot(_ id: DeviceTypeID) -> Int? { deviceTypeSlots[id] }

    /// The cluster in slot `i` (file order), built now if it was not yet.
    func cluster(at i: Int) -> ClusterDefinition {
        if let built = builtClusters.withLock({ $0[i] }) { return built }
        // Built outside the lock: two threads may build the same row, and both get equal values.
        let built = Self.orStop { try ModelBuilder.cluster(rows.cluster(i), globals: globals, path: "clusters[\(i)]") }
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
        let built = Self.orStop { try ModelBuilder.deviceType(rows.deviceType(i), clusters: lookup, path: "deviceTypes[\(i)]") }
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
