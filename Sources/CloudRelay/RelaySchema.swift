/// The relay's schema, for both engines: one ordered list of migrations. Each has an ID that
/// never changes once shipped and statements in the SQL SQLite and PostgreSQL both speak, with
/// the few words that differ filled in per engine (`Dialect`). New steps go at the end.
///
/// How each engine applies it:
/// * SQLite (`RelaySQLiteStore`): GRDB's `DatabaseMigrator`, one registered migration per
///   entry; applied IDs are in `grdb_migrations` (so files made before this list keep theirs).
/// * PostgreSQL (`RelayPostgresStore`): its own runner, in one transaction under an advisory
///   lock (instances starting together apply each step once); applied IDs are in `relay_migrations`.
enum RelaySchema {
    enum Dialect: Sendable {
        case sqlite
        case postgres

        /// A point in time: GRDB writes `Date` as text into SQLite; PostgreSQL has its own type.
        var timestamp: String {
            switch self {
            case .sqlite: "DATETIME"
            case .postgres: "TIMESTAMPTZ"
            }
        }
    }

    struct Migration: Sendable {
        let id: String
        let statements: @Sendable (Dialect) -> [String]
    }

    static let migrations: [Migration] = [
        Migration(id: "v1") { dialect in
            [
                """
                CREATE TABLE home (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL UNIQUE,
                    tokenDigest TEXT NOT NULL UNIQUE,
                    createdAt \(dialect.timestamp) NOT NULL
                )
                """,
                """
                CREATE TABLE device (
                    homeID TEXT NOT NULL REFERENCES home(id) ON DELETE CASCADE,
                    deviceID TEXT NOT NULL,
                    label TEXT,
                    credentialDigest TEXT NOT NULL UNIQUE,
                    createdAt \(dialect.timestamp) NOT NULL,
                    PRIMARY KEY (homeID, deviceID)
                )
                """,
            ]
        },
        // A counter every revocation bumps (token rotated, device removed or re-issued), in
        // the same transaction: a running relay polls it to cut the connections it revoked,
        // also when the CLI or another instance made the change.
        Migration(id: "v2-revocations") { _ in
            [
                "CREATE TABLE revocation (id INTEGER PRIMARY KEY CHECK (id = 1), counter BIGINT NOT NULL)",
                "INSERT INTO revocation (id, counter) VALUES (1, 0)",
            ]
        },
        // Instances sharing a PostgreSQL store and the connections each holds (`RelayCluster`);
        // on SQLite, where one process serves, they stay empty.
        Migration(id: "v3-instances") { dialect in
            [
                "CREATE TABLE relay_instance (id TEXT PRIMARY KEY NOT NULL, heartbeatAt \(dialect.timestamp) NOT NULL)",
                """
                CREATE TABLE relay_connection (
                    instanceID TEXT NOT NULL REFERENCES relay_instance(id) ON DELETE CASCADE,
                    peer BIGINT NOT NULL,
                    role TEXT NOT NULL,
                    homeID TEXT NOT NULL,
                    deviceID TEXT,
                    connectedAt \(dialect.timestamp) NOT NULL,
                    PRIMARY KEY (instanceID, peer)
                )
                """,
                "CREATE INDEX relay_connection_device ON relay_connection (homeID, deviceID)",
            ]
        },
        // Nodes waiting to be commissioned, as each fleet replica (a source) reported them last,
        // for the home's controllers (`RelayStore.reportOnboarding`): one row per source, its
        // nodes as JSON, replaced whole by the next report.
        Migration(id: "v4-onboarding") { dialect in
            [
                """
                CREATE TABLE onboarding (
                    homeID TEXT NOT NULL REFERENCES home(id) ON DELETE CASCADE,
                    source TEXT NOT NULL,
                    reporter TEXT,
                    nodes TEXT NOT NULL,
                    reportedAt \(dialect.timestamp) NOT NULL,
                    PRIMARY KEY (homeID, source)
                )
                """
            ]
        },
        // Where an instance takes the others' links (`--cross-instance forward`), and the secret
        // they present: `RelayClusterLinks`. NULL for instances that only use NOTIFY.
        Migration(id: "v5-instance-links") { _ in
            [
                "ALTER TABLE relay_instance ADD COLUMN address TEXT",
                "ALTER TABLE relay_instance ADD COLUMN linkSecret TEXT",
            ]
        },
    ]
}
