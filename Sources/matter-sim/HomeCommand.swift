// `matter-sim home HOME.yaml`: every device of a home profile as its own Matter node, all in
// this one process (each with its own UDP port, discriminator, state directory and mDNS
// records), until SIGINT or SIGTERM.
import ArgumentParser
import DeviceProfile
import Foundation
import HomeDashboard
import Logging
import MatterCrypto
import MatterDevice
import MatterModel
import MatterProtocol

struct HomeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "home",
        abstract: "Run every device of a home profile as a Matter node, all in one process or one process each.",
        discussion: """
            Device N of the home (in file order) listens on UDP port BASE+N and keeps its state
            in STATE-ROOT/<serial number>. Each node advertises itself through the Avahi
            daemon of the network namespace it runs in. SIGINT or SIGTERM withdraw every
            record and stop every node.
            """)

    @Argument(help: ArgumentHelp("A home profile (YAML).", valueName: "home"))
    var home: String

    @Option(help: "UDP port of the first device; the others follow.")
    var basePort: Int = 5540

    @Option(help: ArgumentHelp("Where the nodes keep their state (one directory each).", valueName: "dir"))
    var stateRoot: String?

    @Option(help: ArgumentHelp("PAA and CD signing credentials (see `run --help`).", valueName: "dir"))
    var attestationDir: String?

    @OptionGroup(title: "Cloud relay")
    var cloud: CloudOptions

    @Flag(
        help: ArgumentHelp(
            "Run the cloud relay the home names (--relay or the home's cloud.relay) in this process, with the home registered in it.",
            discussion: "Its database is STATE-ROOT/relay.sqlite and the home token STATE-ROOT/relay-home-token (kept across restarts)."))
    var startRelay = false

    @Option(help: ArgumentHelp("With --start-relay: the address the relay listens on (default: the relay URL's host).", valueName: "host"))
    var relayListen: String?

    @Option(help: ArgumentHelp("The control socket `matter-sim fault` talks to (default: STATE-ROOT/control.sock).", valueName: "path"))
    var control: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "notice"

    @Flag(help: "Run each device as its own `matter-sim run` process (same ports, codes, state and records).")
    var processPerDevice = false

    @Option(
        help: ArgumentHelp(
            "Nodes a second that go to the Avahi daemon after the start, in the home's order (default: 32 slots 120 ms apart).",
            discussion: """
                Waves for a large fleet: a daemon given thousands of new services at once probes and \
                announces them all together, and its CPU, not the network, then bounds how soon they \
                are found (scripts/fleet-bench.sh, FLEET_BENCH_ANNOUNCE_RATE).
                """, valueName: "n"))
    var announceRate: Double?

    /// How long the node at `position` (from 0, in this process's order) waits before its first
    /// advertisement under `--announce-rate`.
    static func advertisementWait(position: Int, rate: Double) -> Duration {
        .nanoseconds(Int64((Double(max(0, position)) / rate * 1e9).rounded()))
    }

    @Option(
        help: ArgumentHelp(
            "Serve a web dashboard of the running home on [HOST:]PORT (HOST defaults to 127.0.0.1).",
            discussion: "It asks for a token (--dashboard-token-file, or a random one it prints in the page's URL).",
            valueName: "[host:]port"))
    var dashboard: String?

    @Option(
        help: ArgumentHelp(
            "A file holding the dashboard's token (else $\(Self.dashboardTokenVariable); default: a random one).",
            valueName: "file"),
        transform: CommandLineSecrets.read(file:))
    var dashboardTokenFile: String?

    @Option(
        name: .customLong("dashboard-token"),
        help: ArgumentHelp(
            "The dashboard's token on the command line, where `ps` shows it: use --dashboard-token-file or $\(Self.dashboardTokenVariable).",
            valueName: "token"))
    var dashboardTokenArgument: String?

    static let dashboardTokenVariable = "MATTER_SIM_DASHBOARD_TOKEN"

    /// The dashboard's token: an option's, else the environment's.
    var dashboardToken: String? {
        dashboardTokenArgument ?? dashboardTokenFile ?? CommandLineSecrets.environment(Self.dashboardTokenVariable)
    }

    @Option(
        help: ArgumentHelp(
            "Run a scenario (YAML: acts, faults and expectations on a timeline) against the home, then stop; exit 1 when an expectation fails.",
            valueName: "file"))
    var scenario: String?

    @Option(
        help: ArgumentHelp(
            "With --scenario: run the nodes' clock N times faster than real time (default: the scenario's speed, else 1).", valueName: "n"))
    var speed: Double?

    @Option(
        help: ArgumentHelp("With --scenario: where the JUnit XML report goes (default: STATE-ROOT/scenario-junit.xml).", valueName: "file"))
    var junit: String?

    @Option(
        help: ArgumentHelp(
            "A name the dashboard is also opened by (repeatable); requests naming any other host are refused.",
            discussion: "Its own address, localhost, 127.0.0.1 and [::1] are always accepted.", valueName: "name"))
    var dashboardHost: [String] = []

    @Option(
        help: ArgumentHelp(
            "Run only part K of N of the home's devices (contiguous, in file order), same ports and codes as the whole home.",
            discussion: "A fleet split over hosts, one Avahi daemon each (scripts/fleet-bench.sh).", valueName: "k/n"))
    var part: String?

    /// `--part K/N` as (K, N), 1 ≤ K ≤ N.
    static func part(_ text: String) -> (part: Int, of: Int)? {
        let fields = text.split(separator: "/", omittingEmptySubsequences: false)
        guard fields.count == 2, let k = Int(fields[0]), let n = Int(fields[1]), (1...n).contains(k) else { return nil }
        return (k, n)
    }

    func validate() throws {
        if let part, Self.part(part) == nil { throw ValidationError("--part \(part): expected K/N with 1 ≤ K ≤ N, like 2/4") }
        if let announceRate {
            guard (0.1...100_000).contains(announceRate) else {
                throw ValidationError("--announce-rate \(announceRate): expected nodes a second, from 0.1 to 100000")
            }
            if processPerDevice {
                throw ValidationError("--announce-rate paces the nodes of one process; --process-per-device children share a slot file")
            }
        }
        guard (1...65535).contains(basePort) else { throw ValidationError("--base-port \(basePort) is not a UDP port.") }
        if relayListen != nil && !startRelay { throw ValidationError("--relay-listen is for --start-relay") }
        if startRelay && cloud.givenHomeToken != nil {
            throw ValidationError("--relay-home-token: --start-relay registers the home itself and gives its devices the token")
        }
        if dashboardTokenArgument != nil, dashboardTokenFile != nil {
            throw ValidationError("--dashboard-token and --dashboard-token-file: give the token once (the file)")
        }
        if let dashboard {
            guard Self.dashboardAddress(dashboard) != nil else {
                throw ValidationError("--dashboard \(dashboard): expected [HOST:]PORT, like 8080, 127.0.0.1:8080 or [::1]:8080")
            }
            if processPerDevice {
                throw ValidationError("--dashboard follows nodes in this process; it cannot be used with --process-per-device")
            }
        } else if dashboardTokenArgument != nil || dashboardTokenFile != nil {
            throw ValidationError("--dashboard-token(-file) is for --dashboard")
        }
        if dashboard == nil, !dashboardHost.isEmpty { throw ValidationError("--dashboard-host is for --dashboard") }
        if scenario == nil, speed != nil || junit != nil {
            throw ValidationError("--speed and --junit are for --scenario")
        }
        if scenario != nil, processPerDevice {
            throw ValidationError("--scenario runs the nodes in this process on one clock; it cannot be used with --process-per-device")
        }
        if let speed, !(0.01...100_000).contains(speed) {
            throw ValidationError("--speed \(speed): expected a number from 0.01 to 100000 (times real time)")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \(logLevel): use trace, debug, info, notice, warning, error or critical.")
        }
    }

    func run() async throws {
        bootstrapLogging(Logger.Level(rawValue: logLevel) ?? .notice)
        let logger = Logger(label: "matter-sim")
        let loader = ProfileLoader()
        let resolved: ResolvedHome
        let plan: [HomeNodePlan]
        do {
            // A part resolves only its own devices (10,000-node fleets, issue #43).
            if let part, let (k, n) = Self.part(part) {
                let loaded = try loader.loadHomePart(file: home, part: k, of: n)
                resolved = loaded.home
                do { plan = try HomeLaunchPlan.nodes(of: loaded, basePort: basePort) } catch { throw ValidationError(error.description) }
            } else {
                resolved = try loader.loadHome(file: home)
                do { plan = try HomeLaunchPlan.nodes(of: resolved, basePort: basePort) } catch { throw ValidationError(error.description) }
            }
        } catch let error as ProfileErrors {
            for diagnostic in error.diagnostics { printError(diagnostic.description) }
            printError("\(home): cannot run: \(error.diagnostics.count) error\(error.diagnostics.count == 1 ? "" : "s")")
            throw ExitCode(1)
        }
        let stateRoot = stateRoot ?? NodeLaunch.stateDirectory(nil, serialNumber: "home").deletingLastPathComponent().path
        var scenarioPlan: ScenarioPlan?
        if let scenario {
            do {
                let loaded = try loader.loadScenario(file: scenario)
                let speed = self.speed ?? loaded.speed ?? 1
                scenarioPlan = ScenarioPlan(
                    scenario: loaded, clock: speed == 1 ? SystemClock() : ScaledClock(speed: speed), speed: speed,
                    junitPath: junit ?? URL(fileURLWithPath: stateRoot).appendingPathComponent("scenario-junit.xml").path)
            } catch {
                for diagnostic in error.diagnostics { printError(diagnostic.description) }
                printError("\(scenario): cannot run: \(error.diagnostics.count) error\(error.diagnostics.count == 1 ? "" : "s")")
                throw ExitCode(1)
            }
        }
        var cloud = cloud
        var relay: HomeRelay?
        if startRelay {
            guard let url = HomeRelay.url(option: cloud.relay, home: resolved) else {
                throw ValidationError("--start-relay: \(home) names no relay (cloud.relay) and no --relay was given")
            }
            let started: HomeRelay
            do {
                started = try await HomeRelay.start(
                    url: url, listenHost: relayListen, homeName: resolved.name, stateRoot: stateRoot,
                    logLevel: logLevel)
            } catch let error as HomeRelay.StartError {
                printError(error.description)
                throw ExitCode(1)
            }
            relay = started
            cloud.relay = url
            cloud.homeToken = started.homeToken
            printOut(
                "cloud relay: \(url), home \"\(resolved.name)\", token \(started.homeToken)"
                    + " (kept in \(URL(fileURLWithPath: stateRoot).appendingPathComponent(HomeRelay.tokenFileName).path))")
        }
        do {
            try await serve(
                resolved, plan: plan, stateRoot: stateRoot, cloud: cloud, loader: loader, scenario: scenarioPlan, logger: logger)
        } catch {
            await relay?.stop()
            throw error
        }
        await relay?.stop()
    }

    /// Runs the nodes (here or as child processes) until SIGINT or SIGTERM.
    private func serve(
        _ resolved: ResolvedHome, plan: [HomeNodePlan], stateRoot: String, cloud: CloudOptions,
        loader: ProfileLoader, scenario: ScenarioPlan?, logger: Logger
    ) async throws {
        if processPerDevice {
            try await DeviceProcessLauncher(
                homeFile: home, home: resolved, plan: plan, stateRoot: stateRoot,
                attestationDir: attestationDir, cloud: cloud, logLevel: logLevel
            ).run(table: table)
            return
        }
        let authority = try NodeLaunch.authority(attestationDir)
        let publishers = SharedPublishers(logger: logger)

        var servers: [(ResolvedHomeDevice, NodeLaunch, NodeServer)] = []
        for (position, node) in plan.enumerated() {
            let (index, device) = (node.index, node.device)
            printOut("[\(position + 1)/\(plan.count)] starting \(device.name)")
            var options = NodeLaunchOptions(
                port: node.port, stateDir: URL(fileURLWithPath: stateRoot).appendingPathComponent(node.stateDirectoryName).path,
                authority: authority)
            // One clock for the whole home, so the scenario's timeline and every node agree.
            if let scenario { options.clock = scenario.clock }
            options.homeIndex = index
            if let announceRate { options.advertisementWait = Self.advertisementWait(position: position, rate: announceRate) }
            let launch = try NodeLaunch(device: device.profile, model: loader.model, command: options, logger: logger)
            do {
                let server = try await NodeServer(
                    node: launch.node, configuration: launch.serverConfiguration,
                    logger: Logger(label: "matter.node.\(index + 1)"),
                    publisher: publishers.publisher(forNode: index))
                servers.append((device, launch, server))
            } catch {
                printError("\(device.name): cannot listen on UDP port \(options.port): \(error)")
                for (_, launch, _) in servers { await launch.node.stop() }
                await launch.node.stop()
                throw ExitCode(1)
            }
        }
        printOut(table(servers.map { ($0.0, $0.1.manualCode, $0.2.port) }, home: resolved))

        try await Simulator.serve(
            servers.map { LaunchedNode(name: $0.0.name, launch: $0.1, server: $0.2, structure: $0.0.structure, room: $0.0.room) },
            cloud: cloud, controlPath: control ?? NodeControlServer.defaultPath(in: stateRoot), controlRequired: control != nil,
            dashboard: dashboardPlan(home: resolved.name), scenario: scenario, logger: logger)
        publishers.shutdown()
        printOut("\(resolved.name): \(servers.count) nodes stopped")
    }

    /// `--dashboard [HOST:]PORT`: the host (127.0.0.1 by default) and port.
    static func dashboardAddress(_ text: String) -> (host: String, port: Int)? {
        var host = "127.0.0.1", portText = Substring(text)
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = String(text[text.index(after: text.startIndex)..<close])
            guard text[close...].hasPrefix("]:") else { return nil }
            portText = text[text.index(close, offsetBy: 2)...]
        } else if let colon = text.lastIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else { return nil }
        return (host, port)
    }

    private func dashboardPlan(home: String) -> DashboardPlan? {
        guard let dashboard, let (host, port) = Self.dashboardAddress(dashboard) else { return nil }
        var token = dashboardToken
        if token == nil, !DashboardServer.isLoopback(host) {
            token = (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
        }
        return DashboardPlan(host: host, port: port, token: token, homeName: home, hostNames: dashboardHost)
    }

    func table(_ rows: [(ResolvedHomeDevice, String, Int)], home: ResolvedHome) -> String {
        let header = ["device", "structure / room", "device types", "port", "manual code"]
        let cells = rows.map { device, manualCode, port in
            [
                device.name,
                device.structure + " / " + (device.room ?? "-"),
                device.profile.endpoints.filter { $0.number != 0 }.flatMap { $0.deviceTypes.map(\.name) }.joined(separator: ", "),
                String(port),
                manualCode,
            ]
        }
        let widths = header.indices.map { column in ([header] + cells).map { $0[column].count }.max() ?? 0 }
        func line(_ row: [String]) -> String {
            zip(row, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }
        return
            ([home.name + ": \(rows.count) devices running", line(header), line(widths.map { String(repeating: "-", count: $0) })]
            + cells.map(line)).joined(separator: "\n")
    }
}

/// Log lines go to standard error at the chosen level.
func bootstrapLogging(_ level: Logger.Level) {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
}
