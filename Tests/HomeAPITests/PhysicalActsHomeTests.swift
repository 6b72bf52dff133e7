import Foundation
import HomeAPI
import MatterDevice
import TestDevices
import TestWaiting
import Testing

// Issue #16: what a person does at a device (`MatterNode.act`, as `matter-sim act`) reaches an
// app through the home like any other change: a light's button and dimmer, a blind's cord.

@Suite("Physical acts through a home", .serialized)
struct PhysicalActsHomeTests {
    @Test func aButtonADimmerAndACordReachTheApp() async throws {
        let rig = try await Rig.make()
        let home = rig.home
        let light = try await TestDevice.start(Fixture.dimmableLight(serial: "DIM-ACT"))
        let blind = try await TestDevice.start(Fixture.windowCovering(serial: "BLIND-ACT"))
        defer {
            PendingCleanups.run {
                await light.stop(); await blind.stop(); await rig.close()
            }
        }
        let lamp = try await rig.add(light, name: "Lamp")
        let shade = try await rig.add(blind, name: "Shade")
        for d in [light, blind] { #expect(await d.untilSubscribed()) }
        func lampTraits() async -> MatterTraits? {
            await (try? home.device(id: lamp.id))?.types.get(DimmableLightDeviceType.self)?.matterTraits
        }

        // The button: off → on.
        #expect(await lampTraits()?.onOffTrait?.onOff == false)
        try await light.node.act(.toggle)
        #expect(await until(signals(home.devices().batched())) { await lampTraits()?.onOffTrait?.onOff == true })
        // The dimmer to 25 %: level 64 of 254.
        try await light.node.act(.dim(percent: 25))
        #expect(await until(signals(home.devices().batched())) { await lampTraits()?.levelControlTrait?.currentLevel == 64 })
        // The cord pulled down: the blind's target is fully closed.
        try await blind.node.act(.cord(.close))
        let closing = await until(signals(home.devices().batched())) {
            await (try? home.device(id: shade.id))?.types.get(WindowCoveringDeviceType.self)?.matterTraits.windowCoveringTrait?
                .targetPositionLiftPercent100ths == 10_000
        }
        #expect(closing)
    }
}
