import ArgumentParser
import CloudRelay
import Foundation
import Hummingbird
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the relay until SIGINT or SIGTERM (then shut down gracefully).")

    @OptionGroup var database: DatabaseOption
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0: any free port, printed at start).") var port = 8080
    @Option(help: "File holding the admin token for /v1/admin (else $MATTER_RELAY_ADMIN_TOKEN; none: admin API off).")
    var adminTokenFile: String?
    @Option(help: "Largest relay frame in bytes; a larger message closes that connection.") var maxFrameSize = 64 * 1024
    @Option(help: "Log level (trace, debug, info, notice, warning, error, critical).") var logLevel = "info"

    func run() async throws {
        var logger = Logger(label: "matter-relay")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        var adminToken = ProcessInfo.processInfo.environment["MATTER_RELAY_ADMIN_TOKEN"]
        if let adminTokenFile {
            adminToken = try String(contentsOfFile: adminTokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        if adminToken?.isEmpty == true { adminToken = nil }
        let store = try RelayStore(path: database.database)
        let server = RelayServer(
            store: store,
            configuration: RelayServerConfiguration(host: host, port: port, adminToken: adminToken, maxFrameSize: maxFrameSize),
            logger: logger)
        let homes = try await store.homes().count
        let host = host
        let adminState = adminToken == nil ? "off" : "on"
        let app = server.application { port in
            // One line a script can wait for (stdout may be a pipe: write it through at once).
            FileHandle.standardOutput.write(Data("matter-relay listening on \(host):\(port) (\(homes) homes, admin API \(adminState))\n".utf8))
        }
        try await app.runService()
        let snapshot = server.metrics.snapshot
        print(
            "matter-relay stopped: \(snapshot.connectionsAccepted.values.reduce(0, +)) connections served, "
                + "\(snapshot.routed.values.reduce(0, +)) frames routed, \(snapshot.rejected.values.reduce(0, +)) rejected")
    }
}
