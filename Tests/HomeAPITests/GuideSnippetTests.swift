import Foundation
import HomeAPI
import MatterModel
import NIOConcurrencyHelpers
import OpenCombine
import TestDevices
import TestWaiting
import Testing

// The Google Home APIs iOS guides' own snippets (Device, Control, Monitor and Structure
// guides), with `import GoogleHomeSDK` / `import GoogleHomeTypes` replaced by
// `import HomeAPI` / `import OpenCombine`, run against live simulated devices. The code
// inside each `// Guide:` block is the guide's; the scaffolding around it is the test's.

/// Plays the guides' `self`: an object with `home`, and the IDs they refer to.
final class GuideApp: @unchecked Sendable {
    // @unchecked: `cancellables` is only touched under `lock`; the rest is immutable.
    let home: Home
    let myDeviceId: String
    let lock = NIOLock()
    var cancellables: [AnyCancellable] = []

    init(home: Home, myDeviceId: String) {
        self.home = home
        self.myDeviceId = myDeviceId
    }

    func keep(_ c: AnyCancellable) { lock.withLock { cancellables.append(c) } }
}

@Suite("Guide snippets", .serialized)
struct GuideSnippetTests {
    @Test func deviceGuideSnippets() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = try await openHome(dir)
        defer { PendingCleanups.run { await home.close() } }
        let structure = try await home.createStructure(name: "Home")
        let lamp = try await TestDevice.start(Fixture.onOffLight())
        defer { PendingCleanups.run { await lamp.stop() } }
        let device = try await home.commissionDevice(
            setupCode: try lamp.setupCode, address: lamp.address,
            structureID: structure.id, name: "Bedroom Lamp")
        let app = GuideApp(home: home, myDeviceId: device.id)
        let onOffPath = AttributePath(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))

        try await {
            // Guide: Get a list of devices
            // Get a list of all devices accessible to the user
            let homeDevices = try await app.home.devices().list()
            #expect(homeDevices.count == 1)
        }()

        let updates = Watched(0)
        try await {
            // Guide: Get the device's types (DeviceTypeController.subscribe(_:))
            let devices = try await app.home.devices().list()
            if let device = devices.first(where: { $0.id == app.myDeviceId }) {
                var receivedUpdate1 = false
                app.keep(
                    device.types.subscribe(OnOffLightDeviceType.self)
                        .assertNoFailure()
                        .sink { device in
                            updates.update { $0 += 1 }
                            if !receivedUpdate1 {
                                receivedUpdate1 = true
                                Task {
                                    try await device.matterTraits.onOffTrait?.on()
                                }
                                return
                            }
                        })
            }
        }()
        #expect(await until(lamp.attributeChanges()) { await lamp.value(onOffPath) == .bool(true) })
        #expect(await updates.until { $0 >= 2 })

        let lampChanges = Watched(0)
        // Guide (Monitor): Track changes to a specific device
        app.keep(
            app.home.devices().batched()
                .compactMap { deviceList -> HomeDevice? in
                    deviceList.filter { $0.name == "Bedroom Lamp" }.first
                }
                .removeDuplicates()
                .sink { lampDevice in
                    if lampDevice != nil {
                        lampChanges.update { $0 += 1 }
                        print("The bedroom lamp has changed!")
                    }
                })

        let onOffStates = Watched<[Bool?]>([])
        // Guide (Monitor): Track changes to a specific trait on a device
        app.keep(
            device.types.subscribe(OnOffLightDeviceType.self)
                .compactMap { $0.matterTraits.onOffTrait }
                .removeDuplicates()
                .sink { onOffState in
                    if let onOffState = Optional(onOffState) {
                        onOffStates.update { $0.append(onOffState.onOff) }
                        print("Got new state update: \(String(describing: onOffState.onOff))")
                    }
                })

        let onOffTraitTest = try #require(await device.types.get(OnOffLightDeviceType.self)?.matterTraits.onOffTrait)
        // Guide (Control): Check if a trait supports a command
        // Check if the OnOff trait supports the toggle command.
        if onOffTraitTest.supportsToggleCommand {
            print("onOffTrait supports toggle command")
        } else {
            print("onOffTrait does not support stateful toggle command")
            Issue.record("the light does not accept Toggle")
        }

        // Guide (Control): Send a command to a device
        // Calling a command on a trait.
        do {
            try await onOffTraitTest.toggle()
        } catch {  // a HomeError by type
            // Code for handling the exception
            Issue.record("toggle failed: \(error)")
        }
        #expect(await lamp.value(onOffPath) == .bool(false))

        do {
            try await onOffTraitTest.off()
            try await onOffTraitTest.on()
        } catch {  // a HomeError by type
            // Code for handling the exception
            Issue.record("off/on failed: \(error)")
        }
        #expect(await lamp.value(onOffPath) == .bool(true))
        #expect(await onOffStates.until { $0.contains(false) && $0.last == true })
        #expect(await lampChanges.until { $0 >= 2 })

        // Guide (Structure): error handling when moving a device
        let room = try await structure.createRoom(name: "Bedroom")
        let lightDevices = try await app.home.devices().list().filter { $0.types.contains(OnOffLightDeviceType.self) }
        let light1 = lightDevices.first
        if let light = light1 {
            do {
                try await structure.move(device: light, to: room)
            } catch let error as HomeError {
                // Code for handling the exception
                Issue.record("move failed: \(error)")
            }
        }
        #expect(try await app.home.device(id: device.id).roomID == room.id)
    }
}
