import Foundation
import HomeAPI
import TestDevices
import TestWaiting
import Testing

// Issue #15: the colour lights through the Home API: `Matter.ColorControlTrait` on a Color
// Temperature Light and an Extended Color Light, simulated in process on loopback UDP.

@Suite("Color lights", .serialized)
struct ColorLightTests {
    /// The light's Color Control trait as the home holds it now.
    private func colorTrait<T: DeviceType>(_ home: Home, _ id: String, _ type: T.Type) async -> Matter.ColorControlTrait? {
        await (try? home.device(id: id))?.types.get(type)?.traits[Matter.ColorControlTrait.self]
    }

    /// A home opened without connecting (as homectl's one-shot commands open it) knows a colour
    /// light's traits from its device types before any report: `homectl toggle "Mood Light"`
    /// said "no OnOff trait" while the required clusters came from a hand-written table of the
    /// first device types only.
    @Test func aHomeOpenedWithoutConnectingKnowsAColorLightsRequiredTraits() async throws {
        let rig = try await Rig.make()
        let light = try await TestDevice.start(Fixture.colorLight(extended: true, serial: "ECL-9"))
        defer { PendingCleanups.run { await light.stop() } }
        let device = try await rig.add(light, name: "Mood Light")
        await rig.home.close()
        var configuration = testConfiguration()
        configuration.connectDevices = false
        let offline = try await Home.open(at: rig.dir.appendingPathComponent("home.sqlite"), configuration: configuration)
        defer {
            PendingCleanups.run {
                await offline.close()
                try? FileManager.default.removeItem(at: rig.dir)
            }
        }
        let type = try #require(await offline.device(id: device.id).types.get(ExtendedColorLightDeviceType.self))
        #expect(type.traits[Matter.OnOffTrait.self] != nil)
        #expect(type.traits[Matter.LevelControlTrait.self] != nil)
        #expect(type.traits[Matter.ColorControlTrait.self] != nil)
    }

    @Test func aTunableWhiteLightsTemperatureFollowsItsCommandsAndItsDimmer() async throws {
        let rig = try await Rig.make()
        let home = rig.home
        let light = try await TestDevice.start(Fixture.colorLight(extended: false, serial: "CTL-1"))
        defer {
            PendingCleanups.run {
                await light.stop(); await rig.close()
            }
        }
        let device = try await rig.add(light, name: "Desk Lamp")
        let trait = try #require(await device.types.get(ColorTemperatureLightDeviceType.self)?.matterTraits.colorControlTrait)
        #expect(trait.colorMode == .colorTemperatureMireds && trait.colorCapabilities == .colorTemperature)
        #expect(trait.colorTempPhysicalMinMireds == 153 && trait.colorTempPhysicalMaxMireds == 500)

        // Over one second; the app sees the end value and RemainingTime back at 0.
        try await trait.moveToColorTemperature(colorTemperatureMireds: 300, transitionTime: 10, optionsMask: [], optionsOverride: [])
        let moved = await until(signals(home.devices().batched())) {
            let now = await colorTrait(home, device.id, ColorTemperatureLightDeviceType.self)
            return now?.colorTemperatureMireds == 300 && now?.remainingTime == 0
        }
        #expect(moved)
        // Dimming to the bottom warms the light to ColorTempPhysicalMaxMireds (CoupleColorTempToLevel).
        let level = try #require(await device.types.get(ColorTemperatureLightDeviceType.self)?.matterTraits.levelControlTrait)
        try await level.moveToLevel(level: 1, transitionTime: 0)
        let warmed = await until(signals(home.devices().batched())) {
            await colorTrait(home, device.id, ColorTemperatureLightDeviceType.self)?.colorTemperatureMireds == 500
        }
        #expect(warmed)
        // No x/y on this light: the command is refused.
        await #expect(throws: HomeError.self) {
            try await trait.moveToColor(colorX: 1000, colorY: 1000, transitionTime: 0, optionsMask: [], optionsOverride: [])
        }
    }

    @Test func anExtendedColorLightTakesEachColorSpaceAndRunsAColorLoop() async throws {
        let rig = try await Rig.make()
        let home = rig.home
        let light = try await TestDevice.start(Fixture.colorLight(extended: true, serial: "ECL-1"))
        defer {
            PendingCleanups.run {
                await light.stop(); await rig.close()
            }
        }
        let device = try await rig.add(light, name: "Party Bulb")
        let trait = try #require(await device.types.get(ExtendedColorLightDeviceType.self)?.matterTraits.colorControlTrait)
        #expect(trait.colorCapabilities == [.hueSaturation, .enhancedHue, .colorLoop, .xy, .colorTemperature])

        try await trait.moveToHueAndSaturation(hue: 120, saturation: 200, transitionTime: 0, optionsMask: [], optionsOverride: [])
        let hueSet = await until(signals(home.devices().batched())) {
            let now = await colorTrait(home, device.id, ExtendedColorLightDeviceType.self)
            return now?.currentHue == 120 && now?.currentSaturation == 200 && now?.colorMode == .currentHueAndCurrentSaturation
        }
        #expect(hueSet)
        try await trait.moveToColor(colorX: 20_000, colorY: 30_000, transitionTime: 5, optionsMask: [], optionsOverride: [])
        let xySet = await until(signals(home.devices().batched())) {
            let now = await colorTrait(home, device.id, ExtendedColorLightDeviceType.self)
            return now?.currentX == 20_000 && now?.currentY == 30_000 && now?.colorMode == .currentXAndCurrentY
        }
        #expect(xySet)
        // The colour loop from the current enhanced hue, once round in 5 s: the hue moves on its own.
        try await trait.colorLoopSet(
            updateFlags: [.updateAction, .updateTime], action: .activateFromEnhancedCurrentHue, direction: .increment, time: 5, startHue: 0,
            optionsMask: [], optionsOverride: [])
        let looping = await until(signals(home.devices().batched())) {
            let now = await colorTrait(home, device.id, ExtendedColorLightDeviceType.self)
            return now?.colorLoopActive == 1 && now?.enhancedColorMode == .enhancedCurrentHueAndCurrentSaturation
                && (now?.enhancedCurrentHue ?? 0) > 0
        }
        #expect(looping)
        try await trait.colorLoopSet(
            updateFlags: [.updateAction], action: .deactivate, direction: .increment, time: 0, startHue: 0, optionsMask: [],
            optionsOverride: [])
        let stopped = await until(signals(home.devices().batched())) {
            await colorTrait(home, device.id, ExtendedColorLightDeviceType.self)?.colorLoopActive == 0
        }
        #expect(stopped)
    }
}
