import ArgumentParser
import Foundation
import HomeAPI
import MatterController
import MatterCrypto

/// `homectl hub credentials --out FILE`: the home's fabric CA issues a local hub its
/// credentials (for `matter-relay serve --mode hub --credentials FILE`).
struct HubCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hub", abstract: "Set up a local hub for this home.",
        subcommands: [Credentials.self])

    struct Credentials: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a local hub its fabric credentials and let every device accept it.",
            discussion: """
                Writes FILE (JSON, readable by its owner only): the fabric's root certificate, a NOC and key for the
                hub's node, the IPK, the home ID and token controllers present, and the devices (serial number,
                node ID, address). Each device gets an ACL entry for the hub's node. Devices commissioned later need
                the credentials issued again (pass the same --node-id) and the hub restarted.
                """)

        @OptionGroup var global: GlobalOptions
        @Option(help: "Where to write the credentials file.") var out: String
        @Option(help: "The hub's operational node ID (decimal or 0x hex; default: a new one).") var nodeID: String?
        @Option(help: "How the hub names the home to controllers.") var homeID = "home"
        @Option(
            help: "A file holding the token controllers present to the hub (default: $HOMECTL_HUB_TOKEN, else a new one).",
            transform: CommandLineSecrets.read(file:))
        var homeTokenFile: String?
        @Option(help: "That token on the command line, where `ps` shows it: use --home-token-file or $HOMECTL_HUB_TOKEN.")
        var homeToken: String?
        @Flag(help: "Give the hub Operate instead of Administer on the devices.") var operateOnly = false

        func run() async throws {
            var hubNodeID: UInt64?
            if let nodeID {
                let parsed = nodeID.lowercased().hasPrefix("0x") ? UInt64(nodeID.dropFirst(2), radix: 16) : UInt64(nodeID)
                guard let parsed else { throw ValidationError("--node-id '\(nodeID)': expected a decimal or 0x-hex node ID") }
                hubNodeID = parsed
            }
            let token = homeToken ?? homeTokenFile ?? CommandLineSecrets.environment(GlobalOptions.hubTokenVariable)
            try await HomeAPIRun.run {
                let home = try await global.open()
                let issue = try await home.issueHubCredentials(
                    hubNodeID: hubNodeID, homeID: homeID, homeToken: token, access: operateOnly ? .operate : .administer,
                    to: URL(fileURLWithPath: out))
                await home.close()
                if global.json {
                    struct Summary: Encodable {
                        var file: String
                        var nodeID: UInt64
                        var homeID: String
                        var homeToken: String
                        var granted: [String]
                        var failed: [String: String]
                        var skipped: [String]
                    }
                    Output.json(
                        Summary(
                            file: out, nodeID: issue.credentials.nodeID, homeID: issue.credentials.homeID,
                            homeToken: issue.credentials.homeToken, granted: issue.granted, failed: issue.failed,
                            skipped: issue.skipped))
                } else {
                    print(
                        "wrote \(out): hub node 0x\(String(issue.credentials.nodeID, radix: 16)), home \(issue.credentials.homeID), "
                            + "\(issue.credentials.devices.count) devices")
                    if token == nil { print("home token for controllers: \(issue.credentials.homeToken)") }
                    for serial in issue.granted { print("  \(serial): ACL lets the hub in") }
                    for (serial, why) in issue.failed.sorted(by: { $0.key < $1.key }) { print("  \(serial): ACL not written: \(why)") }
                    for id in issue.skipped { print("  \(id): no usable serial number (none, or shared), left out") }
                }
                if !issue.failed.isEmpty { throw ExitCode(3) }
            }
        }
    }
}
