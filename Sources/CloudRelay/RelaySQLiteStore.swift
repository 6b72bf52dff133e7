import Foundation
import GRDB
import MatterCrypto

/// The store's rows in one SQLite file (GRDB), the relay's default engine: one process, or
/// the CLI beside it on the same file.
final class RelaySQLiteStore: RelayStoreEngine {
    private let database: DatabasePool
    var name: String { "sqlite" }

    init(path: String) throws {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        // The CLI and a running relay may touch the same file: wait rather than fail.
        configuration.busyMode = .timeout(5)
        // WAL (a DatabasePool): reads never wait for a registration being written, and a
        // commit costs one sync of the log instead of several of the database.
        // Token and credential digests: readable by the relay's user only (SQLite gives its
        // -wal and -shm files the database file's mode). A file an older relay made 0644 is
        // narrowed too.
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        database = try DatabasePool(path: path, configuration: configuration)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try SecretFiles.restrict(URL(fileURLWithPath: file))
        }
        try Self.migrator.migrate(database)
    }

    /// `RelaySchema`'s list, one GRDB migration per entry.
    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in RelaySchema.migrations {
            migrator.registerMigration(migration.id) { db in
                for statement in migration.statements(.sqlite) { try db.execute(sql: statement) }
            }
        }
        return migrator
    }

    func close() async {}

    private static func bumpRevocations(_ db: Database) throws {
        try db.execute(sql: "UPDATE revocation SET counter = counter + 1 WHERE id = 1")
    }

    func revocationCounter() async throws -> Int64 {
        try await database.read { db in try Int64.fetchOne(db, sql: "SELECT counter FROM revocation WHERE id = 1") ?? 0 }
    }

    func insertHome(_ home: RelayHome, tokenDigest: String) async throws {
        try await database.write { db in
            if try Row.fetchOne(db, sql: "SELECT 1 FROM home WHERE name = ?", arguments: [home.name]) != nil {
                throw RelayStoreError.homeExists(home.name)
            }
            try db.execute(
                sql: "INSERT INTO home (id, name, tokenDigest, createdAt) VALUES (?, ?, ?, ?)",
                arguments: [home.id, home.name, tokenDigest, home.createdAt])
        }
    }

    func replaceTokenDigest(homeID: String, digest: String) async throws {
        try await database.write { db in
            try db.execute(sql: "UPDATE home SET tokenDigest = ? WHERE id = ?", arguments: [digest, homeID])
            if db.changesCount == 0 { throw RelayStoreError.noSuchHome(homeID) }
            try Self.bumpRevocations(db)
        }
    }

    func homes() async throws -> [RelayHome] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, createdAt FROM home ORDER BY name").map(Self.home)
        }
    }

    func home(idOrName: String) async throws -> RelayHome? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT id, name, createdAt FROM home WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1",
                arguments: [idOrName, idOrName, idOrName]
            ).map(Self.home)
        }
    }

    func home(tokenDigest: String) async throws -> RelayHome? {
        try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT id, name, createdAt FROM home WHERE tokenDigest = ?", arguments: [tokenDigest]).map(Self.home)
        }
    }

    func upsertDevice(_ device: RelayDeviceRegistration, credentialDigest: String, limit: Int?) async throws {
        try await database.write { db in
            guard try Row.fetchOne(db, sql: "SELECT 1 FROM home WHERE id = ?", arguments: [device.homeID]) != nil else {
                throw RelayStoreError.noSuchHome(device.homeID)
            }
            // Checked in the write transaction: concurrent registrations cannot pass the limit together.
            if let limit,
                try Row.fetchOne(
                    db, sql: "SELECT 1 FROM device WHERE homeID = ? AND deviceID = ?", arguments: [device.homeID, device.deviceID]) == nil,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM device WHERE homeID = ?", arguments: [device.homeID]) ?? 0 >= limit
            {
                throw RelayStoreError.tooManyDevices(homeID: device.homeID, limit: limit)
            }
            try db.execute(
                sql: """
                    INSERT INTO device (homeID, deviceID, label, credentialDigest, createdAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (homeID, deviceID) DO UPDATE SET credentialDigest = excluded.credentialDigest,
                        label = COALESCE(excluded.label, device.label)
                    """,
                arguments: [device.homeID, device.deviceID, device.label, credentialDigest, device.createdAt])
            try Self.bumpRevocations(db)  // a re-issued credential revokes the old one
        }
    }

    func deleteDevice(homeID: String, deviceID: String) async throws {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM device WHERE homeID = ? AND deviceID = ?", arguments: [homeID, deviceID])
            if db.changesCount == 0 { throw RelayStoreError.noSuchDevice(homeID: homeID, deviceID: deviceID) }
            try Self.bumpRevocations(db)
        }
    }

    func devices(homeID: String) async throws -> [RelayDeviceRegistration] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT homeID, deviceID, label, createdAt FROM device WHERE homeID = ? ORDER BY deviceID",
                arguments: [homeID]
            ).map(Self.device)
        }
    }

    func device(homeID: String, deviceID: String) async throws -> RelayDeviceRegistration? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT homeID, deviceID, label, createdAt FROM device WHERE homeID = ? AND deviceID = ?",
                arguments: [homeID, deviceID]
            ).map(Self.device)
        }
    }

    func device(credentialDigest: String) async throws -> RelayDeviceRegistration? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT homeID, deviceID, label, createdAt FROM device WHERE credentialDigest = ?",
                arguments: [credentialDigest]
            ).map(Self.device)
        }
    }

    func mirror(home: RelayHome, tokenDigest: String, deviceIDs: Set<String>) async throws {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM home WHERE id != ?", arguments: [home.id])
            try db.execute(
                sql: """
                    INSERT INTO home (id, name, tokenDigest, createdAt) VALUES (?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET tokenDigest = excluded.tokenDigest
                    """,
                arguments: [home.id, home.name, tokenDigest, home.createdAt])
            let existing = Set(try String.fetchAll(db, sql: "SELECT deviceID FROM device WHERE homeID = ?", arguments: [home.id]))
            for id in existing.subtracting(deviceIDs) {
                try db.execute(sql: "DELETE FROM device WHERE homeID = ? AND deviceID = ?", arguments: [home.id, id])
            }
            for id in deviceIDs.subtracting(existing) {
                try db.execute(
                    sql: "INSERT INTO device (homeID, deviceID, label, credentialDigest, createdAt) VALUES (?, ?, NULL, ?, ?)",
                    arguments: [home.id, id, Self.unusableDigest(), home.createdAt])
            }
            try Self.bumpRevocations(db)  // the token may have changed
        }
    }

    func dump() async throws -> RelayStoreRows {
        try await database.read { db in
            let homes = try Row.fetchAll(db, sql: "SELECT id, name, createdAt, tokenDigest FROM home ORDER BY id").map {
                (home: try Self.home($0), tokenDigest: try $0.decode(String.self, forColumn: "tokenDigest"))
            }
            let devices = try Row.fetchAll(
                db, sql: "SELECT homeID, deviceID, label, createdAt, credentialDigest FROM device ORDER BY homeID, deviceID"
            ).map { (device: try Self.device($0), credentialDigest: try $0.decode(String.self, forColumn: "credentialDigest")) }
            let counter = try Int64.fetchOne(db, sql: "SELECT counter FROM revocation WHERE id = 1") ?? 0
            return RelayStoreRows(homes: homes, devices: devices, revocationCounter: counter)
        }
    }

    func load(_ rows: RelayStoreRows) async throws {
        try await database.write { db in
            for (home, digest) in rows.homes {
                try db.execute(
                    sql: """
                        INSERT INTO home (id, name, tokenDigest, createdAt) VALUES (?, ?, ?, ?)
                        ON CONFLICT (id) DO UPDATE SET name = excluded.name, tokenDigest = excluded.tokenDigest
                        """,
                    arguments: [home.id, home.name, digest, home.createdAt])
            }
            for (device, digest) in rows.devices {
                try db.execute(
                    sql: """
                        INSERT INTO device (homeID, deviceID, label, credentialDigest, createdAt) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT (homeID, deviceID) DO UPDATE SET label = excluded.label, credentialDigest = excluded.credentialDigest
                        """,
                    arguments: [device.homeID, device.deviceID, device.label, digest, device.createdAt])
            }
            try db.execute(
                sql: "UPDATE revocation SET counter = MAX(counter, ?) + 1 WHERE id = 1", arguments: [rows.revocationCounter])
        }
    }

    func replaceOnboarding(homeID: String, source: String, reporter: String?, nodesJSON: String, at: Date) async throws {
        try await database.write { db in
            guard try Row.fetchOne(db, sql: "SELECT 1 FROM home WHERE id = ?", arguments: [homeID]) != nil else {
                throw RelayStoreError.noSuchHome(homeID)
            }
            if let reporter,
                let owner = try String?.fetchOne(
                    db, sql: "SELECT reporter FROM onboarding WHERE homeID = ? AND source = ?", arguments: [homeID, source]) ?? nil,
                owner != reporter
            {
                throw RelayStoreError.onboardingSourceTaken(source: source, reportedBy: owner)
            }
            try db.execute(
                sql: """
                    INSERT INTO onboarding (homeID, source, reporter, nodes, reportedAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (homeID, source) DO UPDATE SET reporter = excluded.reporter, nodes = excluded.nodes,
                        reportedAt = excluded.reportedAt
                    """,
                arguments: [homeID, source, reporter, nodesJSON, at])
        }
    }

    func onboarding(homeID: String) async throws -> [(source: String, reporter: String?, nodesJSON: String)] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT source, reporter, nodes FROM onboarding WHERE homeID = ? ORDER BY source", arguments: [homeID])
                .map { (try $0.decode(forColumn: "source"), try $0.decode(forColumn: "reporter"), try $0.decode(forColumn: "nodes")) }
        }
    }

    // row.decode throws on a value of the wrong type where row[...] would trap.
    private static func home(_ row: Row) throws -> RelayHome {
        try RelayHome(id: row.decode(forColumn: "id"), name: row.decode(forColumn: "name"), createdAt: row.decode(forColumn: "createdAt"))
    }

    private static func device(_ row: Row) throws -> RelayDeviceRegistration {
        try RelayDeviceRegistration(
            homeID: row.decode(forColumn: "homeID"), deviceID: row.decode(forColumn: "deviceID"),
            label: row.decode(forColumn: "label"), createdAt: row.decode(forColumn: "createdAt"))
    }
}
