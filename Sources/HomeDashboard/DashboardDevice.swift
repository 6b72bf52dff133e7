import Foundation
import MatterDevice
import MatterModel
import MatterTLV

/// One running node as the dashboard shows it: where it is in the home, how it pairs, and
/// the server whose store, sessions, subscriptions and traffic it follows.
public struct DashboardDevice: Sendable {
    public var name: String
    public var serialNumber: String
    public var structure: String
    public var room: String?
    public var deviceTypes: [String]
    public var manualCode: String
    /// The `MT:` onboarding payload the QR code carries.
    public var qrPayload: String
    public var server: NodeServer
    /// The node's routes now (LAN, relay, power), read on each push.
    public var route: @Sendable () -> DashboardRoute

    public init(
        name: String, serialNumber: String, structure: String, room: String?, deviceTypes: [String], manualCode: String, qrPayload: String,
        server: NodeServer, route: @escaping @Sendable () -> DashboardRoute
    ) {
        self.name = name
        self.serialNumber = serialNumber
        self.structure = structure
        self.room = room
        self.deviceTypes = deviceTypes
        self.manualCode = manualCode
        self.qrPayload = qrPayload
        self.server = server
        self.route = route
    }
}

/// A node's routes: the LAN link, the cloud relay link (nil without one), and its power.
public struct DashboardRoute: Sendable, Codable, Hashable {
    public var lan: Bool
    public var power: Bool
    /// Connected to the relay; nil when the node has no relay.
    public var cloud: Bool?
    /// The relay link in words ("cloud connected", "cloud down").
    public var cloudStatus: String?

    public init(lan: Bool, power: Bool, cloud: Bool?, cloudStatus: String?) {
        self.lan = lan
        self.power = power
        self.cloud = cloud
        self.cloudStatus = cloudStatus
    }
}

/// What the page asks for when a button is pressed: a fault or an act, by the control
/// socket's names. The answer is an error message, or nil when it applied.
public typealias DashboardAction = @Sendable (_ serialNumber: String, _ action: String, _ value: String?) async -> String?

/// A JSON value for an attribute, as the page formats it.
enum JSONValue: Codable, Sendable, Hashable {
    case number(Double)
    case bool(Bool)
    case string(String)
    case null

    init(_ value: TLVValue) {
        switch value {
        case .signed(let v): self = .number(Double(v))
        case .unsigned(let v): self = .number(Double(v))
        case .float(let v): self = .number(Double(v))
        case .double(let v): self = .number(v)
        case .bool(let v): self = .bool(v)
        case .utf8(let v): self = .string(v)
        case .null: self = .null
        case .bytes(let b): self = .string(b.map { String(format: "%02x", $0) }.joined())
        default: self = .string("\(value)")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .number(let v): try c.encode(v)
        case .bool(let v): try c.encode(v)
        case .string(let v): try c.encode(v)
        case .null: try c.encodeNil()
        }
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else {
            self = .string(try c.decode(String.self))
        }
    }
}

/// The attributes a device card shows: the ones a person looks at, by cluster.
enum ShownAttributes {
    static let byCluster: [String: [String]] = [
        "BasicInformation": ["NodeLabel"],
        "OnOff": ["OnOff"],
        "LevelControl": ["CurrentLevel"],
        "WindowCovering": ["CurrentPositionLiftPercent100ths", "TargetPositionLiftPercent100ths", "CurrentPositionTiltPercent100ths"],
        "ColorControl": ["ColorMode", "CurrentHue", "CurrentSaturation", "ColorTemperatureMireds", "CurrentX", "CurrentY"],
        "Thermostat": ["LocalTemperature", "OccupiedHeatingSetpoint", "OccupiedCoolingSetpoint", "SystemMode", "ThermostatRunningState"],
        "DoorLock": ["LockState"],
        "BooleanState": ["StateValue"],
        "OccupancySensing": ["Occupancy"],
        "TemperatureMeasurement": ["MeasuredValue"],
        "Switch": ["CurrentPosition"],
        "FanControl": ["FanMode", "PercentCurrent"],
        "RelativeHumidityMeasurement": ["MeasuredValue"],
        "IlluminanceMeasurement": ["MeasuredValue"],
        "PressureMeasurement": ["MeasuredValue"],
        "FlowMeasurement": ["MeasuredValue"],
        "AirQuality": ["AirQuality"],
        "CarbonDioxideConcentrationMeasurement": ["MeasuredValue"],
        "Pm25ConcentrationMeasurement": ["MeasuredValue"],
        "Pm10ConcentrationMeasurement": ["MeasuredValue"],
        "TotalVolatileOrganicCompoundsConcentrationMeasurement": ["MeasuredValue"],
        "HepaFilterMonitoring": ["Condition"],
        "ActivatedCarbonFilterMonitoring": ["Condition"],
        "SmokeCoAlarm": ["ExpressedState", "SmokeState", "COState", "TestInProgress"],
        "BooleanStateConfiguration": ["AlarmsActive"],
        "PowerSource": ["BatPercentRemaining"],
        "BridgedDeviceBasicInformation": ["Reachable"],
        "ValveConfigurationAndControl": ["CurrentState", "CurrentLevel", "RemainingDuration"],
        "RvcOperationalState": ["OperationalState", "CurrentPhase"],
        "RvcRunMode": ["CurrentMode"],
        "RvcCleanMode": ["CurrentMode"],
        "PumpConfigurationAndControl": ["EffectiveOperationMode", "Speed", "PumpStatus"],
    ]

    /// The shown attribute paths of a node, with their names.
    static func paths(of composition: NodeComposition, model: MatterModel) -> [AttributePath: (cluster: String, attribute: String)] {
        var shown: [AttributePath: (String, String)] = [:]
        for endpoint in composition.endpoints {
            for cluster in composition.clusters(on: endpoint) {
                guard let definition = model.cluster(cluster), let names = byCluster[definition.name] else { continue }
                if definition.name == "BasicInformation", endpoint != 0 { continue }
                for name in names {
                    guard let attribute = definition.attribute(named: name),
                        composition.attributes(of: ClusterPath(endpoint: endpoint, cluster: cluster)).contains(attribute.id)
                    else { continue }
                    shown[AttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute.id)] = (definition.name, name)
                }
            }
        }
        return shown
    }

    /// The acts a node's clusters allow, by the control socket's names.
    static func acts(of composition: NodeComposition, model: MatterModel) -> [String] {
        let names = Set(composition.endpoints.flatMap { composition.clusters(on: $0) }.compactMap { model.cluster($0)?.name })
        var acts: [String] = []
        if names.contains("OnOff") { acts.append("button") }
        if names.contains("LevelControl") { acts.append("dim") }
        if names.contains("WindowCovering") { acts.append("cord") }
        if names.contains("Thermostat") { acts.append("dial") }
        if names.contains("DoorLock") { acts += ["lock", "unlock"] }
        // A leak detector (Boolean State with its alarm) gets wet or dries; a contact opens or closes.
        if names.contains("BooleanState") { acts += names.contains("BooleanStateConfiguration") ? ["leak", "dry"] : ["open", "close"] }
        if names.contains("OccupancySensing") { acts += ["occupied", "unoccupied"] }
        if names.contains("TemperatureMeasurement"), !names.contains("Thermostat") { acts.append("temperature") }
        if names.contains("Switch") { acts.append("press") }
        if names.contains("FanControl") { acts.append("fan") }
        let readings: [(cluster: String, act: String)] = [
            ("RelativeHumidityMeasurement", "humidity"), ("IlluminanceMeasurement", "light"), ("PressureMeasurement", "pressure"),
            ("FlowMeasurement", "flow"), ("CarbonDioxideConcentrationMeasurement", "co2"), ("Pm25ConcentrationMeasurement", "pm25"),
            ("Pm10ConcentrationMeasurement", "pm10"), ("TotalVolatileOrganicCompoundsConcentrationMeasurement", "tvoc"),
        ]
        acts += readings.filter { names.contains($0.cluster) }.map(\.act)
        if names.contains("HepaFilterMonitoring") || names.contains("ActivatedCarbonFilterMonitoring") { acts.append("replace") }
        // A light switch: its press goes to the lights its Binding names (a dimmer's dial too).
        if names.contains("Binding"), !names.contains("Switch") { acts += names.contains("LevelControl") ? ["press"] : ["press", "dim"] }
        if names.contains("SmokeCoAlarm") { acts += ["smoke", "co", "clear", "test"] }
        if names.contains("PowerSource") { acts.append("battery") }
        if names.contains("BridgedDeviceBasicInformation") { acts += ["unplug", "plug", "remove-bridged", "add-bridged"] }
        if names.contains("ValveConfigurationAndControl") { acts.append("valve") }
        if names.contains("RvcOperationalState") { acts.append("vacuum") }
        if names.contains("PumpConfigurationAndControl") { acts.append("pump") }
        return acts
    }
}
