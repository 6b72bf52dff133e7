import Foundation
import MatterCrypto
import Testing
@testable import MatterDevice

/// A node's state directory holds its operational key, IPK and DAC key: owner-only, whatever
/// the umask, and records an older version left readable are narrowed when the node starts.
@Suite("Secret files")
struct SecretFilesTests {
    static func mode(_ url: URL) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test func nodeStateIsOwnerOnly() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("secret-files-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("state/SIM-1")
        let old = umask(0o022)
        defer { umask(old) }

        let store = try NodeStateStore(directory: directory)
        try store.save(["key": "secret"], "commissioning")
        #expect(try Self.mode(directory) == 0o700)
        #expect(try Self.mode(root.appendingPathComponent("state")) == 0o700)
        #expect(try Self.mode(directory.appendingPathComponent("commissioning.json")) == 0o600)
        try store.save(["key": "rotated"], "commissioning")  // a rewrite keeps the mode
        #expect(try Self.mode(directory.appendingPathComponent("commissioning.json")) == 0o600)

        // A record written world-readable (as before) is narrowed by the next start.
        let legacy = directory.appendingPathComponent("attestation.json")
        try Data("{}".utf8).write(to: legacy)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: legacy.path)
        _ = try NodeStateStore(directory: directory)
        #expect(try Self.mode(legacy) == 0o600)
        #expect(try store.load([String: String].self, "commissioning") == ["key": "rotated"])
    }

    @Test func anExistingDirectoryKeepsItsMode() throws {
        let shared = FileManager.default.temporaryDirectory.appendingPathComponent("secret-shared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: shared, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: shared) }
        try SecretFiles.createDirectory(shared)
        #expect(try Self.mode(shared) == 0o755)
        #expect(throws: (any Error).self) { try SecretFiles.writeNew(Data(), to: shared) }
    }
}
