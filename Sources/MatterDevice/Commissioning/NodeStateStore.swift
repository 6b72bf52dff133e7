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
                "\(file): cannot read stored state: \(reason). "
                    + Self.remedy(for: URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent)
            }
        }

        /// What moving the damaged record away costs, so the user can choose.
        static func remedy(for record: String) -> String {
            switch record {
            case "attributes":
                "Nothing was changed; move the file away to start with the profile's attribute values (the node stays commissioned)"
            case "commissioning":
                "Nothing was changed; move the file away to start uncommissioned (every fabric, ACL and key of the node is lost)"
            case "attestation":
                "Nothing was changed; move the file away to mint a new DAC (controllers that pinned the old one see a new device)"
            // Event numbers only have to grow: the node goes on past any number it could have used.
            case "events": "Nothing to do: the node numbers its events from 2^32, so none is used twice, and rewrites the file"
            case "group-counters":
                "Nothing was changed; move the file away to start without the group senders' message counters "
                    + "(a group message captured before could then act once more)"
            default: "Nothing was changed; move the file away to start without it"
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

    // MARK: Journals
    // A record that changes on every command is appended to as NAME.journal, one line per
    // change, instead of being rewritten: a write(2) to an open file rather than encoding,
    // creating and renaming a whole file before each response. A crash mid-append leaves at
    // most a torn last line, which `journalLines` leaves out.

    public func journalURL(_ name: String) -> URL { directory.appendingPathComponent(name + ".journal") }

    /// The journal's complete lines, oldest first; none when there is no journal.
    public func journalLines(_ name: String) throws -> [Substring] {
        let file = journalURL(name)
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        let data: Data
        do { data = try Data(contentsOf: file) } catch {
            throw StoreError.unreadable(file: file.path, reason: "\(error)")
        }
        let text = String(decoding: data, as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the last newline: empty, or a torn append
        return lines
    }

    /// Opens NAME.journal for appending (created 0600 when missing); `emptied` drops its lines
    /// first.
    public func openJournal(_ name: String, emptied: Bool = false) throws -> Journal {
        let file = journalURL(name)
        let fd = open(file.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | (emptied ? O_TRUNC : 0), 0o600)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path]) }
        return Journal(fd: fd, path: file.path)
    }

    public func removeJournal(_ name: String) throws {
        let file = journalURL(name)
        guard unlink(file.path) == 0 || errno == ENOENT else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: file.path])
        }
    }

    public func remove(_ name: String) throws {
        let file = url(name)
        if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
    }
}

/// An open journal file; each `append` is one write(2) of whole lines.
public final class Journal {
    private var fd: Int32
    public let path: String

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    public func append(_ text: String) throws {
        var text = text
        try text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
                }
                offset += written
            }
        }
    }

    /// Drops every line; appends go on from the start.
    public func empty() throws {
        guard ftruncate(fd, 0) == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path]) }
    }

    public func close() {
        guard fd >= 0 else { return }
        _ = Glibc.close(fd)
        fd = -1
    }

    deinit { close() }
}
