import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import TestDevices
import TestWaiting
import Testing

// Issue #8: Discovery candidates with constraints from the data model, the automation
// DSL with validation, and the runner, against in-process simulated devices.

/// A dimmable light that declares its own level bounds (MinLevel 10, MaxLevel 200); also GuideCodeTests.
func boundedDimmer(serial: String = "DIM-B") -> NodeDescription {
    NodeDescription(endpoints: [
        Fixture.root(vendor: "Acme", product: "Dimmable Bulb", serial: serial),
        EndpointDescription(
            number: 1, deviceTypes: [Fixture.deviceType(0x0101)],
            serverClusters: [
                ClusterInstanceDescription(id: Fixture.identify),
                ClusterInstanceDescription(id: Fixture.onOff, features: ["LT"], attributes: [AttributeID(0): .bool(false)]),
                ClusterInstanceDescription(
                    id: Fixture.levelControl, features: ["OO", "LT"],
                    attributes: [
                        AttributeID(0): .unsigned(100), AttributeID(2): .unsigned(10), AttributeID(3): .unsigned(200),
                    ]),
            ]),
    ])
}

private func utc(_ text: String) -> Date { ISO8601DateFormatter().date(from: text)! }

@Suite("Discovery and automations", .serialized)
struct DiscoveryAutomationTests {
    @Test func constraintsComeFromTheDataModelAndTheDevice() async throws {
        let rig = try await Rig.make()
        let bulb = try await TestDevice.start(boundedDimmer())
        defer {
            PendingCleanups.run {
                await bulb.stop(); await rig.close()
            }
        }
        let device = try await rig.add(bulb, name: "Dimmer")
        let structure = rig.structure

        // The SDK's shape: AnyNodeCandidate, cast through `node`.
        let candidates = try await structure.candidates(for: device).list()
        let moveToLevel = candidates.compactMap { $0.node as? CommandCandidate }
            .first { $0.command == Matter.LevelControlTrait.MoveToLevelCommand.self }
        let candidate = try #require(moveToLevel)
        let details = try #require(
            candidate.fieldDetails[AnyField(erasing: Matter.LevelControlTrait.MoveToLevelCommand.CommandRequestFields.level)])
        guard case .uintRangeConstraint(let lowerBound, let upperBound, _, _) = details.constraint else {
            Issue.record("level is not a uint range: \(details.constraint)")
            return
        }
        #expect(lowerBound == 10 && upperBound == 200)
        #expect(candidate.unsupportedReasons.isEmpty)
        #expect(candidate.deviceTypes.map { $0.identifier } == [DimmableLightDeviceType.identifier])

        // Attribute details: the model's access and quality, the device's bounds.
        let levelAttributes = try #require(
            candidates.compactMap { $0.node as? TraitAttributesCandidate }
                .first { $0.trait == Matter.LevelControlTrait.self })
        let current = try #require(levelAttributes.fieldDetails[AnyField(erasing: Matter.LevelControlTrait.Attribute.currentLevel)])
        #expect(current.isSubscribable && !current.isModifiable)
        #expect(current.constraint == .uintRangeConstraint(lowerBound: 10, upperBound: 200, step: 1, unit: ""))
        let options = try #require(levelAttributes.fieldDetails[AnyField(erasing: Matter.LevelControlTrait.Attribute.options)])
        #expect(options.isModifiable)
        #expect(options.constraint == .bitmapConstraint(allowedBits: 0b11))
        #expect(candidates.contains { ($0.node as? CommandCandidate)?.command == Matter.OnOffTrait.OnCommand.self })
        // Basic Information is not for automations; no window covering commands on a light.
        #expect(!candidates.contains { $0.node.trait == Matter.BasicInformationTrait.self })
        #expect(!candidates.contains { ($0.node as? CommandCandidate)?.command == Matter.WindowCoveringTrait.DownOrCloseCommand.self })
        // The structure's own candidates only, or with its devices'.
        let own = try await structure.candidates(includeDescendants: false).list()
        #expect(own.count == 1 && own.first?.node is EventCandidate)
        let all = try await structure.candidates().list()
        #expect(all.count == candidates.count + 1)

        // The device works within the same bounds: a level above them ends at MaxLevel.
        let trait = try #require(await device.types.get(DimmableLightDeviceType.self)?.matterTraits.levelControlTrait)
        try await trait.moveToLevel(level: 250, optionsMask: .executeIfOff, optionsOverride: .executeIfOff)
        #expect(await until(bulb.attributeChanges()) { await bulb.value(Fixture.currentLevelPath) == .unsigned(200) })
    }

    @Test func candidatesAreCachedAndTheScheduleNeedsAnAddress() async throws {
        let rig = try await Rig.make()
        defer { PendingCleanups.run { await rig.close() } }
        let structure = rig.structure

        let first = try await structure.candidates().snapshot()
        let second = try await structure.candidates().snapshot()
        #expect(first.id == second.id, "a second call within a minute returns the cached snapshot")
        let fresh = try await structure.candidates(ignoringCache: true).snapshot()
        #expect(fresh.id != first.id)

        func scheduled(_ list: Set<AnyNodeCandidate>) -> EventCandidate? {
            list.compactMap { $0.node as? EventCandidate }.first { $0.event == Google.TimeTrait.ScheduledEvent.self }
        }
        let before = try #require(scheduled(first.list()))
        #expect(before.unsupportedReasons.map(\.reasonType) == [.missingStructureAddressSetup])
        let onTimeTrait = before.trait == Google.TimeTrait.self
        #expect(onTimeTrait)
        #expect(before.homeObject.id == structure.id)

        let withAddress = try await structure.setAddress("1 Main Street, Springfield")
        #expect(withAddress.address == "1 Main Street, Springfield")
        let after = try #require(scheduled(try await structure.candidates().list()))
        #expect(after.unsupportedReasons.isEmpty)
        // The address is in the home graph: another Home on the same file sees it.
        var c = testConfiguration()
        c.connectDevices = false
        let other = try await Home.open(at: rig.dir.appendingPathComponent("home.sqlite"), configuration: c)
        #expect(try await other.structure(id: structure.id).address == "1 Main Street, Springfield")
        await other.close()
    }

    @Test func invalidAutomationsFailWithHomeErrors() async throws {
        let rig = try await Rig.make()
        let bulb = try await TestDevice.start(boundedDimmer())
        let stranger = try await TestDevice.start(Fixture.onOffLight(serial: "FAR-1"))
        defer {
            PendingCleanups.run {
                await bulb.stop(); await stranger.stop(); await rig.close()
            }
        }
        let dimmer = try await rig.add(bulb, name: "Dimmer")
        let cottage = try await rig.home.createStructure(name: "Cottage")
        let far = try await rig.add(stranger, name: "Far Lamp", structure: cottage)
        let structure = rig.structure

        func expectError(_ code: HomeError.Code, mentioning words: [String], _ draft: DraftAutomation) async {
            do {
                _ = try await structure.createAutomation(draft)
                Issue.record("\(draft.name) was accepted")
            } catch {  // a HomeError by type
                #expect(error.code == code, "\(error)")
                for w in words { #expect(error.message.contains(w), "\(error.message) lacks \(w)") }
            } catch {
                Issue.record("not a HomeError: \(error)")
            }
        }

        // Level 300: outside the LevelControl level constraint.
        await expectError(
            .invalidArgument, mentioning: ["level", "300", "Dimmer"],
            automation(name: "Too bright") {
                let s = starter(dimmer, DimmableLightDeviceType.self, Matter.OnOffTrait.self)
                condition { s.onOff.equals(true) }
                action(dimmer, DimmableLightDeviceType.self) {
                    Matter.LevelControlTrait.moveToLevel(
                        level: 300, transitionTime: nil, optionsMask: Matter.LevelControlTrait.OptionsBitmap(),
                        optionsOverride: Matter.LevelControlTrait.OptionsBitmap())
                }
            })
        // A scheduled starter while the structure has no address.
        await expectError(
            .failedPrecondition, mentioning: ["ScheduledEvent", "missingStructureAddressSetup"],
            automation(name: "Wake") {
                starter(structure, Google.TimeTrait.ScheduledEvent.self) {
                    Google.TimeTrait.ScheduledEvent.clockTime(TimeOfDay(hours: 7, minutes: 0))
                }
                action(dimmer, DimmableLightDeviceType.self) { Matter.OnOffTrait.on() }
            })
        // A device of another structure.
        await expectError(
            .notFound, mentioning: ["Far Lamp"],
            automation(name: "Far") {
                starter(far, OnOffLightDeviceType.self, Matter.OnOffTrait.self)
                action(dimmer, DimmableLightDeviceType.self) { Matter.OnOffTrait.on() }
            })
        // A command the device does not have.
        await expectError(
            .invalidArgument, mentioning: ["DownOrClose"],
            automation(name: "Close the bulb") {
                starter(dimmer, DimmableLightDeviceType.self, Matter.OnOffTrait.self)
                action(dimmer, DimmableLightDeviceType.self) { Matter.WindowCoveringTrait.downOrClose() }
            })
        #expect(try await structure.listAutomations().isEmpty)

        // Within the constraint it is accepted, and stays in the home graph.
        let ok = try await structure.createAutomation(
            automation(name: "Fine", description: "level 200") {
                let s = starter(dimmer, DimmableLightDeviceType.self, Matter.OnOffTrait.self)
                condition { s.onOff.equals(true) }
                action(dimmer, DimmableLightDeviceType.self) {
                    Matter.LevelControlTrait.moveToLevel(
                        level: 200, transitionTime: nil, optionsMask: Matter.LevelControlTrait.OptionsBitmap(),
                        optionsOverride: Matter.LevelControlTrait.OptionsBitmap())
                }
            })
        #expect(try await structure.listAutomations().map(\.id) == [ok.id])
        #expect(ok.starterDescriptions.count == 1 && ok.conditionDescriptions == ["onOff equals true"])
        try await structure.setAutomation(id: ok.id, isActive: false)
        #expect(try await structure.listAutomations().first?.isActive == false)
        try await structure.deleteAutomation(id: ok.id)
        #expect(try await structure.listAutomations().isEmpty)
    }

    @Test func blindsCloseAtTheScheduledTime() async throws {
        let rig = try await Rig.make()
        let blind = try await TestDevice.start(Fixture.windowCovering())
        defer {
            PendingCleanups.run {
                await blind.stop(); await rig.close()
            }
        }
        let blinds = try await rig.add(blind, name: "Blinds")
        let structure = try await rig.structure.setAddress("1 Main Street, Springfield")

        let created = try await structure.createAutomation(
            automation(name: "Close the blinds", description: "at 07:00") {
                starter(structure, Google.TimeTrait.ScheduledEvent.self) {
                    Google.TimeTrait.ScheduledEvent.clockTime(TimeOfDay(hours: 7, minutes: 0))
                }
                action(blinds, WindowCoveringDeviceType.self) { Matter.WindowCoveringTrait.downOrClose() }
            })
        let clock = ManualClock(wallClockOrigin: utc("2026-03-02T06:59:00Z"))
        let runner = await rig.home.startAutomations(clock: clock, timeZone: TimeZone(identifier: "UTC")!, pollInterval: .milliseconds(20))
        let before = await blind.value(Fixture.targetLiftPath)
        await clock.advance(by: .seconds(30))  // 06:59:30: not yet
        await runner.fireScheduledStarters()
        #expect(await blind.value(Fixture.targetLiftPath) == before)
        #expect(try await structure.automationHistory().isEmpty)

        await clock.advance(by: .seconds(60))  // 07:00:30: the 07:00 starter fires once
        #expect(
            await until(blind.attributeChanges(), within: .seconds(5)) { await blind.value(Fixture.targetLiftPath) == .unsigned(10000) })
        #expect(await until(runner.runs()) { (try? await structure.automationHistory().count) == 1 })
        let run = try #require(try await rig.home.automationHistory(automationID: created.id).first)
        #expect(run.outcome == .success, "\(run.message)")
        #expect(run.time == utc("2026-03-02T07:00:00Z"))
        #expect(run.starter.contains("07:00:00") && run.actions == ["Blinds: DownOrClose()"])
        await clock.advance(by: .seconds(3600))
        await runner.fireScheduledStarters()
        #expect(try await structure.automationHistory().count == 1, "the next day's 07:00 has not come")
        await runner.stop()

        // The same automation and run through homectl, a separate process on the same file.
        let file = rig.dir.appendingPathComponent("home.sqlite")
        let listed = try HomeCtlTests.homectl(["automations", "list", "--json"], home: file)
        #expect(listed.status == 0, "\(listed.error)")
        let automations = try JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [[String: String]]
        #expect(automations?.map { $0["name"] } == ["Close the blinds"])
        #expect(automations?.first?["active"] == "yes")
        let history = try HomeCtlTests.homectl(["automations", "history", "--json"], home: file)
        #expect(history.status == 0, "\(history.error)")
        let runs = try JSONSerialization.jsonObject(with: Data(history.output.utf8)) as? [[String: String]]
        #expect(runs?.count == 1)
        #expect(runs?.first?["time"] == "2026-03-02T07:00:00Z")
        #expect(runs?.first?["outcome"] == "success")
        #expect(runs?.first?["actions"] == "Blinds: DownOrClose()")
        let disabled = try HomeCtlTests.homectl(["automations", "disable", created.id], home: file)
        #expect(disabled.status == 0, "\(disabled.error)")
        #expect(try await structure.listAutomations().first?.isActive == false)
    }

    @Test func turningTheDimmableLightOnSetsItsLevel() async throws {
        let rig = try await Rig.make()
        let bulb = try await TestDevice.start(boundedDimmer())
        defer {
            PendingCleanups.run {
                await bulb.stop(); await rig.close()
            }
        }
        let device = try await rig.add(bulb, name: "Dimmer")
        let structure = rig.structure

        let created = try await structure.createAutomation(
            automation(name: "Dim on", description: "level 55 when on") {
                let starterNode = starter(device, DimmableLightDeviceType.self, Matter.OnOffTrait.self)
                condition {
                    starterNode.onOff.equals(true)
                }
                action(device, DimmableLightDeviceType.self) {
                    Matter.LevelControlTrait.moveToLevel(
                        level: 55, transitionTime: nil, optionsMask: Matter.LevelControlTrait.OptionsBitmap(),
                        optionsOverride: Matter.LevelControlTrait.OptionsBitmap())
                }
            })
        let runner = await rig.home.startAutomations(pollInterval: .milliseconds(50))
        #expect(await bulb.value(Fixture.currentLevelPath) == .unsigned(100))

        // Someone turns the light on at the light itself: the Home hears it through its subscription.
        _ = await bulb.press(Fixture.onOff, 0x01)
        #expect(await until(bulb.attributeChanges(), within: .seconds(8)) { await bulb.value(Fixture.currentLevelPath) == .unsigned(55) })
        #expect(await until(runner.runs()) { (try? await rig.home.automationHistory(automationID: created.id).first?.outcome) == .success })

        // Off: the starter fires, the condition does not hold, nothing is sent; the run says so.
        _ = await bulb.press(Fixture.onOff, 0x00)
        #expect(
            await until(runner.runs()) {
                (try? await rig.home.automationHistory(automationID: created.id).first?.outcome) == .conditionsNotMet
            })

        // Disabled: no more runs. A witness made after it, on the same starter, runs on the
        // change; the runner takes automations in the order they were made, so by the
        // witness's run it has passed the disabled one over.
        try await structure.setAutomation(id: created.id, isActive: false)
        let witness = try await structure.createAutomation(
            automation(name: "Witness", description: "runs on every on/off change") {
                starter(device, DimmableLightDeviceType.self, Matter.OnOffTrait.self)
                action(device, DimmableLightDeviceType.self) {
                    Matter.LevelControlTrait.moveToLevel(
                        level: 55, transitionTime: nil, optionsMask: Matter.LevelControlTrait.OptionsBitmap(),
                        optionsOverride: Matter.LevelControlTrait.OptionsBitmap())
                }
            })
        let count = try await rig.home.automationHistory(automationID: created.id).count
        let witnessRuns = runner.runs()
        _ = await bulb.press(Fixture.onOff, 0x01)
        #expect(await within { for await run in witnessRuns where run.automationID == witness.id { return } })
        #expect(try await rig.home.automationHistory(automationID: created.id).count == count)
        await runner.stop()
    }
}
