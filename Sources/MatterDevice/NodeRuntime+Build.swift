import Logging
import MatterModel
import MatterProtocol
import MatterTLV

extension NodeRuntime {
    /// Builds the runtime of a node from its description, checking the description
    /// against the model. Start-up behaviour runs separately, once timers can fire.
    static func build(
        description: NodeDescription,
        model: MatterModel,
        clock: any MatterClock,
        logger: Logger,
        broadcaster: ChangeBroadcaster,
        commissioning: CommissioningConfiguration,
        commissioningEvents: Broadcaster<CommissioningEvent>
    ) throws(NodeDescriptionError) -> NodeRuntime {
        let endpoints = try checkedEndpoints(description.endpoints, model: model, logger: logger)
        let layout = NodeLayout(
            endpoints: endpoints.map { endpoint in
                NodeLayout.Endpoint(
                    number: endpoint.number,
                    deviceTypes: endpoint.deviceTypes,
                    serverClusters: endpoint.serverClusters.map(\.id).sorted(),
                    clientClusters: endpoint.clientClusters.sorted(),
                    parent: endpoint.parent
                )
            })
        let runtime = NodeRuntime(
            model: model, clock: clock, logger: logger,
            store: AttributeStore(broadcaster: broadcaster, clock: clock), layout: layout,
            commissioning: commissioning, commissioningEvents: commissioningEvents
        )
        var entries: [ClusterPath: NodeComposition.ClusterEntry] = [:]
        for endpoint in endpoints {
            for instance in endpoint.serverClusters {
                let path = ClusterPath(endpoint: endpoint.number, cluster: instance.id)
                entries[path] = try runtime.addCluster(instance, at: path)
            }
        }
        runtime.composition = NodeComposition(entries: entries, endpoints: endpoints.map(\.number))
        try runtime.restorePersistedState()
        return runtime
    }

    /// Puts back what the state directory holds: non-volatile attributes over the
    /// described values (they stand for the device's memory), then fabrics, ACL and keys.
    private func restorePersistedState() throws(NodeDescriptionError) {
        persistence.register(composition)
        let location = persistence.store.map { "state \($0.directory.path)" } ?? "state"
        do {
            for (path, value) in try persistence.loadAttributes() {
                let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
                guard let definition = composition.definition(of: cluster), let attribute = definition.attribute(path.attribute) else {
                    continue
                }
                if let violation = definition.validate(value, for: attribute) {
                    logger.warning("stored value of \(path) (\(attribute.name)) ignored: \(violation)")
                    continue
                }
                store.update(path, to: value)
            }
            if let snapshot = try persistence.loadCommissioning() {
                commissioning.restore(snapshot)
            }
        } catch {
            throw NodeDescriptionError(path: location, message: "\(error)")
        }
    }

    /// Checks numbering, composition and clusters; adds a Descriptor cluster where
    /// the description leaves it out (every endpoint has one, Core spec 9.5).
    private static func checkedEndpoints(
        _ endpoints: [EndpointDescription], model: MatterModel, logger: Logger
    ) throws(NodeDescriptionError) -> [EndpointDescription] {
        var numbers = Set<EndpointNumber>()
        for endpoint in endpoints where !numbers.insert(endpoint.number).inserted {
            throw NodeDescriptionError(path: "endpoint \(endpoint.number)", message: "endpoint number used twice")
        }
        let parents = Dictionary(endpoints.map { ($0.number, $0.parent) }, uniquingKeysWith: { first, _ in first })
        var result: [EndpointDescription] = []
        for var endpoint in endpoints {
            let location = "endpoint \(endpoint.number)"
            if let parent = endpoint.parent {
                guard endpoint.number != 0 else {
                    throw NodeDescriptionError(path: location, message: "the root node endpoint has no parent")
                }
                guard numbers.contains(parent) else {
                    throw NodeDescriptionError(path: location, message: "parent endpoint \(parent) does not exist")
                }
                // Walk up at most endpoints.count steps; coming back means a cycle.
                var current: EndpointNumber? = parent
                var steps = 0
                while let step = current, step != 0 {
                    steps += 1
                    if step == endpoint.number || steps > endpoints.count {
                        throw NodeDescriptionError(path: location, message: "parent chain forms a cycle")
                    }
                    current = parents[step] ?? nil
                }
            }
            var clusterIDs = Set<ClusterID>()
            for instance in endpoint.serverClusters where !clusterIDs.insert(instance.id).inserted {
                throw NodeDescriptionError(path: "\(location) / cluster \(instance.id)", message: "cluster listed twice")
            }
            if !clusterIDs.contains(DescriptorServer.clusterID) {
                endpoint.serverClusters.append(ClusterInstanceDescription(id: DescriptorServer.clusterID))
            }
            checkDeviceTypes(endpoint, model: model, logger: logger)
            result.append(endpoint)
        }
        return result
    }

    /// Missing required clusters are reported, not fatal: a simulator may model a
    /// deliberately non-conformant device.
    private static func checkDeviceTypes(_ endpoint: EndpointDescription, model: MatterModel, logger: Logger) {
        let present = Set(endpoint.serverClusters.map(\.id))
        for deviceType in endpoint.deviceTypes {
            guard let definition = model.deviceType(deviceType.id) else {
                logger.notice("endpoint \(endpoint.number): unknown device type \(deviceType.id)")
                continue
            }
            for requirement in definition.requiredServerClusters where !present.contains(requirement.cluster) {
                logger.notice("endpoint \(endpoint.number): \(definition.name) requires server cluster \(requirement.cluster)")
            }
        }
    }

    /// Creates the server of one cluster instance and puts its attributes in the store.
    private func addCluster(
        _ instance: ClusterInstanceDescription, at path: ClusterPath
    ) throws(NodeDescriptionError) -> NodeComposition.ClusterEntry {
        let location = "endpoint \(path.endpoint) / cluster \(path.cluster)"
        guard let known = model.cluster(instance.id) ?? manufacturerSpecific(instance) else {
            throw NodeDescriptionError(path: location, message: "unknown cluster")
        }
        let definition = instance.rawAttributes.isEmpty ? known : known.adding(rawAttributes: instance.rawAttributes)
        let knownFeatures = Set(definition.features.map(\.code))
        if let unknown = instance.features.subtracting(knownFeatures).sorted().first {
            throw NodeDescriptionError(
                path: "\(location) (\(definition.name)) / features",
                message: "unknown feature \"\(unknown)\"; known: \(knownFeatures.sorted().joined(separator: ", "))"
            )
        }
        let features = instance.features
        let server = makeServer(for: instance, endpoint: path.endpoint)

        var values: [AttributeID: TLVValue] = [:]
        for (attributeID, value) in instance.attributes.sorted(by: { $0.key < $1.key }) {
            let attributeWhere = "\(location) (\(definition.name)) / attribute \(attributeID)"
            guard !GlobalAttribute.isGlobal(attributeID) else {
                throw NodeDescriptionError(path: attributeWhere, message: "global attributes are derived, not set")
            }
            guard let attribute = definition.attribute(attributeID),
                attribute.conformance.isAllowed(features: features)
            else {
                throw NodeDescriptionError(
                    path: attributeWhere,
                    message: "not an attribute of this cluster with features [\(features.sorted().joined(separator: ", "))]"
                )
            }
            if let violation = definition.validate(value, for: attribute, current: { instance.attributes[$0] }) {
                throw NodeDescriptionError(path: "\(attributeWhere) (\(attribute.name))", message: violation.description)
            }
            // A profile writes 2100 for an int16 as an unsigned number: served as the type says.
            values[attributeID] = attribute.type.encoding(value)
        }
        // Served as given: what a real device holds, whatever the model says of it.
        for (attributeID, value) in instance.rawAttributes {
            guard !GlobalAttribute.isGlobal(attributeID) else {
                throw NodeDescriptionError(path: "\(location) / attribute \(attributeID)", message: "global attributes are derived, not set")
            }
            values[attributeID] = value
        }
        for attribute in definition.allowedAttributes(features: features)
        where values[attribute.id] == nil && !GlobalAttribute.isGlobal(attribute.id) && instance.rawAttributes[attribute.id] == nil {
            if let value = server.initialValue(for: attribute.id) {
                values[attribute.id] = value
            } else if attribute.conformance.isMandatory(features: features) {
                let value = attribute.defaultValue ?? AttributeDefaults.fallback(for: attribute)
                if let violation = definition.validate(value, for: attribute, current: { values[$0] }) {
                    logger.warning("\(location): no valid default for \(attribute.name) (\(violation)); describe a value")
                }
                values[attribute.id] = value
            }
        }

        var accepted = definition.commands
            .filter { $0.direction == .request && $0.conformance.isAllowed(features: features) && server.handles($0.id) }
            .map(\.id).sorted()
        for command in definition.commands
        where command.direction == .request && command.conformance.isMandatory(features: features) && !accepted.contains(command.id) {
            logger.warning("\(location): mandatory command \(command.name) is not simulated")
        }
        var generated = Set(
            accepted.compactMap { id in
                definition.command(id)?.responseName.flatMap { name in definition.responses.first { $0.name == name }?.id }
            }
        ).sorted()

        let served = instance.served
        if let list = served.acceptedCommandList { accepted = list.map { CommandID($0) } }
        if let list = served.generatedCommandList { generated = list.map { CommandID($0) } }
        if let list = served.attributeList {
            // The attributes the real device has: mandatory ones it lacks are left out; one it
            // serves without listing it (a quirk a dump shows) stays, as given.
            let listed = Set(list.map { AttributeID($0) })
            values = values.filter { listed.contains($0.key) || instance.attributes[$0.key] != nil || instance.rawAttributes[$0.key] != nil }
            for missing in listed.subtracting(values.keys).subtracting(GlobalAttribute.all).sorted() {
                logger.notice("\(location): attribute \(missing) is listed but has no value; left out")
            }
        }
        var globals = GlobalAttribute.values(
            definition: definition, features: features, present: values.keys, accepted: accepted, generated: generated)
        if let revision = served.revision { globals[GlobalAttribute.clusterRevision] = .uint(revision) }
        if let map = served.featureMap { globals[GlobalAttribute.featureMap] = .uint(map) }
        if let list = served.attributeList {
            let listed = Set(list.map { AttributeID($0) })
            globals = globals.filter { listed.contains($0.key) }
            globals[GlobalAttribute.attributeList] = listed.contains(GlobalAttribute.attributeList) ? .arrayOf(list.map { .uint($0) }) : nil
        }
        values.merge(globals, uniquingKeysWith: { described, _ in described })
        store.addCluster(
            path, values: values,
            quiet: Dictionary(uniqueKeysWithValues: definition.attributes.compactMap { a in QuietRule.of(a).map { (a.id, $0) } }))
        servers[path] = server
        return NodeComposition.ClusterEntry(
            definition: definition, features: features, attributes: values.keys.sorted(),
            acceptedCommands: accepted, generatedCommands: generated
        )
    }

    /// A manufacturer-specific cluster a clone serves as dumped (the model cannot know it).
    private func manufacturerSpecific(_ instance: ClusterInstanceDescription) -> ClusterDefinition? {
        guard instance.id.isManufacturerSpecific else { return nil }
        return .manufacturerSpecific(
            instance.id, revision: instance.served.revision ?? 1, globalsFrom: model.cluster(DescriptorServer.clusterID))
    }

    private func makeServer(for instance: ClusterInstanceDescription, endpoint: EndpointNumber) -> any ClusterServer {
        switch instance.id {
        case DescriptorServer.clusterID: DescriptorServer(endpoint: endpoint, layout: layout, instance: instance)
        case IdentifyServer.clusterID: IdentifyServer()
        case GroupsServer.clusterID: GroupsServer(features: instance.features)
        case OnOffServer.clusterID: OnOffServer(features: instance.features)
        case LevelControlServer.clusterID: LevelControlServer(features: instance.features)
        case WindowCoveringServer.clusterID: WindowCoveringServer(instance: instance)
        case BasicInformationServer.clusterID: BasicInformationServer()
        case BooleanStateServer.clusterID: BooleanStateServer()
        case DoorLockServer.clusterID: DoorLockServer(features: instance.features)
        case ThermostatServer.clusterID: ThermostatServer(features: instance.features, room: instance.behavior.room)
        case SwitchServer.clusterID: SwitchServer(features: instance.features)
        case TemperatureMeasurementServer.clusterID: TemperatureMeasurementServer(reading: instance.behavior.reading)
        case OccupancySensingServer.clusterID: OccupancySensingServer(features: instance.features)
        case ColorControlServer.clusterID: ColorControlServer(features: instance.features)
        case SmokeCoAlarmServer.clusterID: SmokeCoAlarmServer(features: instance.features)
        case BooleanStateConfigurationServer.clusterID: BooleanStateConfigurationServer(features: instance.features)
        case PowerSourceServer.clusterID: PowerSourceServer(features: instance.features)
        case ValveConfigurationAndControlServer.clusterID: ValveConfigurationAndControlServer(features: instance.features)
        case RvcRunModeServer.clusterID: RvcRunModeServer()
        case RvcCleanModeServer.clusterID: RvcCleanModeServer()
        case RvcOperationalStateServer.clusterID: RvcOperationalStateServer()
        case PumpConfigurationAndControlServer.clusterID: PumpConfigurationAndControlServer(features: instance.features)
        case BindingServer.clusterID: BindingServer()
        case BridgedDeviceBasicInformationServer.clusterID: BridgedDeviceBasicInformationServer(endpoint: endpoint)
        case GeneralCommissioningServer.clusterID: GeneralCommissioningServer(configuration: commissioningConfiguration)
        case OperationalCredentialsServer.clusterID: OperationalCredentialsServer(configuration: commissioningConfiguration)
        case AccessControlServer.clusterID: AccessControlServer()
        case NetworkCommissioningServer.clusterID: NetworkCommissioningServer(interface: commissioningConfiguration.networkInterface)
        case GroupKeyManagementServer.clusterID:
            GroupKeyManagementServer(features: instance.features, configuration: commissioningConfiguration)
        case AdministratorCommissioningServer.clusterID: AdministratorCommissioningServer()
        case GeneralDiagnosticsServer.clusterID: GeneralDiagnosticsServer(configuration: commissioningConfiguration)
        case FanControlServer.clusterID: FanControlServer(features: instance.features, acceleration: instance.behavior.fanAcceleration)
        case RelativeHumidityMeasurementServer.clusterID: RelativeHumidityMeasurementServer(reading: instance.behavior.reading)
        case IlluminanceMeasurementServer.clusterID: IlluminanceMeasurementServer(reading: instance.behavior.reading)
        case PressureMeasurementServer.clusterID: PressureMeasurementServer(reading: instance.behavior.reading)
        case FlowMeasurementServer.clusterID: FlowMeasurementServer(reading: instance.behavior.reading)
        case AirQualityServer.clusterID: AirQualityServer(features: instance.features)
        default: familyServer(for: instance) ?? PlainClusterServer()
        }
    }

    /// Servers of cluster families (one definition, an ID per substance or resource).
    private func familyServer(for instance: ClusterInstanceDescription) -> (any ClusterServer)? {
        if let substance = Substance(clusterID: instance.id) {
            return ConcentrationMeasurementServer(substance: substance, features: instance.features, reading: instance.behavior.reading)
        }
        return switch FilterKind(clusterID: instance.id) {
        case .hepa: HepaFilterMonitoringServer()
        case .carbon: ActivatedCarbonFilterMonitoringServer()
        case nil: nil
        }
    }

    /// Publishes the commissioning state into its clusters, runs every server's
    /// start-up behaviour endpoint by endpoint, and saves what start-up changed
    /// (RebootCount) before anything else can happen.
    func startUp() {
        commissioning.publishAll()
        for endpoint in composition.endpoints {
            for cluster in composition.clusters(on: endpoint) {
                let path = ClusterPath(endpoint: endpoint, cluster: cluster)
                servers[path]?.startUp(context(path))
            }
        }
        startPersisting()
        persistence.markAllChanged()
        saveAttributes()
    }
}
