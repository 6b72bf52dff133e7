import DeviceProfile
import Foundation
import MatterDevice
import Testing
@testable import matter_sim

/// A home's nodes go to the shared Avahi daemon one slot apart after a start (issue #43):
/// registered at once, the daemon packed four nodes into each announcement packet and the
/// server's resolver, which reads two SRV records a packet, lost the last two for a minute.
@Suite("Announcement pacing of a home's nodes")
struct AnnouncementPacingTests {
    @Test func eachNodeOfAHomeGetsASlotOfItsOwnInBothModes() throws {
        let loader = ProfileLoader()
        let device = try loader.loadDevice(file: shippedProfiles.appendingPathComponent("devices/on-off-light.yaml").path)
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("pacing-\(getpid())")
        defer { try? FileManager.default.removeItem(at: work) }
        var slots: [Duration] = []
        for index in 0..<28 {
            // The home's own loop sets homeIndex.
            var options = NodeLaunchOptions(port: 0, stateDir: work.appendingPathComponent("\(index)").path, authority: testAuthority)
            options.homeIndex = index
            let launch = try NodeLaunch(device: device, model: loader.model, command: options, logger: quietLogger)
            slots.append(launch.serverConfiguration.advertisementSlot)
        }
        #expect(slots.first == .zero)
        for (earlier, later) in zip(slots, slots.dropFirst()) {
            // Apart by more than the daemon's longest response deferral (120 ms).
            #expect(later - earlier > .milliseconds(100))
        }
        // The last of 28 still leaves the home room to be back within 10 s.
        #expect(try #require(slots.last) <= .seconds(4))
        // A fleet home's last node is not held back minutes (slots go round).
        #expect(AnnouncementPacing.slot(ofNode: 9_999) < .seconds(4))
        // A node on its own (`matter-sim run PROFILE`) does not wait.
        let alone = try NodeLaunch(
            device: device, model: loader.model,
            command: NodeLaunchOptions(port: 0, stateDir: work.appendingPathComponent("alone").path, authority: testAuthority),
            logger: quietLogger)
        #expect(alone.serverConfiguration.advertisementSlot == .zero)
    }

    /// One process per device: the home starts each child in its node's slot, and the child
    /// announces as soon as it is up (#43: a child that also waited its slot did so after a
    /// start-up all 28 shared the CPU for, and the last was back in 9.8 s, not within 5).
    @Test func aPerDeviceHomeStartsEachChildInItsSlotAndTheChildDoesNotWait() throws {
        let home = try ProfileLoader().loadHome(file: shippedProfiles.appendingPathComponent("homes/demo-home.yaml").path)
        let plan = try HomeLaunchPlan.nodes(of: home, basePort: 5540)
        let launcher = DeviceProcessLauncher(
            homeFile: home.source, home: home, plan: plan, stateRoot: "/tmp/state", attestationDir: nil,
            cloud: try CloudOptions.parse([]), logLevel: "notice")
        for node in plan {
            #expect(DeviceProcessLauncher.startDelay(ofNode: node.index) == AnnouncementPacing.slot(ofNode: node.index))
            let child = try RunCommand.parse(Array(launcher.arguments(for: node, executable: "matter-sim").dropFirst(2)))
            #expect(try child.launchOptions().homeIndex == nil, "\(node.device.name)")
        }
    }
}
