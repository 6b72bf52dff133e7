import Foundation
import GRDB
import MatterCrypto
import RelayProtocol

/// A home: the unit of isolation. Its controllers reach its devices and nothing else.
public struct RelayHome: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var createdAt: Date
}

/// A device registered in a home, allowed to hold a connection to the relay.
public struct RelayDeviceRegistration: Sendable, Hashable, Codable {
    public var homeID: String
    public var deviceID: String
    public var label: String?
    public var createdAt: Date
}

/// What the store refuses.
public enum RelayStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidIdentifier(String)
    case homeExists(String)
    case noSuchHome(String)
    case noSuchDevice(homeID: String, deviceID: String)
    case tooManyDevices(homeID: String, limit: Int)

    public var description: String {
        switch self {
        case .tooManyDevices(let h, let limit): "home '\(h)' has \(limit) devices, the most this relay registers for one home"
        case .invalidIdentifier(let s): "invalid identifier '\(s)': use 1...64 of A-Z a-z 0-9 . _ -"
        case .homeExists(let n): "a home named '\(n)' exists"
        case .noSuchHome(let h): "no home '\(h)'"
        case .noSuchDevice(let h, let d): "no device '\(d)' in home '\(h)'"
        }
    }
}

/// The relay's registrations in SQLite: homes with their token digests, and
/// devices with their credential digests. Survives restarts of the relay.
public final class RelayStore: Sendable {
    private let database: DatabasePool

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    public init(path: String) throws {
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
            FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        database = try DatabasePool(path: path, configuration: configuration)
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try SecretFiles.restrict(URL(fileURLWithPath: file))
        }
        try Self.migrator.migrate(database)
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE home (
                        id TEXT PRIMARY KEY NOT NULL,
                        name TEXT NOT NULL UNIQUE,
                        tokenDigest TEXT NOT NULL UNIQUE,
                        createdAt DATETIME NOT NULL
                    );
                    CREATE TABLE device (
                        homeID TEXT NOT NULL REFERENCES home(id) ON DELETE CASCADE,
                        deviceID TEXT NOT NULL,
                        label TEXT,
                        credentialDigest TEXT NOT NULL UNIQUE,
                        createdAt DATETIME NOT NULL,
                        PRIMARY KEY (homeID, deviceID)
                    );
                    """)
        }
        // A counter every revocation bumps (token rotated, device removed or re-issued), in
        // the same transaction: a running relay polls it to cut the connections it revoked,
        // also when the CLI made the change from another process.
        migrator.registerMigration("v2-revocations") { db in
            try db.execute(
                sql: """
                    CREATE TABLE revocation (id INTEGER PRIMARY KEY CHECK (id = 1), counter INTEGER NOT NULL);
                    INSERT INTO revocation (id, counter) VALUES (1, 0);
                    """)
        }
        return migrator
    }

    private static func bumpRevocations(_ db: Database) throws {
        try db.execute(sql: "UPDATE revocation SET counter = counter + 1 WHERE id = 1")
    }

    /// Grows whenever a credential stops working.
    public func revocationCounter() async throws -> Int64 {
        try await database.read { db in try Int64.fetchOne(db, sql: "SELECT counter FROM revocation WHERE id = 1") ?? 0 }
    }

    // MARK: Homes

    /// Creates a home; returns it with its token, which is shown only this once.
    public func addHome(name: String) async throws -> (home: RelayHome, token: String) {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 128 else { throw RelayStoreError.invalidIdentifier(name) }
        let token = RelayCredentials.generate(prefix: RelayCredentials.homeTokenPrefix)
        let home = RelayHome(id: "h" + RelayCredentials.hex(SecureRandom.bytes(6)), name: trimmed, createdAt: Date())
        let digest = RelayCredentials.digest(token)
        try await database.write { db in
            if try Row.fetchOne(db, sql: "SELECT 1 FROM home WHERE name = ?", arguments: [trimmed]) != nil {
                throw RelayStoreError.homeExists(trimmed)
            }
            try db.execute(
                sql: "INSERT INTO home (id, name, tokenDigest, createdAt) VALUES (?, ?, ?, ?)",
                arguments: [home.id, home.name, digest, home.createdAt])
        }
        return (home, token)
    }

    /// Issues a new token for a home; the old one stops working.
    public func rotateHomeToken(homeID: String) async throws -> String {
        let token = RelayCredentials.generate(prefix: RelayCredentials.homeTokenPrefix)
        let digest = RelayCredentials.digest(token)
        try await database.write { db in
            try db.execute(sql: "UPDATE home SET tokenDigest = ? WHERE id = ?", arguments: [digest, homeID])
            if db.changesCount == 0 { throw RelayStoreError.noSuchHome(homeID) }
            try Self.bumpRevocations(db)
        }
        return token
    }

    public func homes() async throws -> [RelayHome] {
        try await database.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name, createdAt FROM home ORDER BY name").map(Self.home)
        }
    }

    /// The home with this ID, or else with this name.
    public func home(_ idOrName: String) async throws -> RelayHome? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT id, name, createdAt FROM home WHERE id = ? OR name = ? ORDER BY id = ? DESC LIMIT 1",
                arguments: [idOrName, idOrName, idOrName]
            ).map(Self.home)
        }
    }

    /// The home a token belongs to.
    public func authenticateHome(token: String) async throws -> RelayHome? {
        let digest = RelayCredentials.digest(token)
        return try await database.read { db in
            try Row.fetchOne(db, sql: "SELECT id, name, createdAt FROM home WHERE tokenDigest = ?", arguments: [digest]).map(Self.home)
        }
    }

    // MARK: Devices

    /// Registers a device in a home and returns its credential, shown only this once.
    /// Registering an existing device ID issues a new credential; the old one stops working.
    public func registerDevice(homeID: String, deviceID: String, label: String? = nil, limit: Int? = nil) async throws -> String {
        guard RelayFrame.isValidIdentifier(deviceID) else { throw RelayStoreError.invalidIdentifier(deviceID) }
        let credential = RelayCredentials.generate(prefix: RelayCredentials.deviceCredentialPrefix)
        let digest = RelayCredentials.digest(credential)
        let now = Date()
        try await database.write { db in
            guard try Row.fetchOne(db, sql: "SELECT 1 FROM home WHERE id = ?", arguments: [homeID]) != nil else {
                throw RelayStoreError.noSuchHome(homeID)
            }
            // Checked in the write transaction: concurrent registrations cannot pass the limit together.
            if let limit,
                try Row.fetchOne(db, sql: "SELECT 1 FROM device WHERE homeID = ? AND deviceID = ?", arguments: [homeID, deviceID]) == nil,
                try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM device WHERE homeID = ?", arguments: [homeID]) ?? 0 >= limit
            {
                throw RelayStoreError.tooManyDevices(homeID: homeID, limit: limit)
            }
            try db.execute(
                sql: """
                    INSERT INTO device (homeID, deviceID, label, credentialDigest, createdAt) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (homeID, deviceID) DO UPDATE SET credentialDigest = excluded.credentialDigest,
                        label = COALESCE(excluded.label, device.label)
                    """,
                arguments: [homeID, deviceID, label, digest, now])
            try Self.bumpRevocations(db)  // a re-issued credential revokes the old one
        }
        return credential
    }

    public func removeDevice(homeID: String, deviceID: String) async throws {
        try await database.write { db in
            try db.execute(sql: "DELETE FROM device WHERE homeID = ? AND deviceID = ?", arguments: [homeID, deviceID])
            if db.changesCount == 0 { throw RelayStoreError.noSuchDevice(homeID: homeID, deviceID: deviceID) }
            try Self.bumpRevocations(db)
        }
    }

    public func devices(homeID: String) async throws -> [RelayDeviceRegistration] {
        try await database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT homeID, deviceID, label, createdAt FROM device WHERE homeID = ? ORDER BY deviceID",
                arguments: [homeID]
            ).map(Self.device)
        }
    }

    public func device(homeID: String, deviceID: String) async throws -> RelayDeviceRegistration? {
        try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT homeID, deviceID, label, createdAt FROM device WHERE homeID = ? AND deviceID = ?",
                arguments: [homeID, deviceID]
            ).map(Self.device)
        }
    }

    /// The device a credential belongs to.
    public func authenticateDevice(credential: String) async throws -> RelayDeviceRegistration? {
        let digest = RelayCredentials.digest(credential)
        return try await database.read { db in
            try Row.fetchOne(
                db, sql: "SELECT homeID, deviceID, label, createdAt FROM device WHERE credentialDigest = ?", arguments: [digest]
            ).map(Self.device)
        }
    }

    // MARK: Hub mode

    /// Makes the store hold exactly one home, with this ID and token, and these devices:
    /// a local hub's database mirrors its credentials file (devices get no credential
    /// anyone knows: the hub reaches them over Matter, not over `/v1/device`).
    public func mirror(homeID: String, token: String, deviceIDs: [String]) async throws {
        guard RelayFrame.isValidIdentifier(homeID) else { throw RelayStoreError.invalidIdentifier(homeID) }
        for id in deviceIDs where !RelayFrame.isValidIdentifier(id) { throw RelayStoreError.invalidIdentifier(id) }
        let digest = RelayCredentials.digest(token)
        let now = Date()
        try await database.write { db in
            try db.execute(sql: "DELETE FROM home WHERE id != ?", arguments: [homeID])
            try db.execute(
                sql: """
                    INSERT INTO home (id, name, tokenDigest, createdAt) VALUES (?, ?, ?, ?)
                    ON CONFLICT (id) DO UPDATE SET tokenDigest = excluded.tokenDigest
                    """,
                arguments: [homeID, homeID, digest, now])
            let wanted = Set(deviceIDs)
            let existing = Set(try String.fetchAll(db, sql: "SELECT deviceID FROM device WHERE homeID = ?", arguments: [homeID]))
            for id in existing.subtracting(wanted) {
                try db.execute(sql: "DELETE FROM device WHERE homeID = ? AND deviceID = ?", arguments: [homeID, id])
            }
            for id in wanted.subtracting(existing) {
                let unusable = RelayCredentials.digest(RelayCredentials.generate(prefix: RelayCredentials.deviceCredentialPrefix))
                try db.execute(
                    sql: "INSERT INTO device (homeID, deviceID, label, credentialDigest, createdAt) VALUES (?, ?, NULL, ?, ?)",
                    arguments: [homeID, id, unusable, now])
            }
            try Self.bumpRevocations(db)  // the token may have changed
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
