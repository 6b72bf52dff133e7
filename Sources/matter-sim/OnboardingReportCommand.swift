// `matter-sim report-onboarding HOME.yaml`: tells the home's controllers, through the cloud
// relay's onboarding reports, every node a `matter-sim home` of that file runs here: its
// name and place, its QR payload, and this host's address and the node's port (issue #43: a
// fleet replica in a container reports its nodes this way instead of through a shared file).
import ArgumentParser
import DeviceProfile
import Foundation
import MatterProtocol
import RelayClients
import RelayProtocol

struct OnboardingReportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "report-onboarding",
        abstract: "Report a home's nodes (payloads and addresses) to the relay for its controllers.",
        discussion: """
            `homectl commission --fleet` with the home's relay token reads every report back and
            commissions each node at HOST:PORT. The credential is a device credential of the
            home (or its token), read from a file: a bare credential, or a profile's `cloud:`
            block with a `credential:` line. A report replaces the source's previous one.
            """)

    @Argument(help: ArgumentHelp("The home profile `matter-sim home` runs (YAML).", valueName: "home"))
    var home: String

    @Option(help: ArgumentHelp("The relay's base URL.", valueName: "ws://host:port"))
    var relay: String

    @Option(help: ArgumentHelp("A file holding the credential to report with.", valueName: "file"))
    var credentialFile: String

    @Option(help: ArgumentHelp("This report's name: one per replica (1...64 of A-Z a-z 0-9 . _ -).", valueName: "id"))
    var source: String

    @Option(help: ArgumentHelp("The address controllers reach this host's nodes at (IPv4 or IPv6).", valueName: "ip"))
    var host: String

    @Option(help: "UDP port of the home's first device (as given to `matter-sim home --base-port`).")
    var basePort: Int = 5540

    @Option(help: "Seconds to keep trying while the relay cannot be reached.")
    var wait: Int = 60

    func validate() throws {
        guard RelayFrame.isValidIdentifier(source) else { throw ValidationError("--source \(source): use 1...64 of A-Z a-z 0-9 . _ -") }
        guard (0...3600).contains(wait) else { throw ValidationError("--wait \(wait): use 0...3600") }
    }

    func run() async throws {
        let credential = try Self.credential(fromFile: credentialFile)
        let resolved: ResolvedHome
        do { resolved = try ProfileLoader().loadHome(file: home) } catch {
            for diagnostic in error.diagnostics { printError(diagnostic.description) }
            throw ValidationError("\(home): not a usable home profile")
        }
        let nodes: [RelayOnboardingNode]
        do {
            nodes = try HomeLaunchPlan.nodes(of: resolved, basePort: basePort).map { node in
                let payload = OnboardingPayload(
                    vendorID: node.vendorID, productID: node.productID, discriminator: node.discriminator, passcode: node.passcode)
                return RelayOnboardingNode(
                    name: node.device.name, structure: node.device.structure, room: node.device.room,
                    setupCode: try payload.qrCode(), host: host, port: node.port)
            }
        } catch {
            throw ValidationError("\(home): \(error)")
        }
        // real time: external: the relay may still be starting (a container beside this one).
        let deadline = ContinuousClock.now + .seconds(wait)
        while true {
            do {
                try await RelayOnboardingClient.report(relayURL: relay, bearer: credential, source: source, nodes: nodes)
                print("report-onboarding: \(nodes.count) nodes of \(resolved.name) reported to \(relay) as \(source)")
                return
            } catch let error as RelayError {
                // The relay answered: its refusal will not change by asking again.
                switch error {
                case .unauthorized, .forbidden, .http:
                    printError("report-onboarding: \(relay) refused the report: \(error)")
                    throw ExitCode(1)
                default:
                    guard ContinuousClock.now < deadline else {
                        printError("report-onboarding: \(relay) not reached in \(wait) s: \(error)")
                        throw ExitCode(1)
                    }
                }
            } catch {
                guard ContinuousClock.now < deadline else {
                    printError("report-onboarding: \(relay) not reached in \(wait) s: \(error)")
                    throw ExitCode(1)
                }
            }
            try await Task.sleep(for: .seconds(1))
        }
    }

    /// A bare credential, or the value of a `credential:` line (a profile's `cloud:` block).
    static func credential(fromFile path: String) throws -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw ValidationError("--credential-file \(path): cannot read it")
        }
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        let value = lines.first { $0.hasPrefix("credential:") }.map { String($0.dropFirst("credential:".count)) } ?? text
        let credential = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !credential.isEmpty, !credential.contains(where: \.isWhitespace) else {
            throw ValidationError("--credential-file \(path): expected a credential, or a `credential:` line")
        }
        return credential
    }
}
