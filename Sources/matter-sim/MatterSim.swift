// matter-sim: simulated Matter devices. `validate` and `describe` work on device and
// home profiles, `run` puts one device on the network; `home` and `fault` join them as
// the simulator grows.
import ArgumentParser

@main
struct MatterSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matter-sim",
        abstract: "Simulated Matter devices that speak real Matter over UDP.",
        discussion: """
            Devices and homes are described by YAML profiles; see DeviceProfiles/README.md.
            """,
        subcommands: [ValidateCommand.self, DescribeCommand.self, RunCommand.self, HomeCommand.self, FleetCommand.self])
}
