import ArgumentParser
import CloudRelay
import Foundation
import HomeHub
import Hummingbird
import Logging
import MatterController
import ServiceLifecycle

extension RelayCrossInstance: ExpressibleByArgument {}

/// What `serve` runs: the cloud relay, or a home's local hub.
enum ServeMode: String, ExpressibleByArgument, CaseIterable {
    /// Devices connect over WebSockets with their credentials.
    case cloud
    /// Devices are reached over Matter CASE sessions on the LAN, with hub credentials.
    case hub
}

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Run the relay (or a local hub) until SIGINT or SIGTERM (then shut down gracefully).",
        discussion: """
            --mode hub serves the same controller protocol on the home's LAN, reaching the devices over \
            Matter with the credentials `homectl hub credentials --out FILE` issued (--credentials FILE).
            """)

    @Option(help: "cloud: devices connect over WebSockets; hub: a local hub reaching devices over Matter.")
    var mode: ServeMode = .cloud
    @Option(help: "Hub credentials file from `homectl hub credentials` (hub mode).") var credentials: String?
    @Option(
        help: """
            SQLite database of homes and devices (default matter-relay.sqlite; hub mode: matter-hub.sqlite), \
            or postgres://user@host:port/db: the store several cloud relay instances share \
            (a URL with a password: give it in $MATTER_RELAY_DATABASE, out of `ps`).
            """)
    var database: String?
    @Option(help: "Address to listen on.") var host = "127.0.0.1"
    @Option(help: "Port to listen on (0: any free port, printed at start).") var port = 8080
    @Option(help: "File holding the admin token for /v1/admin (else $MATTER_RELAY_ADMIN_TOKEN; none: admin API off).")
    var adminTokenFile: String?
    @Flag(help: "Tests only: accept an admin token shorter than 32 characters or a placeholder such as change-me.")
    var allowWeakAdminToken = false
    @Option(help: "Largest relay frame in bytes; a larger message closes that connection.") var maxFrameSize = 64 * 1024
    @Option(help: "TCP connections one client address may hold, 1...65536; more are closed at once.")
    var maxConnectionsPerAddress = 1024
    @Option(help: "Frames one WebSocket connection may send per second, sustained; more are dropped (rate_limited).")
    var maxFramesPerSecond = 1000
    @Option(help: "Frames one WebSocket connection may send at once, above its sustained rate.") var frameBurst = 4000
    @Option(help: "Frames all of one home's connections may send per second (bursts of four times that); more are dropped.")
    var maxFramesPerSecondPerHome = 2_000
    @Option(help: "Frames all of one client address's connections may send per second (bursts of four times that).")
    var maxFramesPerSecondPerAddress = 5_000
    @Option(help: "Bytes all of one home's connections may send per second (bursts of four times that); past it they are not read.")
    var maxBytesPerSecondPerHome = 2 << 20
    @Option(help: "Bytes all of one client address's connections may send per second (bursts of four times that).")
    var maxBytesPerSecondPerAddress = 4 << 20
    @Option(
        help: """
            Cloud mode on PostgreSQL: how a frame reaches a peer on another instance: notify (PostgreSQL NOTIFY) \
            or forward (a WebSocket straight to that instance, found through the database).
            """)
    var crossInstance: RelayCrossInstance = .notify
    @Option(help: "With --cross-instance forward: port the other instances' links connect to (0: any free port).")
    var linkPort = 0
    @Option(help: "With --cross-instance forward: host the other instances reach this one's links at (default --host).")
    var linkHost: String?
    @Option(help: "Hub mode: UDP port of the hub's Matter controller (0: any free port).") var matterPort = 0
    @Flag(help: "Hub mode: do not look devices up with DNS-SD (_matter._tcp) when their address fails.") var noDnssd = false
    @Option(help: "Log level (trace, debug, info, notice, warning, error, critical).") var logLevel = "info"
    @Option(help: "Hub mode: run the automations of this home file (homectl's database) in the hub.") var automations: String?
    @Option(help: "Hub mode with --automations: time acceleration of scheduled starters (demos).") var automationSpeed: Double = 1
    @Option(help: "Cloud mode: register this home if it is not, and keep its token in --home-token-file.") var home: String?
    @Option(help: ArgumentHelp("With --home: the token's file (mode 0600), reused while the relay still accepts it.", valueName: "file"))
    var homeTokenFile: String?
    @Option(
        help: ArgumentHelp(
            "Exit when this process is no longer the parent (a child of `matter-sim home --start-relay`).",
            valueName: "pid"))
    var exitWithParent: Int32?

    func validate() throws {
        guard (1...65536).contains(maxConnectionsPerAddress) else {
            throw ValidationError("--max-connections-per-address \(maxConnectionsPerAddress): use 1...65536.")
        }
        guard (1...1_000_000).contains(maxFramesPerSecond) else {
            throw ValidationError("--max-frames-per-second \(maxFramesPerSecond): use 1...1000000.")
        }
        guard (1...1_000_000).contains(frameBurst) else { throw ValidationError("--frame-burst \(frameBurst): use 1...1000000.") }
        guard (1...1_000_000).contains(maxFramesPerSecondPerHome) else {
            throw ValidationError("--max-frames-per-second-per-home \(maxFramesPerSecondPerHome): use 1...1000000.")
        }
        guard (1...1_000_000).contains(maxFramesPerSecondPerAddress) else {
            throw ValidationError("--max-frames-per-second-per-address \(maxFramesPerSecondPerAddress): use 1...1000000.")
        }
        for (flag, value) in [("per-home", maxBytesPerSecondPerHome), ("per-address", maxBytesPerSecondPerAddress)]
        where !(1024...(1 << 30)).contains(value) {
            throw ValidationError("--max-bytes-per-second-\(flag) \(value): use 1024...1073741824.")
        }
        switch mode {
        case .cloud:
            if credentials != nil { throw ValidationError("--credentials is for --mode hub") }
            if (home == nil) != (homeTokenFile == nil) { throw ValidationError("--home and --home-token-file go together") }
            if automations != nil { throw ValidationError("--automations is for --mode hub") }
        case .hub:
            if credentials == nil {
                throw ValidationError("--mode hub needs --credentials FILE (from `homectl hub credentials --out FILE`)")
            }
            if adminTokenFile != nil { throw ValidationError("--admin-token-file is for --mode cloud: a hub has no admin API") }
            if let database, database.hasPrefix("postgres") {
                throw ValidationError("--database \(database): a hub keeps its one home in an SQLite file, not PostgreSQL")
            }
            if home != nil { throw ValidationError("--home is for --mode cloud: a hub's home comes with its credentials") }
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be 0...65535") }
        guard (0...65535).contains(matterPort) else { throw ValidationError("--matter-port must be 0...65535") }
        guard (0...65535).contains(linkPort) else { throw ValidationError("--link-port must be 0...65535") }
        if crossInstance == .forward {
            guard mode == .cloud, database?.hasPrefix("postgres") == true else {
                throw ValidationError("--cross-instance forward is for cloud relays sharing a postgres:// --database")
            }
            if linkHost == nil, ["0.0.0.0", "::", "[::]"].contains(host) {
                throw ValidationError("--cross-instance forward with --host \(host): give --link-host, the address other instances reach")
            }
        }
        guard automationSpeed > 0, automationSpeed <= 86_400 else {
            throw ValidationError("--automation-speed \(automationSpeed): expected more than 0, at most 86400")
        }
        if let automations, !FileManager.default.fileExists(atPath: automations) {
            throw ValidationError("--automations \(automations): no such home file")
        }
    }

    func run() async throws {
        var logger = Logger(label: "matter-relay")
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        if let exitWithParent { followParent(exitWithParent) }
        switch mode {
        case .cloud: try await runCloud(logger: logger)
        case .hub: try await runHub(logger: logger)
        }
    }

    private func relayConfiguration(adminToken: String?) -> RelayServerConfiguration {
        var configuration = RelayServerConfiguration(host: host, port: port, adminToken: adminToken, maxFrameSize: maxFrameSize)
        configuration.maxConnectionsPerAddress = maxConnectionsPerAddress
        configuration.maxFramesPerSecond = maxFramesPerSecond
        configuration.frameBurst = frameBurst
        configuration.maxFramesPerSecondPerHome = maxFramesPerSecondPerHome
        configuration.homeFrameBurst = 4 * maxFramesPerSecondPerHome
        configuration.maxFramesPerSecondPerAddress = maxFramesPerSecondPerAddress
        configuration.addressFrameBurst = 4 * maxFramesPerSecondPerAddress
        configuration.maxBytesPerSecondPerHome = maxBytesPerSecondPerHome
        configuration.homeByteBurst = 4 * maxBytesPerSecondPerHome
        configuration.maxBytesPerSecondPerAddress = maxBytesPerSecondPerAddress
        configuration.addressByteBurst = 4 * maxBytesPerSecondPerAddress
        configuration.crossInstance = crossInstance
        configuration.linkPort = linkPort
        configuration.linkHost = linkHost
        return configuration
    }

    private func runCloud(logger: Logger) async throws {
        let adminToken = try resolveAdminToken()
        let store = try await DatabaseOption.open(DatabaseOption.location(database, default: "matter-relay.sqlite"))
        if let home, let homeTokenFile {
            try await keepHomeToken(home: home, in: store, file: URL(fileURLWithPath: homeTokenFile))
        }
        let server = RelayServer(
            store: store,
            configuration: relayConfiguration(adminToken: adminToken),
            logger: logger)
        let homes = try await store.homes().count
        let host = host
        let adminState = adminToken == nil ? "off" : "on"
        // On PostgreSQL: which of the instances sharing the store this is.
        let instance = server.instanceID.map { ", instance \($0) on PostgreSQL, cross-instance \(crossInstance.rawValue)" } ?? ""
        let app = server.application { port in
            // One line a script can wait for (stdout may be a pipe: write it through at once).
            FileHandle.standardOutput.write(
                Data("matter-relay listening on \(host):\(port) (\(homes) homes, admin API \(adminState)\(instance))\n".utf8))
        }
        try await app.runService()
        await store.close()
        printSummary(server)
    }

    /// The admin token: --admin-token-file, else $MATTER_RELAY_ADMIN_TOKEN, else none (the
    /// admin API answers 401). One named but empty, unreadable or weak stops the relay from
    /// starting (issue #37 item 6: a compose default of `change-me` left the admin API open),
    /// unless --allow-weak-admin-token says this is a test.
    private func resolveAdminToken() throws -> String? {
        let token: String
        let source: String
        if let adminTokenFile {
            do {
                token = try String(contentsOfFile: adminTokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            } catch {
                throw ValidationError("--admin-token-file \(adminTokenFile): cannot read it (\(error.localizedDescription))")
            }
            source = "--admin-token-file \(adminTokenFile)"
        } else if let environment = ProcessInfo.processInfo.environment["MATTER_RELAY_ADMIN_TOKEN"] {
            token = environment.trimmingCharacters(in: .whitespacesAndNewlines)
            source = "$MATTER_RELAY_ADMIN_TOKEN"
        } else {
            return nil
        }
        if let weakness = RelayServerConfiguration.adminTokenWeakness(token), !allowWeakAdminToken {
            throw ValidationError(
                "\(source): \(weakness). Use at least 32 random characters (e.g. `openssl rand -base64 32`), or leave the admin token unset to turn the admin API off; --allow-weak-admin-token is for tests only."
            )
        }
        return token.isEmpty ? nil : token
    }

    private func runHub(logger: Logger) async throws {
        let file = URL(fileURLWithPath: credentials ?? "")
        let hubCredentials: HubCredentials
        do { hubCredentials = try HubCredentials.read(from: file) } catch let error as ControllerError {
            throw ValidationError("\(error)")
        }
        var hubConfiguration = LocalHub.Configuration()
        hubConfiguration.controllerPort = matterPort
        hubConfiguration.useDNSSD = !noDnssd
        let hub = try await LocalHub.start(credentials: hubCredentials, configuration: hubConfiguration, logger: logger)
        let store = try RelayStore(path: database ?? "matter-hub.sqlite")
        try await store.mirror(
            homeID: hubCredentials.homeID, token: hubCredentials.homeToken,
            deviceIDs: hubCredentials.devices.map(\.deviceID))
        let server = RelayServer(
            store: store, localHub: hub,
            configuration: relayConfiguration(adminToken: nil),
            logger: logger)
        let host = host
        let summary =
            "home \(hubCredentials.homeID), \(hubCredentials.devices.count) devices, "
            + "node 0x\(String(hubCredentials.nodeID, radix: 16)), Matter UDP port \(hub.controllerPort)"
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = server.application { port in
            FileHandle.standardOutput.write(Data("matter-relay hub listening on \(host):\(port) (\(summary))\n".utf8))
            portSink.yield(port)
            portSink.finish()
        }
        var services: [any Service] = [app, hub]
        if let automations {
            services.append(
                HubAutomations(
                    homeFile: URL(fileURLWithPath: automations), homeToken: hubCredentials.homeToken, host: host,
                    speed: automationSpeed, port: ports, logger: logger))
        }
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        printSummary(server)
    }

    /// The home's token in `file`: the kept one while the relay still accepts it, else a new
    /// one (a new home, or a rotated token for a home whose token file was lost), so a restart
    /// with the same database and file keeps the token controllers were given.
    private func keepHomeToken(home name: String, in store: RelayStore, file: URL) async throws {
        if let kept = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
            let known = try await store.authenticateHome(token: kept), known.name == name
        {
            return
        }
        let token: String
        if let existing = try await store.home(name) {
            token = try await store.rotateHomeToken(homeID: existing.id)
        } else {
            token = try await store.addHome(name: name).token
        }
        // Readable by its owner only: it lets anyone holding it control the home through the relay.
        guard
            FileManager.default.createFile(
                atPath: file.path, contents: Data((token + "\n").utf8),
                attributes: [.posixPermissions: 0o600])
        else {
            throw ValidationError("--home-token-file \(file.path): cannot write the home token there")
        }
    }

    private func printSummary(_ server: RelayServer) {
        print("matter-relay stopped: \(server.metrics.snapshot.summary)")
    }
}

/// Ends the process once `parent` is gone (a SIGKILLed `matter-sim home` takes its relay with it).
private func followParent(_ parent: Int32) {
    let watcher = Thread {
        while getppid() == parent { usleep(100_000) }
        _exit(137)
    }
    watcher.start()
}
