import Foundation
import HomeAPI
import MatterModel
import MatterProtocol
import MatterTLV
import OpenCombine
import TestDevices
import TestWaiting
import Testing

/// HomeAPI against three live simulated devices on loopback: commissioning, every
/// cluster's commands, live queries, and failures.
@Suite("Home devices", .serialized)
struct HomeDeviceTests {
    struct Setup {
        let dir: URL
        let trust: URL
        let home: Home
        let structure: Structure
        let living: Room
        let light: TestDevice
        let plug: TestDevice
        let blind: TestDevice
        let lightDevice: HomeDevice
        let plugDevice: HomeDevice
        let blindDevice: HomeDevice
        /// The home's clock.
        let clock: any MatterClock

        /// Each device has answered the home's subscription (priming sent).
        func everyDeviceSubscribed() async -> Bool {
            for device in [light, plug, blind] where await !device.untilSubscribed() { return false }
            return true
        }

        func tearDown() async {
            await home.close()
            for d in [light, plug, blind] { await d.stop() }
            try? FileManager.default.removeItem(at: dir)
            try? FileManager.default.removeItem(at: trust)
        }
    }

    static func setUp() async throws -> Setup {
        let dir = try temporaryDirectory()
        let trust = try makeTrustStoreDirectory()
        let clock = SystemClock()
        let home = try await openHome(dir, trustStore: trust, clock: clock)
        let structure = try await home.createStructure(name: "Home")
        let living = try await structure.createRoom(name: "Living room")
        let light = try await TestDevice.start(Fixture.dimmableLight(), deviceTypeID: 0x0101)
        let plug = try await TestDevice.start(Fixture.plug(), deviceTypeID: 0x010A)
        let blind = try await TestDevice.start(Fixture.windowCovering(), deviceTypeID: 0x0202)
        let lightDevice = try await home.commissionDevice(
            setupCode: try light.setupCode, address: light.address,
            structureID: structure.id, roomID: living.id, name: "Ceiling light")
        let plugDevice = try await home.commissionDevice(
            setupCode: try plug.setupCode, address: plug.address,
            structureID: structure.id)
        let blindDevice = try await home.commissionDevice(
            setupCode: try blind.setupCode, address: blind.address,
            structureID: structure.id, roomID: living.id, name: "Blind")
        return Setup(
            dir: dir, trust: trust, home: home, structure: structure, living: living, light: light, plug: plug,
            blind: blind, lightDevice: lightDevice, plugDevice: plugDevice, blindDevice: blindDevice, clock: clock)
    }

    @Test func commissionsThreeDevicesAndControlsEachCluster() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        let devices = try await s.home.devices().list()
        #expect(devices.count == 3)
        #expect(s.lightDevice.name == "Ceiling light")
        #expect(s.plugDevice.name == "Smart Plug")
        #expect(s.lightDevice.roomID == s.living.id)
        #expect(s.plugDevice.roomID == nil && s.plugDevice.structureID == s.structure.id)
        #expect(s.lightDevice.isMatterDevice)
        #expect(s.lightDevice.types.contains(DimmableLightDeviceType.self))
        #expect(!s.lightDevice.types.contains(WindowCoveringDeviceType.self))
        #expect(s.plugDevice.types.contains(OnOffPluginUnitDeviceType.self))
        #expect(s.blindDevice.types.contains(WindowCoveringDeviceType.self))

        // Dimmable light: On/Off and Level Control.
        let light = try #require(await s.lightDevice.types.get(DimmableLightDeviceType.self))
        #expect(light.metadata.isPrimaryType)
        #expect(light.traits.contains(Matter.LevelControlTrait.self))
        #expect(light.matterTraits.basicInformationTrait?.attributes.vendorName == "Acme")
        #expect(light.matterTraits.basicInformationTrait?.attributes.serialNumber == "DIM-1")
        let onOff = try #require(light.matterTraits.onOffTrait)
        #expect(onOff.supportsToggleCommand)
        try await onOff.on()
        #expect(await s.light.value(.init(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))) == .bool(true))
        try await #require(light.matterTraits.levelControlTrait).moveToLevelWithOnOff(level: 42, transitionTime: 0)
        #expect(
            await until(s.light.attributeChanges()) {
                await s.light.value(.init(endpoint: 1, cluster: Fixture.levelControl, attribute: AttributeID(0))) == .unsigned(42)
            })
        #expect(
            await until(signals(s.home.devices().batched())) {
                await s.lightDevice.types.get(DimmableLightDeviceType.self)?.matterTraits.levelControlTrait?.attributes.currentLevel == 42
            })
        let level = try #require(await s.lightDevice.types.get(DimmableLightDeviceType.self)?.matterTraits.levelControlTrait)
        #expect(level.metadata.sourceConnectivity == SourceConnectivity(connectivityState: .online, dataSourceLocality: .direct))

        // Plug: toggle.
        let plug = try #require(await s.plugDevice.types.get(OnOffPluginUnitDeviceType.self))
        try await #require(plug.matterTraits.onOffTrait).toggle()
        #expect(await s.plug.value(.init(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))) == .bool(true))
        #expect(
            await until(signals(s.home.devices().batched())) {
                await s.plugDevice.types.get(OnOffPluginUnitDeviceType.self)?.matterTraits.onOffTrait?.attributes.onOff == true
            })

        // Window covering: go to 25 %, then close.
        let blind = try #require(await s.blindDevice.types.get(WindowCoveringDeviceType.self))
        let covering = try #require(blind.matterTraits.windowCoveringTrait)
        try await covering.goToLiftPercentage(2500)
        let liftPath = AttributePath(endpoint: 1, cluster: Fixture.windowCovering, attribute: AttributeID(0x000E))
        #expect(await until(s.blind.attributeChanges(), within: .seconds(8)) { await s.blind.value(liftPath) == .unsigned(2500) })
        #expect(
            await until(signals(s.home.devices().batched())) {
                await s.blindDevice.types.get(WindowCoveringDeviceType.self)?.matterTraits.windowCoveringTrait?.attributes
                    .currentPositionLiftPercent100ths == 2500
            })
        try await covering.downOrClose()
        try await covering.stopMotion()
    }

    @Test func constraintErrorFromTheDeviceIsAHomeError() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        let light = try #require(await s.lightDevice.types.get(DimmableLightDeviceType.self))
        do {
            // CurrentLevel's range is MinLevel...MaxLevel (1...254 for lights): 255 is out of range.
            try await #require(light.matterTraits.levelControlTrait).moveToLevel(level: 255)
            Issue.record("the device accepted level 255")
        } catch let error as HomeError {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("constraintError"))
        }
    }

    @Test func batchedEmitsOnRenameMoveAndAttributeChangeAndStreamOnlyTheChangedDevice() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        let batched = Recorder(s.home.devices().batched())
        let stream = Recorder(s.home.devices().stream())
        #expect(await batched.wait { !$0.isEmpty })
        #expect(await stream.wait { Set($0.map(\.id)).count == 3 })
        // Every device online and its subscription primed before measuring.
        #expect(await batched.wait { $0.last?.allSatisfy { $0.sourceConnectivity.connectivityState == .online } == true })
        #expect(await s.everyDeviceSubscribed())
        let start = stream.values.count

        // Rename.
        var mark = batched.values.count
        let renamed = try await s.plugDevice.setName("Kettle")
        #expect(renamed.name == "Kettle")
        #expect(s.plugDevice.name == "Smart Plug")
        #expect(
            await batched.wait(within: .seconds(1)) { $0.count > mark && $0.last?.first { $0.id == s.plugDevice.id }?.name == "Kettle" })

        // Room move.
        mark = batched.values.count
        try await s.structure.move(device: s.plugDevice, to: s.living)
        #expect(
            await batched.wait(within: .seconds(1)) {
                $0.count > mark && $0.last?.first { $0.id == s.plugDevice.id }?.roomID == s.living.id
            })

        // Attribute change made at the device itself.
        mark = batched.values.count
        #expect(await s.plug.press(Fixture.onOff, 0x01) == .success)
        #expect(
            await batched.wait(within: .seconds(1)) { values in
                values.count > mark
                    && values.last?.first { $0.id == s.plugDevice.id }.map { d in
                        d.types.all[OnOffPluginUnitDeviceType.self]?.matterTraits.onOffTrait?.attributes.onOff == true
                    } == true
            })
        // stream() emitted the plug for these changes, and not the light. The blind may still
        // report its own start-up state late (seen in about 1 run in 10, also with the home's
        // subscriptions as they were before the sensor clusters came in), which stream() rightly
        // emits; it is left out of the check.
        #expect(await stream.wait { $0.dropFirst(start).filter { $0.id == s.plugDevice.id }.count >= 3 })
        let emitted = stream.values[start...].filter { $0.id != s.blindDevice.id }
        #expect(emitted.count >= 3 && emitted.allSatisfy { $0.id == s.plugDevice.id }, "\(stream.values[start...].map(\.name))")
    }

    /// Another controller (a second Home with its own Matter controller and CASE session,
    /// on the same home file) renames, moves and switches a device: the first Home's
    /// `batched()` shows each change within a second, and `stream()` only that device.
    @Test func changesByAnotherControllerReachBatchedWithinOneSecond() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        let other = try await openHome(s.dir, trustStore: s.trust)
        defer { PendingCleanups.run { await other.close() } }
        let batched = Recorder(s.home.devices().batched())
        let stream = Recorder(s.home.devices().stream())
        #expect(await batched.wait { $0.last?.allSatisfy { $0.sourceConnectivity.connectivityState == .online } == true })
        #expect(await s.everyDeviceSubscribed())
        let start = stream.values.count
        func plug(_ values: [Set<HomeDevice>]) -> HomeDevice? { values.last?.first { $0.id == s.plugDevice.id } }

        var mark = batched.values.count
        _ = try await other.device(id: s.plugDevice.id).setName("Heater")
        #expect(await batched.wait(within: .seconds(1)) { $0.count > mark && plug($0)?.name == "Heater" })

        mark = batched.values.count
        try await other.structure(id: s.structure.id).move(deviceID: s.plugDevice.id, to: s.living)
        #expect(await batched.wait(within: .seconds(1)) { $0.count > mark && plug($0)?.roomID == s.living.id })

        mark = batched.values.count
        let otherPlug = try #require(await other.device(id: s.plugDevice.id).types.get(OnOffPluginUnitDeviceType.self))
        try await #require(otherPlug.matterTraits.onOffTrait).on()
        #expect(
            await batched.wait(within: .seconds(1)) { values in
                values.count > mark
                    && plug(values)?.types.all[OnOffPluginUnitDeviceType.self]?.matterTraits.onOffTrait?.attributes.onOff == true
            })
        // As above: the blind's own late start-up report is left out; the light must not appear.
        #expect(await stream.wait { $0.dropFirst(start).filter { $0.id == s.plugDevice.id }.count >= 3 })
        let emitted = stream.values[start...].filter { $0.id != s.blindDevice.id }
        #expect(emitted.count >= 3 && emitted.allSatisfy { $0.id == s.plugDevice.id }, "\(stream.values[start...].map(\.name))")
    }

    @Test func deletingARoomLeavesItsDevicesUnassigned() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        try await s.structure.deleteRoom(s.living)
        let light = try await s.home.device(id: s.lightDevice.id)
        #expect(light.roomID == nil)
        #expect(light.structureID == s.structure.id)
        #expect(try await s.structure.rooms().list().isEmpty)
        #expect(try await s.home.devices().list().count == 3)
    }

    @Test func subscribeToADeviceTypeAndItsAbsence() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        let updates = Recorder(s.lightDevice.types.subscribe(DimmableLightDeviceType.self))
        #expect(await updates.wait { !$0.isEmpty })
        #expect(await s.light.press(Fixture.onOff, 0x02) == .success)
        #expect(await updates.wait { $0.last?.matterTraits.onOffTrait?.attributes.onOff == true })
        let absent = Recorder(s.lightDevice.types.subscribe(WindowCoveringDeviceType.self))
        #expect(await absent.wait(within: .seconds(1)) { _ in absent.completion == "finished" })
        #expect(absent.values.isEmpty)
        let all = Recorder(s.blindDevice.types.subscribeAll())
        #expect(await all.wait { $0.last?[WindowCoveringDeviceType.self] != nil })
    }

    @Test func aPoweredOffDeviceGivesAHomeErrorNotAHang() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        let plug = try #require(await s.plugDevice.types.get(OnOffPluginUnitDeviceType.self))
        await s.plug.stop()
        let start = s.clock.now
        do {
            try await #require(plug.matterTraits.onOffTrait).toggle()
            Issue.record("a powered-off device answered")
        } catch let error as HomeError {
            #expect(error.code == .deadlineExceeded || error.code == .unavailable)
            #expect(!error.message.isEmpty)
        }
        #expect(s.clock.now - start < .seconds(10), "measured on the home's clock")
        #expect(
            await until(signals(s.home.devices().batched())) {
                (try? await s.home.device(id: s.plugDevice.id))?.sourceConnectivity.connectivityState == .offline
            })
    }

    @Test func aReopenedHomeControlsDevicesWithItsPersistedFabric() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        await s.home.close()
        let reopened = try await openHome(s.dir, trustStore: s.trust)
        defer { PendingCleanups.run { await reopened.close() } }
        let plug = try await reopened.device(id: s.plugDevice.id)
        #expect(plug.name == "Smart Plug")
        let onOff = try #require(await plug.types.get(OnOffPluginUnitDeviceType.self)?.matterTraits.onOffTrait)
        try await onOff.on()
        #expect(await s.plug.value(.init(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))) == .bool(true))
        // Still one fabric on the device: the same one, not a new commissioning.
        #expect(await s.plug.node.fabrics.count == 1)
    }
}
