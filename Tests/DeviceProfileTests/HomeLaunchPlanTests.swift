import DeviceProfile
import Foundation
import Testing

/// The plan both `matter-sim home` and `homectl commission --home` read: ports in file order,
/// each device's own setup code, state directories; and fleet homes.
@Suite("home launch plan")
struct HomeLaunchPlanTests {
    @Test func demoHomeNodesGetPortsInFileOrderAndTheirOwnCodes() throws {
        let home = try ProfileLoader().loadHome(file: shippedProfile("homes/demo-home.yaml"))
        let plan = try HomeLaunchPlan.nodes(of: home, basePort: 6000)
        #expect(plan.count == 29)
        #expect(plan.map(\.port) == Array(6000..<6029))
        #expect(plan.map(\.device.name) == home.allDevices.map(\.name))
        // The home's explicit codes, and derived ones elsewhere.
        let pendant = try #require(plan.first { $0.device.name == "Kitchen Pendant" })
        #expect(pendant.passcode == 34567890 && pendant.discriminator == 1201)
        #expect(pendant.stateDirectoryName == "MH-KIT-PENDANT")
        let porch = try #require(plan.first { $0.device.name == "Porch Light" })
        #expect(porch.device.room == nil && porch.device.structure == "Guest Cottage")
        for node in plan {
            #expect(node.passcode == node.device.profile.commissioning.passcode)
            #expect(node.discriminator == node.device.profile.commissioning.discriminator)
        }
        #expect(Set(plan.map(\.stateDirectoryName)).count == 29)
    }

    @Test func portsMustFitBelow65536() throws {
        let home = try ProfileLoader().loadHome(file: shippedProfile("homes/demo-home.yaml"))
        #expect(throws: HomeLaunchPlanError.self) { try HomeLaunchPlan.nodes(of: home, basePort: 65530) }
        #expect(throws: HomeLaunchPlanError.self) { try HomeLaunchPlan.nodes(of: home, basePort: 0) }
        #expect(try HomeLaunchPlan.nodes(of: home, basePort: 65507).last?.port == 65535)
    }

    /// A fleet split over hosts: every node in exactly one part, parts contiguous and within
    /// one node of each other's size, so `matter-sim home --part` and `homectl fleet-bench
    /// --host A,B,...` agree on where each node is.
    @Test func aFleetSplitsIntoContiguousPartsOfNearlyEqualSize() {
        for (nodes, parts) in [(10, 3), (10_000, 4), (7, 7), (5, 1), (9_999, 3)] {
            let assigned = (0..<nodes).map { HomeLaunchPlan.part(ofNode: $0, nodes: nodes, parts: parts) }
            #expect(assigned.first == 1 && assigned.last == parts)
            #expect(zip(assigned, assigned.dropFirst()).allSatisfy { $1 == $0 || $1 == $0 + 1 })
            let sizes = (1...parts).map { part in assigned.filter { $0 == part }.count }
            #expect(sizes.max()! - sizes.min()! <= 1, "\(nodes) nodes in \(parts) parts: \(sizes)")
        }
        #expect((0..<10).map { HomeLaunchPlan.part(ofNode: $0, nodes: 10, parts: 3) } == [1, 1, 1, 1, 2, 2, 2, 3, 3, 3])
    }

    @Test func stateDirectoryNamesAreSafe() {
        #expect(HomeLaunchPlan.stateDirectoryName(serialNumber: "A/B C..") == "A_B_C..")
        #expect(HomeLaunchPlan.stateDirectoryName(serialNumber: "") == "device")
    }

    @Test func fleetHomeHasDistinctSerialsAndCodesInRooms() throws {
        let yaml = HomeLaunchPlan.fleetYAML(profilePath: shippedProfile("devices/dimmable-light.yaml"), count: 120, roomSize: 50)
        let home = try ProfileLoader().loadHome(yaml: yaml, file: "/tmp/fleet.yaml")
        let plan = try HomeLaunchPlan.nodes(of: home, basePort: 20000)
        #expect(plan.count == 120)
        #expect(home.structures.count == 1)
        #expect(home.structures[0].rooms.map { $0.devices.count } == [50, 50, 20])
        #expect(plan.first?.device.name == "Node 001" && plan.last?.device.name == "Node 120")
        #expect(plan.first?.device.profile.identity.serialNumber == "FLEET-001")
        #expect(Set(plan.map(\.device.profile.identity.serialNumber)).count == 120)
        // dimmable-light fixes no code: each node's is derived from its serial.
        #expect(Set(plan.map(\.passcode)).count == 120)
    }
}
