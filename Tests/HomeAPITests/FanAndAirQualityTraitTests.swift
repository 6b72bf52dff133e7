import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterTLV
import TestDevices
import TestWaiting
import Testing

// Issue #40: a fan and an air-quality sensor through the Home API, against in-process simulated
// devices on loopback UDP: their device types and generated traits (FanControlTrait,
// the concentration traits, AirQualityTrait), a fan mode set through the trait, and a reading
// done at the device reaching the trait.
@Suite("Fan and air quality traits", .serialized)
struct FanAndAirQualityTraitTests {
    @Test func aFanModeSetThroughTheTraitMovesTheSettingsAndTheDeviceTypeCarriesThem() async throws {
        let rig = try await Rig.make()
        let fan = try await TestDevice.start(
            Fixture.singleCluster(
                0x002B, Clusters.FanControl.id, features: ["SPD", "AUT"],
                attributes: [
                    Clusters.FanControl.Attribute.fanModeSequence: .unsigned(2), Clusters.FanControl.Attribute.speedMax: .unsigned(10),
                ],
                product: "Ceiling Fan", serial: "FAN-1"))
        defer {
            PendingCleanups.run {
                await fan.stop(); await rig.close()
            }
        }
        let device = try await rig.add(fan, name: "Bedroom Fan")
        let type = try #require(await device.types.get(FanDeviceType.self))
        let trait = try #require(type.matterTraits.fanControlTrait)
        #expect(trait.fanMode == .off && trait.speedMax == 10 && trait.fanModeSequence == .offLowMedHighAuto)
        #expect(await fan.untilSubscribed())
        try await trait.setFanMode(.high)
        let percentSetting = AttributePath(
            endpoint: 1, cluster: Clusters.FanControl.id, attribute: Clusters.FanControl.Attribute.percentSetting)
        #expect(await fan.value(percentSetting) == .unsigned(100))
        let spun = await until(signals(rig.home.devices().batched())) {
            let t = await (try? rig.home.device(id: device.id))?.types.get(FanDeviceType.self)?.matterTraits.fanControlTrait
            return t?.percentCurrent == 100 && t?.speedSetting == 10
        }
        #expect(spun)
    }

    @Test func aConcentrationDoneAtTheSensorReachesItsTraitAndTheAirQuality() async throws {
        let rig = try await Rig.make()
        let sensor = try await TestDevice.start(
            NodeDescription(endpoints: [
                Fixture.root(vendor: "Acme", product: "Air Monitor", serial: "AIR-1"),
                EndpointDescription(
                    number: 1, deviceTypes: [Fixture.deviceType(0x002C)],
                    serverClusters: [
                        ClusterInstanceDescription(id: Fixture.identify),
                        ClusterInstanceDescription(id: Clusters.AirQuality.id, features: ["FAIR", "MOD", "VPOOR", "XPOOR"]),
                        ClusterInstanceDescription(id: Clusters.CarbonDioxideConcentrationMeasurement.id, features: ["MEA", "LEV", "MED"]),
                    ]),
            ]))
        defer {
            PendingCleanups.run {
                await sensor.stop(); await rig.close()
            }
        }
        let device = try await rig.add(sensor, name: "Office Air")
        let type = try #require(await device.types.get(AirQualitySensorDeviceType.self))
        #expect(type.matterTraits.airQualityTrait?.airQuality == .good)
        #expect(type.matterTraits.carbonDioxideConcentrationMeasurementTrait?.measurementUnit == .ppm)
        #expect(await sensor.untilSubscribed())
        try await sensor.node.act(.concentration(.co2, 1_400))
        let updated = await until(signals(rig.home.devices().batched())) {
            let t = await (try? rig.home.device(id: device.id))?.types.get(AirQualitySensorDeviceType.self)?.matterTraits
            return t?.carbonDioxideConcentrationMeasurementTrait?.measuredValue == 1_400 && t?.airQualityTrait?.airQuality == .poor
                && t?.carbonDioxideConcentrationMeasurementTrait?.levelValue == .high
        }
        #expect(updated)
    }
}
