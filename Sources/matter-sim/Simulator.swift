// What `matter-sim run` and `matter-sim home` do once their nodes are bound: connect each
// node with a relay to the cloud, listen on the control socket for faults, and serve
// until SIGINT or SIGTERM.
import ArgumentParser
import DeviceProfile
import Foundation
import Logging
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
        name: .customLong("relay-home-token"),
        help: ArgumentHelp(
            "The home's relay token: each device registers itself under its serial number and keeps its credential.",
            valueName: "token"))
    var homeToken: String?

    func validate() throws {
        if let relay, let problem = CloudOptions.relayProblem(relay) { throw ValidationError("--relay \(relay): \(problem)") }
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
}

enum Simulator {
    /// Serves `nodes` (with their cloud links and the control socket at `controlPath`)
    /// until SIGINT or SIGTERM. A control socket the user asked for (`controlRequired`)
    /// that cannot be had stops the nodes and exits with status 1; the default one only
    /// warns (the nodes run, without faults).
    static func serve(
        _ nodes: [LaunchedNode], cloud: CloudOptions, credential: String? = nil, controlPath: String,
        controlRequired: Bool, relaySettings: RelayClientSettings = RelayClientSettings(),
        logger: Logger
    ) async throws {
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

        let group = Task {
            await withTaskGroup(of: Void.self) { tasks in
                for node in simulated {
                    tasks.addTask { await node.server.run() }
                    if let link = node.cloud { tasks.addTask { await link.run() } }
                }
                if let control { tasks.addTask { await control.run() } }
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
        await group.value
        signals.stop()
    }
}
