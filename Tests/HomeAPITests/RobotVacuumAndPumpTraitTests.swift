import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterTLV
import TestDevices
import TestWaiting
import Testing

// Issue #40: a robot vacuum and a pump through the Home API, against in-process simulated
// devices on loopback UDP: their device types and generated traits (RvcRunModeTrait,
// RvcCleanModeTrait, RvcOperationalStateTrait, PumpConfigurationAndControlTrait), the mode
// labels read from SupportedModes, a clean run started and sent home through the traits, and a
// pump's operation mode written through its trait.
@Suite("Robot vacuum and pump traits", .serialized)
struct RobotVacuumAndPumpTraitTests {
    typealias Power = Clusters.PowerSource

    @Test func aCleanRunStartedByItsCleaningModeIsSentHomeThroughTheTraits() async throws {
        let rig = try await Rig.make()
        let vacuum = try await TestDevice.start(
            NodeDescription(endpoints: [
                Fixture.root(vendor: "Acme", product: "Robot Vacuum", serial: "RVC-1"),
                EndpointDescription(
                    number: 1, deviceTypes: [Fixture.deviceType(DeviceTypes.roboticVacuumCleaner.rawValue)],
                    serverClusters: [
                        ClusterInstanceDescription(id: Fixture.identify),
                        ClusterInstanceDescription(id: Clusters.RvcRunMode.id), ClusterInstanceDescription(id: Clusters.RvcCleanMode.id),
                        ClusterInstanceDescription(id: Clusters.RvcOperationalState.id),
                        ClusterInstanceDescription(id: Power.id, features: [Power.Feature.battery, Power.Feature.rechargeable]),
                    ]),
            ]))
        defer {
            PendingCleanups.run {
                await vacuum.stop(); await rig.close()
            }
        }
        let device = try await rig.add(vacuum, name: "Robot Vacuum")
        let type = try #require(await device.types.get(RoboticVacuumCleanerDeviceType.self))
        let run = try #require(type.matterTraits.rvcRunModeTrait)
        #expect(run.currentModeLabel == "Idle")
        #expect(type.matterTraits.rvcCleanModeTrait?.currentModeLabel == "Vacuum")
        #expect(type.matterTraits.rvcOperationalStateTrait?.operationalState == .docked)
        let cleaning = try #require(run.mode(tagged: .cleaning))
        #expect(await vacuum.untilSubscribed())
        #expect(try await run.changeToMode(newMode: cleaning).status == 0)
        func operational() async -> Matter.RvcOperationalStateTrait? {
            await (try? rig.home.device(id: device.id))?.types.get(RoboticVacuumCleanerDeviceType.self)?.matterTraits.rvcOperationalStateTrait
        }
        let running = await until(signals(rig.home.devices().batched())) { await operational()?.operationalState == .running }
        #expect(running)
        let state = try #require(await operational())
        #expect(try await state.goHome().commandResponseState?.errorStateID == 0)
        let homeward = await until(signals(rig.home.devices().batched())) { await operational()?.operationalState == .seekingCharger }
        #expect(homeward)
        // GoHome again is NoError; Pause on the way home is too, and Resume continues home.
        #expect(try await state.goHome().commandResponseState?.errorStateID == 0)
    }

    @Test func aPumpsOperationModeWrittenThroughItsTraitSetsTheEffectiveModes() async throws {
        let rig = try await Rig.make()
        typealias Pump = Clusters.PumpConfigurationAndControl
        let pump = try await TestDevice.start(
            NodeDescription(endpoints: [
                Fixture.root(vendor: "Acme", product: "Pump", serial: "PUMP-1"),
                EndpointDescription(
                    number: 1, deviceTypes: [Fixture.deviceType(DeviceTypes.pump.rawValue)],
                    serverClusters: [
                        ClusterInstanceDescription(id: Fixture.identify),
                        ClusterInstanceDescription(id: Fixture.onOff),
                        ClusterInstanceDescription(
                            id: Pump.id, features: [Pump.Feature.constantSpeed],
                            attributes: [Pump.Attribute.maxSpeed: .unsigned(3_000), Pump.Attribute.minConstSpeed: .unsigned(1_000),
                                         Pump.Attribute.maxConstSpeed: .unsigned(3_000)]),
                    ]),
            ]))
        defer {
            PendingCleanups.run {
                await pump.stop(); await rig.close()
            }
        }
        let device = try await rig.add(pump, name: "Pump")
        let type = try #require(await device.types.get(PumpDeviceType.self))
        let trait = try #require(type.matterTraits.pumpConfigurationAndControlTrait)
        #expect(trait.effectiveOperationMode == .normal)
        #expect(await pump.untilSubscribed())
        try await trait.setOperationMode(.maximum)
        let effective = await until(signals(rig.home.devices().batched())) {
            let t = await (try? rig.home.device(id: device.id))?.types.get(PumpDeviceType.self)?.matterTraits.pumpConfigurationAndControlTrait
            return t?.effectiveOperationMode == .maximum && t?.effectiveControlMode == .constantSpeed
        }
        #expect(effective)
    }
}
