import DeviceProfile
import Foundation
@testable import MatterModel
import Testing

/// A node of `home --process-per-device` resolves only its own device of the home (issue #43:
/// each of the demo home's 28 processes resolving all of it was most of their start-up after a
/// power cut), and gets the device the whole home's resolution gives.
@Suite("A home's device resolved alone")
struct HomeDeviceAloneTests {
    static let demoHome = shippedProfile("homes/demo-home.yaml")

    @Test func eachDeviceResolvedAloneIsTheHomesDevice() throws {
        let loader = ProfileLoader()
        let home = try loader.loadHome(file: Self.demoHome)
        #expect(home.allDevices.count >= 20)
        for (index, device) in home.allDevices.enumerated() {
            var alone = try loader.loadHomeDevice(file: Self.demoHome, index: index)
            // The home spreads short discriminators over all its devices: the one part the
            // device alone cannot know (HomeLaunchPlan hands it over).
            alone.profile.commissioning.discriminator = device.profile.commissioning.discriminator
            #expect(alone == device, "device \(index) (\(device.name))")
        }
    }

    /// `matter-sim home --part K/N` resolves only its own devices; the parts together are the
    /// whole home's plan: the same ports, names, serial numbers and (spread) setup codes.
    @Test(arguments: [1, 2, 3, 7, 29])
    func thePartsOfAHomeTogetherAreTheWholeHomesPlan(parts: Int) throws {
        let fleet = FileManager.default.temporaryDirectory.appendingPathComponent("part-fleet-\(getpid()).yaml").path
        defer { try? FileManager.default.removeItem(atPath: fleet) }
        try HomeLaunchPlan.fleetYAML(profilePath: shippedProfile("devices/dimmable-light.yaml"), count: 61, roomSize: 8)
            .write(toFile: fleet, atomically: true, encoding: .utf8)
        for file in [Self.demoHome, fleet] {
            let loader = ProfileLoader()
            let whole = try HomeLaunchPlan.nodes(of: loader.loadHome(file: file), basePort: 5540)
            var joined: [HomeNodePlan] = []
            for k in 1...parts {
                let part = try loader.loadHomePart(file: file, part: k, of: parts)
                #expect(part.deviceCount == whole.count)
                joined += try HomeLaunchPlan.nodes(of: part, basePort: 5540)
            }
            #expect(joined.count == whole.count, "\(file)")
            for (a, b) in zip(joined, whole) { #expect(a == b, "\(file): device \(b.index) (\(b.device.name))") }
        }
    }

    @Test func aPartBeyondTheDevicesIsAnErrorNamingTheCount() throws {
        let count = try ProfileLoader().loadHome(file: Self.demoHome).allDevices.count
        for (k, n) in [(1, count + 1), (0, 2), (3, 2)] {
            let error = #expect(throws: ProfileErrors.self) { try ProfileLoader().loadHomePart(file: Self.demoHome, part: k, of: n) }
            #expect(error?.description.contains("the home has \(count) devices") == true, "\(String(describing: error))")
        }
    }

    @Test func aDevicePastTheLastIsAnErrorNamingTheCount() throws {
        let count = try ProfileLoader().loadHome(file: Self.demoHome).allDevices.count
        for index in [count, -1] {
            let error = #expect(throws: ProfileErrors.self) { try ProfileLoader().loadHomeDevice(file: Self.demoHome, index: index) }
            #expect(error?.description.contains("the home has \(count)") == true, "\(String(describing: error))")
        }
    }

    /// Every shipped profile resolves the same on the shared model, which builds each
    /// cluster on first use, as on a model built and checked whole: the lazy model still
    /// serves every cluster of every profile.
    @Test func everyShippedProfileResolvesAlikeOnAModelBuiltOnFirstUse() throws {
        let checked = ProfileLoader(model: try MatterModel.loadStandard())
        let onFirstUse = ProfileLoader(model: try MatterModel(json: MatterModel.standardJSON(), buildingOnFirstUse: true))
        let names = try FileManager.default.contentsOfDirectory(atPath: shippedProfile("devices")).filter { $0.hasSuffix(".yaml") }.sorted()
        #expect(names.count >= 25)
        for name in names {
            let file = shippedProfile("devices/" + name)
            let lazy = try onFirstUse.loadDevice(file: file)
            #expect(lazy == (try checked.loadDevice(file: file)), "\(name)")
            for endpoint in lazy.endpoints {
                for cluster in endpoint.clusters {
                    #expect(onFirstUse.model.cluster(cluster.id) == checked.model.cluster(cluster.id), "\(name) \(cluster.name)")
                }
            }
        }
        #expect(try onFirstUse.loadHome(file: Self.demoHome) == checked.loadHome(file: Self.demoHome))
    }
}
