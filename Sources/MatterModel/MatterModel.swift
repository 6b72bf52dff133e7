// The Matter data model as data: clusters and device types loaded from
// Resources/matter-model.json, imported from the spec data by scripts/model-import.py (Matter 1.4, the revision
// connectedhomeip uses in 2025). Immutable after load and shared freely.
import Foundation

public final class MatterModel: Sendable {
    /// The bundled model. A load failure is a programming error (the file ships with
    /// the module and a test loads it), so it stops the process with the loader's message.
    /// Its clusters and device types are built on first use (`ModelCatalog`): a process
    /// serving one node builds the dozen it uses, not all 114.
    public static let standard: MatterModel = {
        do {
            return try MatterModel(json: try standardJSON(), buildingOnFirstUse: true)
        } catch {
            fatalError("MatterModel: bundled matter-model.json is invalid: \(error)")
        }
    }()

    /// Loads the bundled model, building and checking every row, reporting what is wrong
    /// instead of stopping.
    public static func loadStandard() throws -> MatterModel {
        try MatterModel(json: try standardJSON())
    }

    static func standardJSON() throws -> Data {
        guard let url = Bundle.module.url(forResource: "matter-model", withExtension: "json") else {
            throw ModelLoadError(path: "matter-model.json", message: "resource missing from the bundle")
        }
        return try Data(contentsOf: url)
    }

    /// The spec version the data describes ("1.4").
    public let specVersion: String
    /// Every cluster, in file order.
    public var clusters: [ClusterDefinition] { catalog.allClusters }
    /// Every device type, in file order.
    public var deviceTypes: [DeviceTypeDefinition] { catalog.allDeviceTypes }
    /// The global attributes every cluster carries (also on each `ClusterDefinition`).
    public let globalAttributes: [AttributeDefinition]

    private let catalog: ModelCatalog

    /// Builds and checks every row of `json`; the first problem throws.
    public convenience init(json: Data) throws {
        try self.init(json: json, buildingOnFirstUse: false)
    }

    /// `buildingOnFirstUse`: only IDs and names are read now, each definition when first
    /// asked for, and a row that does not build then stops the process: for a file that a
    /// test builds whole.
    public init(json: Data, buildingOnFirstUse: Bool) throws {
        do {
            if buildingOnFirstUse {
                let (catalog, specVersion) = try ModelCatalog.onFirstUse(json)
                self.catalog = catalog
                self.specVersion = specVersion ?? ""
            } else {
                let file = try JSONDecoder().decode(ModelFile.self, from: json)
                catalog = try ModelCatalog(building: file)
                specVersion = file.specVersion ?? ""
            }
        } catch let error as DecodingError {
            throw ModelLoadError(path: error.codingPathDescription, message: error.shortDescription)
        }
        globalAttributes = catalog.globals
        self.buildsOnFirstUse = buildingOnFirstUse
    }

    public func cluster(_ id: ClusterID) -> ClusterDefinition? {
        catalog.clusterSlot(id).map(catalog.cluster(at:))
    }

    /// "OnOff" or "onOff".
    public func cluster(named name: String) -> ClusterDefinition? {
        catalog.clusterNames.firstIndex { Naming.matches($0, name) }.map(catalog.cluster(at:))
    }

    public func deviceType(_ id: DeviceTypeID) -> DeviceTypeDefinition? {
        catalog.deviceTypeSlot(id).map(catalog.deviceType(at:))
    }

    /// "DimmableLight" or "dimmableLight".
    public func deviceType(named name: String) -> DeviceTypeDefinition? {
        catalog.deviceTypeNames.firstIndex { Naming.matches($0, name) }.map(catalog.deviceType(at:))
    }

    /// Cluster names in file order, without building any cluster (for "did you mean").
    public var clusterNames: [String] { catalog.clusterNames }
    /// Device type names in file order, without building any device type.
    public var deviceTypeNames: [String] { catalog.deviceTypeNames }

    /// Whether definitions are built on first use (`init(json:buildingOnFirstUse:)`).
    public let buildsOnFirstUse: Bool

    /// How many clusters and device types are built so far (tests: what first use builds).
    var builtCounts: (clusters: Int, deviceTypes: Int) { catalog.builtCounts }

    /// A cluster-specific or global attribute of a modelled cluster.
    public func attribute(cluster: ClusterID, attribute: AttributeID) -> AttributeDefinition? {
        self.cluster(cluster)?.attribute(attribute)
    }

    public func attribute(_ path: AttributePath) -> AttributeDefinition? {
        attribute(cluster: path.cluster, attribute: path.attribute)
    }
}

/// What is wrong with a model file, and where ("clusters[3].attributes[2].type").
public struct ModelLoadError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var message: String
    public init(path: String, message: String) { self.path = path; self.message = message }
    public var description: String { path.isEmpty ? message : "\(path): \(message)" }
}

extension DecodingError {
    var codingPathDescription: String {
        let path: [CodingKey]
        switch self {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c): path = c.codingPath
        @unknown default: path = []
        }
        return path.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            .trimmingCharacters(in: CharacterSet(charactersIn: "."))
    }

    var shortDescription: String {
        switch self {
        case .typeMismatch(let t, let c): "expected \(t): \(c.debugDescription)"
        case .valueNotFound(let t, let c): "missing \(t): \(c.debugDescription)"
        case .keyNotFound(let k, _): "missing key '\(k.stringValue)'"
        case .dataCorrupted(let c): c.debugDescription
        @unknown default: "\(self)"
        }
    }
}
