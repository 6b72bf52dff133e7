import Foundation
import HomeAPI
import MatterModel
import MatterTLV
import OpenCombine
import TestDevices
import TestWaiting
import MatterProtocol
import Testing

/// Routing and connectivity with real parts (issue #6): devices on loopback UDP with a
/// pullable LAN cable, the same devices connected to an in-process relay (and a second
/// one standing in as the LAN hub), a dimmable light whose LevelControl is cloud-only,
/// and a plug without cloud-only traits. Each acceptance-table row is a fault applied
/// to the real device, observed through `device(id:)`, `devices().batched()` and
/// `types.subscribe`.
@Suite("Routing and connectivity", .serialized)
struct RoutingTests {
    struct Setup {
        let dir: URL
        let relay: TestRelay
        let relayToken: String
        let hubRelay: TestRelay?
        let home: Home
        let light: TestDevice
        let plug: TestDevice
        let lightCloud: DeviceRelayConnection
        let plugCloud: DeviceRelayConnection
        let lightHub: DeviceRelayConnection?
        let lightDevice: HomeDevice
        let plugDevice: HomeDevice
        /// The home's clock: the figures below are measured on it.
        let clock: any MatterClock

        func tearDown() async {
            await home.close()
            for c in [lightCloud, plugCloud] { c.stop() }
            lightHub?.stop()
            await light.stop()
            await plug.stop()
            await relay.stop()
            await hubRelay?.stop()
            try? FileManager.default.removeItem(at: dir)
        }

        func device(_ d: HomeDevice) async throws -> HomeDevice { try await home.device(id: d.id) }

        /// The device's and its traits' connectivity, for failure messages.
        func connectivity(_ d: HomeDevice) async -> String {
            guard let now = try? await home.device(id: d.id) else { return "gone" }
            let t = RoutingTests.traits(now)
            return "\(now.sourceConnectivity); onOff \(String(describing: t.onOff)); level \(String(describing: t.level))"
        }

        /// Waits (boundedly) until the device shows `state`/`locality`; returns how long it took.
        func waitFor(
            _ d: HomeDevice, _ state: ConnectivityState, _ locality: LocalityType,
            within limit: Duration = .seconds(10)
        ) async -> Duration? {
            let start = clock.now
            let ok = await until(signals(home.devices().batched()), within: limit) {
                let c = (try? await home.device(id: d.id))?.sourceConnectivity
                return c?.connectivityState == state && c?.dataSourceLocality == locality
            }
            return ok ? clock.now - start : nil
        }
    }

    static let lightSerial = "DIM-CLOUD-1"
    static let plugSerial = "PLUG-LAN-1"

    static func setUp(withHub: Bool = false) async throws -> Setup {
        let dir = try temporaryDirectory()
        let relay = try await TestRelay.start()
        let (homeID, token) = try await relay.addHome("Home")
        var hubRelay: TestRelay?
        var hubHome: (id: String, token: String)?
        if withHub {
            let h = try await TestRelay.start()
            hubHome = try await h.addHome("Home")
            hubRelay = h
        }
        let light = try await TestDevice.start(
            Fixture.dimmableLight(serial: lightSerial), deviceTypeID: 0x0101,
            cloudOnly: [Fixture.levelControl])
        let plug = try await TestDevice.start(Fixture.plug(serial: plugSerial), discriminator: 3841, deviceTypeID: 0x010A)
        var c = testConfiguration()
        let clock = SystemClock()
        c.clock = clock
        c.allowUntrustedAttestation = true
        c.relay = RelayEndpoint(url: relay.url, homeToken: token)
        if let hubRelay, let hubHome { c.hub = RelayEndpoint(url: hubRelay.url, homeToken: hubHome.token) }
        let home = try await Home.open(at: dir.appendingPathComponent("home.sqlite"), configuration: c)
        let lightDevice = try await home.commissionDevice(setupCode: try light.setupCode, address: light.address, name: "Lamp")
        let plugDevice = try await home.commissionDevice(setupCode: try plug.setupCode, address: plug.address, name: "Plug")
        // Only a commissioned device knows whom relay requests act as (its fabric's admin).
        let lightCloud = try await relay.connect(light, homeID: homeID)
        let plugCloud = try await relay.connect(plug, homeID: homeID)
        var lightHub: DeviceRelayConnection?
        if let hubRelay, let hubHome { lightHub = try await hubRelay.connect(light, homeID: hubHome.id) }
        return Setup(
            dir: dir, relay: relay, relayToken: token, hubRelay: hubRelay, home: home, light: light, plug: plug, lightCloud: lightCloud,
            plugCloud: plugCloud, lightHub: lightHub, lightDevice: lightDevice, plugDevice: plugDevice, clock: clock)
    }

    static func traits(_ d: HomeDevice) -> (onOff: SourceConnectivity?, level: SourceConnectivity?) {
        let type = d.types.all[DimmableLightDeviceType.self]
        return (
            type?.matterTraits.onOffTrait?.metadata.sourceConnectivity,
            type?.matterTraits.levelControlTrait?.metadata.sourceConnectivity
        )
    }

    static func level(_ d: HomeDevice?) -> UInt8? {
        d?.types.all[DimmableLightDeviceType.self]?.matterTraits.levelControlTrait?.attributes.currentLevel
    }

    static let onOffPath = AttributePath(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))
    static let levelPath = AttributePath(endpoint: 1, cluster: Fixture.levelControl, attribute: AttributeID(0))

    @Test func acceptanceTable() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        let typeUpdates = Recorder(s.lightDevice.types.subscribe(DimmableLightDeviceType.self))
        let batched = Recorder(s.home.devices().batched())

        // Once every route works and the cloud-only clusters are learned, the device is final at once.
        #expect(await s.home.waitUntilAllRoutesUp(timeout: .seconds(15)))
        let settled = try await s.device(s.lightDevice)
        #expect(settled.sourceConnectivity == SourceConnectivity(connectivityState: .online, dataSourceLocality: .mixed))

        // LAN and cloud up: Matter traits direct, the cloud-only LevelControl remote.
        let upTime = await s.waitFor(s.lightDevice, .online, .mixed, within: .seconds(15))
        let info1 = await s.connectivity(s.lightDevice)
        #expect(upTime != nil, "light: \(info1)")
        var light = try await s.device(s.lightDevice)
        #expect(Self.traits(light).onOff == SourceConnectivity(connectivityState: .online, dataSourceLocality: .direct))
        #expect(Self.traits(light).level == SourceConnectivity(connectivityState: .online, dataSourceLocality: .remote))
        let dimmable = try #require(light.types.all[DimmableLightDeviceType.self])
        #expect(dimmable.metadata.sourceConnectivity == SourceConnectivity(connectivityState: .online, dataSourceLocality: .mixed))
        #expect(dimmable.matterTraits.levelControlTrait?.attributes.currentLevel == 100)
        // The cloud-only trait works through the relay; the LAN does not have it.
        try await #require(dimmable.matterTraits.levelControlTrait).moveToLevelWithOnOff(level: 42, transitionTime: 0)
        #expect(await until(s.light.attributeChanges(), within: .seconds(3)) { await s.light.value(Self.levelPath) == .unsigned(42) })
        // The device's change comes back through the relay subscription.
        #expect(
            await until(signals(s.home.devices().batched()), within: .seconds(3)) {
                Self.level(try? await s.device(s.lightDevice)) == 42
            })
        #expect(await s.waitFor(s.plugDevice, .online, .direct) != nil)

        // Cloud down: the cloud-only trait goes offline, the rest stays direct.
        s.lightCloud.cloudDown()
        s.plugCloud.cloudDown()
        let cloudDown = await s.waitFor(s.lightDevice, .partiallyOnline, .direct)
        #expect(cloudDown != nil)
        light = try await s.device(s.lightDevice)
        #expect(Self.traits(light).level?.connectivityState == .offline)
        #expect(Self.traits(light).level?.dataSourceLocality == .unspecified)
        // A device without cloud-only traits does not care.
        #expect(
            try await s.device(s.plugDevice).sourceConnectivity
                == SourceConnectivity(connectivityState: .online, dataSourceLocality: .direct))
        // Commands to the offline cloud-only trait fail at once.
        let failStart = s.clock.now
        await #expect(throws: HomeError.self) {
            try await #require(light.types.all[DimmableLightDeviceType.self]?.matterTraits.levelControlTrait).moveToLevel(level: 10)
        }
        #expect(s.clock.now - failStart < .seconds(5))
        s.lightCloud.cloudUp()
        s.plugCloud.cloudUp()
        #expect(await s.waitFor(s.lightDevice, .online, .mixed) != nil)

        // LAN down: everything through the relay; commands still work, even one sent
        // before the dead LAN path is noticed (it falls over to the relay).
        let typeMark = typeUpdates.values.count, batchMark = batched.values.count
        s.light.lanDown()
        let early = s.clock.now
        try await #require(light.types.all[DimmableLightDeviceType.self]?.matterTraits.onOffTrait).off()
        let earlyCommand = s.clock.now - early
        #expect(await s.light.value(Self.onOffPath) == .bool(false))
        try await #require(light.types.all[DimmableLightDeviceType.self]?.matterTraits.onOffTrait).on()
        let lanDown = await s.waitFor(s.lightDevice, .online, .remote)
        let info2 = await s.connectivity(s.lightDevice)
        #expect(lanDown != nil, "light: \(info2)")
        #expect(
            await typeUpdates.wait(within: .seconds(5)) { values in
                values.count > typeMark && values.last?.matterTraits.onOffTrait?.metadata.sourceConnectivity.dataSourceLocality == .remote
            })
        #expect(
            await batched.wait(within: .seconds(5)) { values in
                values.count > batchMark
                    && values.last?.first { $0.id == s.lightDevice.id }?.sourceConnectivity.dataSourceLocality == .remote
            })
        light = try await s.device(s.lightDevice)
        let onOff = try #require(light.types.all[DimmableLightDeviceType.self]?.matterTraits.onOffTrait)
        #expect(onOff.metadata.sourceConnectivity.dataSourceLocality == .remote)
        #expect(await s.light.value(Self.onOffPath) == .bool(true))
        try await onOff.off()
        #expect(await s.light.value(Self.onOffPath) == .bool(false))
        // The state reported through the relay reaches the trait.
        #expect(
            await until(signals(s.home.devices().batched()), within: .seconds(5)) {
                (try? await s.device(s.lightDevice))?.types.all[DimmableLightDeviceType.self]?.matterTraits.onOffTrait?.attributes.onOff
                    == false
            })

        // LAN back: the Matter traits return to the direct session.
        s.light.lanUp()
        let lanBack = await s.waitFor(s.lightDevice, .online, .mixed, within: .seconds(15))
        let info3 = await s.connectivity(s.lightDevice)
        #expect(lanBack != nil, "light: \(info3)")
        #expect(Self.traits(try await s.device(s.lightDevice)).onOff?.dataSourceLocality == .direct)

        // Both down: offline, and commands fail with a HomeError within 5 s.
        s.light.lanDown()
        s.lightCloud.cloudDown()
        let bothDown = await s.waitFor(s.lightDevice, .offline, .unspecified)
        let info4 = await s.connectivity(s.lightDevice)
        #expect(bothDown != nil, "light: \(info4)")
        light = try await s.device(s.lightDevice)
        let start = s.clock.now
        do {
            try await #require(light.types.all[DimmableLightDeviceType.self]?.matterTraits.onOffTrait).off()
            Issue.record("a device with every route down answered")
        } catch let error as HomeError {
            #expect(error.code == .unavailable || error.code == .deadlineExceeded)
        }
        let failure = s.clock.now - start
        #expect(failure < .seconds(5))

        print(
            "routing: up→online/mixed \(upTime.map { "\($0)" } ?? "-"); cloud down→partiallyOnline/direct \(cloudDown.map { "\($0)" } ?? "-"); "
                + "LAN down→online/remote \(lanDown.map { "\($0)" } ?? "-"); LAN back→mixed \(lanBack.map { "\($0)" } ?? "-"); "
                + "both down→offline \(bothDown.map { "\($0)" } ?? "-"); command failure after \(failure); "
                + "command just after the cable was pulled \(earlyCommand)")
    }

    @Test func stoppingTheRelayIsACloudOutage() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        #expect(await s.waitFor(s.lightDevice, .online, .mixed, within: .seconds(15)) != nil)
        #expect(await s.waitFor(s.plugDevice, .online, .direct) != nil)
        await s.relay.stop()
        #expect(await s.waitFor(s.lightDevice, .partiallyOnline, .direct) != nil)
        #expect(Self.traits(try await s.device(s.lightDevice)).level?.connectivityState == .offline)
        #expect(
            try await s.device(s.plugDevice).sourceConnectivity
                == SourceConnectivity(connectivityState: .online, dataSourceLocality: .direct))
        // LAN commands are unaffected.
        try await #require(try await s.device(s.plugDevice).types.all[OnOffPluginUnitDeviceType.self]?.matterTraits.onOffTrait).on()
        #expect(await s.plug.value(Self.onOffPath) == .bool(true))
    }

    @Test func cloudOnlyClustersArePersistedInTheHomeGraph() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        #expect(await s.waitFor(s.lightDevice, .online, .mixed, within: .seconds(15)) != nil)
        // A second Home on the same file, without a relay: the cloud-only trait it learned
        // from the stored graph has no route (offline), the Matter ones are not tried yet.
        var c = testConfiguration()
        c.connectDevices = false
        let other = try await Home.open(at: s.dir.appendingPathComponent("home.sqlite"), configuration: c)
        defer { PendingCleanups.run { await other.close() } }
        let light = try await other.device(id: s.lightDevice.id)
        #expect(Self.traits(light).level?.connectivityState == .offline)
        #expect(Self.traits(light).onOff?.connectivityState == .unknown)
        // The plug has none.
        let plug = try await other.device(id: s.plugDevice.id)
        #expect(plug.sourceConnectivity.connectivityState == .unknown)
    }

    @Test func policiesChooseTheRoutes() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        #expect(await s.waitFor(s.lightDevice, .online, .mixed, within: .seconds(15)) != nil)
        await s.home.setRoutingPolicy(.cloudOnly)
        #expect(s.home.routingPolicy == .cloudOnly)
        #expect(await s.waitFor(s.lightDevice, .online, .remote) != nil)
        let onOff = try #require(try await s.device(s.lightDevice).types.all[DimmableLightDeviceType.self]?.matterTraits.onOffTrait)
        try await onOff.toggle()
        #expect(await s.light.value(Self.onOffPath) == .bool(true))
        await s.home.setRoutingPolicy(.localOnly)
        // Cloud-only traits have no route under localOnly.
        #expect(await s.waitFor(s.lightDevice, .partiallyOnline, .direct) != nil)
        #expect(Self.traits(try await s.device(s.lightDevice)).level?.connectivityState == .offline)
    }

    @Test func aHubReachesTheDeviceWhenTheControllerIsCutOff() async throws {
        let s = try await Self.setUp(withHub: true)
        defer { PendingCleanups.run { await s.tearDown() } }
        #expect(await s.waitFor(s.lightDevice, .online, .mixed, within: .seconds(15)) != nil)
        // The controller loses its LAN path; the hub still reaches the device.
        s.light.lanDown()
        let pulled = s.clock.now
        let hub = await until(signals(s.home.devices().batched())) {
            guard let d = try? await s.device(s.lightDevice) else { return false }
            return Self.traits(d).onOff == SourceConnectivity(connectivityState: .online, dataSourceLocality: .localPeer)
        }
        print("routing: LAN pulled → Matter traits on the hub (localPeer) after \(s.clock.now - pulled)")
        let info5 = await s.connectivity(s.lightDevice)
        #expect(hub, "light: \(info5)")
        // Cloud-only traits stay on the relay: the device is mixed.
        let d = try await s.device(s.lightDevice)
        #expect(Self.traits(d).level?.dataSourceLocality == .remote)
        #expect(d.sourceConnectivity == SourceConnectivity(connectivityState: .online, dataSourceLocality: .mixed))
        try await #require(d.types.all[DimmableLightDeviceType.self]?.matterTraits.onOffTrait).on()
        #expect(await s.light.value(Self.onOffPath) == .bool(true))
    }

    @Test func homectlDevicesJSONShowsConnectivityPerDeviceDeviceTypeAndTrait() async throws {
        let s = try await Self.setUp()
        defer { PendingCleanups.run { await s.tearDown() } }
        #expect(await s.waitFor(s.lightDevice, .online, .mixed, within: .seconds(15)) != nil)
        let args = ["devices", "--json", "--relay", s.relay.url, "--relay-token", s.relayToken, "--settle", "5"]

        func listed() async throws -> [String: [String: Any]] {
            let result = try await Self.homectl(args, home: s.dir.appendingPathComponent("home.sqlite"))
            #expect(result.status == 0, "\(result.error)")
            if ProcessInfo.processInfo.environment["ROUTING_TEST_PRINT"] != nil { print(result.output) }
            let rows = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]] ?? []
            return Dictionary(uniqueKeysWithValues: rows.compactMap { row in (row["name"] as? String).map { ($0, row) } })
        }
        func trait(_ device: [String: Any]?, _ name: String) -> (String?, String?) {
            let types = device?["deviceTypes"] as? [[String: Any]] ?? []
            let traits = types.flatMap { $0["traits"] as? [[String: Any]] ?? [] }
            let t = traits.first { $0["trait"] as? String == name }
            return (t?["connectivity"] as? String, t?["locality"] as? String)
        }

        var devices = try await listed()
        #expect(devices["Lamp"]?["connectivity"] as? String == "online")
        #expect(devices["Lamp"]?["locality"] as? String == "mixed")
        let lampTypes = devices["Lamp"]?["deviceTypes"] as? [[String: Any]]
        #expect(lampTypes?.first?["type"] as? String == "DimmableLight")
        #expect(lampTypes?.first?["locality"] as? String == "mixed")
        #expect(trait(devices["Lamp"], "OnOff") == ("online", "direct"))
        #expect(trait(devices["Lamp"], "LevelControl") == ("online", "remote"))
        #expect(devices["Plug"]?["connectivity"] as? String == "online")
        #expect(devices["Plug"]?["locality"] as? String == "direct")

        // The lamp's LAN cable pulled: homectl reaches it through the relay only.
        s.light.lanDown()
        devices = try await listed()
        #expect(devices["Lamp"]?["connectivity"] as? String == "online")
        #expect(devices["Lamp"]?["locality"] as? String == "remote")
        #expect(trait(devices["Lamp"], "OnOff") == ("online", "remote"))

        // Bad options are refused with a clear message.
        let bad = try await Self.homectl(["devices", "--relay", s.relay.url], home: s.dir.appendingPathComponent("home.sqlite"))
        #expect(bad.status != 0)
        #expect(bad.error.contains("--relay-token"))
    }

    /// Runs homectl off the concurrency pool (the devices and relay of the test run on it).
    static func homectl(_ arguments: [String], home: URL) async throws -> HomeCtlTests.Result {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try HomeCtlTests.homectl(arguments, home: home) })
            }
        }
    }
}
