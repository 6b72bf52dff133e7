import ChildProcess
import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import TestDevices
import Testing

/// Issue #8: automations run inside the hub process (`matter-relay serve --mode hub
/// --automations FILE`), with no runner in the app: the hub's Home reaches the device only
/// through the hub, and the run lands in the home file's history.
@Suite("Automations in the hub", .serialized)
struct HubAutomationTests {
    @Test func theHubRunsTheHomesAutomations() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: HubTests.relayBinary.path))
        let setup = try await HubTests.setUp(serial: "HUB-AUTO-1")
        defer { Task { await setup.tearDown() } }
        let home = setup.home
        let structure = try await home.createStructure(name: "Home")
        let room = try await structure.createRoom(name: "Hall")
        let light = try #require(try await home.devices().list().first)
        try await structure.move(device: light, to: room)
        #expect(
            await eventually(within: .seconds(10)) {
                (try? await structure.candidates(for: home.device(id: light.id), ignoringCache: true).list())?
                    .contains { ($0.node as? CommandCandidate)?.command == Matter.OnOffTrait.OnCommand.self } ?? false
            })
        // "Keep the hall light on": turned off, it turns itself back on.
        let hallLight = try await home.device(id: light.id)
        let created = try await structure.createAutomation(
            automation(name: "Keep on") {
                let s = starter(hallLight, OnOffLightDeviceType.self, Matter.OnOffTrait.self)
                condition { s.onOff.equals(false) }
                action(hallLight, OnOffLightDeviceType.self) { Matter.OnOffTrait.on() }
            })

        let file = setup.directory.appendingPathComponent("home.sqlite")
        let process = try Subprocess([
            HubTests.relayBinary.path, "serve", "--mode", "hub", "--credentials", setup.credentialsFile.path, "--port", "0",
            "--database", setup.directory.appendingPathComponent("hub.sqlite").path, "--no-dnssd", "--log-level", "error",
            "--automations", file.path,
        ])
        defer { _ = process.wait(timeout: 0) }
        let output = PipeCollector(process.output)
        let errors = PipeCollector(process.errors)
        #expect(await eventually(within: .seconds(30)) { output.text.contains("running 1 active automation(s)") }, "\(errors.text)")

        // Someone switches the light off at the light; only the hub's runner can turn it back on.
        let onOff = AttributePath(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))
        _ = await setup.node.invoke(
            CommandPath(endpoint: 1, cluster: Fixture.onOff, command: CommandID(1)), fields: .structure([]), session: nil)
        #expect(await eventually(within: .seconds(10)) { (try? await setup.node.read(onOff).get().value) == .bool(true) })
        try await Task.sleep(for: .seconds(2))  // the hub's subscription has seen "on"
        _ = await setup.node.invoke(
            CommandPath(endpoint: 1, cluster: Fixture.onOff, command: CommandID(0)), fields: .structure([]), session: nil)
        #expect(
            await eventually(within: .seconds(15)) {
                (try? await home.automationHistory(automationID: created.id))?.contains { $0.outcome == .success } ?? false
            }, "stderr: \(errors.text)")
        #expect(await eventually(within: .seconds(5)) { (try? await setup.node.read(onOff).get().value) == .bool(true) })

        kill(process.pid, SIGTERM)
        #expect(process.wait(timeout: 10) == 0)
    }
}
