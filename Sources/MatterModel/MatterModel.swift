// The Matter data model as data: clusters and device types loaded from
// Resources/matter-model.json, imported from the spec data by scripts/model-import.py (Matter 1.4, the revision
// connectedhomeip uses in 2025). Immutable after load and shared freely.
import Foundation

public final class MatterModel: Sendable {
    /// The bundled model. A load failure is a programming error (the file ships with
    /// the module and a test loads it), so it stops the process with the loader's message.
    public static let standard: MatterModel = {
        do {
            return try loadStandard()
        } catch {
            fatalError("MatterModel: bundled matter-model.json is invalid: \(error)")
        }
    }()

    /// Loads the bundled model, reporting what is wrong instead of stopping.
    public static func loadStandard() throws -> MatterModel {
        guard let url = Bundle.module.url(forResource: "matter-model", withExtension: "json") else {
            throw ModelLoadError(path: "matter-model.json", message: "resource missing from the bundle")
        }
        return try MatterModel(json: try Data(contentsOf: url))
    }

    /// The spec version the data describes ("1.4").
    public let specVersion: String
    public let clusters: [ClusterDefinition]
    public let deviceTypes: [DeviceTypeDefinition]
    /// The global attributes every cluster carries (also on each `ClusterDefinition`).
    public let globalAttributes: [AttributeDefinition]

    private let clusterIndex: [ClusterID: Int]
    private let deviceTypeIndex: [DeviceTypeID: Int]

    public init(json: Data) throws {
        let file: ModelFile
        do {
            file = try JSONDecoder().decode(ModelFile.self, from: json)
        } catch let error as DecodingError {
            throw ModelLoadError(path: error.codingPathDescription, message: error.shortDescription)
        }
        let built = try ModelBuilder.build(file)
        specVersion = file.specVersion ?? ""
        globalAttributes = built.globals
        clusters = built.clusters
        deviceTypes = built.deviceTypes
        var ci: [ClusterID: Int] = [:]
        for (i, c) in clusters.enumerated() {
            guard ci[c.id] == nil else { throw ModelLoadError(path: "clusters[\(i)]", message: "duplicate cluster id \(c.id)") }
            ci[c.id] = i
        }
        var di: [DeviceTypeID: Int] = [:]
        for (i, d) in deviceTypes.enumerated() {
            guard di[d.id] == nil else { throw ModelLoadError(path: "deviceTypes[\(i)]", message: "duplicate device type id \(d.id)") }
            di[d.id] = i
        }
        clusterIndex = ci
        deviceTypeIndex = di
    }

    public func cluster(_ id: ClusterID) -> ClusterDefinition? {
        clusterIndex[id].map { clusters[$0] }
    }

    /// "OnOff" or "onOff".
    public func cluster(named name: String) -> ClusterDefinition? {
        clusters.first { Naming.matches($0.name, name) }
    }

    public func deviceType(_ id: DeviceTypeID) -> DeviceTypeDefinition? {
        deviceTypeIndex[id].map { deviceTypes[$0] }
    }

    /// "DimmableLight" or "dimmableLight".
    public func deviceType(named name: String) -> DeviceTypeDefinition? {
        deviceTypes.first { Naming.matches($0.name, name) }
    }

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
