// `matter-sim clone DUMP.json`: a real device's node dump (Home Assistant's Matter server
// node JSON or diagnostics file) becomes a device profile serving the same node.
import ArgumentParser
import DeviceProfile
import Foundation

struct CloneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clone",
        abstract: "Turn a node dump into a device profile that serves the same node.",
        discussion: """
            DUMP is Home Assistant's Matter server node JSON or a Home Assistant diagnostics file of
            a Matter device. The profile keeps endpoints, device types, each cluster's revision,
            FeatureMap, attribute and command lists and values; it lists at its top what it
            regenerates (fabrics, credentials, network state, serial number and unique ID).
            A dump that is not one, or a value contradicting its model type, is an error and no
            profile is written. See DeviceProfiles/README.md ("Cloning a real device").
            """)

    @Argument(help: ArgumentHelp("The node dump (JSON).", valueName: "dump"))
    var dump: String

    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the profile (default: standard output).", valueName: "profile.yaml"))
    var output: String?

    @Option(help: "The clone's serial number (default: derived from the dump).")
    var serial: String?

    @Flag(help: "Drop serial numbers, unique IDs, network names and location.")
    var anonymize = false

    func run() throws {
        let text: String
        do {
            text = try String(contentsOfFile: dump, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("\(dump): cannot read: \(error.localizedDescription)\n".utf8))
            throw ExitCode(1)
        }
        let result: NodeCloner.Result
        do {
            let node = try NodeDump.read(text, file: dump)
            result = try NodeCloner().clone(node, options: .init(serial: serial, anonymize: anonymize, source: dump))
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            throw ExitCode(1)
        }
        guard let output else {
            print(result.yaml, terminator: "")
            return
        }
        do {
            try result.yaml.write(toFile: output, atomically: true, encoding: .utf8)
        } catch {
            FileHandle.standardError.write(Data("\(output): cannot write: \(error.localizedDescription)\n".utf8))
            throw ExitCode(1)
        }
        FileHandle.standardError.write(
            Data("\(output): \(result.profile.endpoints.count) endpoints, \(result.rawAttributes) raw attributes, \(result.regenerated.count) regenerated\n".utf8))
    }
}
