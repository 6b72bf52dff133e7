import Foundation
import GRDB

/// One device group row: its members and the Matter group behind it (Core spec 4.16): the
/// fabric's group ID and the key set (one epoch key) its group messages are sealed with.
struct DeviceGroupRecord: Sendable, Hashable {
    var id: String
    var structureID: String
    var name: String
    var groupID: UInt16
    var keySetID: UInt16
    var epochKey: [UInt8]
    /// Microseconds since the Matter epoch (2000-01-01 UTC).
    var epochStartTime: UInt64
    /// Member device IDs with the endpoints that joined the group.
    var members: [String: [UInt16]]
}

/// The controller's group message counter (spec 4.5.1.3: one per sender, never reused
/// with the same key): the store keeps the end of the block handed out, so a restart
/// resumes past everything that may have been sent.
let groupCounterBlock: UInt32 = 1_000

/// v4 (issue #21): device groups, their members, the group message counter.
func migrateDeviceGroups(_ db: Database) throws {
    try db.execute(
        sql: """
            CREATE TABLE deviceGroup (
                id TEXT PRIMARY KEY NOT NULL,
                structureID TEXT NOT NULL REFERENCES structure(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                groupID INTEGER NOT NULL UNIQUE,
                keySetID INTEGER NOT NULL,
                epochKey BLOB NOT NULL,
                epochStartTime INTEGER NOT NULL);
            CREATE TABLE deviceGroupMember (
                groupID TEXT NOT NULL REFERENCES deviceGroup(id) ON DELETE CASCADE,
                deviceID TEXT NOT NULL REFERENCES device(id) ON DELETE CASCADE,
                endpoints TEXT NOT NULL,
                PRIMARY KEY (groupID, deviceID));
            CREATE TABLE groupCounter (id INTEGER PRIMARY KEY CHECK (id = 1), reservedUntil INTEGER NOT NULL);
            """)
}

extension HomeStore {
    func loadDeviceGroups(_ db: Database) throws -> [String: DeviceGroupRecord] {
        var groups: [String: DeviceGroupRecord] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM deviceGroup") {
            let group: Int64 = try row.decode(forColumn: "groupID")
            let keySet: Int64 = try row.decode(forColumn: "keySetID")
            let start: Int64 = try row.decode(forColumn: "epochStartTime")
            let key: Data = try row.decode(forColumn: "epochKey")
            let g = try DeviceGroupRecord(
                id: row.decode(forColumn: "id"), structureID: row.decode(forColumn: "structureID"), name: row.decode(forColumn: "name"),
                groupID: UInt16(truncatingIfNeeded: group), keySetID: UInt16(truncatingIfNeeded: keySet), epochKey: [UInt8](key),
                epochStartTime: UInt64(bitPattern: start), members: [:])
            groups[g.id] = g
        }
        for row in try Row.fetchAll(db, sql: "SELECT * FROM deviceGroupMember") {
            let groupID: String = try row.decode(forColumn: "groupID")
            let deviceID: String = try row.decode(forColumn: "deviceID")
            let json: String = try row.decode(forColumn: "endpoints")
            groups[groupID]?.members[deviceID] = (try? JSONDecoder().decode([UInt16].self, from: Data(json.utf8))) ?? []
        }
        return groups
    }

    /// The lowest fabric group ID no group uses (application groups start at 0x0001).
    func unusedGroupID() async throws -> UInt16 {
        try await read { db in
            let used = Set(try Int64.fetchAll(db, sql: "SELECT groupID FROM deviceGroup"))
            guard let free = (1...0xFEFF).first(where: { !used.contains(Int64($0)) }) else {
                throw HomeError(code: .resourceExhausted, message: "every application group ID is in use")
            }
            return UInt16(free)
        }
    }

    func insertDeviceGroup(_ g: DeviceGroupRecord) async throws {
        let members = try g.members.map { ($0.key, String(decoding: try JSONEncoder().encode($0.value), as: UTF8.self)) }
        try await write { db in
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM structure WHERE id = ?", arguments: [g.structureID]) != nil else {
                throw HomeError.notFound("no structure with ID \(g.structureID)")
            }
            try db.execute(
                sql: """
                    INSERT INTO deviceGroup (id, structureID, name, groupID, keySetID, epochKey, epochStartTime)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    g.id, g.structureID, g.name, Int64(g.groupID), Int64(g.keySetID), Data(g.epochKey),
                    Int64(bitPattern: g.epochStartTime),
                ])
            for (deviceID, endpoints) in members {
                try db.execute(
                    sql: "INSERT INTO deviceGroupMember (groupID, deviceID, endpoints) VALUES (?, ?, ?)",
                    arguments: [g.id, deviceID, endpoints])
            }
        }
    }

    func deleteDeviceGroup(_ id: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM deviceGroup WHERE id = ?", arguments: [id])
            guard db.changesCount == 1 else { throw HomeError.notFound("no device group with ID \(id)") }
        }
    }

    /// Hands out the next block of group message counters: [start, start + block). A new
    /// home starts at a random value (spec 4.5.1.3), below 2^28 so it lasts.
    func reserveGroupCounters() async throws -> ClosedRange<UInt32> {
        try await write { db in
            let stored = try Int64.fetchOne(db, sql: "SELECT reservedUntil FROM groupCounter WHERE id = 1")
            let start = stored.map { UInt32(truncatingIfNeeded: $0) } ?? UInt32.random(in: 1...(1 << 28))
            let end = start &+ groupCounterBlock
            guard end > start else { throw HomeError(code: .resourceExhausted, message: "the group message counter ran out") }
            try db.execute(
                sql: "INSERT INTO groupCounter (id, reservedUntil) VALUES (1, ?) "
                    + "ON CONFLICT(id) DO UPDATE SET reservedUntil = excluded.reservedUntil", arguments: [Int64(end)])
            return start...(end - 1)
        }
    }
}
