import ArgumentParser
import Foundation
import HomeAPI
import HomeRelayLink
import MatterController
import MatterCrypto
import NIOCore
import OpenCombine

/// homectl: drive a home and its Matter devices from the command line.
@main
struct HomeCtl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "homectl",
        abstract: "Commission and control Matter devices in a home graph.",
        subcommands: [
            Discover.self, Commission.self, Structures.self, Rooms.self, Devices.self, Get.self, On.self, Off.self,
            Toggle.self, Lock.self, Unlock.self, Level.self, Cover.self, Fan.self, Valve.self, Vacuum.self, SelfTest.self, Rename.self, RoomCommand.self, Watch.self,
            Bench.self,
            HubCommand.self,
            FleetBench.self, Soak.self, AutomationsCommand.self, GroupCommand.self, Dump.self,
        ])
}

/// Options every command takes.
/// A number of seconds from the command line: finite, not negative, at most a day. A plain
/// `Double` lets `inf`, `nan` or `1e300` through to the `Duration` and `Int64` conversions,
/// which trap; this refuses them with the option's name and what is expected.
struct Seconds: ExpressibleByArgument, Sendable, Comparable {
    static let limit: Double = 86_400
    let value: Double

    init(_ value: Double) { self.value = value }

    init?(argument: String) {
        guard let value = Double(argument), value.isFinite, (0...Self.limit).contains(value) else { return nil }
        self.value = value
    }

    var duration: Duration { .milliseconds(Int64((value * 1000).rounded())) }
    var defaultValueDescription: String { String(format: "%g", value) }
    static var defaultCompletionKind: CompletionKind { .default }
    static func < (a: Seconds, b: Seconds) -> Bool { a.value < b.value }
}

struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The home database (default: $HOMECTL_HOME or ~/.homectl/home.sqlite); for `commission`, a home profile (.yaml).",
            discussion: "A .yaml or .yml file is a home profile, not a database: then give the database with --database."))
    var home: String?

    @Option(name: .long, help: "The home database, when --home names a home profile.")
    var database: String?

    @Flag(name: .long, help: "Print JSON instead of tables.")
    var json = false

    @Option(name: .long, help: "Directory of trusted PAA certificates for device attestation.")
    var paaTrustStore: String?

    @Flag(name: .long, help: "Commission devices whose attestation is not trusted.")
    var allowUntrusted = false

    @Option(name: .long, help: "Seconds any device operation may take (0...86400).")
    var timeout = Seconds(10)

    @Flag(
        name: .long, inversion: .prefixedNo,
        help: "Find devices that moved (a new address or port) by operational DNS-SD (_matter._tcp).")
    var dnssd = true

    @Option(name: .long, help: "The cloud relay's base URL (ws://host:port); needs its home token (--relay-token-file).")
    var relay: String?

    @Option(
        name: .long, help: "A file holding the home token the relay knows this home by (else $\(Self.relayTokenVariable)).",
        transform: CommandLineSecrets.read(file:))
    var relayTokenFile: String?

    @Option(
        name: .customLong("relay-token"),
        help: "The relay's home token on the command line, where `ps` shows it: use --relay-token-file or $\(Self.relayTokenVariable).")
    var relayTokenArgument: String?

    @Option(name: .long, help: "A hub on the LAN (matter-relay --mode hub) base URL; needs its home token (--hub-token-file).")
    var hub: String?

    @Option(
        name: .long, help: "A file holding the home token the hub accepts (else $\(Self.hubTokenVariable)).",
        transform: CommandLineSecrets.read(file:))
    var hubTokenFile: String?

    @Option(
        name: .customLong("hub-token"),
        help: "The hub's home token on the command line, where `ps` shows it: use --hub-token-file or $\(Self.hubTokenVariable).")
    var hubTokenArgument: String?

    static let relayTokenVariable = "HOMECTL_RELAY_TOKEN"
    static let hubTokenVariable = "HOMECTL_HUB_TOKEN"

    /// The tokens: an option's, else the environment's.
    var relayToken: String? { relayTokenArgument ?? relayTokenFile ?? CommandLineSecrets.environment(Self.relayTokenVariable) }
    var hubToken: String? { hubTokenArgument ?? hubTokenFile ?? CommandLineSecrets.environment(Self.hubTokenVariable) }

    @Option(name: .long, help: "Routing policy: preferLocal (default), localOnly or cloudOnly.")
    var policy: String = RoutingPolicy.preferLocal.rawValue

    func validate() throws {
        for (name, url, argument, file, token, variable) in [
            ("relay", relay, relayTokenArgument, relayTokenFile, relayToken, Self.relayTokenVariable),
            ("hub", hub, hubTokenArgument, hubTokenFile, hubToken, Self.hubTokenVariable),
        ] {
            if argument != nil, file != nil {
                throw ValidationError("--\(name)-token and --\(name)-token-file: give the token once (the file)")
            }
            if url == nil, argument != nil || file != nil { throw ValidationError("--\(name)-token(-file) is for --\(name)") }
            if url != nil, token == nil {
                throw ValidationError("--\(name) needs its home token: --\(name)-token-file FILE or $\(variable)")
            }
        }
        for (name, url) in [("--relay", relay), ("--hub", hub)] {
            if let url, !(url.hasPrefix("ws://") || url.hasPrefix("wss://")) {
                throw ValidationError("\(name) '\(url)': expected a ws:// or wss:// URL")
            }
        }
        guard RoutingPolicy(rawValue: policy) != nil else {
            throw ValidationError("--policy '\(policy)': expected one of \(RoutingPolicy.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    /// `--home` when it names a home profile (YAML) rather than a database.
    var homeProfile: String? {
        guard let home, [".yaml", ".yml"].contains(where: { home.lowercased().hasSuffix($0) }) else { return nil }
        return home
    }

    var databaseURL: URL {
        if let database { return URL(fileURLWithPath: database) }
        if let home, homeProfile == nil { return URL(fileURLWithPath: home) }
        if let env = ProcessInfo.processInfo.environment["HOMECTL_HOME"] { return URL(fileURLWithPath: env) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".homectl/home.sqlite")
    }

    func open(live: Bool = false) async throws -> Home {
        var c = HomeConfiguration()
        c.commandTimeout = Seconds(max(0.5, timeout.value)).duration
        c.responseTimeout = Seconds(max(0.5, timeout.value / 2)).duration
        c.paaTrustStore = paaTrustStore.map { URL(fileURLWithPath: $0) }
        c.allowUntrustedAttestation = allowUntrusted
        c.connectDevices = live
        c.useDNSSD = dnssd
        c.relayLinks = HomeRelayLinks.webSocket
        if let relay, let relayToken { c.relay = RelayEndpoint(url: relay, homeToken: relayToken) }
        if let hub, let hubToken { c.hub = RelayEndpoint(url: hub, homeToken: hubToken) }
        c.routingPolicy = RoutingPolicy(rawValue: policy) ?? .preferLocal
        return try await Home.open(at: databaseURL, configuration: c)
    }
}

// MARK: - Output

enum Output {
    static func json<T: Encodable>(_ value: T) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        if let data = try? encoder.encode(value), let text = String(data: data, encoding: .utf8) { print(text) }
    }

    static func table(_ header: [String], _ rows: [[String]]) {
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }.joined(separator: "  ")
        }
        print(line(header))
        print(line(widths.map { String(repeating: "-", count: $0) }))
        for row in rows { print(line(row)) }
    }
}

struct DeviceSummary: Codable {
    var id: String
    var name: String
    var structure: String?
    var room: String?
    var types: [String]
    var connectivity: String
    var locality: String
    var deviceTypes: [DeviceTypeSummary]
    var state: [String: String]
}

struct DeviceTypeSummary: Codable {
    var type: String
    var primary: Bool
    var connectivity: String
    var locality: String
    var traits: [TraitSummary]
}

struct TraitSummary: Codable {
    var trait: String
    var connectivity: String
    var locality: String
}

/// Short names of the device types and traits homectl shows: the Swift type's name without
/// its `DeviceType` or `Trait` suffix (`ColorTemperatureLight`, `ColorControl`), so every
/// generated type has one.
func typeName(_ type: any DeviceType) -> String {
    shortName(Swift.type(of: type), suffix: "DeviceType") ?? Swift.type(of: type).identifier
}

func traitName(_ trait: any Trait) -> String {
    shortName(Swift.type(of: trait), suffix: "Trait") ?? Swift.type(of: trait).identifier
}

private func shortName(_ type: Any.Type, suffix: String) -> String? {
    let name = String(describing: type)
    guard name.hasSuffix(suffix), name.count > suffix.count else { return nil }
    return String(name.dropLast(suffix.count))
}

/// Connectivity and locality of each device type and trait.
func deviceTypeSummaries(_ types: DeviceTypeCollection) -> [DeviceTypeSummary] {
    types.all.map { type in
        let c = type.metadata.sourceConnectivity
        return DeviceTypeSummary(
            type: typeName(type), primary: type.metadata.isPrimaryType, connectivity: c.connectivityState.rawValue,
            locality: c.dataSourceLocality.rawValue,
            traits: type.traits.all.map { t in
                TraitSummary(
                    trait: traitName(t), connectivity: t.metadata.sourceConnectivity.connectivityState.rawValue,
                    locality: t.metadata.sourceConnectivity.dataSourceLocality.rawValue)
            })
    }
}

func typeNames(_ device: HomeDevice) -> [String] {
    device.types.all.all.map(typeName)
}

/// The trait state of a device, as text.
func stateOf(_ types: DeviceTypeCollection) -> [String: String] {
    var state: [String: String] = [:]
    for type in types.all {
        let traits = type.traits
        if let t = traits[Matter.OnOffTrait.self], let v = t.attributes.onOff { state["onOff"] = v ? "on" : "off" }
        if let t = traits[Matter.LevelControlTrait.self], let v = t.attributes.currentLevel { state["level"] = "\(v)" }
        if let t = traits[Matter.WindowCoveringTrait.self], let v = t.attributes.currentPositionLiftPercent100ths {
            state["lift"] = String(format: "%.2f%%", Double(v) / 100)
        }
        // The colour in the space the light is in.
        if let t = traits[Matter.ColorControlTrait.self]?.attributes {
            if t.colorMode == .colorTemperatureMireds, let v = t.colorTemperatureMireds { state["color"] = "\(v) mireds" }
            if t.colorMode == .currentXAndCurrentY, let x = t.currentX, let y = t.currentY { state["color"] = "x \(x), y \(y)" }
            if t.colorMode == .currentHueAndCurrentSaturation, let h = t.currentHue, let v = t.currentSaturation {
                state["color"] = "hue \(h), saturation \(v)"
            }
        }
        if let v = traits[Matter.DoorLockTrait.self]?.attributes.lockState { state["lock"] = "\(v)" }
        if let t = traits[Matter.ThermostatTrait.self]?.attributes {
            func celsius(_ v: Int16) -> String { String(format: "%.2f °C", Double(v) / 100) }
            if let v = t.localTemperature { state["room"] = celsius(v) }
            if let v = t.occupiedHeatingSetpoint { state["heat to"] = celsius(v) }
            if let v = t.occupiedCoolingSetpoint { state["cool to"] = celsius(v) }
            if let v = t.systemMode { state["mode"] = "\(v)" }
        }
        if let v = traits[Matter.BooleanStateTrait.self]?.attributes.stateValue {
            // A leak detector's StateValue is water detected (it has the alarm configuration);
            // a contact sensor's is the contact closed.
            if traits[Matter.BooleanStateConfigurationTrait.self] != nil { state["water"] = v ? "leak" : "dry" } else { state["contact"] = v ? "closed" : "open" }
        }
        if let v = traits[Matter.SwitchTrait.self]?.attributes.currentPosition { state["position"] = "\(v)" }
        if let v = traits[Matter.OccupancySensingTrait.self]?.attributes.occupancy {
            state["occupancy"] = v.contains(.occupied) ? "occupied" : "unoccupied"
        }
        if let v = traits[Matter.TemperatureMeasurementTrait.self]?.attributes.measuredValue {
            state["temperature"] = String(format: "%.2f °C", Double(v) / 100)
        }
        if let t = traits[Matter.FanControlTrait.self]?.attributes {
            if let v = t.fanMode { state["fan"] = "\(v)" }
            if let v = t.percentCurrent { state["fan speed"] = "\(v) %" }
        }
        if let v = traits[Matter.RelativeHumidityMeasurementTrait.self]?.attributes.measuredValue {
            state["humidity"] = String(format: "%.2f %%", Double(v) / 100)
        }
        if let v = traits[Matter.IlluminanceMeasurementTrait.self]?.attributes.measuredValue {
            state["illuminance"] = String(format: "%.0f lx", v == 0 ? 0 : pow(10, (Double(v) - 1) / 10_000))
        }
        if let v = traits[Matter.PressureMeasurementTrait.self]?.attributes.measuredValue {
            state["pressure"] = String(format: "%.1f kPa", Double(v) / 10)
        }
        if let v = traits[Matter.FlowMeasurementTrait.self]?.attributes.measuredValue {
            state["flow"] = String(format: "%.1f m³/h", Double(v) / 10)
        }
        if let v = traits[Matter.AirQualityTrait.self]?.attributes.airQuality { state["air quality"] = "\(v)" }
        if let v = traits[Matter.CarbonDioxideConcentrationMeasurementTrait.self]?.attributes.measuredValue {
            state["co2"] = String(format: "%.0f ppm", v)
        }
        if let v = traits[Matter.Pm25ConcentrationMeasurementTrait.self]?.attributes.measuredValue {
            state["pm2.5"] = String(format: "%.1f µg/m³", v)
        }
        if let v = traits[Matter.Pm10ConcentrationMeasurementTrait.self]?.attributes.measuredValue {
            state["pm10"] = String(format: "%.1f µg/m³", v)
        }
        if let v = traits[Matter.TotalVolatileOrganicCompoundsConcentrationMeasurementTrait.self]?.attributes.measuredValue {
            state["tvoc"] = String(format: "%.0f ppb", v)
        }
        if let v = traits[Matter.HepaFilterMonitoringTrait.self]?.attributes.condition { state["hepa filter"] = "\(v) %" }
        if let v = traits[Matter.ActivatedCarbonFilterMonitoringTrait.self]?.attributes.condition { state["carbon filter"] = "\(v) %" }
        if let t = traits[Matter.SmokeCoAlarmTrait.self]?.attributes {
            if let v = t.expressedState { state["alarm"] = "\(v)" }
            if let v = t.smokeState { state["smoke"] = "\(v)" }
            if let v = t.coState { state["co"] = "\(v)" }
            if t.testInProgress == true { state["self-test"] = "running" }
        }
        if let v = traits[Matter.BooleanStateConfigurationTrait.self]?.attributes.alarmsActive {
            state["alarms active"] =
                v.isEmpty
                ? "none"
                : [v.contains(.visual) ? "visual" : nil, v.contains(.audible) ? "audible" : nil]
                    .compactMap { $0 }.joined(separator: "+")
        }
        // A bridge's bulbs: each bridged device's own state, under its label.
        if let t = traits[Matter.BridgedDeviceBasicInformationTrait.self]?.attributes, let label = t.nodeLabel {
            let on = traits[Matter.OnOffTrait.self]?.attributes.onOff.map { $0 ? "on" : "off" }
            state["bridged " + label] = [on, t.reachable.map { $0 ? "reachable" : "unreachable" }].compactMap { $0 }.joined(separator: ", ")
        }
        if let t = traits[Matter.ValveConfigurationAndControlTrait.self]?.attributes {
            if let v = t.currentState { state["valve"] = "\(v)" }
            if let v = t.currentLevel { state["valve level"] = "\(v) %" }
            if let v = t.remainingDuration { state["closes in"] = "\(v) s" }
        }
        if let t = traits[Matter.PumpConfigurationAndControlTrait.self]?.attributes {
            if let v = t.effectiveOperationMode { state["pump mode"] = "\(v)" }
            if let v = t.speed { state["pump speed"] = "\(v) rpm" }
            if let v = t.pumpStatus, !v.isDisjoint(with: [.deviceFault, .supplyFault]) { state["pump fault"] = "\(v)" }
        }
        if let t = traits[Matter.RvcOperationalStateTrait.self] {
            if let v = t.attributes.operationalState { state["vacuum"] = "\(v)" }
        }
        if let t = traits[Matter.RvcRunModeTrait.self], let v = t.currentModeLabel ?? t.attributes.currentMode.map({ "\($0)" }) {
            state["run mode"] = v
        }
        if let t = traits[Matter.RvcCleanModeTrait.self], let v = t.currentModeLabel ?? t.attributes.currentMode.map({ "\($0)" }) {
            state["clean mode"] = v
        }
        if let v = traits[Matter.PowerSourceTrait.self]?.attributes.batPercentRemaining {
            state["battery"] = String(format: "%.1f%%", Double(v) / 2)
        }
        if let t = traits[Matter.BasicInformationTrait.self] {
            if let v = t.attributes.vendorName { state["vendor"] = v }
            if let v = t.attributes.productName { state["product"] = v }
            if let v = t.attributes.serialNumber { state["serial"] = v }
        }
    }
    return state
}

func summary(_ d: HomeDevice, _ home: Home, types: DeviceTypeCollection? = nil) async -> DeviceSummary {
    var structure: String?
    var room: String?
    if let id = d.structureID { structure = try? await home.structure(id: id).name }
    if let id = d.roomID { room = try? await home.room(id: id).name }
    return DeviceSummary(
        id: d.id, name: d.name, structure: structure, room: room, types: typeNames(d),
        connectivity: d.sourceConnectivity.connectivityState.rawValue,
        locality: d.sourceConnectivity.dataSourceLocality.rawValue,
        deviceTypes: deviceTypeSummaries(types ?? d.types.all),
        state: stateOf(types ?? d.types.all))
}

// MARK: - Resolution

/// A device by ID, or by a name that only one device has (case-insensitive).
func resolveDevice(_ text: String, in home: Home) async throws -> HomeDevice {
    let devices = try await home.devices().list()
    if let byID = devices.first(where: { $0.id == text }) { return byID }
    let named = devices.filter { $0.name.caseInsensitiveCompare(text) == .orderedSame }
    if named.count == 1, let only = named.first { return only }
    if named.isEmpty { throw ValidationError("no device has the ID or name '\(text)'") }
    throw ValidationError("\(named.count) devices are named '\(text)'; use an ID: \(named.map(\.id).sorted().joined(separator: ", "))")
}

func resolveStructure(_ text: String?, in home: Home, create: Bool = false) async throws -> Structure {
    let structures = try await home.structures().list()
    guard let text else {
        if structures.count == 1 { return structures.first! }
        if structures.isEmpty && create { return try await home.createStructure(name: "Home") }
        throw ValidationError("there are \(structures.count) structures; pick one with --structure")
    }
    if let s = structures.first(where: { $0.id == text || $0.name.caseInsensitiveCompare(text) == .orderedSame }) { return s }
    if create { return try await home.createStructure(name: text) }
    throw ValidationError("no structure has the ID or name '\(text)'")
}

func resolveRoom(_ text: String, in structure: Structure, create: Bool = false) async throws -> Room {
    let rooms = try await structure.rooms().list()
    if let r = rooms.first(where: { $0.id == text || $0.name.caseInsensitiveCompare(text) == .orderedSame }) { return r }
    if create { return try await structure.createRoom(name: text) }
    throw ValidationError("no room has the ID or name '\(text)' in \(structure.name)")
}

/// Runs a command body, turning HomeError into a clear message and a failing exit code.
func run(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as HomeError {
        FileHandle.standardError.write(Data("error: \(error.code.rawValue): \(error.message)\n".utf8))
        throw ExitCode(1)
    }
}
