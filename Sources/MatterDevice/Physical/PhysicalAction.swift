import MatterModel

/// What a person does at a device: it changes the node's state locally, so every
/// controller sees it as an ordinary report or event (`matter-sim act`).
public enum PhysicalAction: Sendable, Hashable, CustomStringConvertible {
    /// A contact sensor's magnet: `true` when the door or window closes (contact), `false`
    /// when it opens (BooleanState StateValue, as the Contact Sensor device type reads it).
    case contact(Bool)
    /// Someone walks into (`true`) or leaves (`false`) the room of an occupancy sensor.
    case occupancy(Bool)
    /// The room's temperature as a temperature sensor reads it, in °C.
    case temperature(Double)
    /// A momentary switch is pressed: once, several times in a row, or held.
    case press(SwitchPress)
    /// A door lock is locked or unlocked by hand: with the key or thumb turn (nil), or at its
    /// keypad with a user's PIN.
    case lock(code: String?)
    case unlock(code: String?)
    /// A light's or a plug's own button: a press toggles it, as Toggle does.
    case toggle
    /// A dimmer turned to a brightness in percent (0 turns the light off), as
    /// MoveToLevelWithOnOff does with the light's own transition time.
    case dim(percent: Double)
    /// A blind's cord or wall control: open, close, or stop where it is.
    case cord(CordPull)
    /// A thermostat's dial turned to a temperature in °C: the setpoint of the mode it is in.
    case dial(celsius: Double)
    /// The air's relative humidity as a humidity sensor reads it, in %.
    case humidity(Double)
    /// The light falling on a light sensor, in lux.
    case illuminance(Double)
    /// The pressure at a pressure sensor, in kPa.
    case pressure(Double)
    /// The flow through a flow sensor, in m³/h.
    case flow(Double)
    /// A substance's concentration at an air-quality sensor, in its unit (ppm, µg/m³, ppb).
    case concentration(Substance, Double)
    /// The air as a sensor without concentration readings grades it.
    case airQuality(Clusters.AirQuality.AirQualityEnum)
    /// A fan's own buttons or remote: a speed mode, or a speed in percent.
    case fan(FanSetting)
    /// A worn filter swapped for a new one (its ResetCondition, by hand).
    case replaceFilter(FilterKind)
    /// Smoke or CO at a smoke/CO alarm, the air clearing, its test or hush button.
    case alarm(AlarmSense)
    /// Water reaches a leak detector (`true`) or dries off (`false`): Boolean State StateValue.
    case leak(Bool)
    /// A battery at this charge, in percent, is put in.
    case battery(percent: Double)
    /// The device behind a bridge's endpoint is unplugged (`false`) or plugged back in (`true`).
    case bridged(endpoint: EndpointNumber, reachable: Bool)
    /// A bridged device is removed from its bridge (`false`: its endpoint leaves the bridge's
    /// PartsList) or added back (`true`).
    case bridgedPresence(endpoint: EndpointNumber, present: Bool)
    /// A water valve's lever, or a fault at it (Valve Configuration and Control).
    case valve(ValveAction)
    /// A robot vacuum's buttons, an error at it, or a person carrying it (RVC Operational State).
    case vacuum(VacuumAction)
    /// A fault at a pump, or its repair (Pump Configuration and Control).
    case pump(PumpAction)

    public var description: String {
        switch self {
        case .contact(let closed): closed ? "close (contact)" : "open (no contact)"
        case .occupancy(let occupied): occupied ? "occupied" : "unoccupied"
        case .temperature(let celsius): "temperature \(celsius) °C"
        case .press(let press): "press \(press)"
        case .lock(let code): code == nil ? "lock" : "lock at the keypad"
        case .unlock(let code): code == nil ? "unlock" : "unlock at the keypad"
        case .toggle: "press its button"
        case .dim(let percent): "turn its dimmer to \(percent) %"
        case .cord(let pull): "pull the cord to \(pull)"
        case .dial(let celsius): "turn the dial to \(celsius) °C"
        case .humidity(let percent): "humidity \(percent) %"
        case .illuminance(let lux): "light \(lux) lx"
        case .pressure(let kilopascals): "pressure \(kilopascals) kPa"
        case .flow(let rate): "flow \(rate) m³/h"
        case .concentration(let substance, let value): "\(substance) \(value) \(substance.unitName)"
        case .airQuality(let grade): "air quality \(grade)"
        case .fan(let setting): "set the fan to \(setting)"
        case .replaceFilter(let kind): "replace the \(kind) filter"
        case .alarm(let sense): sense.description
        case .leak(let wet): wet ? "water (leak)" : "dry"
        case .battery(let percent): "put in a battery at \(percent) %"
        case .bridged(let endpoint, let reachable): reachable ? "plug in bridged device \(endpoint)" : "unplug bridged device \(endpoint)"
        case .bridgedPresence(let endpoint, let present): present ? "add bridged device \(endpoint)" : "remove bridged device \(endpoint)"
        case .valve(let action): action.description
        case .vacuum(let action): action.description
        case .pump(let action): action.description
        }
    }

    /// The clusters that carry out the action, in order: a light switch has no Switch or Level
    /// Control server, and its press and dimmer go out through its Binding.
    public var clusters: [ClusterID] {
        switch self {
        case .press, .dim, .toggle: [cluster, BindingServer.clusterID]
        default: [cluster]
        }
    }

    /// The endpoint the action names itself (a bridged device), else nil: the first that can.
    public var endpoint: EndpointNumber? {
        switch self {
        case .bridged(let endpoint, _), .bridgedPresence(let endpoint, _): endpoint
        default: nil
        }
    }

    /// The cluster that carries out the action.
    public var cluster: ClusterID {
        switch self {
        case .contact: BooleanStateServer.clusterID
        case .occupancy: OccupancySensingServer.clusterID
        case .temperature: TemperatureMeasurementServer.clusterID
        case .press: SwitchServer.clusterID
        case .lock, .unlock: DoorLockServer.clusterID
        case .toggle: OnOffServer.clusterID
        case .dim: LevelControlServer.clusterID
        case .cord: WindowCoveringServer.clusterID
        case .dial: ThermostatServer.clusterID
        case .humidity: RelativeHumidityMeasurementServer.clusterID
        case .illuminance: IlluminanceMeasurementServer.clusterID
        case .pressure: PressureMeasurementServer.clusterID
        case .flow: FlowMeasurementServer.clusterID
        case .concentration(let substance, _): substance.clusterID
        case .airQuality: AirQualityServer.clusterID
        case .fan: FanControlServer.clusterID
        case .replaceFilter(let kind): kind.clusterID
        case .alarm: SmokeCoAlarmServer.clusterID
        case .leak: BooleanStateServer.clusterID
        case .battery: PowerSourceServer.clusterID
        case .bridged, .bridgedPresence: BridgedDeviceBasicInformationServer.clusterID
        case .valve: ValveConfigurationAndControlServer.clusterID
        case .vacuum: RvcOperationalStateServer.clusterID
        case .pump: PumpConfigurationAndControlServer.clusterID
        }
    }
}

/// What a fan is set to at the device.
public enum FanSetting: Sendable, Hashable, CustomStringConvertible {
    case mode(Clusters.FanControl.FanModeEnum)
    case percent(UInt8)

    public var description: String {
        switch self {
        case .mode(let mode): "\(mode)"
        case .percent(let percent): "\(percent) %"
        }
    }
}

/// Which way a blind's cord is pulled.
public enum CordPull: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case open, close, stop
    public var description: String { rawValue }
}

/// How a switch is pressed.
public enum SwitchPress: Sendable, Hashable, CustomStringConvertible {
    /// `count` short presses in a row (1: single, 2: double).
    case short(count: Int)
    /// One press held past the long-press threshold.
    case long

    public static let single = SwitchPress.short(count: 1)
    public static let double = SwitchPress.short(count: 2)

    public var description: String {
        switch self {
        case .short(1): "single"
        case .short(2): "double"
        case .short(let count): "\(count) times"
        case .long: "long"
        }
    }
}

/// Why an action could not be carried out.
public struct PhysicalActionError: Error, Sendable, Hashable, CustomStringConvertible {
    public var description: String
    /// The device can do this, only not in its present state (a hush button pressed at a
    /// critical alarm): the press happened, nothing came of it.
    public var inState: Bool
    public init(_ description: String, inState: Bool = false) {
        self.description = description
        self.inState = inState
    }
}

/// A cluster server a person can operate at the device.
protocol PhysicallyOperable: ClusterServer {
    /// Carries out the action; throws when this instance cannot (a feature it lacks).
    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError)
}

/// A server of one specific cluster that a person can operate.
protocol PhysicallyOperated: StandardClusterServer, PhysicallyOperable {}
