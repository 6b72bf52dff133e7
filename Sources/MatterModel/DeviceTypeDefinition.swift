// Device types (Matter Device Library spec): which clusters an endpoint of this type carries.

public enum DeviceTypeClass: String, Sendable, Hashable {
    /// Node-scoped utility types (Root Node).
    case node
    /// Application device types (lights, plugs, coverings).
    case simple
    /// Endpoint utility types (Power Source, Bridged Node).
    case utility
}

/// A server cluster a device type requires, with any features and elements it demands
/// beyond the cluster's own mandatory set.
public struct ClusterRequirement: Sendable, Hashable {
    public var cluster: ClusterID
    public var requiredFeatures: Set<String>
    public var requiredAttributes: [AttributeID]
    public var requiredCommands: [CommandID]
    /// Tighter constraints the device type puts on attributes
    /// (Dimmable Light: CurrentLevel 1 to 254, MinLevel 1, MaxLevel 254).
    public var attributeConstraints: [AttributeID: Constraint]

    public init(
        cluster: ClusterID, requiredFeatures: Set<String> = [], requiredAttributes: [AttributeID] = [],
        requiredCommands: [CommandID] = [], attributeConstraints: [AttributeID: Constraint] = [:]
    ) {
        self.cluster = cluster
        self.requiredFeatures = requiredFeatures
        self.requiredAttributes = requiredAttributes
        self.requiredCommands = requiredCommands
        self.attributeConstraints = attributeConstraints
    }
}

public struct DeviceTypeDefinition: Sendable, Hashable {
    public var id: DeviceTypeID
    /// UpperCamel name, "DimmableLight".
    public var name: String
    public var revision: UInt16
    public var deviceClass: DeviceTypeClass
    /// Includes Descriptor, which the Base Device Type requires on every endpoint.
    public var requiredServerClusters: [ClusterRequirement]
    public var optionalServerClusters: [ClusterID]
    /// What an optional server cluster must offer when it is present (On/Off Light with
    /// Level Control needs its OO and LT features). Same order as `optionalServerClusters`.
    public var optionalServerRequirements: [ClusterRequirement]
    public var requiredClientClusters: [ClusterID]
    public var optionalClientClusters: [ClusterID]

    public init(
        id: DeviceTypeID, name: String, revision: UInt16, deviceClass: DeviceTypeClass,
        requiredServerClusters: [ClusterRequirement] = [], optionalServerRequirements: [ClusterRequirement] = [],
        requiredClientClusters: [ClusterID] = [], optionalClientClusters: [ClusterID] = []
    ) {
        self.id = id
        self.name = name
        self.revision = revision
        self.deviceClass = deviceClass
        self.requiredServerClusters = requiredServerClusters
        self.optionalServerClusters = optionalServerRequirements.map(\.cluster)
        self.optionalServerRequirements = optionalServerRequirements
        self.requiredClientClusters = requiredClientClusters
        self.optionalClientClusters = optionalClientClusters
    }

    public var lowerCamelName: String { Naming.lowerCamel(name) }

    /// The spec's "class" column (same as `deviceClass`).
    public var `class`: DeviceTypeClass { deviceClass }

    /// The requirement for a required server cluster, or for an optional one when present.
    public func requirement(for cluster: ClusterID) -> ClusterRequirement? {
        requiredServerClusters.first { $0.cluster == cluster }
            ?? optionalServerRequirements.first { $0.cluster == cluster }
    }

    public func isRequiredServer(_ cluster: ClusterID) -> Bool {
        requiredServerClusters.contains { $0.cluster == cluster }
    }

    /// Every server cluster this device type allows (required and optional).
    public var allowedServerClusters: [ClusterID] {
        requiredServerClusters.map(\.cluster) + optionalServerClusters
    }
}

extension MatterModel {
    /// The device type an endpoint claims in a view that reaches only `served` of its server
    /// clusters (the LAN, when some are cloud-only), in place of `type`; nil when `type` itself
    /// conforms there. The stand-in is the richest type of the same class that asks nothing
    /// beyond what `type` asks and whose required clusters are all served: a Dimmable Light
    /// without Level Control is an On/Off Light (Device Library 4.2, Classification: a superset
    /// of On/Off Light). Also nil when no type fits; the caller keeps `type` then.
    public func standIn(for type: DeviceTypeID, servedClusters served: Set<ClusterID>) -> DeviceTypeDefinition? {
        guard let definition = deviceType(type),
            !definition.requiredServerClusters.allSatisfy({ served.contains($0.cluster) })
        else { return nil }
        let asked = Dictionary(
            definition.requiredServerClusters.map { ($0.cluster, $0.requiredFeatures) },
            uniquingKeysWith: { $0.union($1) })
        return
            deviceTypes
            .filter { candidate in
                candidate.id != type && candidate.deviceClass == definition.deviceClass
                    && candidate.requiredServerClusters.allSatisfy { requirement in
                        served.contains(requirement.cluster)
                            && asked[requirement.cluster].map { requirement.requiredFeatures.isSubset(of: $0) } == true
                    }
            }
            .max { $0.requiredServerClusters.count < $1.requiredServerClusters.count }
    }
}
