import ChildProcess
import Foundation
import Glibc
import Testing

/// A real PostgreSQL 15 server for one test: `initdb` in a temporary directory, `postgres` on
/// 127.0.0.1 on a free port with its Unix socket in that directory, stopped and removed
/// afterwards. As root it runs as the `postgres` user (the server refuses to run as root).
struct TestPostgres: Sendable {
    static let binaries = "/usr/lib/postgresql/15/bin"
    static var available: Bool {
        ["initdb", "pg_ctl", "postgres"].allSatisfy { FileManager.default.isExecutableFile(atPath: "\(binaries)/\($0)") }
    }
    static let missing = Comment(rawValue: "needs PostgreSQL 15's initdb, pg_ctl and postgres in \(binaries) (apt-get install postgresql-15)")

    let directory: URL
    let port: Int
    /// The superuser `relay`, trusted on loopback; database `postgres` exists from `initdb`.
    var url: String { "postgres://relay@127.0.0.1:\(port)/postgres?sslmode=disable" }
    var dataDirectory: String { directory.appendingPathComponent("data").path }

    /// Runs `command` as the server's user (root: `postgres` through runuser).
    private static func run(_ command: [String], timeout: TimeInterval = 60) throws -> CommandResult {
        let arguments = getuid() == 0 ? ["/usr/sbin/runuser", "-u", "postgres", "--"] + command : command
        return try Command.run(arguments, timeout: timeout)
    }

    /// A data directory made by `initdb` once, owned by the server's user. It outlives the test
    /// process (no static is torn down), so each process first removes those of ended processes.
    private static let template: Result<String, any Error> = Result {
        let temporary = FileManager.default.temporaryDirectory
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary.path)) ?? []
        where name.hasPrefix("relay-pg-template-") {
            if let pid = Int32(name.dropFirst("relay-pg-template-".count)), kill(pid, 0) != 0 {
                try? FileManager.default.removeItem(at: temporary.appendingPathComponent(name))
            }
        }
        let directory = temporary.appendingPathComponent("relay-pg-template-\(getpid())")
        try? FileManager.default.removeItem(at: directory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres", .posixPermissions: 0o700], ofItemAtPath: directory.path)
        }
        let data = directory.appendingPathComponent("data").path
        let initdb = try run(["\(binaries)/initdb", "-D", data, "-U", "relay", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions"])
        guard initdb.status == 0 else { throw SpawnError(description: "initdb failed (\(initdb.status)): \(initdb.errors)") }
        return data
    }

    static func start() throws -> TestPostgres {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relay-pg-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if getuid() == 0 {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres", .posixPermissions: 0o700], ofItemAtPath: directory.path)
        }
        let data = directory.appendingPathComponent("data").path
        // One initdb per test process (about 2 s each); every server starts from a copy of it.
        let copied = try run(["/bin/cp", "-a", try template.get(), data])
        guard copied.status == 0 else {
            try? FileManager.default.removeItem(at: directory)
            throw SpawnError(description: "copying the initdb template failed (\(copied.status)): \(copied.errors)")
        }
        // A port free now may be taken before the server binds it: try a few.
        var failures: [String] = []
        for _ in 0..<3 {
            let port = try freeLoopbackPort()
            let options = "-c listen_addresses=127.0.0.1 -p \(port) -k \(directory.path) -c fsync=off -c full_page_writes=off"
            let started = try run([
                "\(binaries)/pg_ctl", "-D", data, "-l", directory.appendingPathComponent("server.log").path, "-o", options, "-w", "-t", "30",
                "start",
            ])
            if started.status == 0 { return TestPostgres(directory: directory, port: port) }
            failures.append(started.output + started.errors)
        }
        try? FileManager.default.removeItem(at: directory)
        throw SpawnError(description: "postgres did not start: \(failures.joined(separator: " / "))")
    }

    /// Stops the server at once (its data goes with the directory) and removes the directory.
    func stop() {
        _ = try? Self.run(["\(Self.binaries)/pg_ctl", "-D", dataDirectory, "-m", "immediate", "-w", "stop"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// The server's log, for a failing test's message.
    var log: String { (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? "" }
}

/// Runs `body` with a fresh server, stopped afterwards whatever happens.
func withPostgres<T: Sendable>(_ body: @Sendable (TestPostgres) async throws -> T) async throws -> T {
    let server = try TestPostgres.start()
    do {
        let result = try await body(server)
        server.stop()
        return result
    } catch {
        server.stop()
        throw error
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on now.
func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SpawnError(description: "socket: \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw SpawnError(description: "bind: \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
