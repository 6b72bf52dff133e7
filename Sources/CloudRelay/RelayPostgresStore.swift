import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO

/// The store's rows in PostgreSQL (PostgresNIO's pooled client): the engine several relay
/// instances share. Same schema and steps as SQLite (`RelaySchema`), applied by `migrate()`.
final class RelayPostgresStore: RelayStoreEngine {
    let client: PostgresClient
    let logger: Logger
    private let running: Task<Void, Never>
    /// Queries and transactions in progress, for the metrics' pool use; the lock guards it.
    private let inFlight = NIOLockedValueBox(0)
    let maximumConnections: Int
    var name: String { "postgresql" }

    /// How long the first connection may take before `connect` gives up with the URL's host in the error.
    static let connectTimeout = Duration.seconds(10)
    /// Any 64-bit number, the same for every instance: the migrations' advisory lock, "mrelay"'s bytes.
    private static let migrationLock: Int64 = "mrelay".utf8.reduce(0) { $0 << 8 | Int64($1) }

    static func isURL(_ location: String) -> Bool {
        location.hasPrefix("postgres://") || location.hasPrefix("postgresql://")
    }

    /// Parses `url`, connects, and brings the schema up to date.
    static func connect(url: String, maximumConnections: Int = 20, logger: Logger) async throws -> RelayPostgresStore {
        let configuration = try configuration(url: url, maximumConnections: maximumConnections)
        let store = RelayPostgresStore(configuration: configuration, logger: logger)
        do {
            try await store.migrate()
        } catch {
            await store.close()
            throw RelayStoreError.databaseUnavailable("\(redacted(url)): \(String(reflecting: error))")
        }
        return store
    }

    /// The client's configuration from a `postgres://user[:password]@host[:port]/database` URL;
    /// `?sslmode=disable|prefer|require` (default prefer), `?host=/socket/dir` for a Unix socket.
    static func configuration(url: String, maximumConnections: Int) throws -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), isURL(url), let user = components.user, !user.isEmpty else {
            throw RelayStoreError.invalidDatabaseURL(redacted(url))
        }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        var configuration: PostgresClient.Configuration
        if let socketDirectory = query["host"], socketDirectory.hasPrefix("/") {
            let port = components.port ?? 5432
            configuration = .init(
                unixSocketPath: "\(socketDirectory)/.s.PGSQL.\(port)", username: user, password: components.password,
                database: database.isEmpty ? nil : database)
        } else {
            guard let host = components.host, !host.isEmpty else { throw RelayStoreError.invalidDatabaseURL(redacted(url)) }
            let tls: PostgresClient.Configuration.TLS
            switch query["sslmode"] ?? "prefer" {
            case "disable": tls = .disable
            case "prefer": tls = .prefer(.makeClientConfiguration())
            case "require": tls = .require(.makeClientConfiguration())
            default: throw RelayStoreError.invalidDatabaseURL(redacted(url) + " (sslmode: expected disable, prefer or require)")
            }
            configuration = .init(
                host: host, port: components.port ?? 5432, username: user, password: components.password,
                database: database.isEmpty ? nil : database, tls: tls)
        }
        configuration.options.maximumConnections = maximumConnections
        configuration.options.connectTimeout = connectTimeout
        return configuration
    }

    /// The URL without its password, for errors and logs.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? "postgres://…"
    }

    private init(configuration: PostgresClient.Configuration, logger: Logger) {
        self.logger = logger
        maximumConnections = configuration.options.maximumConnections
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        self.client = client
        running = Task { await client.run() }
    }

    func close() async {
        running.cancel()
        await running.value
    }

    /// Connections of the pool in use now, and its size.
    var poolUse: (inUse: Int, size: Int) { (inFlight.withLockedValue { $0 }, maximumConnections) }

    /// A query on a pooled connection, counted in `poolUse`; its rows are collected.
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> [PostgresRow] {
        try await counted { try await client.query(query, logger: logger).collect() }
    }

    /// `body` in one transaction (rolled back when it throws), counted in `poolUse`.
    func transaction<T: Sendable>(_ body: (PostgresConnection) async throws -> T) async throws -> T {
        try await counted {
            do {
                return try await client.withTransaction(logger: logger) { connection in try await body(connection) }
            } catch let error as PostgresTransactionError {
                // The closure's own error (a RelayStoreError) comes first; else what failed around it.
                throw error.closureError ?? error.beginError ?? error.commitError ?? error
            }
        }
    }

    private func counted<T>(_ body: () async throws -> T) async throws -> T {
        inFlight.withLockedValue { $0 += 1 }
        defer { inFlight.withLockedValue { $0 -= 1 } }
        return try await body()
    }

    /// Applies `RelaySchema`'s steps not yet in `relay_migrations`, in order, in one transaction
    /// under an advisory lock: instances starting together wait for each other.
    func migrate() async throws {
        let lock = Self.migrationLock
        try await withDeadline(Self.connectTimeout + .seconds(5)) {
            try await self.transaction { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(lock))", logger: self.logger)
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS relay_migrations (id TEXT PRIMARY KEY, appliedAt TIMESTAMPTZ NOT NULL DEFAULT now())",
                    logger: self.logger)
                var applied = Set<String>()
                for try await id in try await connection.query("SELECT id FROM relay_migrations", logger: self.logger).decode(String.self) {
                    applied.insert(id)
                }
                for migration in RelaySchema.migrations where !applied.contains(migration.id) {
                    for statement in migration.statements(.postgres) {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: self.logger)
                    }
                    try await connection.query("INSERT INTO relay_migrations (id) VALUES (\(migration.id))", logger: self.logger)
                }
            }
        }
    }

    private static let bumpRevocations: PostgresQuery = "UPDATE revocation SET counter = counter + 1 WHERE id = 1"

    func revocationCounter() async throws -> Int64 {
        try await query("SELECT counter FROM revocation WHERE id = 1").first?.decode(Int64.self) ?? 0
    }

    func insertHome(_ home: RelayHome, tokenDigest: String) async throws {
        let inserted = try await query(
            """
            INSERT INTO home (id, name, tokenDigest, createdAt) VALUES (\(home.id), \(home.name), \(tokenDigest), \(home.createdAt))
            ON CONFLICT (name) DO NOTHING RETURNING id
            """)
        if inserted.isEmpty { throw RelayStoreError.homeExists(home.name) }
    }

    func replaceTokenDigest(homeID: String, digest: String) async throws {
        try await transaction { connection in
            let updated = try await connection.query(
                "UPDATE home SET tokenDigest = \(digest) WHERE id = \(homeID) RETURNING id", logger: logger
            ).collect()
            if updated.isEmpty { throw RelayStoreError.noSuchHome(homeID) }
            try await connection.query(Self.bumpRevocations, logger: logger)
        }
    }

    func homes() async throws -> [RelayHome] {
        try await query("SELECT id, name, createdAt FROM home ORDER BY name").map(Self.home)
    }

    func home(idOrName: String) async throws -> RelayHome? {
        try await query(
            "SELECT id, name, createdAt FROM home WHERE id = \(idOrName) OR name = \(idOrName) ORDER BY id = \(idOrName) DESC LIMIT 1"
        ).first.map(Self.home)
    }

    func home(tokenDigest: String) async throws -> RelayHome? {
        try await query("SELECT id, name, createdAt FROM home WHERE tokenDigest = \(tokenDigest)").first.map(Self.home)
    }

    func upsertDevice(_ device: RelayDeviceRegistration, credentialDigest: String, limit: Int?) async throws {
        try await transaction { connection in
            // The home's row locked: concurrent registrations in one home take turns, so they
            // cannot pass the limit together.
            let home = try await connection.query("SELECT id FROM home WHERE id = \(device.homeID) FOR UPDATE", logger: logger).collect()
            if home.isEmpty { throw RelayStoreError.noSuchHome(device.homeID) }
            if let limit {
                let rows = try await connection.query(
                    """
                    SELECT COUNT(*), COUNT(*) FILTER (WHERE deviceID = \(device.deviceID)) FROM device WHERE homeID = \(device.homeID)
                    """, logger: logger
                ).collect()
                var (count, same): (Int64, Int64) = (0, 0)
                if let row = rows.first { (count, same) = try row.decode((Int64, Int64).self) }
                if same == 0, count >= Int64(limit) { throw RelayStoreError.tooManyDevices(homeID: device.homeID, limit: limit) }
            }
            try await connection.query(
                """
                INSERT INTO device (homeID, deviceID, label, credentialDigest, createdAt)
                VALUES (\(device.homeID), \(device.deviceID), \(device.label), \(credentialDigest), \(device.createdAt))
                ON CONFLICT (homeID, deviceID) DO UPDATE SET credentialDigest = excluded.credentialDigest,
                    label = COALESCE(excluded.label, device.label)
                """, logger: logger)
            try await connection.query(Self.bumpRevocations, logger: logger)  // a re-issued credential revokes the old one
        }
    }

    func deleteDevice(homeID: String, deviceID: String) async throws {
        try await transaction { connection in
            let deleted = try await connection.query(
                "DELETE FROM device WHERE homeID = \(homeID) AND deviceID = \(deviceID) RETURNING deviceID", logger: logger
            ).collect()
            if deleted.isEmpty { throw RelayStoreError.noSuchDevice(homeID: homeID, deviceID: deviceID) }
            try await connection.query(Self.bumpRevocations, logger: logger)
        }
    }

    func devices(homeID: String) async throws -> [RelayDeviceRegistration] {
        try await query("SELECT homeID, deviceID, label, createdAt FROM device WHERE homeID = \(homeID) ORDER BY deviceID").map(Self.device)
    }

    func device(homeID: String, deviceID: String) async throws -> RelayDeviceRegistration? {
        try await query(
            "SELECT homeID, deviceID, label, createdAt FROM device WHERE homeID = \(homeID) AND deviceID = \(deviceID)"
        ).first.map(Self.device)
    }

    func device(credentialDigest: String) async throws -> RelayDeviceRegistration? {
        try await query(
            "SELECT homeID, deviceID, label, createdAt FROM device WHERE credentialDigest = \(credentialDigest)"
        ).first.map(Self.device)
    }

    func mirror(home: RelayHome, tokenDigest: String, deviceIDs: Set<String>) async throws {
        try await transaction { connection in
            try await connection.query("DELETE FROM home WHERE id != \(home.id)", logger: logger)
            try await connection.query(
                """
                INSERT INTO home (id, name, tokenDigest, createdAt) VALUES (\(home.id), \(home.name), \(tokenDigest), \(home.createdAt))
                ON CONFLICT (id) DO UPDATE SET tokenDigest = excluded.tokenDigest
                """, logger: logger)
            var existing = Set<String>()
            for try await id in try await connection.query("SELECT deviceID FROM device WHERE homeID = \(home.id)", logger: logger)
                .decode(String.self)
            {
                existing.insert(id)
            }
            for id in existing.subtracting(deviceIDs) {
                try await connection.query("DELETE FROM device WHERE homeID = \(home.id) AND deviceID = \(id)", logger: logger)
            }
            for id in deviceIDs.subtracting(existing) {
                let digest = Self.unusableDigest()
                try await connection.query(
                    """
                    INSERT INTO device (homeID, deviceID, label, credentialDigest, createdAt)
                    VALUES (\(home.id), \(id), NULL, \(digest), \(home.createdAt))
                    """, logger: logger)
            }
            try await connection.query(Self.bumpRevocations, logger: logger)  // the token may have changed
        }
    }

    func dump() async throws -> RelayStoreRows {
        try await transaction { connection in
            var homes: [(home: RelayHome, tokenDigest: String)] = []
            for row in try await connection.query("SELECT id, name, createdAt, tokenDigest FROM home ORDER BY id", logger: logger).collect() {
                let (id, name, createdAt, digest) = try row.decode((String, String, Date, String).self)
                homes.append((RelayHome(id: id, name: name, createdAt: createdAt), digest))
            }
            var devices: [(device: RelayDeviceRegistration, credentialDigest: String)] = []
            for row in try await connection.query(
                "SELECT homeID, deviceID, label, createdAt, credentialDigest FROM device ORDER BY homeID, deviceID", logger: logger
            ).collect() {
                let (homeID, deviceID, label, createdAt, digest) = try row.decode((String, String, String?, Date, String).self)
                devices.append((RelayDeviceRegistration(homeID: homeID, deviceID: deviceID, label: label, createdAt: createdAt), digest))
            }
            let counter =
                try await connection.query("SELECT counter FROM revocation WHERE id = 1", logger: logger).collect().first?.decode(
                    Int64.self) ?? 0
            return RelayStoreRows(homes: homes, devices: devices, revocationCounter: counter)
        }
    }

    func load(_ rows: RelayStoreRows) async throws {
        try await transaction { connection in
            for (home, digest) in rows.homes {
                try await connection.query(
                    """
                    INSERT INTO home (id, name, tokenDigest, createdAt) VALUES (\(home.id), \(home.name), \(digest), \(home.createdAt))
                    ON CONFLICT (id) DO UPDATE SET name = excluded.name, tokenDigest = excluded.tokenDigest
                    """, logger: logger)
            }
            for (device, digest) in rows.devices {
                try await connection.query(
                    """
                    INSERT INTO device (homeID, deviceID, label, credentialDigest, createdAt)
                    VALUES (\(device.homeID), \(device.deviceID), \(device.label), \(digest), \(device.createdAt))
                    ON CONFLICT (homeID, deviceID) DO UPDATE SET label = excluded.label, credentialDigest = excluded.credentialDigest
                    """, logger: logger)
            }
            try await connection.query(
                "UPDATE revocation SET counter = GREATEST(counter, \(rows.revocationCounter)) + 1 WHERE id = 1", logger: logger)
        }
    }

    func replaceOnboarding(homeID: String, source: String, reporter: String?, nodesJSON: String, at: Date) async throws {
        try await transaction { connection in
            // The home's row locked: two reports of one source take turns.
            let home = try await connection.query("SELECT id FROM home WHERE id = \(homeID) FOR UPDATE", logger: logger).collect()
            if home.isEmpty { throw RelayStoreError.noSuchHome(homeID) }
            if let reporter,
                let row = try await connection.query(
                    "SELECT reporter FROM onboarding WHERE homeID = \(homeID) AND source = \(source)", logger: logger
                ).collect().first,
                let owner = try row.decode(String?.self), owner != reporter
            {
                throw RelayStoreError.onboardingSourceTaken(source: source, reportedBy: owner)
            }
            try await connection.query(
                """
                INSERT INTO onboarding (homeID, source, reporter, nodes, reportedAt)
                VALUES (\(homeID), \(source), \(reporter), \(nodesJSON), \(at))
                ON CONFLICT (homeID, source) DO UPDATE SET reporter = excluded.reporter, nodes = excluded.nodes,
                    reportedAt = excluded.reportedAt
                """, logger: logger)
        }
    }

    func onboarding(homeID: String) async throws -> [(source: String, reporter: String?, nodesJSON: String)] {
        try await query("SELECT source, reporter, nodes FROM onboarding WHERE homeID = \(homeID) ORDER BY source").map {
            let (source, reporter, nodes) = try $0.decode((String, String?, String).self)
            return (source, reporter, nodes)
        }
    }

    private static func home(_ row: PostgresRow) throws -> RelayHome {
        let (id, name, createdAt) = try row.decode((String, String, Date).self)
        return RelayHome(id: id, name: name, createdAt: createdAt)
    }

    private static func device(_ row: PostgresRow) throws -> RelayDeviceRegistration {
        let (homeID, deviceID, label, createdAt) = try row.decode((String, String, String?, Date).self)
        return RelayDeviceRegistration(homeID: homeID, deviceID: deviceID, label: label, createdAt: createdAt)
    }
}

/// `body`, or `RelayStoreError.databaseUnavailable` once `limit` has passed (a pool that
/// cannot connect keeps retrying: the first use says so instead of waiting for ever).
func withDeadline<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            // real time: external: how long the database server may take to answer.
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else {
            throw RelayStoreError.databaseUnavailable("no answer within \(limit)")
        }
        return value
    }
}
