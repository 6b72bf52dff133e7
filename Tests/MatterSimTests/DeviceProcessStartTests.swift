import DeviceProfile
import Foundation
import Synchronization
import Testing
@testable import matter_sim

/// What a node of `home --process-per-device` does before it serves (issue #43): 28 debug
/// processes starting at once after a power cut each resolved the whole home, which held the
/// last node back past 10 s on a loaded 2-core machine. Each now resolves only its own device,
/// handed the home's spread discriminator.
@Suite("Start-up of a home's device process")
struct DeviceProcessStartTests {
    static let demoHome = shippedProfiles.appendingPathComponent("homes/demo-home.yaml").path

    /// The names of the files a loader read, in order.
    final class ReadLog: Sendable {
        private let names = Mutex<[String]>([])
        var all: [String] { names.withLock { $0 } }

        /// A loader over the disk that records each file it reads here.
        var loader: ProfileLoader {
            ProfileLoader(
                fileSystem: ProfileFileSystem { [self] (path: String) throws(ProfileFileError) -> Data in
                    names.withLock { $0.append((path as NSString).lastPathComponent) }
                    return try ProfileFileSystem.disk.read(path)
                })
        }
    }

    @Test func eachChildIsHandedTheHomesDiscriminatorAndResolvesOnlyItsOwnDevice() throws {
        let home = try ProfileLoader().loadHome(file: Self.demoHome)
        let plan = try HomeLaunchPlan.nodes(of: home, basePort: 5540)
        let launcher = DeviceProcessLauncher(
            homeFile: Self.demoHome, home: home, plan: plan, stateRoot: "/tmp/state", attestationDir: nil,
            cloud: try CloudOptions.parse([]), logLevel: "notice")
        for node in plan {
            let arguments = launcher.arguments(for: node, executable: "matter-sim")
            // What `matter-sim run` parses of the child's command line.
            let run = try RunCommand.parse(Array(arguments.dropFirst(2)))
            #expect(run.homeDevice == node.index)
            #expect(run.discriminator == node.discriminator, "\(node.device.name)")
            #expect(run.port == node.port)

            let read = ReadLog()
            let device = try RunCommand.device(
                profile: run.profile, homeDevice: run.homeDevice, homeGaveDiscriminator: run.discriminator != nil, loader: read.loader)
            #expect(device.identity.serialNumber == node.device.profile.identity.serialNumber)
            #expect(device.endpoints == node.device.profile.endpoints)
            // The home file and the device's own profile: not the other 28 devices'.
            #expect(read.all == ["demo-home.yaml", (node.device.profile.source as NSString).lastPathComponent])
        }
    }

    @Test func runByHandTheChildStillGetsTheHomesSpreadDiscriminator() throws {
        let home = try ProfileLoader().loadHome(file: Self.demoHome)
        // Devices whose discriminator the home spread: what a child alone could not know.
        let spread = try home.allDevices.indices.filter { index in
            try ProfileLoader().loadHomeDevice(file: Self.demoHome, index: index).profile.commissioning.discriminator
                != home.allDevices[index].profile.commissioning.discriminator
        }
        #expect(!spread.isEmpty)
        for index in spread.prefix(2) {
            let device = try RunCommand.device(profile: Self.demoHome, homeDevice: index, homeGaveDiscriminator: false, loader: ProfileLoader())
            #expect(device == home.allDevices[index].profile)
        }
    }
}
