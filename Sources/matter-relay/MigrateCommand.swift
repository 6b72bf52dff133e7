import ArgumentParser
import CloudRelay
import Foundation

/// `matter-relay migrate`: an SQLite relay's registrations into PostgreSQL, for scaling out.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate", abstract: "Copy an SQLite relay's homes, devices and credential digests into PostgreSQL.",
        discussion: """
            Tokens and credentials keep working: only their digests are stored, and they are copied \
            as they are. Rows with the same IDs take the source's values; running it again is harmless. \
            Stop the SQLite relay first, so nothing is registered after the copy.
            """)

    @Option(help: "The SQLite database to read.") var from: String
    @Option(help: "The PostgreSQL database to write: postgres://user[:password]@host[:port]/database.") var to: String

    func validate() throws {
        guard to.hasPrefix("postgres://") || to.hasPrefix("postgresql://") else {
            throw ValidationError("--to \(to): expected a postgres:// URL")
        }
        guard FileManager.default.fileExists(atPath: from) else { throw ValidationError("--from \(from): no such SQLite database") }
    }

    func run() async throws {
        let source = try RelayStore(path: from)
        let target = try await DatabaseOption.open(to)
        do {
            let copied = try await target.copy(from: source)
            print("copied \(copied.homes) homes and \(copied.devices) devices into \(target.engineName)")
        } catch {
            await target.close()
            throw error
        }
        await target.close()
    }
}
