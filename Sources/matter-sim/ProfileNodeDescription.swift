// From a resolved device profile to what MatterDevice builds a node from.
import DeviceProfile
import MatterDevice
import MatterModel
import MatterTLV

extension ResolvedDeviceProfile {
    /// The node's endpoints, device types and server clusters with their features, the
    /// profile's initial values and the simulated behaviour; endpoint 0 gets the root
    /// node's commissioning clusters as the node implements them.
    func nodeDescription(model: MatterModel) -> NodeDescription {
        let rootClusters = Dictionary(
            ClusterInstanceDescription.rootNodeCommissioningClusters.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var endpointDescriptions: [EndpointDescription] = []
        // A bridge (Core spec 9.12): its bridged nodes are parts of its Aggregator endpoint.
        let aggregator = endpoints.first { $0.deviceTypes.contains { $0.id == DeviceTypes.aggregator } }?.number
        for endpoint in endpoints {
            var clusters: [ClusterInstanceDescription] = endpoint.clusters.map { cluster in
                var instance = ClusterInstanceDescription(
                    id: cluster.id, features: cluster.features,
                    attributes: initialAttributes(of: cluster, on: endpoint.number, model: model),
                    behavior: behavior(of: cluster), served: cluster.served, rawAttributes: cluster.rawAttributes)
                // The node's own commissioning clusters keep the features it implements.
                if endpoint.number == 0, let root = rootClusters[cluster.id] {
                    instance.features.formUnion(root.features)
                }
                return instance
            }
            if endpoint.number == 0 {
                let present = Set(clusters.map(\.id))
                clusters += ClusterInstanceDescription.rootNodeCommissioningClusters.filter { !present.contains($0.id) }
            }
            // The client clusters its device types require (a light switch's On/Off, a dimmer's
            // Level Control): Descriptor ClientList, and what its Binding sends.
            let clients = Set(endpoint.deviceTypes.flatMap { model.deviceType($0.id)?.requiredClientClusters ?? [] })
            endpointDescriptions.append(
                EndpointDescription(
                    number: endpoint.number,
                    deviceTypes: endpoint.deviceTypes.map { DeviceTypeInstance(id: $0.id, revision: $0.revision) },
                    serverClusters: clusters, clientClusters: endpoint.clientClusters ?? clients.sorted(),
                    parent: endpoint.parent ?? (endpoint.deviceTypes.contains { $0.id == DeviceTypes.bridgedNode } ? aggregator : nil)))
        }
        return NodeDescription(endpoints: endpointDescriptions)
    }

    /// The device type a commissioner sees first: the first application endpoint's.
    var primaryDeviceType: DeviceTypeID? {
        endpoints.first { $0.number != 0 }?.deviceTypes.first?.id ?? endpoints.first?.deviceTypes.first?.id
    }

    /// Basic Information attributes that carry the profile's identity.
    private static let identityAttributes: Set<String> = [
        "vendorName", "vendorID", "productName", "productID", "serialNumber", "hardwareVersion",
        "hardwareVersionString", "softwareVersion", "softwareVersionString", "uniqueID",
    ]

    /// What the node should start from: values the profile set, the identity, and optional
    /// attributes the profile supports (the node adds those only when given a value).
    /// Mandatory attributes the profile left at the model default are left to the node,
    /// whose cluster servers know better (SpecificationVersion, SupportedFabrics, ...).
    private func initialAttributes(of cluster: ResolvedCluster, on endpoint: EndpointNumber, model: MatterModel) -> [AttributeID: TLVValue]
    {
        let definition = model.cluster(cluster.id)
        let isBasicInformation = endpoint == 0 && definition?.name == "BasicInformation"
        var values: [AttributeID: TLVValue] = [:]
        for (id, value) in cluster.initialValues where cluster.supportedAttributes.contains(id) {
            let attribute = definition?.attribute(id)
            if cluster.explicitAttributes.contains(id) {
                values[id] = value
            } else if isBasicInformation, let attribute, Self.identityAttributes.contains(attribute.lowerCamelName) {
                values[id] = value
            } else if let attribute, !attribute.conformance.isMandatory(features: cluster.features) {
                values[id] = value
            }
        }
        return values
    }

    private func behavior(of cluster: ResolvedCluster) -> ClusterBehavior {
        if let reading = behaviour.reading(for: cluster.id) {
            return ClusterBehavior(reading: sensorReading(reading, cluster: cluster.id))
        }
        if cluster.id == Clusters.Thermostat.id {
            let room = behaviour.room
            func hundredths(_ celsius: Double) -> Int64 { Int64((celsius * 100).rounded()) }
            return ClusterBehavior(
                room: RoomModel(
                    tick: .milliseconds(Int64((room.every * 1000).rounded())), heatingStep: hundredths(room.heatingRate),
                    coolingStep: hundredths(room.coolingRate), leakPercent: Int64(room.leakPercent.rounded())))
        }
        func speed(_ percentPerSecond: Double) -> MotionSpeed {
            .percent100thsPerSecond(UInt32(clamping: Int((max(percentPerSecond, 0) * 100).rounded())))
        }
        if cluster.id == Clusters.FanControl.id {
            return ClusterBehavior(fanAcceleration: behaviour.fan.acceleration.map(speed))
        }
        // Window Covering (0x0102) and Fan Control are the clusters whose motion the profile times.
        guard cluster.id == Clusters.WindowCovering.id else { return ClusterBehavior() }
        return ClusterBehavior(
            liftSpeed: speed(behaviour.windowCovering.liftSpeed),
            tiltSpeed: speed(behaviour.windowCovering.tiltSpeed))
    }

    /// The profile's reading for the node clock; a walk is seeded from the serial number (and
    /// the cluster), so a device walks the same way on every run and two devices walk differently.
    private func sensorReading(_ reading: DeviceBehaviour.Reading, cluster: ClusterID) -> SensorReading {
        func duration(_ seconds: Double) -> Duration { .milliseconds(Int64((seconds * 1000).rounded())) }
        switch reading {
        case .schedule(let points, let repeatEvery):
            return .schedule(points.map { .init(at: duration($0.at), value: $0.value) }, repeatEvery: repeatEvery.map(duration))
        case .randomWalk(let every, let step, let low, let high):
            // FNV-1a of the serial number; each further cluster of the device walks its own way.
            let serial = fnv1a64(identity.serialNumber)
            let seed = cluster == Clusters.TemperatureMeasurement.id ? serial : serial &+ UInt64(cluster.rawValue)
            return .randomWalk(every: duration(every), step: step, range: low...high, seed: seed)
        }
    }
}
