import Foundation
import HomeAPI
import MatterModel
import MatterTLV
import TestDevices
import TestWaiting
import Testing

/// Issue #21 through HomeAPI, in process: a device group of a light and a plug. Creating it
/// sets each member up as a Matter group (key set, GroupKeyMap, Groups membership, an ACL
/// entry for the group); its On/Off reaches both; it survives a restart of the Home; deleting
/// it takes the members out again. The controller here is bound to loopback, which carries
/// no IPv6 multicast on Linux, so commands go member by member (the groupcast itself is
/// checked on a fake LAN: FakeLANGroupTests).
@Suite("Device groups", .serialized)
struct DeviceGroupTests {
    static let onOff = AttributePath(endpoint: 1, cluster: ClusterID(0x0006), attribute: AttributeID(0))
    static let acl = AttributePath(endpoint: 0, cluster: ClusterID(0x001F), attribute: AttributeID(0))

    @Test func aGroupOfALightAndAPlugIsSetUpSwitchedKeptAndRemoved() async throws {
        let dir = try temporaryDirectory()
        let trust = try makeTrustStoreDirectory()
        let light = try await TestDevice.start(Fixture.groupable(0x0100, serial: "G-LIGHT"), discriminator: 3001, deviceTypeID: 0x0100)
        let plug = try await TestDevice.start(Fixture.groupable(0x010A, serial: "G-PLUG"), discriminator: 3002, deviceTypeID: 0x010A)
        var home = try await openHome(dir, trustStore: trust)
        defer {
            try? FileManager.default.removeItem(at: dir)
            try? FileManager.default.removeItem(at: trust)
        }
        let structure = try await home.createStructure(name: "Home")
        let lamp = try await commissionReporting(light, into: home, structureID: structure.id, name: "Lamp")
        let socket = try await home.commissionDevice(
            setupCode: try plug.setupCode, address: plug.address,
            structureID: structure.id, name: "Socket")
        #expect(
            await until(signals(home.devices().batched())) {
                await (try? home.device(id: socket.id))?.types.get(OnOffPluginUnitDeviceType.self)?.matterTraits.onOffTrait?.onOff != nil
            })

        // A group of nothing is refused.
        await #expect(throws: HomeError.self) { try await structure.createDeviceGroup(name: "Empty", devices: []) }

        let group = try await structure.createDeviceGroup(name: "Downstairs", devices: [lamp, socket])
        #expect(group.name == "Downstairs")
        #expect(Set(group.deviceIDs) == [lamp.id, socket.id])
        #expect(try await structure.deviceGroups().list().map(\.id) == [group.id])

        // Each member holds the group's key and listens for it; its ACL lets the group Operate.
        var groupIDs: Set<UInt16> = []
        for device in [light, plug] {
            let (keys, addresses) = await device.node.groupcast
            #expect(keys.count == 1, "one key set, one epoch key")
            #expect(addresses.count == 1 && addresses.first?.hasPrefix("ff35:40:fd") == true, "\(addresses)")
            groupIDs.formUnion(keys.flatMap(\.groupIDs))
            let entries = (try await device.node.read(Self.acl).get().value).members ?? []
            #expect(
                entries.contains { $0.value[context: 2]?.uintValue == 3 && $0.value[context: 1]?.uintValue == 3 },
                "no Group/Operate entry: \(entries)")
            #expect(
                entries.contains { $0.value[context: 2]?.uintValue == 2 && $0.value[context: 1]?.uintValue == 5 },
                "the administrator's entry is gone: \(entries)")
        }
        #expect(groupIDs.count == 1, "both members are in the same group: \(groupIDs)")

        // A light and a plug share no device type, but both have On/Off.
        #expect(await group.part(OnOffLightDeviceType.self) == nil)
        let trait = try #require(await group.traits.get(Matter.OnOffTrait.self))
        try await trait.on()
        #expect(await light.value(Self.onOff) == .bool(true))
        #expect(await plug.value(Self.onOff) == .bool(true))
        let delivery = try #require(await group.lastDelivery())
        #expect(delivery.groupcastInterfaces.isEmpty, "loopback carries no multicast")
        #expect(Set(delivery.unicastMembers) == ["Lamp", "Socket"])
        #expect(
            await until(signals(home.deviceGroups().batched())) {
                await (try? home.deviceGroup(id: group.id))?.traits.get(Matter.OnOffTrait.self)?.onOff == true
            })
        try await trait.toggle()
        #expect(await light.value(Self.onOff) == .bool(false))
        #expect(await plug.value(Self.onOff) == .bool(false))
        #expect(group.sourceConnectivity.connectivityState == .online)

        // The group outlives the Home; the group message counter goes on past what was reserved.
        await home.close()
        home = try await openHome(dir, trustStore: trust)
        let kept = try await home.deviceGroup(id: group.id)
        #expect(kept.name == "Downstairs" && Set(kept.deviceIDs) == [lamp.id, socket.id])

        // Deleting it takes both members out of the Matter group.
        let reopened = try await home.structure(id: structure.id)
        try await reopened.deleteDeviceGroup(kept)
        #expect(try await home.deviceGroups().list().isEmpty)
        for device in [light, plug] {
            let (keys, addresses) = await device.node.groupcast
            #expect(keys.isEmpty && addresses.isEmpty, "still in the group: \(keys.count) key(s), \(addresses)")
            let entries = (try await device.node.read(Self.acl).get().value).members ?? []
            #expect(!entries.contains { $0.value[context: 2]?.uintValue == 3 }, "the group's ACL entry stayed: \(entries)")
        }
        await home.close()
        await light.stop()
        await plug.stop()
    }

    /// All or nothing: a member that cannot be reached fails the creation, and the members set
    /// up before it leave the group again.
    @Test func aGroupWithAnUnreachableMemberIsNotMade() async throws {
        let dir = try temporaryDirectory()
        let trust = try makeTrustStoreDirectory()
        defer {
            try? FileManager.default.removeItem(at: dir)
            try? FileManager.default.removeItem(at: trust)
        }
        let light = try await TestDevice.start(Fixture.groupable(0x0100, serial: "G-LIGHT"), discriminator: 3001, deviceTypeID: 0x0100)
        let plug = try await TestDevice.start(Fixture.groupable(0x010A, serial: "G-PLUG"), discriminator: 3002, deviceTypeID: 0x010A)
        let home = try await openHome(dir, trustStore: trust)
        let structure = try await home.createStructure(name: "Home")
        // Members are set up in device ID order: the lamp (commissioned first) before the socket.
        let lamp = try await home.commissionDevice(
            setupCode: try light.setupCode, address: light.address, structureID: structure.id, name: "Lamp")
        let socket = try await home.commissionDevice(
            setupCode: try plug.setupCode, address: plug.address, structureID: structure.id, name: "Socket")
        await plug.stop()
        await #expect(throws: HomeError.self) { try await structure.createDeviceGroup(name: "Hall", devices: [lamp, socket]) }
        #expect(try await home.deviceGroups().list().isEmpty)
        let (keys, addresses) = await light.node.groupcast
        #expect(keys.isEmpty && addresses.isEmpty, "the lamp stayed in the group: \(keys.count) key(s), \(addresses)")
        await home.close()
        await light.stop()
    }
}
