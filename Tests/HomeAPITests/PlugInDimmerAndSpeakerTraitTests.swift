import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterTLV
import TestDevices
import TestWaiting
import Testing

// Issue #40: a plug-in dimmer and a speaker through the Home API, against in-process simulated
// devices on loopback UDP: their generated device types (the SDK's DimmablePlugInUnitDeviceType
// and SpeakerDeviceType) carry On/Off and Level Control, and a command through the traits
// reaches the device (the plug dimmed; the speaker's volume set, then muted with its volume kept).
@Suite("Plug-in dimmer and speaker", .serialized)
struct PlugInDimmerAndSpeakerTraitTests {
    static func node(_ deviceType: UInt32, product: String, serial: String, levelFeatures: Set<String>) -> NodeDescription {
        NodeDescription(endpoints: [
            Fixture.root(vendor: "Acme", product: product, serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [Fixture.deviceType(deviceType)],
                serverClusters: [
                    ClusterInstanceDescription(id: Fixture.identify),
                    ClusterInstanceDescription(
                        id: Fixture.onOff, features: levelFeatures.isEmpty ? [] : ["LT"], attributes: [AttributeID(0): .bool(true)]),
                    ClusterInstanceDescription(id: Fixture.levelControl, features: levelFeatures, attributes: [AttributeID(0): .unsigned(80)]),
                ]),
        ])
    }

    @Test func aPlugInDimmerIsItsDeviceTypeAndDimsThroughItsLevelTrait() async throws {
        let rig = try await Rig.make()
        let plug = try await TestDevice.start(
            Self.node(DeviceTypes.dimmablePlugInUnit.rawValue, product: "Plug-in Dimmer", serial: "DPLUG-1", levelFeatures: ["OO", "LT"]))
        defer {
            PendingCleanups.run {
                await plug.stop(); await rig.close()
            }
        }
        let device = try await rig.add(plug, name: "Lamp Dimmer")
        let type = try #require(await device.types.get(DimmablePlugInUnitDeviceType.self))
        #expect(type.matterTraits.onOffTrait?.onOff == true)
        let level = try #require(type.matterTraits.levelControlTrait)
        #expect(level.currentLevel == 80)
        try await level.moveToLevelWithOnOff(level: 30, transitionTime: 0)
        #expect(await plug.value(Fixture.currentLevelPath) == .unsigned(30))
    }

    @Test func aSpeakersVolumeIsItsLevelAndMuteKeepsIt() async throws {
        let rig = try await Rig.make()
        let speaker = try await TestDevice.start(
            Self.node(DeviceTypes.speaker.rawValue, product: "Kitchen Speaker", serial: "SPK-1", levelFeatures: []))
        defer {
            PendingCleanups.run {
                await speaker.stop(); await rig.close()
            }
        }
        let device = try await rig.add(speaker, name: "Kitchen Speaker")
        let type = try #require(await device.types.get(SpeakerDeviceType.self))
        let volume = try #require(type.matterTraits.levelControlTrait)
        let mute = try #require(type.matterTraits.onOffTrait)
        try await volume.moveToLevel(level: 120, transitionTime: 0)
        #expect(await speaker.value(Fixture.currentLevelPath) == .unsigned(120))
        try await mute.off()
        #expect(await speaker.value(Fixture.onOffPath) == .bool(false))
        #expect(await speaker.value(Fixture.currentLevelPath) == .unsigned(120))
    }
}
