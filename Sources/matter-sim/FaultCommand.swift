// `matter-sim fault [--control PATH] NODE ACTION`: breaks (or mends) a running node's LAN,
// cloud relay connection or power, through the control socket of the `matter-sim run` or
// `matter-sim home` that runs it.
import ArgumentParser
import Foundation
import MatterDevice

struct FaultCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fault",
        abstract: "Inject a fault into a running simulated node: LAN, cloud relay connection or power.",
        discussion: """
            ACTION is one of:
              lan-down     drop UDP both ways and withdraw the mDNS records (a
                           pulled cable: sessions are not closed, peers time out)
              lan-up       plug the cable back in; the records return
              cloud-down   drop the connection to the cloud relay and keep it down
              cloud-up     reconnect to the relay
              power-off    LAN and cloud down; sessions, subscriptions and an open
                           commissioning window are lost (state on disk is kept)
              power-on     boot again from the kept state
              lan-impair SETTINGS
                           a lossy LAN, each way: loss=20%,delay=50ms,jitter=20ms,
                           duplicate=1%,seed=7 (any of them), or none; datagrams
                           overtake each other when the jitter exceeds their spacing;
                           a seed makes the same datagrams meet the same fates again;
                           maxlost=N loses no datagram (an MRP retransmission is the
                           same one) more than N times
            NODE is a serial number, a device name or `all`. The simulator listens on
            <state dir>/control.sock (`run`) or <state root>/control.sock (`home`); without
            --control the default state root (.matter-sim under $INTEROP_DEVICE_DIR or the
            current directory) is tried, then the node's own state directory.
            """)

    @Option(help: ArgumentHelp("The simulator's control socket.", valueName: "path"))
    var control: String?

    @Argument(help: ArgumentHelp("A serial number, a device name, or `all`.", valueName: "node"))
    var node: String

    @Argument(help: ArgumentHelp("lan-down, lan-up, cloud-down, cloud-up, power-off, power-on or lan-impair.", valueName: "action"))
    var action: String

    @Argument(help: ArgumentHelp("lan-impair's settings, e.g. loss=20%,delay=50ms,jitter=20ms, or none.", valueName: "settings"))
    var value: String?

    func validate() throws {
        guard let fault = FaultAction(rawValue: action) else {
            throw ValidationError("unknown action '\(action)'; expected one of: \(FaultAction.names)")
        }
        if fault == .lanImpair {
            guard let value else { throw ValidationError("lan-impair needs its settings, e.g. loss=20%,delay=50ms,jitter=20ms (or none)") }
            if case .failure(let error) = LinkImpairment.parse(value) { throw ValidationError("lan-impair \(value): \(error.description)") }
        } else if let value {
            throw ValidationError("'\(action)' takes no value, but '\(value)' was given")
        }
        guard !node.isEmpty else { throw ValidationError("NODE is empty; give a serial number, a device name or `all`.") }
    }

    func run() async throws {
        try await ControlClient.run(ControlRequest(node: node, action: action, value: value), control: control, label: action)
    }
}

extension ControlClient {
    /// Sends a `fault` or `act` request and prints each node's outcome and a summary line;
    /// exits 1 when the simulator refused the request.
    static func run(_ request: ControlRequest, control: String?, label: String) async throws {
        let path = control ?? defaultSocket(for: request.node)
        let response: ControlResponse
        do {
            response = try await send(request, to: path)
        } catch {
            printError("\(error)")
            throw ExitCode(1)
        }
        if let error = response.error {
            printError(error)
            throw ExitCode(1)
        }
        for (index, result) in response.results.enumerated() {
            let note = result.note.map { " (skipped: \($0))" } ?? ""
            printOut("[\(index + 1)/\(response.results.count)] \(result.name) (\(result.serialNumber)): \(result.state)\(note)")
        }
        let skipped = response.results.filter { $0.note != nil }.count
        let applied = response.results.count - skipped
        printOut("\(label): \(applied) node\(applied == 1 ? "" : "s")" + (skipped > 0 ? ", \(skipped) skipped" : ""))
    }

    /// The state root's socket (where `home` listens by default); failing that, the state
    /// directory `run` would use for a node given by serial number.
    static func defaultSocket(for node: String) -> String {
        let root = NodeLaunch.stateDirectory(nil, serialNumber: "x").deletingLastPathComponent().path
        let rootSocket = NodeControlServer.defaultPath(in: root)
        if FileManager.default.fileExists(atPath: rootSocket) || node == "all" { return rootSocket }
        let own = NodeControlServer.defaultPath(in: NodeLaunch.stateDirectory(nil, serialNumber: node).path)
        return FileManager.default.fileExists(atPath: own) ? own : rootSocket
    }
}
