import Foundation
import MatterCrypto
#if canImport(Glibc)
import Glibc
#endif

// A node's persistent state directory (fabrics, ACL, counters, non-volatile attributes).
// Each record is one JSON file written atomically (temp file + rename), so a crash mid-write
// leaves the previous version intact; a corrupt file is reported, never silently replaced.
// The records hold the node's keys (operational key, IPK, DAC key): the directory is made
// 0700 and every file 0600 (SecretFiles).

public struct NodeStateStore: Sendable {
    public let directory: URL

    public enum StoreError: Error, CustomStringConvertible {
        case unreadable(file: String, reason: String)
        public var description: String {
            switch self {
            case .unreadable(let file, let reason):
                "\(file): cannot read stored state: \(reason). Nothing was changed; "
                    + Self.remedy(for: URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent)
            }
        }

        /// What moving the damaged record away costs, so the user can choose.
        static func remedy(for record: String) -> String {
            switch record {
            case "attributes": "move the file away to start with the profile's attribute values (the node stays commissioned)"
            case "commissioning": "move the file away to start uncommissioned (every fabric, ACL and key of the node is lost)"
            case "attestation": "move the file away to mint a new DAC (controllers that pinned the old one see a new device)"
            default: "move the file away to start without it"
            }
        }
    }

    public init(directory: URL) throws {
        self.directory = directory
        try SecretFiles.createDirectory(directory)
        // Records a version without this rule left readable to others.
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where name.hasSuffix(".json") {
            try SecretFiles.restrict(directory.appendingPathComponent(name))
        }
    }

    private func url(_ name: String) -> URL { directory.appendingPathComponent(name + ".json") }

    public func load<T: Decodable>(_ type: T.Type, _ name: String) throws -> T? {
        let file = url(name)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        do {
            return try JSONDecoder().decode(T.self, from: Data(contentsOf: file))
        } catch {
            throw StoreError.unreadable(file: file.path, reason: "\(error)")
        }
    }

    public func save<T: Encodable>(_ value: T, _ name: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(value)
        let temporary = directory.appendingPathComponent(".\(name).\(UUID().uuidString).tmp")
        try SecretFiles.writeNew(data, to: temporary)
        // rename(2) replaces the old file atomically.
        guard rename(temporary.path, url(name).path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url(name).path])
        }
    }

    public func remove(_ name: String) throws {
        let file = url(name)
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }
}
