// matter-sim: simulated Matter devices. `validate` and `describe` work on device and
// home profiles, `run` puts one device on the network, `home` every device of a home, and
// `fault` breaks a running node's LAN, cloud connection or power.
import ArgumentParser

@main
struct MatterSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matter-sim",
        abstract: "Simulated Matter devices that speak real Matter over UDP.",
        discussion: """
            Devices and homes are described by YAML profiles; see DeviceProfiles/README.md.
            """,
        subcommands: [
            ValidateCommand.self, DescribeCommand.self, RunCommand.self, HomeCommand.self, FaultCommand.self, ActCommand.self,
            FleetCommand.self, CloneCommand.self, OnboardingReportCommand.self,
        ])
}
