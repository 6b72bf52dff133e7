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
            // The home's own loop and `run --home-device N` both set homeIndex.
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
}
