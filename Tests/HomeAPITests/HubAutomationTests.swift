import ChildProcess
import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import TestDevices
import TestWaiting
import Testing

/// Issue #8: automations run inside the hub process (`matter-relay serve --mode hub
/// --automations FILE`), with no runner in the app: the hub's Home reaches the device only
/// through the hub, and the run lands in the home file's history.
@Suite("Automations in the hub", .serialized)
struct HubAutomationTests {
    @Test func theHubRunsTheHomesAutomations() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: HubTests.relayBinary.path))
        let setup = try await HubTests.setUp(serial: "HUB-AUTO-1")
        defer { PendingCleanups.run { await setup.tearDown() } }
        let home = setup.home
        let structure = try await home.createStructure(name: "Home")
        let room = try await structure.createRoom(name: "Hall")
        let light = try #require(try await home.devices().list().first)
        try await structure.move(device: light, to: room)
        #expect(
            await until(signals(home.devices().batched())) {
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
        #expect(await poll(within: .seconds(30)) { output.text.contains("running 1 active automation(s)") }, "\(errors.text)")

        // Someone switches the light off at the light; only the hub's runner can turn it back on.
        // First the light goes on, and the hub's subscription is told so.
        let onOff = AttributePath(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))
        let server = setup.server.interactionServer
        let hubNode = setup.issue.credentials.nodeID
        #expect(
            await until(server.subscriptionChanges(), within: .seconds(30)) {
                await server.activeSubscriptions().contains { s in
                    s.subject.subject == hubNode && s.attributePaths.contains { $0.matches(onOff) }
                }
            }, "the hub never subscribed to OnOff")
        let hubSubscriptions = Set(
            await server.activeSubscriptions().filter { s in
                s.subject.subject == hubNode && s.attributePaths.contains { $0.matches(onOff) }
            }.map(\.subscriptionID))
        let acknowledged = server.acknowledgedReports()
        _ = await setup.node.invoke(
            CommandPath(endpoint: 1, cluster: Fixture.onOff, command: CommandID(1)), fields: .structure([]), session: nil)
        #expect(
            await within {
                var told: Set<UInt32> = []
                for await report in acknowledged where hubSubscriptions.contains(report.subscriptionID) {
                    let on = report.attributeReports.contains { r in
                        if case .data(let d) = r { d.path.matches(onOff) && d.data == .bool(true) } else { false }
                    }
                    if on { told.insert(report.subscriptionID) }
                    if told == hubSubscriptions { return }
                }
            }, "the hub's subscriptions were never told the light is on")
        _ = await setup.node.invoke(
            CommandPath(endpoint: 1, cluster: Fixture.onOff, command: CommandID(0)), fields: .structure([]), session: nil)
        #expect(
            // The hub process writes the run to the home file.
            await poll(within: .seconds(15)) {
                (try? await home.automationHistory(automationID: created.id))?.contains { $0.outcome == .success } ?? false
            }, "stderr: \(errors.text)")
        #expect(await until(setup.node.changes) { (try? await setup.node.read(onOff).get().value) == .bool(true) })

        kill(process.pid, SIGTERM)
        #expect(process.wait(timeout: 10) == 0)
    }
}
