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

    /// Issue #37 item 8: restrict chmod-ed whatever the path named, following links. Only a
    /// regular file of this user is narrowed; a directory, a link's target, a FIFO keep their mode.
    @Test func onlyARegularFileIsNarrowed() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("secret-kinds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: root) }
        let target = root.appendingPathComponent("shared.txt")
        try Data("shared".utf8).write(to: target)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        let link = root.appendingPathComponent("link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let fifo = root.appendingPathComponent("fifo.json")
        #expect(mkfifo(fifo.path, 0o644) == 0)

        for (url, kind) in [(root, "a directory"), (link, "a symbolic link"), (fifo, "a FIFO")] {
            let error = #expect(throws: SecretFileError.self) { try SecretFiles.restrict(url) }
            #expect(error?.description.contains(kind) == true, "\(error?.description ?? "")")
        }
        #expect(try Self.mode(root) == 0o755)
        #expect(try Self.mode(target) == 0o644)
        #expect(try Self.mode(fifo) == 0o644)
        try SecretFiles.restrict(target)
        #expect(try Self.mode(target) == 0o600)
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
