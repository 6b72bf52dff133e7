import Foundation
import Logging
import MatterController
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
import NIOCore
import OpenCombine
import Synchronization

/// Everything the public values are derived from, at one moment.
struct HomeSnapshot: Sendable, Equatable {
    var structures: [String: Structure] = [:]
    var rooms: [String: Room] = [:]
    var devices: [String: HomeDevice] = [:]
    var groups: [String: DeviceGroup] = [:]
}

/// What is known of one node, per route: each route's health and what it reported.
struct NodeState: Sendable, Hashable {
    var routes: [RouteKind: RouteState] = [:]

    subscript(kind: RouteKind) -> RouteState {
        get { routes[kind] ?? RouteState() }
        set { routes[kind] = newValue }
    }

    var hasAttributes: Bool { routes.values.contains { !$0.attributes.isEmpty } }
}

/// The clusters whose attributes a device's traits show, subscribed on every node.
let subscribedPaths: [AttributePathIB] =
    generatedTraitTypes.map { AttributePathIB(cluster: $0.clusterID) }
    + generatedRootTraitTypes.map { AttributePathIB(endpoint: 0, cluster: $0.clusterID) }

/// The events the traits' event types stand for, subscribed on every node; urgent, so a
/// press or a door opening is reported at once rather than with the next report.
let subscribedEventPaths: [EventPathIB] = generatedTraitTypes.filter { !$0.eventTypes.isEmpty }.map {
    EventPathIB(cluster: $0.clusterID, isUrgent: true)
}

/// One event a device reported, as the engine hands it to the traits' subscribers.
struct DeviceEventReport: Sendable {
    var node: UInt64
    var report: EventReport
}

/// A running route of one node (its subscription, or the LAN probe).
struct RouteTaskKey: Hashable {
    enum Role: Hashable { case subscription, probe }
    var node: UInt64
    var kind: RouteKind
    var role: Role
}

/// The engine behind a `Home`: the stored graph, the controller, the relay and hub
/// clients, each node's live state per route, and the snapshot every publisher derives from.
actor HomeEngine {
    nonisolated let store: HomeStore
    nonisolated let configuration: HomeConfiguration
    private nonisolated let hub: SnapshotHub<HomeSnapshot>
    /// The cloud relay and the LAN hub, when configured.
    nonisolated let relayClient: (any RelayControllerLink)?
    nonisolated let hubClient: (any RelayControllerLink)?
    /// Where the reports of subscriptions through the relay and the hub arrive.
    nonisolated let relayRouter = SubscriptionRouter()
    nonisolated let policyBox: NIOLockedValueBox<RoutingPolicy>
    /// Discovery cache and automation runners (Discovery/, Automation/).
    nonisolated let services = HomeServices()
    let logger: Logger
    var graph = HomeGraph()
    private var generation: Int64 = -1
    var states: [UInt64: NodeState] = [:]
    private var controllerTask: Task<MatterController, any Error>?
    var routeTasks: [RouteTaskKey: Task<Void, Never>] = [:]
    private var clientTasks: [Task<Void, Never>] = []
    private var poller: Task<Void, Never>?
    var closed = false
    /// Device addresses already handed to the controller.
    private var knownAddresses: [UInt64: String] = [:]
    /// When each node's LAN subscription was last restarted by the probe.
    var directRestartedAt: [UInt64: Duration] = [:]
    /// Nodes whose cloud-only clusters were learned (or are being learned) since opening.
    var cloudOnlyLearned: Set<UInt64> = []
    var cloudOnlyLearning: Set<UInt64> = []
    /// Group message counters reserved in the store and not used yet (HomeEngine+Groups).
    var groupCounters: [UInt32] = []
    /// The last event number delivered per node: an event reported on two routes (LAN and
    /// relay) or primed again by a resubscription reaches subscribers once.
    var lastEventNumber: [UInt64: UInt64] = [:]
    /// Nodes whose first subscription is established: events from then on are news.
    var eventsWatched: Set<UInt64> = []
    /// The events devices report, after that deduplication.
    nonisolated let deviceEvents = DeviceEventHub()
    /// How each group's last command went out, by group.
    var lastGroupDelivery: [String: GroupDelivery] = [:]

    /// Engines alive in this process, open or closed and not yet freed: a closed home that
    /// something still holds shows here (the soak watches it).
    static let alive = Atomic<Int>(0)

    deinit { Self.alive.subtract(1, ordering: .relaxed) }

    init(store: HomeStore, configuration: HomeConfiguration, logger: Logger) {
        Self.alive.add(1, ordering: .relaxed)
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.hub = SnapshotHub(HomeSnapshot())
        self.policyBox = NIOLockedValueBox(configuration.routingPolicy)
        func client(_ endpoint: RelayEndpoint?, _ route: String) -> (any RelayControllerLink)? {
            guard let endpoint, let make = configuration.relayLinks else { return nil }
            return make(
                RelayLinkSettings(
                    endpoint: endpoint, route: route, operationTimeout: configuration.commandTimeout,
                    maximumReconnectDelay: configuration.relayMaxReconnectDelay, clock: configuration.clock, logger: logger))
        }
        relayClient = client(configuration.relay, "relay")
        hubClient = client(configuration.hub, "hub")
        for client in [relayClient, hubClient].compactMap({ $0 }) { client.setIncomingInteractions(relayRouter) }
    }

    func start() async throws {
        for client in [relayClient, hubClient].compactMap({ $0 }) {
            clientTasks.append(Task { await client.run() })
        }
        try await reload()
        let interval = configuration.changePollInterval, clock = configuration.clock
        poller = Task { [weak self] in
            while !Task.isCancelled {
                do { try await clock.sleep(until: clock.now + interval) } catch { return }
                guard let self else { return }
                try? await self.reloadIfNeeded()
            }
        }
    }

    func close() async {
        guard !closed else { return }
        closed = true
        poller?.cancel()
        for t in routeTasks.values { t.cancel() }
        routeTasks = [:]
        for t in clientTasks { t.cancel() }
        clientTasks = []
        if let task = controllerTask, let controller = try? await task.value { await controller.shutdown() }
        controllerTask = nil
        hub.finish(keeping: HomeSnapshot())
        store.close()
    }

    // MARK: Snapshots

    nonisolated func snapshots() -> AnyPublisher<HomeSnapshot, Never> { hub.publisher() }

    nonisolated var snapshot: HomeSnapshot { hub.value }

    nonisolated func query<T: HomeObject>(_ select: @escaping @Sendable (HomeSnapshot) -> Set<T>) -> Query<T> {
        Query(refresh: { [weak self] in try await self?.reloadIfNeeded() }) { [hub] in
            hub.publisher().map(select).removeDuplicates().setFailureType(to: HomeError.self).eraseToAnyPublisher()
        }
    }

    /// Reloads when another writer (this Home or another on the same file) bumped the generation.
    func reloadIfNeeded() async throws {
        guard !closed, try await store.generation() != generation else { return }
        try await reload()
    }

    /// Reloads the graph from the store and republishes.
    func reload() async throws {
        let g = try await store.generation()
        graph = try await store.loadGraph()
        generation = g
        if configuration.connectDevices { syncRoutes() }
        publish()
    }

    func publish() {
        // A route task's last buffered reports may still arrive after close.
        guard !closed else { return }
        var s = HomeSnapshot()
        for r in graph.structures.values { s.structures[r.id] = Structure(id: r.id, name: r.name, address: r.address, engine: self) }
        for r in graph.rooms.values { s.rooms[r.id] = Room(id: r.id, name: r.name, structureID: r.structureID, engine: self) }
        for d in graph.devices.values { s.devices[d.id] = makeDevice(d) }
        for g in graph.groups.values { s.groups[g.id] = makeGroup(g, devices: s.devices) }
        hub.send(s)
    }

    private func makeDevice(_ d: DeviceRecord) -> HomeDevice {
        let state = states[d.nodeID] ?? NodeState()
        let kinds = routeKinds(for: d)
        /// Every trait context built, by endpoint and cluster, for the device's own connectivity.
        var all: [ClusterPath: SourceConnectivity] = [:]
        func context(endpoint ep: EndpointNumber, cluster: ClusterID, required: Bool) -> TraitContext? {
            let candidates = self.candidates(kinds, d, endpoint: ep, cluster: cluster)
            let route = candidates.first { state[$0].health == .up }
            // Values through the route in use; while none works, the last ones any route had.
            let source =
                route ?? candidates.first { state[$0].has(endpoint: ep, cluster: cluster) }
                ?? RouteKind.allCases.first { state[$0].has(endpoint: ep, cluster: cluster) }
            var attributes: [AttributeID: TLVValue] = [:]
            if let source {
                for (path, value) in state[source].attributes where path.endpoint == ep && path.cluster == cluster {
                    attributes[path.attribute] = value
                }
            }
            // A cluster is present when some route reported it, when it is cloud-only, or
            // (before its first report) when the device type requires it.
            let present =
                ep == 0 || required || d.isCloudOnly(endpoint: ep, cluster: cluster.rawValue)
                || RouteKind.allCases.contains { state[$0].has(endpoint: ep, cluster: cluster) }
            guard present else { return nil }
            let connectivity: SourceConnectivity
            if let route {
                connectivity = SourceConnectivity(connectivityState: .online, dataSourceLocality: route.locality)
            } else if candidates.allSatisfy({ state[$0].health == .down }) {
                connectivity = SourceConnectivity(connectivityState: .offline, dataSourceLocality: .unspecified)
            } else {
                connectivity = SourceConnectivity(connectivityState: .unknown, dataSourceLocality: .unspecified)
            }
            all[ClusterPath(endpoint: ep, cluster: cluster)] = connectivity
            return TraitContext(
                deviceID: d.id, nodeID: d.nodeID, endpoint: ep, cluster: cluster,
                attributes: attributes, connectivity: connectivity, engine: self)
        }
        func traits(endpoint: EndpointNumber) -> TraitCollection {
            var contexts: [ClusterID: TraitContext] = [:]
            let required = requiredClusters(of: d, endpoint: endpoint)
            for trait in traitTypes {
                let ep: EndpointNumber = trait.clusterID == Matter.BasicInformationTrait.clusterID ? 0 : endpoint
                if let c = context(endpoint: ep, cluster: trait.clusterID, required: required.contains(trait.clusterID)) {
                    contexts[trait.clusterID] = c
                }
            }
            return TraitCollection(contexts: contexts)
        }
        var types: [UInt32: DeviceTypeContext] = [:]
        var primaryAssigned = false
        for endpoint in d.endpoints.sorted(by: { $0.endpoint < $1.endpoint }) where endpoint.endpoint != 0 {
            let collection = traits(endpoint: endpoint.endpoint)
            for type in endpoint.deviceTypes where deviceTypeTypes.contains(where: { $0.matterDeviceTypeID == type }) {
                guard types[type] == nil else { continue }
                types[type] = DeviceTypeContext(isPrimary: !primaryAssigned, traits: collection)
                primaryAssigned = true
            }
        }
        // The root's Basic Information counts even for a device of no known type.
        _ = context(endpoint: 0, cluster: Matter.BasicInformationTrait.clusterID, required: true)
        let connectivity = SourceConnectivity.combining(
            all.keys.sorted { ($0.endpoint, $0.cluster) < ($1.endpoint, $1.cluster) }
                .compactMap { all[$0] })
        return HomeDevice(
            id: d.id, name: d.name, structureID: d.structureID, roomID: d.roomID, isMatterDevice: true,
            sourceConnectivity: connectivity,
            types: DeviceTypeController(deviceID: d.id, collection: DeviceTypeCollection(contexts: types), engine: self),
            nodeID: d.nodeID)
    }

    /// The trait clusters the endpoint's device types require (the data model's mandatory
    /// server clusters that have a trait): those traits exist before any route has reported, a
    /// colour light's On/Off and a lock's DoorLock as well as a plug's On/Off.
    private func requiredClusters(of d: DeviceRecord, endpoint: EndpointNumber) -> Set<ClusterID> {
        let types = d.endpoints.first { $0.endpoint == endpoint }?.deviceTypes ?? []
        return Set(types.flatMap { Self.requiredTraitClusters[$0] ?? [] })
    }

    /// Device type → its mandatory server clusters that have a trait (matter-model.json).
    static let requiredTraitClusters: [UInt32: [ClusterID]] = [
        DeviceTypes.onOffLight.rawValue: [Matter.OnOffTrait.clusterID],
        DeviceTypes.dimmableLight.rawValue: [Matter.OnOffTrait.clusterID, Matter.LevelControlTrait.clusterID],
        DeviceTypes.onOffPlugInUnit.rawValue: [Matter.OnOffTrait.clusterID],
        DeviceTypes.dimmablePlugInUnit.rawValue: [Matter.OnOffTrait.clusterID, Matter.LevelControlTrait.clusterID],
        DeviceTypes.speaker.rawValue: [Matter.OnOffTrait.clusterID, Matter.LevelControlTrait.clusterID],
        DeviceTypes.colorTemperatureLight.rawValue: [
            Matter.OnOffTrait.clusterID, Matter.LevelControlTrait.clusterID, Matter.ColorControlTrait.clusterID,
        ],
        DeviceTypes.extendedColorLight.rawValue: [
            Matter.OnOffTrait.clusterID, Matter.LevelControlTrait.clusterID, Matter.ColorControlTrait.clusterID,
        ],
        DeviceTypes.windowCovering.rawValue: [Matter.WindowCoveringTrait.clusterID],
        DeviceTypes.contactSensor.rawValue: [Matter.BooleanStateTrait.clusterID],
        DeviceTypes.genericSwitch.rawValue: [Matter.SwitchTrait.clusterID],
        DeviceTypes.occupancySensor.rawValue: [Matter.OccupancySensingTrait.clusterID],
        DeviceTypes.temperatureSensor.rawValue: [Matter.TemperatureMeasurementTrait.clusterID],
        DeviceTypes.doorLock.rawValue: [Matter.DoorLockTrait.clusterID],
        DeviceTypes.thermostat.rawValue: [Matter.ThermostatTrait.clusterID],
    ]

    // MARK: Graph edits

    func require<T>(_ value: T?, _ what: String) throws -> T {
        guard let value else { throw HomeError.notFound(what) }
        return value
    }

    func createStructure(name: String) async throws -> Structure {
        let record = StructureRecord(id: UUID().uuidString, name: try normalizedName(name, "structure"))
        try await store.insertStructure(record)
        try await reload()
        return try require(snapshot.structures[record.id], "structure \(record.id)")
    }

    func renameStructure(_ id: String, to name: String) async throws -> Structure {
        try await store.renameStructure(id, to: try normalizedName(name, "structure"))
        try await reload()
        return try require(snapshot.structures[id], "no structure with ID \(id)")
    }

    func createRoom(structureID: String, name: String) async throws -> Room {
        let record = RoomRecord(id: UUID().uuidString, structureID: structureID, name: try normalizedName(name, "room"))
        try await store.insertRoom(record)
        try await reload()
        return try require(snapshot.rooms[record.id], "room \(record.id)")
    }

    func renameRoom(_ id: String, to name: String) async throws -> Room {
        try await store.renameRoom(id, to: try normalizedName(name, "room"))
        try await reload()
        return try require(snapshot.rooms[id], "no room with ID \(id)")
    }

    func deleteRoom(_ id: String, structureID: String) async throws {
        try await store.deleteRoom(id, structureID: structureID)
        try await reload()
    }

    func renameDevice(_ id: String, to name: String) async throws -> HomeDevice {
        try await store.renameDevice(id, to: try normalizedName(name, "device"))
        try await reload()
        return try require(snapshot.devices[id], "no device with ID \(id)")
    }

    func move(deviceIDs: [String], toRoom roomID: String, structureID: String) async throws {
        try await store.moveDevices(deviceIDs, toRoom: roomID, structureID: structureID)
        try await reload()
    }

    func removeDevice(_ id: String) async throws {
        let record = try require(graph.devices[id], "no device with ID \(id)")
        if let controller = try? await controller() {
            // Best effort: leave the node's fabric (spec 11.18.6.12) so it can be commissioned again.
            if let index = try? await controller.read(
                record.nodeID,
                AttributePath(
                    endpoint: 0, cluster: Clusters.OperationalCredentials.id,
                    attribute: Clusters.OperationalCredentials.Attribute.currentFabricIndex)),
                let fabricIndex = index.uintValue
            {
                _ = try? await controller.invoke(
                    record.nodeID,
                    ConcreteCommandPath(
                        endpoint: 0, cluster: Clusters.OperationalCredentials.id,
                        command: Clusters.OperationalCredentials.Command.removeFabric),
                    fields: .structure([.context(0, .unsigned(fabricIndex))]))
            }
        }
        stopRoutes(record.nodeID)
        try await store.deleteDevice(id)
        try await reload()
    }

    // MARK: Controller

    /// Hands the stored device addresses to the controller (every caller, so none uses the
    /// controller before the addresses another caller is still handing over).
    private func updateAddresses(_ controller: MatterController) async {
        for d in graph.devices.values where knownAddresses[d.nodeID] != "\(d.host):\(d.port)" {
            if let address = try? SocketAddress(ipAddress: d.host, port: d.port) { await controller.setAddress(address, for: d.nodeID) }
            knownAddresses[d.nodeID] = "\(d.host):\(d.port)"
        }
    }

    /// The controller when it is running; never starts one.
    func runningController() async -> MatterController? {
        guard !closed, let task = controllerTask else { return nil }
        return try? await task.value
    }

    /// The controller, started on first use with the stored fabric (created once).
    func controller() async throws -> MatterController {
        if closed { throw HomeError.cancelled("the home is closed") }
        if let task = controllerTask {
            let controller = try await task.value
            await updateAddresses(controller)
            return controller
        }
        let store = self.store, configuration = self.configuration, logger = self.logger
        let task = Task { () throws -> MatterController in
            let credentials: FabricCredentials
            if let (stored, _) = try await store.fabric() {
                credentials = stored
            } else {
                credentials = try await store.saveFabricIfAbsent(try FabricAuthority.create().credentials)
            }
            let fabric = try FabricAuthority(credentials: credentials)
            var c = MatterController.Configuration(
                port: configuration.controllerPort, binding: configuration.controllerBinding,
                responseTimeout: configuration.responseTimeout,
                handshakeStepTimeout: configuration.responseTimeout,
                subscriptionMaxInterval: configuration.subscriptionMaxInterval)
            c.maxResubscribeDelay = configuration.maxResubscribeDelay
            c.clock = configuration.clock
            c.exchange.maxSecureSessions = configuration.maxSessions
            // Opening a home sets up a CASE session and a subscription with every device at
            // once: room for each handshake and exchange, or they evict one another (a soak
            // of 200 devices lost handshakes to the default 16 unsecured sessions).
            c.exchange.maxUnsecuredSessions = max(c.exchange.maxUnsecuredSessions, configuration.maxSessions)
            c.exchange.maxExchanges = max(c.exchange.maxExchanges, 4 * configuration.maxSessions)
            let resolver: (any OperationalResolver)? = configuration.useDNSSD ? try? DNSSDDiscovery() : nil
            return try await MatterController.start(fabric: fabric, configuration: c, resolver: resolver, logger: logger)
        }
        controllerTask = task
        do {
            let controller = try await task.value
            await updateAddresses(controller)
            return controller
        } catch {
            controllerTask = nil
            throw HomeError.from(error, "starting the Matter controller")
        }
    }

    // MARK: Commissioning

    func commission(
        payload: OnboardingPayload, address: SocketAddress?, structureID: String?, roomID: String?,
        name: String?
    ) async throws -> HomeDevice {
        if let structureID, graph.structures[structureID] == nil { throw HomeError.notFound("no structure with ID \(structureID)") }
        if let roomID {
            guard let room = graph.rooms[roomID] else { throw HomeError.notFound("no room with ID \(roomID)") }
            if let structureID, room.structureID != structureID {
                throw HomeError.invalidArgument("room \(roomID) is not in structure \(structureID)")
            }
        }
        let structure =
            structureID ?? roomID.flatMap { graph.rooms[$0]?.structureID }
            ?? (graph.structures.count == 1 ? graph.structures.keys.first : nil)
        let deviceName = try name.map { try normalizedName($0, "device") }
        let controller = try await controller()
        let candidates: [SocketAddress]
        if let address { candidates = [address] } else { candidates = try await discover(payload) }
        let nodeID = try await store.allocateNodeID()
        let options = CommissioningOptions(
            trustStore: try configuration.paaTrustStore.map { try PAATrustStore(directory: $0) },
            allowUntrustedAttestation: configuration.allowUntrustedAttestation)
        // A manual code carries only 4 bits of the discriminator: several nodes can match it.
        // The one whose PASE accepts the passcode is the device; try each until one does.
        var target = candidates[0]
        for (index, candidate) in candidates.enumerated() {
            do {
                target = candidate
                _ = try await controller.commission(address: candidate, passcode: payload.passcode, nodeID: nodeID, options: options)
                break
            } catch ControllerError.paseFailed(let reason) where index + 1 < candidates.count {
                logger.info("commissioning: \(candidate) refused the passcode (\(reason)); trying the next match")
            } catch {
                throw HomeError.from(error, "commissioning")
            }
        }
        // What the node is: its endpoints' device types and its identity.
        let reports: [AttributeReport]
        do {
            reports = try await controller.read(
                nodeID,
                [
                    AttributePathIB(cluster: Clusters.Descriptor.id, attribute: Clusters.Descriptor.Attribute.deviceTypeList),
                    AttributePathIB(endpoint: 0, cluster: Clusters.BasicInformation.id),
                ])
        } catch {
            throw HomeError.from(error, "reading the new device's description")
        }
        var endpoints: [EndpointRecord] = []
        for r in reports where r.path.cluster == Clusters.Descriptor.id {
            let types = (r.value?.members ?? []).compactMap { $0.value[context: 0]?.uintValue }.compactMap { UInt32(exactly: $0) }
            endpoints.append(EndpointRecord(endpoint: r.path.endpoint, deviceTypes: types))
        }
        typealias Basic = Clusters.BasicInformation.Attribute
        func basic(_ id: AttributeID) -> TLVValue? {
            reports.first { $0.path.cluster == Clusters.BasicInformation.id && $0.path.attribute == id }?.value
        }
        let productName = basic(Basic.productName)?.stringValue
        let record = DeviceRecord(
            id: "matter-" + String(nodeID, radix: 16), nodeID: nodeID,
            name: deviceName ?? (try? normalizedName(productName ?? "", "device")) ?? "Matter device",
            structureID: structure, roomID: roomID, host: target.ipAddress ?? "127.0.0.1", port: target.port ?? 5540,
            endpoints: endpoints.sorted { $0.endpoint < $1.endpoint },
            vendorID: basic(Basic.vendorID)?.uintValue.flatMap { UInt16(exactly: $0) },
            productID: basic(Basic.productID)?.uintValue.flatMap { UInt16(exactly: $0) },
            vendorName: basic(Basic.vendorName)?.stringValue, productName: productName, serialNumber: basic(Basic.serialNumber)?.stringValue
        )
        try await store.upsertDevice(record)
        var state = states[nodeID] ?? NodeState()
        for r in reports where r.path.cluster == Clusters.BasicInformation.id {
            if let v = r.value { state[.direct].attributes[r.path] = v }
        }
        states[nodeID] = state
        try await reload()
        return try require(snapshot.devices[record.id], "device \(record.id)")
    }

    /// The commissionable nodes that match the payload's discriminator, one address each.
    private func discover(_ payload: OnboardingPayload) async throws -> [SocketAddress] {
        let discovery: DNSSDDiscovery
        do { discovery = try DNSSDDiscovery() } catch {
            throw HomeError.unavailable("DNS-SD is not available (\(error)); give the device's address")
        }
        let nodes = try await discovery.commissionableNodes(
            duration: .seconds(3),
            longDiscriminator: payload.hasShortDiscriminatorOnly ? nil : payload.discriminator,
            shortDiscriminator: payload.hasShortDiscriminatorOnly ? payload.shortDiscriminator : nil)
        let addresses = nodes.compactMap(\.addresses.first)
        guard !addresses.isEmpty else {
            throw HomeError.notFound("no commissionable device with discriminator \(payload.discriminator) answered")
        }
        return addresses
    }
}
