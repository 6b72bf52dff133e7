import DeviceProfile
import Foundation
import MatterDevice
import MatterModel
import MatterTLV
import Testing
@testable import matter_sim

/// The shipped profiles, found from this file: Tests/MatterSimTests/ → DeviceProfiles/devices.
private let devicesDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("DeviceProfiles/devices")

private func profile(_ name: String) throws -> ResolvedDeviceProfile {
    try ProfileLoader().loadDevice(file: devicesDirectory.appendingPathComponent(name).path)
}

@Suite("matter-sim run: from profile to node")
struct ProfileNodeDescriptionTests {
    @Test(arguments: [
        "dimmable-light.yaml", "window-covering.yaml", "light-and-covering.yaml", "on-off-light.yaml", "on-off-plug.yaml",
        "smoke-co-alarm.yaml", "water-leak-detector.yaml", "on-off-light-switch.yaml", "dimmer-switch.yaml", "bridge.yaml",
    ])
    func everyShippedProfileBuildsACommissionableNode(_ name: String) async throws {
        let device = try profile(name)
        let node = try MatterNode(description: device.nodeDescription(model: .standard), logger: quietLogger)
        let rootClusters = Set(node.composition.clusters(on: 0))
        for required in ClusterInstanceDescription.rootNodeCommissioningClusters {
            #expect(rootClusters.contains(required.id), "\(name): endpoint 0 lacks cluster \(required.id)")
        }
        #expect(node.composition.endpoints == device.endpoints.map(\.number))
        await node.stop()
    }

    @Test func basicInformationCarriesTheIdentityAndTheNodesOwnRevisions() async throws {
        let device = try profile("dimmable-light.yaml")
        let node = try MatterNode(description: device.nodeDescription(model: .standard), logger: quietLogger)
        func basic(_ attribute: UInt32) async -> TLVValue? {
            try? await node.read(AttributePath(endpoint: 0, cluster: ClusterID(0x0028), attribute: AttributeID(attribute))).get().value
        }
        #expect(await basic(0x0001) == .utf8("Matter Sim"))
        #expect(await basic(0x0002) == .unsigned(0xFFF1))
        #expect(await basic(0x0004) == .unsigned(0x8002))
        #expect(await basic(0x000F) == .utf8("SIM-DL-0001"))
        #expect(await basic(0x0012) == .utf8(device.identity.uniqueID))
        // Not the model's placeholder default (0): the node's Matter 1.4 revision.
        #expect(await basic(0x0015) == .unsigned(0x0104_0000))
        // Administrator Commissioning with the Basic Commissioning feature (FeatureMap bit 0).
        let featureMap = try? await node.read(AttributePath(endpoint: 0, cluster: ClusterID(0x003C), attribute: AttributeID(0xFFFC))).get()
            .value
        #expect(featureMap?.uintValue.map { $0 & 1 } == 1)
        // The profile's light values.
        let level = try? await node.read(AttributePath(endpoint: 1, cluster: ClusterID(0x0008), attribute: AttributeID(0x0000))).get().value
        #expect(level == .unsigned(128))
        await node.stop()
    }

    /// Issue #40: a light switch's client clusters come from its device type (Descriptor
    /// ClientList, what its Binding sends); a bridge's bridged nodes are parts of its Aggregator.
    @Test func aSwitchHasItsClientClustersAndABridgesNodesArePartsOfItsAggregator() async throws {
        let dimmer = try profile("dimmer-switch.yaml").nodeDescription(model: .standard)
        #expect(
            dimmer.endpoints.first { $0.number == 1 }?.clientClusters == [
                Clusters.Identify.id, Clusters.OnOff.id, Clusters.LevelControl.id,
            ])
        let bridge = try MatterNode(description: profile("bridge.yaml").nodeDescription(model: .standard), logger: quietLogger)
        let parts = try await bridge.read(
            AttributePath(endpoint: 1, cluster: Clusters.Descriptor.id, attribute: Clusters.Descriptor.Attribute.partsList)
        ).get().value
        #expect(parts.members?.compactMap(\.value.uintValue) == [2, 3, 4])
        await bridge.stop()
    }

    @Test func windowCoveringSpeedsComeFromTheBehaviour() throws {
        let description = try profile("window-covering.yaml").nodeDescription(model: .standard)
        let covering = description.endpoints.first { $0.number == 1 }?.serverClusters.first { $0.id == ClusterID(0x0102) }
        // liftSpeed 10 %/s and tiltSpeed 50 %/s, in percent100ths per second.
        #expect(covering?.behavior.liftSpeed == .percent100thsPerSecond(1000))
        #expect(covering?.behavior.tiltSpeed == .percent100thsPerSecond(5000))
        #expect(try profile("window-covering.yaml").primaryDeviceType == DeviceTypeID(0x0202))
    }

    /// The shipped fan's motor runs at the setting at once (TC-FAN-3.1/3.2); `behaviour: fan:
    /// acceleration` gives a profile's motor inertia, in percent of full speed per second.
    @Test func aFansInertiaComesFromTheBehaviourAndTheShippedFanHasNone() throws {
        func fanControl(_ device: ResolvedDeviceProfile) -> ClusterInstanceDescription? {
            device.nodeDescription(model: .standard).endpoints.flatMap(\.serverClusters).first { $0.id == Clusters.FanControl.id }
        }
        let shipped = try #require(fanControl(try profile("fan.yaml")))
        #expect(shipped.behavior.fanAcceleration == nil)
        var yaml = try String(contentsOf: devicesDirectory.appendingPathComponent("fan.yaml"), encoding: .utf8)
        yaml += "behaviour:\n  fan: {acceleration: 25}\n"
        let slowed = try #require(fanControl(try ProfileLoader().loadDevice(yaml: yaml, file: "fan.yaml")))
        #expect(slowed.behavior.fanAcceleration == .percent100thsPerSecond(2500))
    }

    @Test func theStateDirectoryIsNamedAfterTheSerialNumber() {
        let explicit = NodeLaunch.stateDirectory("/tmp/somewhere", serialNumber: "SIM-DL-0001")
        #expect(explicit.path == "/tmp/somewhere")
        let derived = NodeLaunch.stateDirectory(nil, serialNumber: "SIM/DL 1")
        #expect(derived.path.hasSuffix("/.matter-sim/SIM_DL_1"))
    }

    @Test func theDeviceNameIsCutToTheDNField() {
        let short = NodeServerConfiguration.Advertisement(vendorID: 0xFFF1, productID: 0x8005, deviceName: "Light and Shade Controller")
        #expect(short.deviceName == "Light and Shade Controller")
        let long = String(repeating: "é", count: 40)
        let cut = NodeServerConfiguration.Advertisement(vendorID: 0xFFF1, productID: 0x8005, deviceName: long).deviceName ?? ""
        #expect(cut.utf8.count == 32)
        #expect(long.hasPrefix(cut))
    }
}
