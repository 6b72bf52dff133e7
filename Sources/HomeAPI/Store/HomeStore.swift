import Foundation
import GRDB
import MatterController
import MatterCrypto

/// One structure row.
struct StructureRecord: Sendable, Hashable {
    var id: String
    var name: String
    var address: String? = nil
}

/// One room row.
struct RoomRecord: Sendable, Hashable {
    var id: String
    var structureID: String
    var name: String
}

/// Device types of one endpoint of a commissioned node, as its Descriptor listed them.
struct EndpointRecord: Sendable, Hashable, Codable {
    var endpoint: UInt16
    var deviceTypes: [UInt32]
}

/// One device row: a commissioned Matter node and where it sits in the home.
struct DeviceRecord: Sendable, Hashable {
    var id: String
    var nodeID: UInt64
    var name: String
    var structureID: String?
    var roomID: String?
    var host: String
    var port: Int
    var endpoints: [EndpointRecord]
    var vendorID: UInt16?
    var productID: UInt16?
    var vendorName: String?
    var productName: String?
    var serialNumber: String?
    /// Clusters served only through the cloud relay (learned: relay ServerList − LAN ServerList).
    var cloudOnlyClusters: [CloudOnlyClusters] = []

    func isCloudOnly(endpoint: UInt16, cluster: UInt32) -> Bool {
        cloudOnlyClusters.contains { $0.endpoint == endpoint && $0.clusters.contains(cluster) }
    }
}

/// The whole home graph as stored.
struct HomeGraph: Sendable, Hashable {
    var structures: [String: StructureRecord] = [:]
    var rooms: [String: RoomRecord] = [:]
    var devices: [String: DeviceRecord] = [:]
    var groups: [String: DeviceGroupRecord] = [:]
}

/// The home graph in SQLite (through GRDB): structures, rooms, devices with their node
/// addresses, and the fabric's credentials. Every write bumps a generation counter so
/// other Home instances on the same file notice the change. Writes are serialized by
/// GRDB's pool, so concurrent tasks cannot interleave a read-modify-write.
final class HomeStore: Sendable {
    let pool: DatabasePool
    let path: String

    init(path: String) throws {
        self.path = path
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        do {
            // The database holds the fabric's root CA key, the controller's key and the IPK:
            // owner-only. SQLite gives its -wal and -shm files the database file's mode.
            let file = URL(fileURLWithPath: path)
            try Self.refuseNonRegularFile(file)
            // Created 0600 (O_EXCL: a link put there meanwhile is not followed), or another process did.
            if !FileManager.default.fileExists(atPath: path) { try? SecretFiles.writeNew(Data(), to: file) }
            try? SecretFiles.restrict(file)  // best effort: a database of another owner opens as it is
            pool = try DatabasePool(path: path, configuration: configuration)
            // A damaged file (truncated, garbled) can still answer the queries that miss the
            // damage: checked whole first, before anything is written to it.
            let check = try pool.read { db in try String.fetchAll(db, sql: "PRAGMA quick_check") }
            guard check == ["ok"] else {
                throw DatabaseError(resultCode: .SQLITE_CORRUPT, message: check.prefix(3).joined(separator: "; "))
            }
            try Self.migrator.migrate(pool)
        } catch let error as HomeError {
            throw error
        } catch let error as DatabaseError where [.SQLITE_NOTADB, .SQLITE_CORRUPT].contains(error.resultCode) {
            throw HomeError(
                code: .unavailable,
                message: "cannot open the home database \(path): \(error). The file is damaged and was left as it is: "
                    + "restore it from a copy, or move it away (keep it: it holds the fabric's keys) to start an empty "
                    + "home, whose devices must then be commissioned again")
        } catch {
            throw HomeError(code: .unavailable, message: "cannot open the home database \(path): \(error)")
        }
    }

    /// A home database is a regular file: a directory, a device, a FIFO or a symbolic link
    /// named as one (`--home /`, `--home /dev/null`) is refused before anything touches it.
    static func refuseNonRegularFile(_ file: URL) throws {
        var status = stat()
        guard lstat(file.path, &status) == 0 else { return }  // missing: created as a new file
        guard let problem = try? SecretFiles.regularFileProblem(file), status.st_mode & S_IFMT != S_IFREG else { return }
        throw HomeError.invalidArgument(
            "cannot use \(file.path) as the home database: \(problem). Give the path of a database file (created if missing)")
    }

    /// Closes the database's connections (a closed home keeps no file open). Best effort:
    /// GRDB refuses while a statement is still in use, and the pool then closes when freed.
    func close() {
        try? pool.close()
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), generation INTEGER NOT NULL);
                    INSERT INTO meta (id, generation) VALUES (1, 0);
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
                    """)
        }
        // v2 (issue #6): the clusters a device serves only through the relay. Adding a
        // column with a default keeps every stored row.
        migrator.registerMigration("v2-cloud-only-clusters") { db in
            try db.execute(sql: "ALTER TABLE device ADD COLUMN cloudOnlyClusters TEXT NOT NULL DEFAULT '[]'")
        }
        // v3 (issue #8): the structure's address, automations and their runs (Store/AutomationStore.swift).
        migrator.registerMigration("v3-automations", migrate: migrateAutomations)
        // v4 (issue #21): device groups (Store/DeviceGroupStore.swift).
        migrator.registerMigration("v4-device-groups", migrate: migrateDeviceGroups)
        return migrator
    }

    // MARK: Reading

    func generation() async throws -> Int64 {
        try await read { db in try Int64.fetchOne(db, sql: "SELECT generation FROM meta WHERE id = 1") ?? 0 }
    }

    func loadGraph() async throws -> HomeGraph {
        try await read { db in
            var graph = HomeGraph()
            // row.decode throws on a value of the wrong type (row[...] would trap): a hand-edited
            // or damaged database is an error naming the column, not a crash.
            for row in try Row.fetchAll(db, sql: "SELECT * FROM structure") {
                let s = try StructureRecord(
                    id: row.decode(forColumn: "id"), name: row.decode(forColumn: "name"),
                    address: row.decode(forColumn: "address"))
                graph.structures[s.id] = s
            }
            for row in try Row.fetchAll(db, sql: "SELECT id, structureID, name FROM room") {
                let r = try RoomRecord(
                    id: row.decode(forColumn: "id"), structureID: row.decode(forColumn: "structureID"),
                    name: row.decode(forColumn: "name"))
                graph.rooms[r.id] = r
            }
            for row in try Row.fetchAll(db, sql: "SELECT * FROM device") {
                let endpointsJSON: String = try row.decode(forColumn: "endpoints")
                let endpoints = (try? JSONDecoder().decode([EndpointRecord].self, from: Data(endpointsJSON.utf8))) ?? []
                let cloudOnlyJSON = try row.decode(String?.self, forColumn: "cloudOnlyClusters") ?? "[]"
                let cloudOnly = (try? JSONDecoder().decode([CloudOnlyClusters].self, from: Data(cloudOnlyJSON.utf8))) ?? []
                let node: Int64 = try row.decode(forColumn: "nodeID")
                let d = try DeviceRecord(
                    id: row.decode(forColumn: "id"), nodeID: UInt64(bitPattern: node), name: row.decode(forColumn: "name"),
                    structureID: row.decode(forColumn: "structureID"),
                    roomID: row.decode(forColumn: "roomID"), host: row.decode(forColumn: "host"), port: row.decode(forColumn: "port"),
                    endpoints: endpoints,
                    vendorID: row.decode(Int64?.self, forColumn: "vendorID").flatMap { UInt16(exactly: $0) },
                    productID: row.decode(Int64?.self, forColumn: "productID").flatMap { UInt16(exactly: $0) },
                    vendorName: row.decode(forColumn: "vendorName"), productName: row.decode(forColumn: "productName"),
                    serialNumber: row.decode(forColumn: "serialNumber"),
                    cloudOnlyClusters: cloudOnly)
                graph.devices[d.id] = d
            }
            graph.groups = try self.loadDeviceGroups(db)
            return graph
        }
    }

    func fabric() async throws -> (FabricCredentials, UInt64)? {
        try await read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT credentials, nextNodeID FROM fabric WHERE id = 1") else { return nil }
            let data: Data = try row.decode(forColumn: "credentials")
            let next: Int64 = try row.decode(forColumn: "nextNodeID")
            return (try JSONDecoder().decode(FabricCredentials.self, from: data), UInt64(bitPattern: next))
        }
    }

    // MARK: Writing

    /// Stores the fabric unless one is already there; returns the one that is stored.
    func saveFabricIfAbsent(_ credentials: FabricCredentials) async throws -> FabricCredentials {
        try await write { db in
            if let row = try Row.fetchOne(db, sql: "SELECT credentials FROM fabric WHERE id = 1") {
                let data: Data = try row.decode(forColumn: "credentials")
                return try JSONDecoder().decode(FabricCredentials.self, from: data)
            }
            try db.execute(
                sql: "INSERT INTO fabric (id, credentials, nextNodeID) VALUES (1, ?, ?)",
                arguments: [try JSONEncoder().encode(credentials), 0x10])
            return credentials
        }
    }

    /// Hands out the next operational node ID (never reused).
    func allocateNodeID() async throws -> UInt64 {
        try await write { db in
            guard let next = try Int64.fetchOne(db, sql: "SELECT nextNodeID FROM fabric WHERE id = 1") else {
                throw HomeError.failedPrecondition("no fabric yet")
            }
            try db.execute(sql: "UPDATE fabric SET nextNodeID = nextNodeID + 1 WHERE id = 1")
            return UInt64(bitPattern: next)
        }
    }

    func insertStructure(_ s: StructureRecord) async throws {
        try await write { db in
            try db.execute(sql: "INSERT INTO structure (id, name) VALUES (?, ?)", arguments: [s.id, s.name])
        }
    }

    func renameStructure(_ id: String, to name: String) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE structure SET name = ? WHERE id = ?", arguments: [name, id])
            guard db.changesCount == 1 else { throw HomeError.notFound("no structure with ID \(id)") }
        }
    }

    func insertRoom(_ r: RoomRecord) async throws {
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM structure WHERE id = ?", arguments: [r.structureID]) != nil else {
                throw HomeError.notFound("no structure with ID \(r.structureID)")
            }
            try db.execute(sql: "INSERT INTO room (id, structureID, name) VALUES (?, ?, ?)", arguments: [r.id, r.structureID, r.name])
        }
    }

    func renameRoom(_ id: String, to name: String) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE room SET name = ? WHERE id = ?", arguments: [name, id])
            guard db.changesCount == 1 else { throw HomeError.notFound("no room with ID \(id)") }
        }
    }

    /// Deletes a room of `structureID`; its devices stay in the structure, unassigned.
    func deleteRoom(_ id: String, structureID: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM room WHERE id = ? AND structureID = ?", arguments: [id, structureID])
            guard db.changesCount == 1 else { throw HomeError.notFound("no room with ID \(id) in structure \(structureID)") }
        }
    }

    func renameDevice(_ id: String, to name: String) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE device SET name = ? WHERE id = ?", arguments: [name, id])
            guard db.changesCount == 1 else { throw HomeError.notFound("no device with ID \(id)") }
        }
    }

    /// Moves devices into a room of a structure, all or none.
    func moveDevices(_ ids: [String], toRoom roomID: String, structureID: String) async throws {
        try await write { db in
            guard
                try Bool.fetchOne(
                    db, sql: "SELECT 1 FROM room WHERE id = ? AND structureID = ?",
                    arguments: [roomID, structureID]) != nil
            else {
                throw HomeError.notFound("no room with ID \(roomID) in structure \(structureID)")
            }
            for id in ids {
                try db.execute(sql: "UPDATE device SET roomID = ?, structureID = ? WHERE id = ?", arguments: [roomID, structureID, id])
                guard db.changesCount == 1 else { throw HomeError.notFound("no device with ID \(id)") }
            }
        }
    }

    func upsertDevice(_ d: DeviceRecord) async throws {
        let endpoints = String(decoding: try JSONEncoder().encode(d.endpoints), as: UTF8.self)
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO device (id, nodeID, name, structureID, roomID, host, port, endpoints, vendorID, productID,
                                        vendorName, productName, serialNumber)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT(id) DO UPDATE SET host = excluded.host, port = excluded.port, endpoints = excluded.endpoints
                    """,
                arguments: [
                    d.id, Int64(bitPattern: d.nodeID), d.name, d.structureID, d.roomID, d.host, d.port, endpoints,
                    d.vendorID.map { Int64($0) }, d.productID.map { Int64($0) }, d.vendorName, d.productName, d.serialNumber,
                ])
        }
    }

    /// Records the device's cloud-only clusters.
    func setCloudOnlyClusters(_ id: String, _ clusters: [CloudOnlyClusters]) async throws {
        let json = String(decoding: try JSONEncoder().encode(clusters), as: UTF8.self)
        try await write { db in
            try db.execute(sql: "UPDATE device SET cloudOnlyClusters = ? WHERE id = ?", arguments: [json, id])
            guard db.changesCount == 1 else { throw HomeError.notFound("no device with ID \(id)") }
        }
    }

    func deleteDevice(_ id: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM device WHERE id = ?", arguments: [id])
            guard db.changesCount == 1 else { throw HomeError.notFound("no device with ID \(id)") }
        }
    }

    // MARK: Plumbing

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.read(body)
        } catch let e as HomeError {
            throw e
        } catch {
            throw HomeError(code: .dataLoss, message: "home database \(path): read failed: \(error)")
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write { db in
                let result = try body(db)
                try db.execute(sql: "UPDATE meta SET generation = generation + 1 WHERE id = 1")
                return result
            }
        } catch let e as HomeError {
            throw e
        } catch let e as DatabaseError where e.resultCode == .SQLITE_CONSTRAINT {
            throw HomeError(code: .alreadyExists, message: "home database constraint: \(e.message ?? "\(e)")")
        } catch {
            throw HomeError(code: .dataLoss, message: "home database \(path): write failed: \(error)")
        }
    }
}
