// matter-relay: the cloud relay server (`serve`), its registrations (`home`, `device`),
// and a loopback load benchmark (`bench`).
import ArgumentParser
import CloudRelay
import Foundation

@main
struct MatterRelay: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matter-relay",
        abstract: "Cloud relay between Matter devices and controllers of the same home.",
        discussion: """
            Devices keep an outbound WebSocket to /v1/device with their credential; controllers
            connect to /v1/controller with their home's token. Interaction Model messages travel
            between them as TLV frames, within one home only.
            """,
        subcommands: [ServeCommand.self, HomeCommand.self, DeviceCommand.self, MigrateCommand.self, BenchCommand.self])
}

/// Where the registrations live.
struct DatabaseOption: ParsableArguments {
    @Option(
        name: .long,
        help: "SQLite database of homes and devices (created if missing), or a postgres:// URL (default $\(Self.variable), else matter-relay.sqlite).")
    var database: String?

    /// Where a URL with a password goes instead of the command line, where `ps` shows it.
    static let variable = "MATTER_RELAY_DATABASE"

    func open() async throws -> RelayStore { try await Self.open(Self.location(database, default: "matter-relay.sqlite")) }

    /// The option's value, else the environment's, else `fallback`.
    static func location(_ option: String?, default fallback: String) -> String {
        option ?? ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 } ?? fallback
    }

    /// The store at `location`; a bad URL or an unreachable server is a usage error, said plainly.
    static func open(_ location: String) async throws -> RelayStore {
        do { return try await RelayStore.open(location) } catch let error as RelayStoreError { throw ValidationError("\(error)") }
    }
}
