import MatterModel
import MatterTLV

// The plain description a node is built from. The profile loader fills these from
// YAML; the node validates them against the model when it is constructed.

public struct NodeDescription: Sendable, Hashable {
    public var endpoints: [EndpointDescription]

    public init(endpoints: [EndpointDescription]) {
        self.endpoints = endpoints
    }
}

/// One endpoint (Core spec 9.2 "Endpoint").
public struct EndpointDescription: Sendable, Hashable {
    public var number: EndpointNumber
    public var deviceTypes: [DeviceTypeInstance]
    public var serverClusters: [ClusterInstanceDescription]
    public var clientClusters: [ClusterID]
    /// The endpoint this one is a part of in a composed device (Core spec 9.2.1
    /// "Endpoint Composition"). nil places it directly under the root node.
    public var parent: EndpointNumber?

    public init(
        number: EndpointNumber,
        deviceTypes: [DeviceTypeInstance],
        serverClusters: [ClusterInstanceDescription],
        clientClusters: [ClusterID] = [],
        parent: EndpointNumber? = nil
    ) {
        self.number = number
        self.deviceTypes = deviceTypes
        self.serverClusters = serverClusters
        self.clientClusters = clientClusters
        self.parent = parent
    }
}

/// A device type an endpoint implements, with the revision it conforms to.
public struct DeviceTypeInstance: Sendable, Hashable {
    public var id: DeviceTypeID
    public var revision: UInt16

    public init(id: DeviceTypeID, revision: UInt16) {
        self.id = id
        self.revision = revision
    }
}

/// A server cluster on an endpoint.
public struct ClusterInstanceDescription: Sendable, Hashable {
    public var id: ClusterID
    /// Enabled feature codes, as the spec names them ("LT", "OO", "PA_LF").
    public var features: Set<String>
    /// Initial (or persisted) attribute values; missing ones take the cluster's defaults.
    public var attributes: [AttributeID: TLVValue]
    public var behavior: ClusterBehavior
    /// Global attributes served as given instead of derived (a clone of a real device).
    public var served: ServedGlobals
    /// Attributes served exactly as given, unchecked by the model: manufacturer-specific
    /// ones, and values a real device holds that the model's constraints would reject.
    public var rawAttributes: [AttributeID: TLVValue]

    public init(
        id: ClusterID,
        features: Set<String> = [],
        attributes: [AttributeID: TLVValue] = [:],
        behavior: ClusterBehavior = ClusterBehavior(),
        served: ServedGlobals = ServedGlobals(),
        rawAttributes: [AttributeID: TLVValue] = [:]
    ) {
        self.id = id
        self.features = features
        self.attributes = attributes
        self.behavior = behavior
        self.served = served
        self.rawAttributes = rawAttributes
    }
}

/// Simulation settings that the spec leaves to the physical device.
public struct ClusterBehavior: Sendable, Hashable {
    /// Window covering: how fast the lift moves.
    public var liftSpeed: MotionSpeed?
    /// Window covering: how fast the tilt moves.
    public var tiltSpeed: MotionSpeed?

    /// A measurement cluster: where its reading comes from besides `act` (a constant otherwise).
    public var reading: SensorReading?
    /// Thermostat: how the room it sits in warms, cools and leaks heat.
    public var room: RoomModel?
    /// Fan Control: how fast the motor changes speed (PercentCurrent toward the setting); nil,
    /// it runs at the setting at once.
    public var fanAcceleration: MotionSpeed?

    public init(
        liftSpeed: MotionSpeed? = nil, tiltSpeed: MotionSpeed? = nil, reading: SensorReading? = nil, room: RoomModel? = nil,
        fanAcceleration: MotionSpeed? = nil
    ) {
        self.liftSpeed = liftSpeed
        self.tiltSpeed = tiltSpeed
        self.reading = reading
        self.room = room
        self.fanAcceleration = fanAcceleration
    }
}

/// A thermostat's room: every `tick` the room warms by `heatingStep` while the thermostat
/// heats, cools by `coolingStep` while it cools, and otherwise moves `leakPercent` of the way
/// toward OutdoorTemperature (steps in hundredths of a degree).
public struct RoomModel: Sendable, Hashable {
    public var tick: Duration
    public var heatingStep: Int64
    public var coolingStep: Int64
    public var leakPercent: Int64

    public init(tick: Duration = .seconds(30), heatingStep: Int64 = 10, coolingStep: Int64 = 10, leakPercent: Int64 = 2) {
        self.tick = tick
        self.heatingStep = heatingStep
        self.coolingStep = coolingStep
        self.leakPercent = leakPercent
    }
}

/// How a sensor's reading changes on its own, on the node clock, in the cluster's unit
/// (degrees Celsius for Temperature Measurement). A reading forced with `act` holds until the
/// next scheduled point, or for one step of the walk, which then goes on from it.
public enum SensorReading: Sendable, Hashable {
    /// Values at times since the node started; after `repeatEvery` the schedule starts over.
    case schedule([SchedulePoint], repeatEvery: Duration?)
    /// Every `every`, a move of up to `step` either way (uniform), kept within `range`. The
    /// seed makes a device's walk the same on every run.
    case randomWalk(every: Duration, step: Double, range: ClosedRange<Double>, seed: UInt64)

    public struct SchedulePoint: Sendable, Hashable {
        public var at: Duration
        public var value: Double
        public init(at: Duration, value: Double) {
            self.at = at
            self.value = value
        }
    }
}

/// The speed of a simulated actuator over its full travel (0 to 100.00 %).
public enum MotionSpeed: Sendable, Hashable {
    /// Percent100ths per second: 1000 is 10 %/s.
    case percent100thsPerSecond(UInt32)
    /// Time from fully open to fully closed.
    case fullTravel(Duration)

    /// Percent100ths per second, at least 1 so motion always ends.
    var percent100thsPerSecond: Int64 {
        switch self {
        case .percent100thsPerSecond(let speed):
            return max(1, Int64(speed))
        case .fullTravel(let duration):
            let milliseconds = duration.totalMilliseconds
            guard milliseconds > 0 else { return 10_000_000 }
            return max(1, 10_000 * 1000 / milliseconds)
        }
    }
}

/// A description the node cannot be built from, with where in it the problem is.
public struct NodeDescriptionError: Error, Hashable, CustomStringConvertible {
    /// Where in the description, e.g. "endpoint 1 / cluster 0x0008 / attribute 0x0000".
    public var path: String
    public var message: String

    public init(path: String, message: String) {
        self.path = path
        self.message = message
    }

    public var description: String { "\(path): \(message)" }
}

extension Duration {
    /// Whole milliseconds, saturating instead of trapping.
    var totalMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow1) = seconds.multipliedReportingOverflow(by: 1000)
        let (total, overflow2) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if overflow1 || overflow2 { return seconds < 0 ? .min : .max }
        return total
    }

    /// Whole tenths of a second, rounded up and never negative: a RemainingTime that reaches 0
    /// only when the transition is over.
    var tenthsRoundedUp: Int64 {
        (max(0, totalMilliseconds) + 99) / 100
    }

    /// From tenths of a second, the unit of Matter transition times.
    static func tenths(_ value: some BinaryInteger) -> Duration {
        // Matter times are uint16 tenths; clamp so a bad value cannot overflow.
        .milliseconds(Int64(clamping: value).clamped(to: 0...Int64(UInt16.max)) * 100)
    }
}

extension Comparable {
    func clamped(to range: ClosedRange<Self>) -> Self {
        min(max(self, range.lowerBound), range.upperBound)
    }
}
