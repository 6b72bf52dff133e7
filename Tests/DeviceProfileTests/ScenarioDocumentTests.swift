import DeviceProfile
import Foundation
import Testing

/// Scenario files (`matter-sim home --scenario`): what they say, and every way they go wrong.
@Suite("Scenario files")
struct ScenarioDocumentTests {
    func scenario(_ yaml: String) throws(ProfileErrors) -> Scenario {
        try ProfileLoader().loadScenario(yaml: yaml, file: "s.yaml")
    }

    func errors(_ yaml: String) -> [String] {
        do {
            _ = try scenario(yaml)
            return []
        } catch {
            return error.diagnostics.map(\.description)
        }
    }

    @Test func stepsReadAsTheyAreWritten() throws {
        let s = try scenario(
            """
            name: Evening
            speed: 60
            steps:
              - {at: "00:05", node: Lamp, fault: power-off}
              - {at: "1:00:10", node: Hall Switch, act: press double}
              - {at: 1h30m, node: Hall Light, expect: 1/OnOff.OnOff, equals: true, within: 500ms}
              - {at: 90, node: Thermostat, expect: Thermostat.LocalTemperature, between: [2000, 2300], within: 2h}
              - {at: 2.5, node: Lamp, expect: route.lan, equals: down}
            """)
        #expect(s.name == "Evening" && s.speed == 60 && s.steps.count == 5)
        #expect(s.steps.map(\.at) == [.seconds(5), .seconds(3610), .seconds(5400), .seconds(90), .milliseconds(2500)])
        guard case .fault("power-off", nil) = s.steps[0].kind else { Issue.record("\(s.steps[0].kind)"); return }
        guard case .act("press", "double") = s.steps[1].kind else { Issue.record("\(s.steps[1].kind)"); return }
        guard case .expect(let light) = s.steps[2].kind, case .equals(.bool(true)) = light.comparison else {
            Issue.record("\(s.steps[2].kind)")
            return
        }
        #expect(light.subject == "1/OnOff.OnOff" && light.within == .milliseconds(500))
        guard case .expect(let room) = s.steps[3].kind, case .between(2000, 2300) = room.comparison else {
            Issue.record("\(s.steps[3].kind)")
            return
        }
        #expect(room.within == .seconds(7200))
        guard case .expect(let lan) = s.steps[4].kind, case .equals(.string("down")) = lan.comparison else {
            Issue.record("\(s.steps[4].kind)")
            return
        }
        #expect(s.steps[1].line == 5)
    }

    @Test func everyMistakeIsNamedWithItsStep() {
        let found = errors(
            """
            name: Bad
            speed: 0
            steps:
              - {at: "00:61", node: Lamp, act: button}
              - {at: 5, node: Lamp, fault: lan-dwn}
              - {at: 6, node: Lamp, expect: OnOff.OnOff}
              - {at: 7, node: Lamp, expect: OnOff.OnOff, equals: true, atLeast: 3}
              - {at: 8, node: Lamp, act: button, within: 3s}
              - {at: 9, nod: Lamp, act: button}
              - {at: 10, node: Lamp, act: button, fault: power-off}
              - {at: 11, node: Lamp, expect: X.Y, between: [5, 1]}
              - {at: 8d, node: Lamp, act: button}
            """)
        let wanted = [
            "s.yaml: speed: expected a number in 0.01...100000 (times real time), got 0",
            "s.yaml: steps[0].at: expected a time: seconds, [HH:]MM:SS or units like 500ms, 30s, 10m, 1h30m (at most a week), got \"00:61\"",
            "s.yaml: steps[1].fault: unknown fault 'lan-dwn'; did you mean 'lan-down'?",
            "s.yaml: steps[2]: an expect step needs one of equals, between, atLeast or atMost",
            "s.yaml: steps[3]: expected one of equals, between, atLeast or atMost, got equals and atLeast",
            "s.yaml: steps[4].within: 'within' belongs to an expect step, not to act",
            "s.yaml: steps[5]: missing required key 'node'",
            "s.yaml: steps[5].nod: unknown key 'nod'; did you mean 'node'?",
            "s.yaml: steps[6]: expected one of act, fault or expect, got act and fault",
            "s.yaml: steps[7].between: expected low ≤ high, got [5, 1]",
        ]
        for message in wanted {
            #expect(found.contains { $0.hasPrefix(message) }, "missing: \(message)\nfound: \(found.joined(separator: "\n"))")
        }
        #expect(found.contains { $0.contains("steps[8].at") }, "a time past a week is refused")
        #expect(found.count == wanted.count + 1)
    }

    @Test func aFileWithoutStepsIsNoScenarioAndEmptyStepsAreAnError() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let profile = directory.appendingPathComponent("p.yaml").path
        try "identity: {serialNumber: X}\nendpoints: {}\n".write(toFile: profile, atomically: true, encoding: .utf8)
        #expect(ProfileLoader().scenarioDiagnostics(file: profile) == nil)
        let empty = directory.appendingPathComponent("s.yaml").path
        try "steps: []\n".write(toFile: empty, atomically: true, encoding: .utf8)
        #expect(ProfileLoader().scenarioDiagnostics(file: empty)?.map(\.message) == ["expected at least one step, got an empty list"])
    }

    @Test(arguments: ["evening-routine.yaml", "flaky-wifi-day.yaml"])
    func shippedScenariosRead(_ name: String) throws {
        let s = try ProfileLoader().loadScenario(file: shippedProfile("scenarios/" + name))
        #expect(s.steps.count > 20 && s.speed != nil)
    }
}
