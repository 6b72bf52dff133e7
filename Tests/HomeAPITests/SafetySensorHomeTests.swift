import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterTLV
import TestDevices
import TestWaiting
import Testing

// Issue #40: a smoke/CO alarm and a water leak detector through the Home API: their device
// types and traits (SmokeCoAlarm, BooleanStateConfiguration, PowerSource), the events done at
// the device, and the self-test command, against in-process simulated devices on loopback UDP.
@Suite("Smoke alarms and leak detectors", .serialized)
struct SafetySensorHomeTests {
    typealias Power = Clusters.PowerSource

    static let battery = ClusterInstanceDescription(
        id: Power.id, features: [Power.Feature.battery, Power.Feature.replaceable],
        attributes: [
            Power.Attribute.batPercentRemaining: .unsigned(180), Power.Attribute.batReplacementDescription: .utf8("2 x AA"),
            Power.Attribute.batQuantity: .unsigned(2),
        ])

    /// One endpoint of `type` with Identify, `clusters` and a battery.
    static func device(_ type: DeviceTypeID, _ clusters: [ClusterInstanceDescription], product: String, serial: String) -> NodeDescription {
        NodeDescription(endpoints: [
            Fixture.root(vendor: "Acme", product: product, serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [Fixture.deviceType(type.rawValue), Fixture.deviceType(DeviceTypes.powerSource.rawValue)],
                serverClusters: [ClusterInstanceDescription(id: Fixture.identify)] + clusters + [battery]),
        ])
    }

    @Test func aSmokeAlarmsEventsStateSelfTestAndBatteryReachTheApp() async throws {
        let rig = try await Rig.make()
        let alarm = try await TestDevice.start(
            Self.device(
                DeviceTypes.smokeCoAlarm,
                [ClusterInstanceDescription(id: Clusters.SmokeCoAlarm.id, features: ["SMOKE", "CO"])],
                product: "Smoke Alarm", serial: "SMOKE-1"))
        defer {
            PendingCleanups.run {
                await alarm.stop(); await rig.close()
            }
        }
        let device = try await rig.add(alarm, name: "Hall Smoke Alarm")
        let type = try #require(await device.types.get(SmokeCoAlarmDeviceType.self))
        let trait = try #require(type.matterTraits.smokeCoAlarmTrait)
        #expect(trait.expressedState == .normal && trait.smokeState == .normal)
        #expect(type.matterTraits.powerSourceTrait?.batPercentRemaining == 180)
        #expect(type.events.contains(Matter.SmokeCoAlarmTrait.SmokeAlarmEvent.self))
        #expect(await alarm.untilSubscribed())

        let smoke = Received(type.events.subscribe(Matter.SmokeCoAlarmTrait.SmokeAlarmEvent.self))
        let clear = Received(type.events.subscribe(Matter.SmokeCoAlarmTrait.AllClearEvent.self))
        defer {
            smoke.stop(); clear.stop()
        }
        try await alarm.node.act(.alarm(.smoke(.critical)))
        #expect(await smoke.values.until { $0.count == 1 })
        #expect(smoke.values.value.first?.alarmSeverityLevel == .critical)
        #expect(smoke.values.value.first?.importance == .productionCritical)
        let alarming = await until(signals(device.types.subscribe(SmokeCoAlarmDeviceType.self))) {
            await (try? rig.home.device(id: device.id))?.types.get(SmokeCoAlarmDeviceType.self)?
                .matterTraits.smokeCoAlarmTrait?.expressedState == .smokeAlarm
        }
        #expect(alarming)
        try await alarm.node.act(.alarm(.clear))
        #expect(await clear.values.until { $0.count == 1 })

        // The self-test from the app: TestInProgress on the device at once.
        try await trait.selfTestRequest()
        let testing = AttributePath(
            endpoint: 1, cluster: Clusters.SmokeCoAlarm.id, attribute: Clusters.SmokeCoAlarm.Attribute.testInProgress)
        #expect(try await alarm.node.read(testing).get().value == .bool(true))
        // A battery put in at 15 %: the app sees the charge (half-percent units).
        try await alarm.node.act(.battery(percent: 15))
        let low = await until(signals(device.types.subscribe(SmokeCoAlarmDeviceType.self))) {
            await (try? rig.home.device(id: device.id))?.types.get(SmokeCoAlarmDeviceType.self)?
                .matterTraits.powerSourceTrait?.batPercentRemaining == 30
        }
        #expect(low)
    }

    @Test func aLeakDetectorsAlarmReachesTheAppAndTheAppSilencesIt() async throws {
        let rig = try await Rig.make()
        let detector = try await TestDevice.start(
            Self.device(
                DeviceTypes.waterLeakDetector,
                [
                    ClusterInstanceDescription(
                        id: Clusters.BooleanState.id, attributes: [Clusters.BooleanState.Attribute.stateValue: .bool(false)]),
                    ClusterInstanceDescription(id: Clusters.BooleanStateConfiguration.id, features: ["VIS", "AUD", "SPRS"]),
                ],
                product: "Leak Detector", serial: "LEAK-1"))
        defer {
            PendingCleanups.run {
                await detector.stop(); await rig.close()
            }
        }
        let device = try await rig.add(detector, name: "Sink Leak")
        let type = try #require(await device.types.get(WaterLeakDetectorDeviceType.self))
        #expect(type.matterTraits.booleanStateConfigurationTrait?.alarmsSupported == [.visual, .audible])
        #expect(await detector.untilSubscribed())
        let changed = Received(type.events.subscribe(Matter.BooleanStateConfigurationTrait.AlarmsStateChangedEvent.self))
        defer { changed.stop() }
        try await detector.node.act(.leak(true))
        #expect(await changed.values.until { $0.count == 1 })
        #expect(changed.values.value.first?.alarmsActive == [.visual, .audible])
        let trait = try #require(type.matterTraits.booleanStateConfigurationTrait)
        try await trait.suppressAlarm(alarmsToSuppress: .audible)
        #expect(await changed.values.until { $0.count == 2 })
        #expect(changed.values.value.last?.alarmsSuppressed == .audible)
    }
}
