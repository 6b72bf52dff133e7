// `matter-sim describe FILE`: what a device (or every device of a home) looks like once
// resolved: endpoints, device types, clusters with features, attribute values.
import ArgumentParser
import DeviceProfile
import Foundation

struct DescribeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "describe",
        abstract: "Print a device's endpoints, clusters and attribute values, or a home's structures, rooms and devices.")

    @Argument(help: ArgumentHelp("A device profile or home file (YAML).", valueName: "file"))
    var file: String

    @Flag(inversion: .prefixedNo, help: "Show attribute values under each cluster.")
    var attributes = true

    @Flag(
        help:
            "Print JSON for programs: per node its identity, onboarding codes, endpoints, device types and the server clusters a controller finds on the LAN."
    )
    var json = false

    func run() throws {
        let loader = ProfileLoader()
        let result = loader.load(file: file)
        guard let profile = result.profile else {
            for d in result.diagnostics { printError(d.description) }
            printError("\(file): not described: \(result.diagnostics.count) error\(result.diagnostics.count == 1 ? "" : "s")")
            throw ExitCode(1)
        }
        if json {
            print(try DescriptionJSON(profile, model: loader.model).rendered())
            return
        }
        let description = ProfileDescription(model: loader.model, showAttributes: attributes)
        switch profile {
        case .device(let device): print(description.render(device))
        case .home(let home): print(description.render(home))
        }
    }
}

func printError(_ line: String) {
    var stderr = StandardError()
    print(line, to: &stderr)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}
