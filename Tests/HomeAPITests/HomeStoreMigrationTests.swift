import Foundation
import GRDB
import HomeAPI
import TestDevices
import Testing

/// A home file written before issue #6 (schema v1) opens with its data intact and gains
/// the cloud-only clusters column.
@Suite("Home store migration")
struct HomeStoreMigrationTests {
    /// The home database holds the fabric's root CA key, the controller's key and the IPK: a
    /// new one is created owner-only in an owner-only folder, with its WAL files alike, and
    /// an older world-readable one is narrowed when opened.
    @Test func theHomeDatabaseIsOwnerOnly() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        func mode(_ url: URL) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
        }
        let folder = dir.appendingPathComponent("homectl")
        let url = folder.appendingPathComponent("home.sqlite")
        let home = try await Home.open(at: url)
        _ = try await home.createStructure(name: "Private")
        #expect(try mode(folder) == 0o700)
        #expect(try mode(url) == 0o600)
        for suffix in ["-wal", "-shm"] {
            let side = URL(fileURLWithPath: url.path + suffix)
            if FileManager.default.fileExists(atPath: side.path) { #expect(try mode(side) == 0o600, "\(suffix)") }
        }
        await home.close()

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: url.path)
        let again = try await Home.open(at: url)
        #expect(try mode(url) == 0o600)
        #expect(try await again.structures().list().map(\.name) == ["Private"])
        await again.close()
    }

    /// Opens the home at `url` and reads it with `read`, expecting a HomeError that names the
    /// file; its message ("" if none came).
    func errorOpening(
        _ url: URL, _ configuration: HomeConfiguration, read: (Home) async throws -> Void
    ) async -> String {
        let error = await #expect(throws: HomeError.self) {
            let reopened = try await Home.open(at: url, configuration: configuration)
            try await read(reopened)
            await reopened.close()
        }
        let message = error?.message ?? ""
        #expect(message.contains(url.path), "names the file: \(message)")
        return message
    }

    /// Issue #37 item 8: `homectl --home DIR` (as root, `--home /`) made the directory mode
    /// 0600, and a link to a 0644 file left that file 0600 though the message said it was
    /// left as it was. Neither is a database file: refused, named, and their modes unchanged.
    @Test func aDirectoryOrASymlinkNamedAsTheHomeIsRefusedAndKeepsItsMode() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        func mode(_ url: URL) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
        }
        var c = testConfiguration()
        c.connectDevices = false
        let folder = dir.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let message = await errorOpening(folder, c) { _ = try await $0.structures().list() }
        #expect(message.contains("a directory, not a regular file"), "\(message)")
        #expect(try mode(folder) == 0o755)

        let target = dir.appendingPathComponent("notes.txt")
        try Data("not a home\n".utf8).write(to: target)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: target.path)
        let link = dir.appendingPathComponent("home.sqlite")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        let linkMessage = await errorOpening(link, c) { _ = try await $0.structures().list() }
        #expect(linkMessage.contains("a symbolic link"), "\(linkMessage)")
        #expect(try mode(target) == 0o644)
        #expect(try Data(contentsOf: target) == Data("not a home\n".utf8))
    }

    /// A FIFO (as /dev/null, a device) is refused before it is opened: mode unchanged, no hang.
    @Test func aFIFONamedAsTheHomeIsRefusedUntouched() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("home.sqlite")
        #expect(mkfifo(fifo.path, 0o644) == 0)
        var c = testConfiguration()
        c.connectDevices = false
        let message = await errorOpening(fifo, c) { _ = try await $0.structures().list() }
        #expect(message.contains("a FIFO, not a regular file"), "\(message)")
        #expect(try FileManager.default.attributesOfItem(atPath: fifo.path)[.posixPermissions] as? Int == 0o644)
    }

    /// A damaged home database (truncated, or garbled past SQLite's header) is an error that
    /// names the file and says what to do; the file is left byte for byte as it was.
    @Test func aDamagedHomeDatabaseIsAClearErrorAndIsLeftAsItIs() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("home.sqlite")
        var c = testConfiguration()
        c.connectDevices = false
        let home = try await Home.open(at: url, configuration: c)
        for n in 1...40 {
            let structure = try await home.createStructure(name: "Flat \(n)")
            _ = try await structure.createRoom(name: "Room \(n)")
        }
        await home.close()
        // Everything into the file itself, as after a clean shutdown of the last connection.
        let queue = try DatabaseQueue(path: url.path)
        try await queue.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try queue.close()
        let whole = try Data(contentsOf: url)
        #expect(whole.count >= 4 * 4096, "several pages: \(whole.count) bytes")
        var garbled = whole
        for i in stride(from: 100, to: garbled.count, by: 7) { garbled[i] ^= 0xA5 }
        for damaged in [whole.prefix(whole.count / 3), garbled] {
            try damaged.write(to: url)
            for side in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + side) }
            let message = await errorOpening(url, c) { _ = try await $0.structures().list() }
            #expect(message.contains("move it away"), "says what to do: \(message)")
            #expect(try Data(contentsOf: url) == damaged, "left as it was")
        }
    }

    /// A value of the wrong type in the home database (hand-edited, or written by another
    /// tool) is an error naming the file and the column, not a trap in GRDB; the rows stay.
    @Test func aWrongColumnTypeIsAnErrorNotACrash() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("home.sqlite")
        var c = testConfiguration()
        c.connectDevices = false
        let home = try await Home.open(at: url, configuration: c)
        let structure = try await home.createStructure(name: "Flat")
        await home.close()

        let queue = try DatabaseQueue(path: url.path)
        try await queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO device (id, nodeID, name, structureID, host, port, endpoints, cloudOnlyClusters)
                        VALUES ('matter-16', 'sixteen', 'Lamp', ?, '127.0.0.1', 5540, '[]', '[]')
                    """, arguments: [structure.id])
        }
        try queue.close()

        let message = await errorOpening(url, c) { _ = try await $0.devices().list() }
        #expect(message.contains("nodeID"), "names the column: \(message)")

        // Nothing stored is lost: the row is still there, as written.
        let check = try DatabaseQueue(path: url.path)
        let kept = try await check.read { db in try String.fetchOne(db, sql: "SELECT nodeID FROM device WHERE id = 'matter-16'") }
        #expect(kept == "sixteen")
        try check.close()
    }

    @Test func aV1HomeFileKeepsItsGraphAfterTheCloudOnlyMigration() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("home.sqlite")
        // The v1 schema as shipped, marked applied the way GRDB's migrator marks it.
        let queue = try DatabaseQueue(path: url.path)
        try await queue.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations (identifier) VALUES ('v1');
                    CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), generation INTEGER NOT NULL);
                    INSERT INTO meta (id, generation) VALUES (1, 7);
                    CREATE TABLE structure (id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                    CREATE TABLE room (
                        id TEXT PRIMARY KEY NOT NULL,
                        structureID TEXT NOT NULL REFERENCES structure(id) ON DELETE CASCADE,
                        name TEXT NOT NULL);
                    CREATE TABLE device (
                        id TEXT PRIMARY KEY NOT NULL,
                        nodeID INTEGER NOT NULL UNIQUE,
                        name TEXT NOT NULL,
                        structureID TEXT REFERENCES structure(id) ON DELETE SET NULL,
                        roomID TEXT REFERENCES room(id) ON DELETE SET NULL,
                        host TEXT NOT NULL,
                        port INTEGER NOT NULL,
                        endpoints TEXT NOT NULL,
                        vendorID INTEGER, productID INTEGER,
                        vendorName TEXT, productName TEXT, serialNumber TEXT);
                    CREATE TABLE fabric (
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        credentials BLOB NOT NULL,
                        nextNodeID INTEGER NOT NULL);
                    INSERT INTO structure (id, name) VALUES ('s1', 'Home');
                    INSERT INTO room (id, structureID, name) VALUES ('r1', 's1', 'Kitchen');
                    INSERT INTO device (id, nodeID, name, structureID, roomID, host, port, endpoints, serialNumber)
                        VALUES ('matter-10', 16, 'Old lamp', 's1', 'r1', '127.0.0.1', 5540,
                                '[{"endpoint":1,"deviceTypes":[257]}]', 'OLD-1');
                    """)
        }
        try queue.close()

        var c = testConfiguration()
        c.connectDevices = false
        let home = try await Home.open(at: url, configuration: c)
        let device = try await home.device(id: "matter-10")
        #expect(device.name == "Old lamp")
        #expect(device.roomID == "r1" && device.structureID == "s1")
        #expect(device.types.contains(DimmableLightDeviceType.self))
        #expect(try await home.room(id: "r1").name == "Kitchen")
        // v3 (issue #8): the structure has no address yet and gets one; it has no automations.
        let structure = try await home.structure(id: "s1")
        #expect(structure.name == "Home" && structure.address == nil)
        #expect(try await structure.setAddress("2 Old Road").address == "2 Old Road")
        #expect(try await structure.listAutomations().isEmpty)
        // v4 (issue #21): device groups start empty on an old file.
        #expect(try await home.deviceGroups().list().isEmpty)
        await home.close()

        let check = try DatabaseQueue(path: url.path)
        let (migrations, cloudOnly) = try await check.read { db in
            (
                try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations ORDER BY identifier"),
                try String.fetchOne(db, sql: "SELECT cloudOnlyClusters FROM device WHERE id = 'matter-10'")
            )
        }
        #expect(migrations == ["v1", "v2-cloud-only-clusters", "v3-automations", "v4-device-groups"])
        #expect(cloudOnly == "[]")
        try check.close()
    }
}
