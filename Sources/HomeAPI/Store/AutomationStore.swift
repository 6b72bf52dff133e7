import Foundation
import GRDB

// Issue #8's part of the home graph: a structure's address, the automations of each
// structure and a record of every run.

/// One automation row; `definition` is the validated automation as JSON.
struct AutomationRecord: Sendable, Hashable {
    var id: String
    var structureID: String
    var name: String
    var description: String
    var isActive: Bool
    var createdAt: Date
    var definition: AutomationDefinition
}

/// v3: appended after v2, only adds a column and tables, so every stored row stays.
func migrateAutomations(_ db: Database) throws {
    try db.execute(
        sql: """
            ALTER TABLE structure ADD COLUMN address TEXT;
            CREATE TABLE automation (
                id TEXT PRIMARY KEY NOT NULL,
                structureID TEXT NOT NULL REFERENCES structure(id) ON DELETE CASCADE,
                name TEXT NOT NULL,
                description TEXT NOT NULL,
                isActive INTEGER NOT NULL,
                createdAt REAL NOT NULL,
                definition TEXT NOT NULL);
            CREATE TABLE automationRun (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                automationID TEXT NOT NULL,
                automationName TEXT NOT NULL,
                time REAL NOT NULL,
                starter TEXT NOT NULL,
                actions TEXT NOT NULL,
                outcome TEXT NOT NULL,
                message TEXT NOT NULL);
            CREATE INDEX automationRunByAutomation ON automationRun(automationID, id);
            """)
}

extension HomeStore {
    func setStructureAddress(_ id: String, _ address: String?) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE structure SET address = ? WHERE id = ?", arguments: [address, id])
            guard db.changesCount == 1 else { throw HomeError.notFound("no structure with ID \(id)") }
        }
    }

    func insertAutomation(_ a: AutomationRecord) async throws {
        let json = String(decoding: try JSONEncoder().encode(a.definition), as: UTF8.self)
        try await write { db in
            try db.execute(
                sql: """
                    INSERT INTO automation (id, structureID, name, description, isActive, createdAt, definition)
                    VALUES (?, ?, ?, ?, ?, ?, ?)
                    """, arguments: [a.id, a.structureID, a.name, a.description, a.isActive, a.createdAt.timeIntervalSince1970, json])
        }
    }

    /// Automations of one structure, or of all.
    func automations(structureID: String?) async throws -> [AutomationRecord] {
        try await read { db in
            let rows =
                structureID.map {
                    try? Row.fetchAll(
                        db, sql: "SELECT * FROM automation WHERE structureID = ? ORDER BY createdAt, id",
                        arguments: [$0])
                }
                ?? (try? Row.fetchAll(db, sql: "SELECT * FROM automation ORDER BY createdAt, id"))
            return try (rows ?? []).compactMap { row -> AutomationRecord? in
                let json: String = try row.decode(forColumn: "definition")
                // A definition this version cannot read is skipped, not fatal.
                guard let definition = try? JSONDecoder().decode(AutomationDefinition.self, from: Data(json.utf8)) else { return nil }
                let created: Double = try row.decode(forColumn: "createdAt")
                return try AutomationRecord(
                    id: row.decode(forColumn: "id"), structureID: row.decode(forColumn: "structureID"),
                    name: row.decode(forColumn: "name"), description: row.decode(forColumn: "description"),
                    isActive: row.decode(forColumn: "isActive"), createdAt: Date(timeIntervalSince1970: created),
                    definition: definition)
            }
        }
    }

    func setAutomationActive(_ id: String, structureID: String, _ active: Bool) async throws {
        try await write { db in
            try db.execute(
                sql: "UPDATE automation SET isActive = ? WHERE id = ? AND structureID = ?", arguments: [active, id, structureID])
            guard db.changesCount == 1 else { throw HomeError.notFound("no automation with ID \(id) in structure \(structureID)") }
        }
    }

    func deleteAutomation(_ id: String, structureID: String) async throws {
        try await write { db in
            try db.execute(sql: "DELETE FROM automation WHERE id = ? AND structureID = ?", arguments: [id, structureID])
            guard db.changesCount == 1 else { throw HomeError.notFound("no automation with ID \(id) in structure \(structureID)") }
        }
    }

    /// Records a run. Runs are history, not graph: no generation bump (other Homes need not reload).
    func recordRun(_ run: AutomationRun) async throws {
        let actions = String(decoding: try JSONEncoder().encode(run.actions), as: UTF8.self)
        do {
            try await pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO automationRun (automationID, automationName, time, starter, actions, outcome, message)
                        VALUES (?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        run.automationID, run.automationName, run.time.timeIntervalSince1970, run.starter, actions,
                        run.outcome.rawValue, run.message,
                    ])
            }
        } catch {
            throw HomeError(code: .dataLoss, message: "home database write failed: \(error)")
        }
    }

    /// The latest runs, newest first.
    func runs(automationID: String?, limit: Int) async throws -> [AutomationRun] {
        try await read { db in
            let rows: [Row]
            if let automationID {
                rows = try Row.fetchAll(
                    db, sql: "SELECT * FROM automationRun WHERE automationID = ? ORDER BY id DESC LIMIT ?",
                    arguments: [automationID, limit])
            } else {
                rows = try Row.fetchAll(db, sql: "SELECT * FROM automationRun ORDER BY id DESC LIMIT ?", arguments: [limit])
            }
            return try rows.map { row in
                let actionsJSON: String = try row.decode(forColumn: "actions")
                let time: Double = try row.decode(forColumn: "time")
                let outcome: String = try row.decode(forColumn: "outcome")
                return try AutomationRun(
                    id: row.decode(forColumn: "id"), automationID: row.decode(forColumn: "automationID"),
                    automationName: row.decode(forColumn: "automationName"),
                    time: Date(timeIntervalSince1970: time), starter: row.decode(forColumn: "starter"),
                    actions: (try? JSONDecoder().decode([String].self, from: Data(actionsJSON.utf8))) ?? [],
                    outcome: AutomationRun.Outcome(rawValue: outcome) ?? .failure,
                    message: row.decode(forColumn: "message"))
            }
        }
    }
}
