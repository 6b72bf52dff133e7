// `matter-sim fleet PROFILE --count N`: writes a home of N copies of one device profile,
// for `matter-sim home` and `homectl commission --home` at scale (scripts/fleet-bench.sh).
import ArgumentParser
import DeviceProfile
import Foundation

struct FleetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Write a home file with N copies of one device profile (a fleet).",
        discussion: """
            Device i is "Node i" with serial number PREFIX-i (--serial-prefix, FLEET by
            default), in room "Rack k" of one structure named like the home (--name)
            (--room-size devices per room). Run it with `matter-sim home`; setup codes and
            discriminators derive from each serial unless the profile fixes them, so fleets
            with different prefixes (one per container replica, say) have codes of their own.
            """)

    @Argument(help: ArgumentHelp("A device profile (YAML).", valueName: "profile"))
    var profile: String

    @Option(help: "How many devices.")
    var count: Int

    @Option(help: "Devices per room.")
    var roomSize: Int = 50

    @Option(help: ArgumentHelp("The home's and its structure's name.", valueName: "name"))
    var name = "Fleet"

    @Option(help: ArgumentHelp("Serial numbers are PREFIX-1, PREFIX-2, ...", valueName: "prefix"))
    var serialPrefix = "FLEET"

    @Option(help: ArgumentHelp("Write the home here instead of standard output.", valueName: "file"))
    var output: String?

    func validate() throws {
        guard (1...60000).contains(count) else { throw ValidationError("--count \(count): use 1...60000.") }
        guard roomSize >= 1 else { throw ValidationError("--room-size \(roomSize): use at least 1.") }
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else { throw ValidationError("--name: give a non-empty name.") }
        // BasicInformation's SerialNumber holds at most 32 characters; the suffix takes up to 6.
        guard (1...25).contains(serialPrefix.count),
            serialPrefix.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") })
        else { throw ValidationError("--serial-prefix \(serialPrefix): use 1...25 of A-Z a-z 0-9 - _.") }
    }

    func run() throws {
        let loader = ProfileLoader()
        do {
            _ = try loader.loadDevice(file: profile)
        } catch {
            for diagnostic in error.diagnostics { printError(diagnostic.description) }
            printError("\(profile): not a usable device profile")
            throw ExitCode(1)
        }
        let absolute = URL(fileURLWithPath: profile).standardizedFileURL.path
        let yaml = HomeLaunchPlan.fleetYAML(
            profilePath: absolute, count: count, roomSize: roomSize, name: name,
            serialPrefix: serialPrefix)
        if let output {
            do { try yaml.write(toFile: output, atomically: true, encoding: .utf8) } catch {
                printError("--output \(output): cannot write: \(error.localizedDescription)")
                throw ExitCode(1)
            }
        } else {
            print(yaml, terminator: "")
        }
    }
}
