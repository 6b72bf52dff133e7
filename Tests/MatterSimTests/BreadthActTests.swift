import DeviceProfile
import Foundation
@testable import HomeDashboard
import MatterDevice
import MatterModel
import Testing
@testable import matter_sim

/// Issue #40: the acts of the fan, the purifier and the new sensors, as `matter-sim act`, the
/// dashboard and scenarios give them: parsed into actions, and values no sensor reads refused
/// before they reach a node.
@Suite struct BreadthActTests {
    func parsed(_ name: String, _ value: String?) -> PhysicalAction? {
        if case .success(let action) = PhysicalActionName.parse(name, value: value) { action } else { nil }
    }

    func refusal(_ name: String, _ value: String?) -> String? {
        if case .failure(let error) = PhysicalActionName.parse(name, value: value) { error.description } else { nil }
    }

    @Test func readingsParseInTheirUnitsAndAreBounded() {
        #expect(parsed("humidity", "55.5") == .humidity(55.5))
        #expect(parsed("light", "350") == .illuminance(350))
        #expect(parsed("pressure", "101.3") == .pressure(101.3))
        #expect(parsed("flow", "1.5") == .flow(1.5))
        #expect(parsed("co2", "1200") == .concentration(.co2, 1200))
        #expect(parsed("pm25", "40") == .concentration(.pm25, 40))
        #expect(parsed("tvoc", "300") == .concentration(.tvoc, 300))
        #expect(refusal("humidity", "101") == "'humidity' needs a reading from 0 to 100 %; got '101'")
        #expect(refusal("co2", "1e300")?.hasPrefix("'co2' needs a reading from 0 to 1e+06 ppm") == true)
        #expect(refusal("pressure", "nan") != nil)
        #expect(refusal("flow", nil) != nil)
    }

    @Test func aFanTakesAModeOrAPercentAndTheAirAGrade() {
        #expect(parsed("fan", "high") == .fan(.mode(.high)))
        #expect(parsed("fan", "auto") == .fan(.mode(.auto)))
        #expect(parsed("fan", "50%") == .fan(.percent(50)))
        #expect(refusal("fan", "150") != nil)
        #expect(refusal("fan", "smart") != nil)
        #expect(parsed("air", "very-poor") == .airQuality(.veryPoor))
        #expect(refusal("air", "unknown") != nil)
        #expect(parsed("replace", "hepa") == .replaceFilter(.hepa))
        #expect(refusal("replace", "paper") == "'replace' takes the filter: hepa or carbon; got 'paper'")
    }

    /// `act NODE interconnect smoke|co|clear`: another alarm of the home's interconnect (TC-SMOKECO-2.5/2.6's
    /// interconnect, where a person sets off a second alarm).
    @Test func anInterconnectTakesSmokeCOOrClear() {
        #expect(parsed("interconnect", "smoke") == .alarm(.interconnect(.smoke, .warning)))
        #expect(parsed("interconnect", "co") == .alarm(.interconnect(.co, .warning)))
        #expect(parsed("interconnect", "clear") == .alarm(.interconnectCleared))
        #expect(refusal("interconnect", "fire") == "'interconnect' takes smoke, co or clear; got 'fire'")
        #expect(refusal("interconnect", nil) == "'interconnect' takes smoke, co or clear; got none")
    }

    /// A robot vacuum's buttons and problems (ErrorStateEnum's RVC errors, as a command line
    /// spells them), and a pump's faults.
    @Test func aVacuumTakesItsButtonsAndProblemsAndAPumpItsFaults() {
        #expect(parsed("vacuum", "start") == .vacuum(.start))
        #expect(parsed("vacuum", "dock") == .vacuum(.dock))
        #expect(parsed("vacuum", "stuck") == .vacuum(.error(.stuck)))
        #expect(parsed("vacuum", "dust-bin-full") == .vacuum(.error(.dustBinFull)))
        #expect(refusal("vacuum", "no-error") != nil)  // not a problem at the device
        #expect(refusal("vacuum", nil)?.hasPrefix("'vacuum' takes start, pause, home, clear, dock, failed-to-find-charging-dock") == true)
        #expect(parsed("pump", "dry") == .pump(.dryRunning))
        #expect(refusal("pump", "leak") != nil)
    }

    /// A value for each act the dashboard offers, as its inputs start.
    static let samples = [
        "fan": "high", "humidity": "55", "light": "300", "pressure": "101.3", "flow": "1.5", "co2": "1200", "pm25": "40",
        "pm10": "60", "tvoc": "500", "replace": "hepa", "temperature": "21", "dim": "40", "battery": "50", "valve": "open",
        "vacuum": "start", "pump": "blocked",
    ]

    @Test(arguments: [
        "fan.yaml", "humidity-sensor.yaml", "light-sensor.yaml", "pressure-sensor.yaml", "flow-sensor.yaml", "air-quality-sensor.yaml",
        "air-purifier.yaml", "dimmable-plug.yaml", "speaker.yaml", "water-valve.yaml", "robot-vacuum.yaml", "pump.yaml",
    ])
    func everyActTheDashboardOffersWorksOnTheShippedDevice(_ name: String) async throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("DeviceProfiles/devices/\(name)").path
        let device = try ProfileLoader().loadDevice(file: file)
        let node = try MatterNode(description: device.nodeDescription(model: .standard), logger: quietLogger)
        let acts = ShownAttributes.acts(of: node.composition, model: .standard)
        #expect(!acts.isEmpty, "\(name) offers no act")
        for act in acts {
            guard case .success(let action) = PhysicalActionName.parse(act, value: Self.samples[act]) else {
                Issue.record("\(name): the dashboard's '\(act)' does not parse")
                continue
            }
            do { try await node.act(action) } catch { Issue.record("\(name): \(act) \(Self.samples[act] ?? ""): \(error)") }
        }
        await node.stop()
    }
}
