import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterTLV
import NIOConcurrencyHelpers
import OpenCombine
import OpenCombineDispatch
import TestDevices
import TestWaiting
import Testing

// More of the guides' snippets (Device, Control, Monitor and Structure guides), in the
// same way as GuideSnippetTests: the code inside each `// Guide:` block is the guide's
// with `import GoogleHomeSDK` / `GoogleHomeTypes` / `Combine` replaced by `HomeAPI` /
// `OpenCombine` / `OpenCombineDispatch`; the scaffolding around it is the test's.

/// The apps' logger in the guides' snippets (scaffolding: prints).
private enum Logger {
    static func error(_ message: String) { print("error: \(message)") }
}

/// Plays the Structure guide's view model: a published array of structures.
final class StructuresModel: @unchecked Sendable {
    // @unchecked: `structures` is written only on the main queue (receive(on:)) and read
    // by the test after it waited for the main queue; `structuresCancellable` is set once.
    @Published public private(set) var structures: [Structure] = []
    private var structuresCancellable: AnyCancellable?

    init(home: Home) {
        // Guide (Structure): Get a list of structures, assigned to a published array
        self.structuresCancellable =
            home
            .structures()
            .batched()
            .receive(on: DispatchQueue.main)
            .map { Array($0) }
            .catch {
                Logger.error("Failed to load structures: \($0)")
                return Just([Structure]())
            }
            .assign(to: \.structures, on: self)
    }

    /// The array as the main queue sees it.
    func current() async -> [Structure] {
        await withCheckedContinuation { c in DispatchQueue.main.async { c.resume(returning: self.structures) } }
    }
}

extension Fixture {
    /// An On/Off Light that also has the optional Level Control cluster.
    static func onOffLightWithLevel(serial: String) -> NodeDescription {
        NodeDescription(endpoints: [
            root(vendor: "Acme", product: "Level Bulb", serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(0x0100)],
                serverClusters: [
                    ClusterInstanceDescription(id: identify),
                    ClusterInstanceDescription(id: onOff, features: ["LT"], attributes: [AttributeID(0): .bool(false)]),
                    ClusterInstanceDescription(id: levelControl, features: ["OO", "LT"], attributes: [AttributeID(0): .unsigned(10)]),
                ]),
        ])
    }
}

@Suite("Guide snippets: types, traits, structures", .serialized)
struct GuideSnippetMoreTests {
    static let level = AttributePath(endpoint: 1, cluster: Fixture.levelControl, attribute: AttributeID(0))
    static let onOff = AttributePath(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))

    @Test func deviceTypesTraitsAndMetadata() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = try await openHome(dir)
        defer { PendingCleanups.run { await home.close() } }
        let structure = try await home.createStructure(name: "Home")
        let levelBulb = try await TestDevice.start(Fixture.onOffLightWithLevel(serial: "LVL-1"))
        let plainBulb = try await TestDevice.start(Fixture.onOffLight(serial: "BULB-1"))
        let dimmer = try await TestDevice.start(Fixture.dimmableLight(serial: "DIM-9"))
        defer {
            PendingCleanups.run {
                await levelBulb.stop(); await plainBulb.stop(); await dimmer.stop()
            }
        }
        let levelDevice = try await home.commissionDevice(
            setupCode: try levelBulb.setupCode, address: levelBulb.address,
            structureID: structure.id, name: "Level bulb")
        _ = try await home.commissionDevice(
            setupCode: try plainBulb.setupCode, address: plainBulb.address,
            structureID: structure.id, name: "Plain bulb")
        let dimmerDevice = try await home.commissionDevice(
            setupCode: try dimmer.setupCode, address: dimmer.address,
            structureID: structure.id, name: "Dimmer")
        let device = dimmerDevice

        // Guide (Device): Get a device type with types.get
        let dimmableLight = await device.types.get(DimmableLightDeviceType.self)
        #expect(dimmableLight != nil)
        #expect(await device.types.get(WindowCoveringDeviceType.self) == nil)

        // Guide (Device): Subscribe to every device type of a device
        let seenTypes = Watched<[Bool]>([])
        let allTypes = device.types.subscribeAll()
            .sink(
                receiveCompletion: { _ in },
                receiveValue: { types in
                    if let light = types[DimmableLightDeviceType.self] {
                        seenTypes.update { $0.append(light.matterTraits.onOffTrait?.attributes.onOff ?? false) }
                    }
                })
        defer { allTypes.cancel() }

        // Guide (Control): Use the LevelControl trait through matterTraits
        if let levelControlTrait = dimmableLight?.matterTraits.levelControlTrait {
            try await levelControlTrait.moveToLevelWithOnOff(
                level: 200, transitionTime: 0,
                optionsMask: Matter.LevelControlTrait.OptionsBitmap(),
                optionsOverride: Matter.LevelControlTrait.OptionsBitmap())
        }
        #expect(await until(dimmer.attributeChanges()) { await dimmer.value(Self.level) == .unsigned(200) })
        #expect(await dimmer.value(Self.onOff) == .bool(true))
        // subscribeAll delivered the change (the light went on).
        #expect(await seenTypes.until { $0.contains(true) })

        // Guide (Device): Collect the devices whose OnOffLightDeviceType has LevelControl
        var levelControlDevices: [HomeDevice] = []
        for device in try await home.devices().list() {
            if let onOffLight = await device.types.get(OnOffLightDeviceType.self),
                onOffLight.traits.contains(Matter.LevelControlTrait.self)
            {
                levelControlDevices.append(device)
            }
        }
        #expect(levelControlDevices.map(\.id) == [levelDevice.id])
        if let levelTrait = await levelDevice.types.get(OnOffLightDeviceType.self)?.traits[Matter.LevelControlTrait.self] {
            try await levelTrait.moveToLevel(level: 55, transitionTime: nil, optionsMask: .executeIfOff, optionsOverride: .executeIfOff)
        }
        #expect(await until(levelBulb.attributeChanges()) { await levelBulb.value(Self.level) == .unsigned(55) })

        // Guide (Device): Read BasicInformation
        if let basicInfo = await device.types.get(DimmableLightDeviceType.self)?.traits[Matter.BasicInformationTrait.self] {
            let vendorName = basicInfo.attributes.vendorName
            let vendorID = basicInfo.attributes.vendorID
            let productID = basicInfo.attributes.productID
            #expect(vendorName == "Acme")
            #expect(vendorID == 0xFFF1)
            #expect(productID == 0x8001)
        } else {
            Issue.record("no BasicInformation trait")
        }

        // Guide (Device): Find the primary device type
        let primaryType = device.types.all.all.first { $0.metadata.isPrimaryType }
        #expect(primaryType.map { type(of: $0).identifier } == DimmableLightDeviceType.identifier)

        // Guide (Device): Connectivity of a device, a device type and a trait
        let current = try await home.device(id: device.id)
        let connectivity = current.sourceConnectivity
        if connectivity.connectivityState == .online && connectivity.dataSourceLocality == .direct {
            print("\(current.name) is reachable on the local network")
        }
        #expect(connectivity.connectivityState == .online)
        #expect(connectivity.dataSourceLocality == .direct)
        let typeConnectivity = await current.types.get(DimmableLightDeviceType.self)?.metadata.sourceConnectivity
        #expect(typeConnectivity?.connectivityState == .online)
        let traitConnectivity = await current.types.get(DimmableLightDeviceType.self)?.matterTraits.onOffTrait?.metadata.sourceConnectivity
        #expect(traitConnectivity?.dataSourceLocality == .direct)

        // Guide (Device): Rename a device
        let renamed = try await device.setName("Reading Lamp")
        #expect(renamed.name == "Reading Lamp")
        #expect(device.name == "Dimmer")
        #expect(try await home.device(id: device.id).name == "Reading Lamp")
    }

    @Test func structuresRoomsAndDevicesByRoom() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = try await openHome(dir)
        defer { PendingCleanups.run { await home.close() } }
        let model = StructuresModel(home: home)
        let structure = try await home.createStructure(name: "Cottage")
        let lamp = try await TestDevice.start(Fixture.onOffLight(serial: "LAMP-7"))
        let blind = try await TestDevice.start(Fixture.windowCovering(serial: "BLIND-7"))
        defer {
            PendingCleanups.run {
                await lamp.stop(); await blind.stop()
            }
        }
        let lampDevice = try await home.commissionDevice(
            setupCode: try lamp.setupCode, address: lamp.address,
            structureID: structure.id, name: "Lamp")
        let blindDevice = try await home.commissionDevice(
            setupCode: try blind.setupCode, address: blind.address,
            structureID: structure.id, name: "Blind")

        // The published array follows structures().batched() on the main queue.
        let published = Recorder(model.$structures)
        #expect(await published.wait { $0.last?.map(\.name) == ["Cottage"] })
        let renamedStructure = try await structure.setName("Cabin")
        #expect(renamedStructure.name == "Cabin")
        #expect(await published.wait { $0.last?.map(\.name) == ["Cabin"] })
        #expect(await model.current().map(\.name) == ["Cabin"])

        // Guide (Structure): Create rooms and move devices
        let livingRoom = try await structure.createRoom(name: "Living Room")
        let bedroom = try await structure.createRoom(name: "Bedroom")
        try await structure.move(device: lampDevice, to: livingRoom)
        try await structure.move(deviceIDs: [blindDevice.id], to: bedroom)
        let den = try await livingRoom.setName("Den")
        #expect(den.name == "Den")

        // Guide (Structure): Combine rooms with the devices in them
        let structureID = structure.id
        let byRoom = Watched<[String: [String]]>([:])
        let roomsAndDevices = home.rooms().batched()
            .combineLatest(home.devices().batched())
            .map { rooms, devices in
                var devicesByRoom = [Room: [HomeDevice]]()
                for room in rooms where room.structureID == structureID {
                    devicesByRoom[room] = devices.filter { $0.roomID == room.id }
                }
                return devicesByRoom
            }
            .sink(
                receiveCompletion: { _ in },
                receiveValue: { devicesByRoom in
                    let names = Dictionary(uniqueKeysWithValues: devicesByRoom.map { ($0.key.name, $0.value.map(\.name).sorted()) })
                    byRoom.update { $0 = names }
                })
        defer { roomsAndDevices.cancel() }
        #expect(await byRoom.until { $0 == ["Den": ["Lamp"], "Bedroom": ["Blind"]] })

        // Guide (Structure): Delete a room; its devices stay in the structure, unassigned
        try await structure.deleteRoom(bedroom)
        #expect(await byRoom.until { $0 == ["Den": ["Lamp"]] })
        let blindAfter = try await home.device(id: blindDevice.id)
        #expect(blindAfter.roomID == nil)
        #expect(blindAfter.structureID == structure.id)

        // The blind is still controlled through its WindowCoveringDeviceType.
        try await #require(await blindAfter.types.get(WindowCoveringDeviceType.self)?.matterTraits.windowCoveringTrait)
            .goToLiftPercentage(2500)
        let target = AttributePath(endpoint: 1, cluster: Fixture.windowCovering, attribute: AttributeID(0x000B))
        #expect(await until(blind.attributeChanges()) { await blind.value(target) == .unsigned(2500) })
    }
}
