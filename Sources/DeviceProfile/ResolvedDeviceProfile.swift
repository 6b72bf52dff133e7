// A device profile after validation: every name resolved to its ID, every cluster a
// device type requires present, defaults filled in. This is what a node is built from
// (it maps one-to-one onto MatterDevice's NodeDescription).
import MatterModel
import MatterTLV

public struct ResolvedDeviceProfile: Sendable, Hashable {
    /// Display name: the home's name for the device, else the profile's `name`, else the product name.
    public var name: String
    /// The device profile file this came from.
    public var source: String
    public var identity: DeviceIdentity
    public var commissioning: CommissioningParameters
    public var behaviour: DeviceBehaviour
    /// Sorted by endpoint number; endpoint 0 (Root Node) is always first.
    public var endpoints: [ResolvedEndpoint]
    /// The cloud relay the device connects to (its cloud-only clusters are listed per endpoint).
    public var cloud: CloudSettings

    public init(
        name: String, source: String, identity: DeviceIdentity, commissioning: CommissioningParameters,
        behaviour: DeviceBehaviour, endpoints: [ResolvedEndpoint], cloud: CloudSettings = CloudSettings()
    ) {
        self.name = name
        self.source = source
        self.identity = identity
        self.commissioning = commissioning
        self.behaviour = behaviour
        self.endpoints = endpoints
        self.cloud = cloud
    }

    /// Every cluster instance served only through the cloud relay.
    public var cloudOnlyClusters: [ClusterPath] {
        endpoints.flatMap { endpoint in endpoint.cloudOnlyClusters.map { ClusterPath(endpoint: endpoint.number, cluster: $0) } }
    }

    public func endpoint(_ number: EndpointNumber) -> ResolvedEndpoint? {
        endpoints.first { $0.number == number }
    }
}

/// The Basic Information identity of a node (Core spec 11.1).
public struct DeviceIdentity: Sendable, Hashable {
    public var vendorName: String
    public var vendorID: VendorID
    public var productName: String
    public var productID: UInt16
    public var serialNumber: String
    public var hardwareVersion: UInt16
    public var hardwareVersionString: String
    public var softwareVersion: UInt32
    public var softwareVersionString: String
    /// Given in the profile, or derived from the serial number (stable across restarts).
    public var uniqueID: String

    public init(
        vendorName: String, vendorID: VendorID, productName: String, productID: UInt16, serialNumber: String,
        hardwareVersion: UInt16, hardwareVersionString: String, softwareVersion: UInt32,
        softwareVersionString: String, uniqueID: String
    ) {
        self.vendorName = vendorName
        self.vendorID = vendorID
        self.productName = productName
        self.productID = productID
        self.serialNumber = serialNumber
        self.hardwareVersion = hardwareVersion
        self.hardwareVersionString = hardwareVersionString
        self.softwareVersion = softwareVersion
        self.softwareVersionString = softwareVersionString
        self.uniqueID = uniqueID
    }
}

/// What a commissioner needs to know: the setup passcode and the discriminator.
public struct CommissioningParameters: Sendable, Hashable {
    public var passcode: UInt32
    public var discriminator: UInt16
    /// True when the profile gave none and the value was derived from the identity.
    public var passcodeGenerated: Bool
    public var discriminatorGenerated: Bool

    public init(passcode: UInt32, discriminator: UInt16, passcodeGenerated: Bool = false, discriminatorGenerated: Bool = false) {
        self.passcode = passcode
        self.discriminator = discriminator
        self.passcodeGenerated = passcodeGenerated
        self.discriminatorGenerated = discriminatorGenerated
    }
}

/// How the simulated hardware moves: not attributes, but the physics behind them.
public struct DeviceBehaviour: Sendable, Hashable {
    public struct WindowCovering: Sendable, Hashable {
        /// Lift travel, in percent of full travel per second.
        public var liftSpeed: Double
        /// Tilt travel, in percent of full tilt per second.
        public var tiltSpeed: Double
        public init(liftSpeed: Double = 10, tiltSpeed: Double = 50) {
            self.liftSpeed = liftSpeed
            self.tiltSpeed = tiltSpeed
        }
    }

    public struct Fan: Sendable, Hashable {
        /// How fast the motor changes speed, in percent of full speed per second; nil: it runs
        /// at the setting at once (PercentCurrent equals PercentSetting).
        public var acceleration: Double?
        public init(acceleration: Double? = nil) {
            self.acceleration = acceleration
        }
    }

    public struct Level: Sendable, Hashable {
        /// Transition time, in tenths of a second, used when a command and the
        /// OnOffTransitionTime/OnTransitionTime attributes leave it open.
        public var defaultTransitionTime: UInt16
        /// Rate, in level units per second, for Move with a null rate when the
        /// DefaultMoveRate attribute is absent or null.
        public var defaultMoveRate: UInt8
        public init(defaultTransitionTime: UInt16 = 0, defaultMoveRate: UInt8 = 50) {
            self.defaultTransitionTime = defaultTransitionTime
            self.defaultMoveRate = defaultMoveRate
        }
    }

    /// Where a measurement's reading comes from besides `act`: times in seconds since the
    /// node started, values in the cluster's unit (degrees Celsius for a thermometer).
    public enum Reading: Sendable, Hashable {
        case schedule(points: [SchedulePoint], repeatEvery: Double?)
        case randomWalk(every: Double, step: Double, min: Double, max: Double)

        public struct SchedulePoint: Sendable, Hashable {
            public var at: Double
            public var value: Double
            public init(at: Double, value: Double) {
                self.at = at
                self.value = value
            }
        }
    }

    /// A thermostat's room: every `every` seconds it warms by `heatingRate` °C while the
    /// thermostat heats, cools by `coolingRate` while it cools, and otherwise moves
    /// `leakPercent` of the way toward OutdoorTemperature.
    public struct Room: Sendable, Hashable {
        public var every: Double
        public var heatingRate: Double
        public var coolingRate: Double
        public var leakPercent: Double
        public init(every: Double = 30, heatingRate: Double = 0.1, coolingRate: Double = 0.1, leakPercent: Double = 2) {
            self.every = every
            self.heatingRate = heatingRate
            self.coolingRate = coolingRate
            self.leakPercent = leakPercent
        }
    }

    public var windowCovering: WindowCovering
    public var fan: Fan
    public var level: Level
    /// nil: the reading stays as set (the profile's value, or the last `act`). For the device's
    /// one measurement cluster (`readingClusters`).
    public var reading: Reading?
    /// Readings of a device with several measurement clusters, by cluster.
    public var readings: [ClusterID: Reading]
    public var room: Room

    public init(
        windowCovering: WindowCovering = .init(), fan: Fan = .init(), level: Level = .init(), reading: Reading? = nil,
        readings: [ClusterID: Reading] = [:], room: Room = .init()
    ) {
        self.windowCovering = windowCovering
        self.fan = fan
        self.level = level
        self.reading = reading
        self.readings = readings
        self.room = room
    }

    /// The clusters a reading drives: those whose MeasuredValue a sensor reads.
    public static let readingClusters: [ClusterID] = [
        Clusters.TemperatureMeasurement.id, Clusters.RelativeHumidityMeasurement.id, Clusters.IlluminanceMeasurement.id,
        Clusters.PressureMeasurement.id, Clusters.FlowMeasurement.id, Clusters.CarbonDioxideConcentrationMeasurement.id,
        Clusters.Pm25ConcentrationMeasurement.id, Clusters.Pm10ConcentrationMeasurement.id,
        Clusters.TotalVolatileOrganicCompoundsConcentrationMeasurement.id,
    ]

    /// The reading that drives `cluster`: its own, or the device's one reading.
    public func reading(for cluster: ClusterID) -> Reading? {
        readings[cluster] ?? (Self.readingClusters.contains(cluster) ? reading : nil)
    }
}

public struct ResolvedEndpoint: Sendable, Hashable {
    public var number: EndpointNumber
    public var deviceTypes: [ResolvedDeviceType]
    /// Server clusters, sorted by cluster ID.
    public var clusters: [ResolvedCluster]
    /// Clusters reachable only through the cloud relay (all also in `clusters`).
    public var cloudOnlyClusters: [ClusterID]
    /// The endpoint this one is a part of (`parent`); nil: the node decides (a bridged node's is
    /// the Aggregator, any other's the root).
    public var parent: EndpointNumber?
    /// The Descriptor ClientList as the profile gives it (`clientClusters`); nil: the client
    /// clusters the device types require.
    public var clientClusters: [ClusterID]?

    public init(
        number: EndpointNumber, deviceTypes: [ResolvedDeviceType], clusters: [ResolvedCluster], cloudOnlyClusters: [ClusterID] = [],
        parent: EndpointNumber? = nil, clientClusters: [ClusterID]? = nil
    ) {
        self.clientClusters = clientClusters
        self.number = number
        self.deviceTypes = deviceTypes
        self.clusters = clusters
        self.cloudOnlyClusters = cloudOnlyClusters
        self.parent = parent
    }

    public func cluster(_ id: ClusterID) -> ResolvedCluster? {
        clusters.first { $0.id == id }
    }
}

public struct ResolvedDeviceType: Sendable, Hashable {
    public var id: DeviceTypeID
    public var name: String
    public var revision: UInt16
    public init(id: DeviceTypeID, name: String, revision: UInt16) {
        self.id = id
        self.name = name
        self.revision = revision
    }
}

public struct ResolvedCluster: Sendable, Hashable {
    public var id: ClusterID
    public var name: String
    public var revision: UInt16
    /// Feature codes ("LT", "OO"); `featureMap` is the same as a bitmap.
    public var features: Set<String>
    public var featureMap: UInt32
    /// Cluster-specific attributes this instance supports: those mandatory for its
    /// features and device types, plus optional ones the profile gave a value.
    /// Global attributes (0xFFF8...0xFFFD) are not listed; the node derives them.
    public var supportedAttributes: Set<AttributeID>
    /// Initial values: the model's defaults for supported attributes, overlaid with the
    /// profile's values (and, on endpoint 0's BasicInformation, the identity). A supported
    /// attribute missing here has no spec default (the node computes it, e.g. PartsList).
    public var initialValues: [AttributeID: TLVValue]
    /// Attributes whose value the profile (or a home override) set explicitly.
    public var explicitAttributes: Set<AttributeID>
    /// True when the profile did not list the cluster and a device type's requirement added it.
    public var addedByDeviceType: Bool
    /// Global attributes the profile gives as a real device serves them (`revision` and
    /// `featureMap` are also in the fields above).
    public var served: ServedGlobals
    /// `rawAttributes`: served as written, not in `supportedAttributes` or `initialValues`.
    public var rawAttributes: [AttributeID: TLVValue]

    public init(
        id: ClusterID, name: String, revision: UInt16, features: Set<String>, featureMap: UInt32,
        supportedAttributes: Set<AttributeID>, initialValues: [AttributeID: TLVValue],
        explicitAttributes: Set<AttributeID>, addedByDeviceType: Bool, served: ServedGlobals = ServedGlobals(),
        rawAttributes: [AttributeID: TLVValue] = [:]
    ) {
        self.served = served
        self.rawAttributes = rawAttributes
        self.id = id
        self.name = name
        self.revision = revision
        self.features = features
        self.featureMap = featureMap
        self.supportedAttributes = supportedAttributes
        self.initialValues = initialValues
        self.explicitAttributes = explicitAttributes
        self.addedByDeviceType = addedByDeviceType
    }
}
