// What `matter-sim run` and `matter-sim home` do once their nodes are bound: connect each
// node with a relay to the cloud, listen on the control socket for faults, and serve
// until SIGINT or SIGTERM.
import ArgumentParser
import DeviceProfile
import Foundation
import HomeDashboard
import Logging
import MatterCrypto
import MatterDevice
import MatterModel
import RelayClients

/// The command line's relay settings, over every profile's `cloud:` block.
struct CloudOptions: ParsableArguments {
    @Option(
        name: .customLong("relay"),
        help: ArgumentHelp(
            "Base URL of the cloud relay (overrides the profiles' cloud.relay).", valueName: "url"))
    var relay: String?

    @Option(
        name: .customLong("relay-home-token-file"),
        help: ArgumentHelp(
            "A file holding the home's relay token (else $\(CloudOptions.homeTokenVariable)): each device registers itself under its serial number and keeps its credential.",
            valueName: "file"),
        transform: CommandLineSecrets.read(file:))
    var homeTokenFromFile: String?

    @Option(
        name: .customLong("relay-home-token"),
        help: ArgumentHelp(
            "The home's relay token on the command line, where `ps` shows it: use --relay-home-token-file or $\(CloudOptions.homeTokenVariable).",
            valueName: "token"))
    var homeTokenArgument: String?

    static let homeTokenVariable = "MATTER_RELAY_HOME_TOKEN"

    /// The token given with an option (not the environment's).
    var givenHomeToken: String? { homeTokenArgument ?? homeTokenFromFile }

    /// The home's relay token: an option's, else the environment's.
    var homeToken: String? {
        get { givenHomeToken ?? CommandLineSecrets.environment(Self.homeTokenVariable) }
        set { homeTokenArgument = newValue }
    }

    func validate() throws {
        if let relay, let problem = CloudOptions.relayProblem(relay) { throw ValidationError("--relay \(relay): \(problem)") }
        if homeTokenArgument != nil, homeTokenFromFile != nil {
            throw ValidationError("--relay-home-token and --relay-home-token-file: give the token once (the file)")
        }
    }

    static func relayProblem(_ url: String) -> String? {
        guard let components = URLComponents(string: url), components.scheme == "ws", !(components.host ?? "").isEmpty else {
            return "expected the relay's base URL, like ws://127.0.0.1:8080"
        }
        return nil
    }
}

/// One node ready to serve.
struct LaunchedNode {
    let name: String
    let launch: NodeLaunch
    let server: NodeServer
    /// Where the home puts it (the dashboard groups by these).
    var structure = ""
    var room: String?
}

/// `matter-sim home --dashboard`: where the page is served, and its token.
struct DashboardPlan {
    var host: String
    var port: Int
    var token: String?
    var homeName: String
    /// Names the page is also opened by (`--dashboard-host`), beside its address and localhost.
    var hostNames: [String] = []
    var limits = DashboardLimits()
}

enum Simulator {
    /// Serves `nodes` (with their cloud links and the control socket at `controlPath`)
    /// until SIGINT or SIGTERM. A control socket the user asked for (`controlRequired`)
    /// that cannot be had stops the nodes and exits with status 1; the default one only
    /// warns (the nodes run, without faults).
    static func serve(
        _ nodes: [LaunchedNode], cloud: CloudOptions, credential: String? = nil, controlPath: String,
        controlRequired: Bool, relaySettings: RelayClientSettings = RelayClientSettings(),
        dashboard dashboardPlan: DashboardPlan? = nil, scenario scenarioPlan: ScenarioPlan? = nil, logger: Logger
    ) async throws {
        // Every descriptor the system allows: the nodes' state files must never be short of one.
        DescriptorLimit.raiseToHard()
        var simulated: [SimulatedNode] = []
        var cloudLines: [String] = []
        // A home's devices usually share a problem: said once, with who has it.
        var problems: [(problem: String, names: [String])] = []
        func report(_ problem: String, _ name: String) {
            if let i = problems.firstIndex(where: { $0.problem == problem }) {
                problems[i].names.append(name)
            } else {
                problems.append((problem, [name]))
            }
        }
        for node in nodes {
            let profile = node.launch.device
            let resolved = CloudEndpoint.resolve(profile.cloud, relay: cloud.relay, credential: credential, homeToken: cloud.homeToken)
            var link: CloudLink?
            if let endpoint = resolved.endpoint {
                link = CloudLink(
                    endpoint: endpoint, deviceID: profile.identity.serialNumber, label: node.name,
                    stateDirectory: node.launch.stateDirectory, server: node.server, settings: relaySettings,
                    logger: Logger(label: "matter.cloud.\(profile.identity.serialNumber)"))
                cloudLines.append(
                    "\(node.name): cloud relay \(endpoint.relay) as \(profile.identity.serialNumber)"
                        + (endpoint.credential == nil ? " (registers with the home token)" : ""))
            } else if let problem = resolved.problem {
                report("no cloud relay connection: \(problem)", node.name)
            }
            let cloudOnly = profile.cloudOnlyClusters
            if link == nil, !cloudOnly.isEmpty {
                let names = cloudOnly.map {
                    "\(MatterModel.standard.cluster($0.cluster)?.name ?? $0.cluster.description) on endpoint \($0.endpoint)"
                }
                printError("\(node.name): cloud-only \(names.joined(separator: ", ")) unreachable without a relay")
            }
            simulated.append(SimulatedNode(name: node.name, serialNumber: profile.identity.serialNumber, server: node.server, cloud: link))
        }

        for (problem, names) in problems {
            let who =
                names.count == 1
                ? names[0]
                : "\(names.count) devices (\(names.prefix(3).joined(separator: ", "))\(names.count > 3 ? ", …" : ""))"
            printError("\(who): \(problem)")
        }

        var control: NodeControlServer?
        do {
            control = try await NodeControlServer.bind(path: controlPath, nodes: simulated, logger: logger)
        } catch {
            guard !controlRequired else {
                printError("\(error)")
                for node in nodes { await node.launch.node.stop() }
                throw ExitCode(1)
            }
            printError("\(error); running without a control socket (no faults); give one with --control")
        }
        for line in cloudLines { printOut(line) }
        if control != nil { printOut("control socket: \(controlPath) (matter-sim fault --control \(controlPath) NODE ACTION)") }
        var dashboard: (feed: DashboardFeed, server: DashboardServer)?
        if let dashboardPlan {
            // The page's buttons go through the control socket's queue, like `fault` and `act`.
            guard let control else {
                printError("--dashboard: the dashboard's buttons need the control socket")
                for node in nodes { await node.launch.node.stop() }
                throw ExitCode(1)
            }
            dashboard = Self.dashboard(dashboardPlan, nodes: nodes, simulated: simulated, control: control, logger: logger)
        }
        var runner: ScenarioRunner?
        if let scenarioPlan {
            // Its acts and faults go through the control socket's queue too.
            guard let control else {
                printError("--scenario: the scenario's acts and faults need the control socket")
                for node in nodes { await node.launch.node.stop() }
                throw ExitCode(1)
            }
            switch ScenarioRunner.resolve(scenarioPlan.scenario, control: control) {
            case .success(let steps):
                runner = ScenarioRunner(
                    scenario: scenarioPlan.scenario, steps: steps, clock: scenarioPlan.clock, speed: scenarioPlan.speed, control: control)
            case .failure(let problems):
                let errors = problems.messages
                for error in errors { printError(error) }
                printError("\(scenarioPlan.scenario.file): cannot run: \(errors.count) error\(errors.count == 1 ? "" : "s")")
                for node in nodes { await node.launch.node.stop() }
                throw ExitCode(1)
            }
        }

        let group = Task {
            await withTaskGroup(of: Void.self) { tasks in
                for node in simulated {
                    tasks.addTask { await node.server.run() }
                    if let link = node.cloud { tasks.addTask { await link.run() } }
                }
                if let control { tasks.addTask { await control.run() } }
                if let dashboard {
                    tasks.addTask { await dashboard.feed.run() }
                    tasks.addTask {
                        let plan = dashboard.server
                        do {
                            try await plan.run { port in
                                let host = plan.host.contains(":") ? "[\(plan.host)]" : plan.host
                                printOut("dashboard: http://\(host):\(port)/?token=\(plan.token)")
                            }
                        } catch {
                            printError("dashboard: cannot serve on \(plan.host):\(plan.port): \(error)")
                        }
                    }
                }
            }
        }
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM]) { signal, count in
            if count == 1 {
                logger.notice("signal \(signal): withdrawing every record and stopping \(nodes.count) node\(nodes.count == 1 ? "" : "s")")
                group.cancel()
            } else {
                // A second signal while shutting down: leave at once.
                Foundation.exit(1)
            }
        }
        // `kill -USR1`: the nodes' own service times (ServiceTimeReport).
        let serviceTimes = ServiceTimeReport(nodes.map { node in .init { await node.server.exchangeManager.serviceTimes() } })
        let reports = SignalWatcher(signals: [SIGUSR1]) { _, _ in
            Task { printOut(ServiceTimeReport.text(await serviceTimes.report())) }
        }
        defer { reports.stop() }
        var scenarioFailed = false
        if let runner, let scenarioPlan {
            // real time: benchmark: the report's time, for a person to read.
            let started = ContinuousClock.now
            let results = await withTaskCancellationHandler {
                await runner.run()
            } onCancel: {
                group.cancel()
            }
            let real = started.duration(to: ContinuousClock.now)
            let xml = ScenarioRunner.junit(
                scenarioPlan.scenario, results: results, speed: scenarioPlan.speed,
                realSeconds: Double(real.components.seconds) + Double(real.components.attoseconds) / 1e18)
            do {
                try xml.write(toFile: scenarioPlan.junitPath, atomically: true, encoding: .utf8)
                printOut("scenario: JUnit report in \(scenarioPlan.junitPath)")
            } catch {
                printError("scenario: cannot write the JUnit report \(scenarioPlan.junitPath): \(error)")
            }
            scenarioFailed = results.contains { !$0.passed }
            group.cancel()
        }
        await group.value
        signals.stop()
        if scenarioFailed { throw ExitCode(1) }
    }

    /// The dashboard's feed and server over the running nodes.
    static func dashboard(
        _ plan: DashboardPlan, nodes: [LaunchedNode], simulated: [SimulatedNode], control: NodeControlServer, logger: Logger
    ) -> (feed: DashboardFeed, server: DashboardServer) {
        let devices = zip(nodes, simulated).map { node, sim in
            let server = node.server, cloud = sim.cloud
            return DashboardDevice(
                name: node.name, serialNumber: sim.serialNumber, structure: node.structure, room: node.room,
                deviceTypes: node.launch.device.endpoints.filter { $0.number != 0 }.flatMap { $0.deviceTypes.map(\.name) },
                manualCode: node.launch.manualCode, qrPayload: (try? node.launch.onboardingPayload.qrCode()) ?? "",
                server: server
            ) {
                DashboardRoute(lan: server.isLANUp, power: server.isPoweredOn, cloud: cloud.map(\.isConnected), cloudStatus: cloud?.status)
            }
        }
        let feed = DashboardFeed(homeName: plan.homeName, devices: devices)
        // Hummingbird logs a page going away, and its own shutdown, as errors: below debug
        // only what stops the dashboard is said (printed by the caller).
        var dashboardLogger = Logger(label: "matter-sim.dashboard")
        if dashboardLogger.logLevel > .debug { dashboardLogger.logLevel = .critical }
        let server = DashboardServer(
            host: plan.host, port: plan.port, token: plan.token, hostNames: plan.hostNames, limits: plan.limits, feed: feed,
            perform: { serial, action, value in
                let answer = await control.submit(ControlRequest(node: serial, action: action, value: value))
                return answer.error ?? answer.results.first?.note
            }, logger: dashboardLogger)
        return (feed, server)
    }
}
