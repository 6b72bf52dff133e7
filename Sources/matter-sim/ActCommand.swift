// `matter-sim act [--control PATH] NODE ACTION [VALUE]`: what a person does at a running
// simulated device, through the control socket of the `matter-sim run` or `matter-sim home`
// that runs it. The node changes its own state, so every controller sees an ordinary
// report or event.
import ArgumentParser
import MatterDevice
import MatterModel

/// The actions `matter-sim act` knows, by name.
enum PhysicalActionName: String, CaseIterable, Sendable {
    case open, close, occupied, unoccupied, temperature, press, lock, unlock, button, dim, cord, dial
    case humidity, light, pressure, flow, co2, pm25, pm10, tvoc, air, fan, replace
    case smoke, co, clear, test, mute, interconnect, leak, dry, battery, unplug, plug
    case removeBridged = "remove-bridged", addBridged = "add-bridged"
    case valve, fault, vacuum, pump

    static var names: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// The action a name and its value stand for, or what is wrong with them.
    static func parse(_ name: String, value: String?) -> Result<PhysicalAction, ControlSocketError> {
        func fail(_ message: String) -> Result<PhysicalAction, ControlSocketError> { .failure(ControlSocketError(description: message)) }
        guard let known = PhysicalActionName(rawValue: name) else {
            return fail("unknown action '\(name)'; expected one of: \(names)")
        }
        switch known {
        case .open, .close, .occupied, .unoccupied:
            if let value { return fail("'\(name)' takes no value, but '\(value)' was given") }
            switch known {
            case .open: return .success(.contact(false))
            case .close: return .success(.contact(true))
            case .occupied: return .success(.occupancy(true))
            default: return .success(.occupancy(false))
            }
        case .lock, .unlock:
            // A value is a PIN typed at the keypad; none is the key or the thumb turn.
            return .success(known == .lock ? .lock(code: value) : .unlock(code: value))
        case .button:
            if let value { return fail("'button' takes no value, but '\(value)' was given") }
            return .success(.toggle)
        case .dim:
            guard let value, let percent = Double(value.hasSuffix("%") ? String(value.dropLast()) : value), (0...100).contains(percent)
            else {
                return fail("'dim' needs a brightness from 0 to 100 (%), e.g. 40; got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.dim(percent: percent))
        case .cord:
            guard let value, let pull = CordPull(rawValue: value) else {
                return fail("'cord' takes open, close or stop; got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.cord(pull))
        case .dial:
            guard let value, let celsius = Double(value), celsius.isFinite else {
                return fail("'dial' needs a temperature in °C, e.g. 21.5; got \(value.map { "'\($0)'" } ?? "none")")
            }
            guard ActRanges.dial.contains(celsius) else {
                return fail("'dial' takes a setpoint from \(ActRanges.text(ActRanges.dial)) °C (Thermostat setpoint); got '\(value)'")
            }
            return .success(.dial(celsius: celsius))
        case .smoke, .co:
            guard let severity = AlarmSeverity(rawValue: value ?? AlarmSeverity.critical.rawValue) else {
                return fail("'\(name)' takes warning or critical (default critical); got '\(value ?? "")'")
            }
            return .success(.alarm(known == .smoke ? .smoke(severity) : .co(severity)))
        case .interconnect:
            // Another alarm of the home's interconnect sounds (a warning here), or stops.
            guard let value, value == "clear" || AlarmKind(rawValue: value) != nil else {
                return fail("'interconnect' takes smoke, co or clear; got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.alarm(value == "clear" ? .interconnectCleared : .interconnect(AlarmKind(rawValue: value) ?? .smoke, .warning)))
        case .clear, .test, .mute, .leak, .dry:
            if let value { return fail("'\(name)' takes no value, but '\(value)' was given") }
            switch known {
            case .clear: return .success(.alarm(.clear))
            case .test: return .success(.alarm(.test))
            case .mute: return .success(.alarm(.mute))
            default: return .success(.leak(known == .leak))
            }
        case .battery:
            guard let value, let percent = Double(value.hasSuffix("%") ? String(value.dropLast()) : value), (0...100).contains(percent)
            else {
                return fail("'battery' needs a charge from 0 to 100 (%), e.g. 15; got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.battery(percent: percent))
        case .unplug, .plug, .removeBridged, .addBridged:
            guard let value, let endpoint = UInt16(value), endpoint > 0 else {
                return fail("'\(name)' needs a bridged device's endpoint number, e.g. 2; got \(value.map { "'\($0)'" } ?? "none")")
            }
            switch known {
            case .unplug, .plug: return .success(.bridged(endpoint: endpoint, reachable: known == .plug))
            default: return .success(.bridgedPresence(endpoint: endpoint, present: known == .addBridged))
            }
        case .temperature:
            guard let value, let celsius = Double(value), celsius.isFinite else {
                return fail("'temperature' needs a reading in °C, e.g. 21.5; got \(value.map { "'\($0)'" } ?? "none")")
            }
            guard ActRanges.temperature.contains(celsius) else {
                return fail(
                    "'temperature' takes a reading from \(ActRanges.text(ActRanges.temperature)) °C (Temperature Measurement MeasuredValue); got '\(value)'"
                )
            }
            return .success(.temperature(celsius))
        case .humidity, .light, .pressure, .flow, .co2, .pm25, .pm10, .tvoc:
            return ActRanges.measurement(known, value: value)
        case .air:
            let grades = Clusters.AirQuality.AirQualityEnum.allCases.filter { $0 != .unknown }
            guard let value, let grade = grades.first(where: { ActRanges.spoken("\($0)") == value }) else {
                return fail(
                    "'air' takes \(grades.map { ActRanges.spoken("\($0)") }.joined(separator: ", ")); got \(value.map { "'\($0)'" } ?? "none")"
                )
            }
            return .success(.airQuality(grade))
        case .fan:
            let modes: [Clusters.FanControl.FanModeEnum] = [.off, .low, .medium, .high, .auto]
            if let value, let mode = modes.first(where: { "\($0)" == value }) { return .success(.fan(.mode(mode))) }
            guard let value, let percent = UInt8(value.hasSuffix("%") ? String(value.dropLast()) : value), percent <= 100 else {
                return fail(
                    "'fan' takes off, low, medium, high, auto or a speed from 0 to 100 (%); got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.fan(.percent(percent)))
        case .valve:
            guard let value, value == "open" || value == "close" else {
                return fail("'valve' takes open or close (its lever); got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.valve(.lever(open: value == "open")))
        case .fault:
            typealias Fault = Clusters.ValveConfigurationAndControl.ValveFaultBitmap
            let faults: [(String, Fault)] = [
                ("none", []), ("general", .generalFault), ("blocked", .blocked), ("leaking", .leaking),
                ("not-connected", .notConnected), ("short-circuit", .shortCircuit), ("current-exceeded", .currentExceeded),
            ]
            guard let value, let fault = faults.first(where: { $0.0 == value }) else {
                return fail(
                    "'fault' takes \(faults.map(\.0).joined(separator: ", ")); got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.valve(.fault(fault.1)))
        case .vacuum:
            // Its buttons and a person's hands, then its problems (ErrorStateEnum's RVC errors: stuck, dust-bin-full…).
            typealias ErrorState = Clusters.RvcOperationalState.ErrorStateEnum
            var acts: [(String, VacuumAction)] = [("start", .start), ("pause", .pause), ("home", .home), ("clear", .clear), ("dock", .dock)]
            for error in ErrorState.allCases where error.rawValue >= ErrorState.failedToFindChargingDock.rawValue {
                acts.append((kebab("\(error)"), .error(error)))
            }
            guard let value, let act = acts.first(where: { $0.0 == value }) else {
                return fail("'vacuum' takes \(acts.map(\.0).joined(separator: ", ")); got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.vacuum(act.1))
        case .pump:
            let acts: [(String, PumpAction)] = [("blocked", .blocked), ("dry", .dryRunning), ("clear", .clear)]
            guard let value, let act = acts.first(where: { $0.0 == value }) else {
                return fail("'pump' takes \(acts.map(\.0).joined(separator: ", ")); got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.pump(act.1))
        case .replace:
            guard let value, let kind = FilterKind(rawValue: value) else {
                return fail("'replace' takes the filter: hepa or carbon; got \(value.map { "'\($0)'" } ?? "none")")
            }
            return .success(.replaceFilter(kind))
        case .press:
            switch value ?? "single" {
            case "single": return .success(.press(.single))
            case "double": return .success(.press(.double))
            case "long": return .success(.press(.long))
            case let other:
                guard let count = Int(other), ActRanges.presses.contains(count) else {
                    return fail(
                        "'press' takes single, double, long or a number of presses from \(ActRanges.presses.lowerBound) to \(ActRanges.presses.upperBound) (Switch MultiPressMax); got '\(other)'"
                    )
                }
                return .success(.press(.short(count: count)))
            }
        }
    }
}

struct ActCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "act",
        abstract: "Do what a person does at a running simulated device: open a door, walk into a room, press a button, pull a cord.",
        discussion: """
            ACTION [VALUE] is one of:
              open | close         a contact sensor's door or window (Boolean State;
                                   StateChange event)
              occupied | unoccupied  someone walks into or leaves an occupancy sensor's
                                   room (OccupancyChanged event)
              temperature C        a temperature sensor's reading, in °C
              lock | unlock [PIN]  a door lock by key (no PIN) or at its keypad (LockOperation
                                   event with source Manual or Keypad)
              press [single|double|long|N]
                                   a momentary switch (Switch events: InitialPress,
                                   ShortRelease, MultiPressComplete, LongPress, …)
              button               a light's or plug's own button: toggles it
              dim PERCENT          a light's dimmer, 0 to 100 (0 turns it off)
              cord open|close|stop a blind's cord or wall control
              dial C               a thermostat's dial: the setpoint of its mode, in °C
              humidity %, light LUX, pressure KPA, flow M3H
                                   a humidity, light, pressure or flow sensor's reading
              co2 PPM, pm25 UGM3, pm10 UGM3, tvoc PPB
                                   an air-quality sensor's concentration (its Air
                                   Quality follows)
              air good|fair|moderate|poor|very-poor|extremely-poor
                                   the air as a sensor without concentrations grades it
              fan off|low|medium|high|auto|PERCENT
                                   a fan's own buttons or remote
              replace hepa|carbon  a purifier's worn filter swapped for a new one
              smoke | co [warning|critical]
                                   smoke or carbon monoxide at a smoke/CO alarm (SmokeAlarm,
                                   COAlarm events; ExpressedState)
              clear | test | mute  the air clears (AllClear), its test button (a self-test),
                                   its hush button (AlarmMuted)
              interconnect smoke|co|clear
                                   another alarm of the home's interconnect sounds a smoke
                                   or CO warning, or they all stop (InterconnectSmokeAlarm,
                                   InterconnectCOAlarm; ExpressedState)
              leak | dry           water at a leak detector, or dry again (Boolean State;
                                   StateChange, AlarmsStateChanged)
              battery PERCENT      a battery at that charge (Power Source BatPercentRemaining)
              unplug | plug N      the device behind a bridge's endpoint N (Bridged Device
                                   Basic Information Reachable; ReachableChanged event)
              remove-bridged | add-bridged N
                                   a bridged device leaves the bridge (Leave event; its
                                   endpoint leaves the PartsLists) or comes back
              valve open|close     a water valve's lever (CurrentState; ValveStateChanged)
              fault KIND|none      a fault at a water valve: general, blocked, leaking,
                                   not-connected, short-circuit, current-exceeded (ValveFault)
              vacuum start|pause|home
                                   a robot vacuum's buttons (RVC Run Mode, Operational State)
              vacuum stuck|dust-bin-full|wheels-jammed|…
                                   a problem at it (Error; OperationalError event)
              vacuum clear|dock    a person frees it (then Paused), or puts it on its dock
              pump blocked|dry|clear
                                   a pump's impeller jams or it runs dry (PumpBlocked,
                                   DryRunning; it stops), or the fault is put right
            The node changes its own state, so every controller sees it as an ordinary
            report or event. NODE is a serial number, a device name or `all`; the socket
            is found as for `matter-sim fault`.
            """)

    @Option(help: ArgumentHelp("The simulator's control socket.", valueName: "path"))
    var control: String?

    @Argument(help: ArgumentHelp("A serial number, a device name, or `all`.", valueName: "node"))
    var node: String

    @Argument(
        help: ArgumentHelp(
            "open, close, occupied, unoccupied, temperature, press, lock, unlock, button, dim, cord, dial, humidity, light, "
                + "pressure, flow, co2, pm25, pm10, tvoc, air, fan, replace, smoke, co, clear, test, mute, leak, dry, battery, "
                + "unplug, plug, remove-bridged, add-bridged, valve, fault, vacuum or pump.", valueName: "action"))
    var action: String

    @Argument(
        help: ArgumentHelp(
            "The action's value: a temperature in °C, how to press, a keypad PIN, a dimmer percent, a cord pull, a reading, a fan "
                + "setting, a filter, a valve's lever, a fault, a vacuum's button or problem or a pump's fault.", valueName: "value"))
    var value: String?

    func validate() throws {
        if case .failure(let error) = PhysicalActionName.parse(action, value: value) { throw ValidationError(error.description) }
        guard !node.isEmpty else { throw ValidationError("NODE is empty; give a serial number, a device name or `all`.") }
    }

    func run() async throws {
        try await ControlClient.run(ControlRequest(node: node, action: action, value: value), control: control, label: action)
    }
}

/// `dustBinFull` → `dust-bin-full`: an enum case as a command line spells it.
private func kebab(_ name: String) -> String {
    name.reduce(into: "") { out, character in
        if character.isUppercase { out += "-" + character.lowercased() } else { out.append(character) }
    }
}
