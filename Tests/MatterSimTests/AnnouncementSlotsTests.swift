import DeviceProfile
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import MatterDevice
@testable import matter_sim

/// The processes of `home --process-per-device` take their first advertisement's slot from
/// one file (issue #43): each child paced only itself from its own start, so two children
/// that got going a slot apart in the other order registered at the same moment, and the
/// shared Avahi daemon packed their records into one packet.
@Suite("Announcement slots shared by a home's processes")
struct AnnouncementSlotsTests {
    static let spacing = AnnouncementSlots.nanoseconds(AnnouncementPacing.spacing)
    /// Some CLOCK_BOOTTIME reading (nanoseconds).
    static let now: Int64 = 500_000_000_000

    static func scratch(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("slots-\(name)-\(getpid())")
    }

    /// When a node of `configuration` goes to the daemon if it is ready at `ready`: the
    /// home's next shared slot, else its own slot after its own start.
    static func registration(_ configuration: NodeServerConfiguration, readyAt ready: Int64) throws -> Int64 {
        if let slots = configuration.announcementSlots { return try slots.take(now: ready).at }
        return ready + AnnouncementSlots.nanoseconds(configuration.advertisementSlot)
    }

    @Test func twoChildrenReadyInTheOtherOrderStillRegisterASlotApart() throws {
        let home = try ProfileLoader().loadHome(file: DeviceProcessStartTests.demoHome)
        let plan = try HomeLaunchPlan.nodes(of: home, basePort: 5540)
        let root = Self.scratch("children")
        defer { try? FileManager.default.removeItem(at: root) }
        let launcher = DeviceProcessLauncher(
            homeFile: DeviceProcessStartTests.demoHome, home: home, plan: plan, stateRoot: root.path, attestationDir: nil,
            cloud: try CloudOptions.parse([]), logLevel: "notice")
        let loader = ProfileLoader()
        // Children 0 and 1, as `matter-sim run` sets them up from the command line they are given.
        let configurations = try plan.prefix(2).map { node in
            let run = try RunCommand.parse(Array(launcher.arguments(for: node, executable: "matter-sim").dropFirst(2)))
            var options = NodeLaunchOptions(port: 0, stateDir: run.stateDir, authority: testAuthority)
            options.homeIndex = run.homeDevice
            options.announcementSlots = run.announcementSlots
            let device = try RunCommand.device(
                profile: run.profile, homeDevice: run.homeDevice, homeGaveDiscriminator: true, loader: loader)
            return try NodeLaunch(device: device, model: loader.model, command: options, logger: quietLogger).serverConfiguration
        }
        // Under load child 1 was ready first and child 0 a slot later: each paced from its own
        // start, both went to the daemon at the same moment.
        let second = try Self.registration(configurations[1], readyAt: Self.now)
        let first = try Self.registration(configurations[0], readyAt: Self.now + Self.spacing)
        #expect(abs(first - second) >= Self.spacing)
        // A third ready between them waits for the slot after both.
        #expect(try Self.registration(configurations[1], readyAt: Self.now + Self.spacing / 2) >= max(first, second) + Self.spacing)
    }

    @Test func slotsTakenAtOnceThroughTwoHandlesAreASpacingApart() throws {
        let file = Self.scratch("concurrent")
        defer { try? FileManager.default.removeItem(at: file) }
        // Two handles on one file, as two processes; each take opens and locks it anew.
        let handles = [AnnouncementSlots(path: file.path), AnnouncementSlots(path: file.path)]
        let taken = Mutex<[Int64]>([])
        DispatchQueue.concurrentPerform(iterations: 16) { index in
            if let slot = try? handles[index % 2].take(now: Self.now) { taken.withLock { $0.append(slot.at) } }
        }
        let slots = taken.withLock { $0 }.sorted()
        #expect(slots.count == 16)
        #expect(slots.first == Self.now)
        for (earlier, later) in zip(slots, slots.dropFirst()) {
            #expect(later - earlier == Self.spacing)
        }
    }

    @Test func aStaleOrDamagedSlotFileIsIgnored() throws {
        let file = Self.scratch("stale")
        defer { try? FileManager.default.removeItem(at: file) }
        let slots = AnnouncementSlots(path: file.path)
        let contents = [
            "\(Self.now - 10_000_000_000)\n",  // the home's run before the power cut
            "\(Self.now + 3_600_000_000_000)\n",  // before a reboot: the clock started again since
            "not a time", "-5", "", "\u{0}\u{1}\u{2}",
        ]
        for content in contents {
            try Data(content.utf8).write(to: file)
            #expect(try slots.take(now: Self.now) == AnnouncementSlots.Slot(at: Self.now, wait: .zero), "file held \(content.debugDescription)")
            // What it wrote is the next process's: one slot later.
            #expect(try slots.take(now: Self.now).wait == AnnouncementPacing.spacing)
        }
    }

    @Test func aFullRoundOfWaitsIsBoundedAndTheNextGoesAtOnce() throws {
        let file = Self.scratch("round")
        defer { try? FileManager.default.removeItem(at: file) }
        let slots = AnnouncementSlots(path: file.path)
        let waits = try (0..<AnnouncementPacing.slots + 1).map { _ in try slots.take(now: Self.now).wait }
        // As in one process: the last of a round waits what node 31 of a home would.
        #expect(waits[AnnouncementPacing.slots - 1] == AnnouncementPacing.slot(ofNode: AnnouncementPacing.slots - 1))
        #expect(waits.allSatisfy { $0 <= AnnouncementSlots.longestWait })
        #expect(waits[AnnouncementPacing.slots] == .zero)
    }

    @Test func aSlotFileThatCannotBeOpenedMeansNoWait() {
        var reasons: [String] = []
        let wait = AnnouncementSlots(path: "/nonexistent-\(getpid())/\(AnnouncementSlots.fileName)").takeSlot { reasons.append($0) }
        #expect(wait == .zero)
        #expect(reasons.count == 1)
    }
}
