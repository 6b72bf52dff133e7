import Foundation
import Logging
import MatterController
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore
import OpenCombine

/// Everything the public values are derived from, at one moment.
struct HomeSnapshot: Sendable, Equatable {
    var structures: [String: Structure] = [:]
    var rooms: [String: Room] = [:]
    var devices: [String: HomeDevice] = [:]
}

/// What is known of one node's state from its subscription.
struct NodeState: Sendable, Hashable {
    var attributes: [AttributePath: TLVValue] = [:]
    var connectivity: ConnectivityState = .unknown
    var lastError: String?
}

/// The clusters whose attributes a device's traits show, subscribed on every node.
let subscribedPaths: [AttributePathIB] = [
    AttributePathIB(cluster: Matter.OnOffTrait.clusterID),
    AttributePathIB(cluster: Matter.LevelControlTrait.clusterID),
    AttributePathIB(cluster: Matter.WindowCoveringTrait.clusterID),
    AttributePathIB(endpoint: 0, cluster: Matter.BasicInformationTrait.clusterID),
]

/// The engine behind a `Home`: the stored graph, the controller, each node's live state,
/// and the snapshot every publisher derives from.
actor HomeEngine {
    nonisolated let store: HomeStore
    nonisolated let configuration: HomeConfiguration
    private nonisolated let hub: SnapshotHub<HomeSnapshot>
    let logger: Logger
    private var graph = HomeGraph()
    private var generation: Int64 = -1
    private var states: [UInt64: NodeState] = [:]
    private var controllerTask: Task<MatterController, any Error>?
    private var subscriptions: [UInt64: Task<Void, Never>] = [:]
    private var poller: Task<Void, Never>?
    private var closed = false
    /// Device addresses already handed to the controller.
    private var knownAddresses: [UInt64: String] = [:]

    init(store: HomeStore, configuration: HomeConfiguration, logger: Logger) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        self.hub = SnapshotHub(HomeSnapshot())
    }

    func start() async throws {
        try await reload()
        let interval = configuration.changePollInterval
        poller = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self else { return }
                try? await self.reloadIfChanged()
            }
        }
    }

    func close() async {
        guard !closed else { return }
        closed = true
        poller?.cancel()
        for t in subscriptions.values { t.cancel() }
        subscriptions = [:]
        if let task = controllerTask, let controller = try? await task.value { await controller.shutdown() }
        controllerTask = nil
    }

    // MARK: Snapshots

    nonisolated func snapshots() -> AnyPublisher<HomeSnapshot, Never> { hub.publisher() }

    nonisolated var snapshot: HomeSnapshot { hub.value }

    nonisolated func query<T: HomeObject>(_ select: @escaping @Sendable (HomeSnapshot) -> Set<T>) -> Query<T> {
        Query { [hub] in
            hub.publisher().map(select).removeDuplicates().setFailureType(to: HomeError.self).eraseToAnyPublisher()
        }
    }

    var currentGeneration: Int64 { generation }

    private func reloadIfChanged() async throws {
        guard !closed, try await store.generation() != generation else { return }
        try await reload()
    }

    /// Reloads the graph from the store and republishes.
    func reload() async throws {
        let g = try await store.generation()
        graph = try await store.loadGraph()
        generation = g
        if configuration.connectDevices { syncSubscriptions() }
        publish()
    }

    private func publish() {
        var s = HomeSnapshot()
        for r in graph.structures.values { s.structures[r.id] = Structure(id: r.id, name: r.name, engine: self) }
        for r in graph.rooms.values { s.rooms[r.id] = Room(id: r.id, name: r.name, structureID: r.structureID, engine: self) }
        for d in graph.devices.values { s.devices[d.id] = makeDevice(d) }
        hub.send(s)
    }

    private func makeDevice(_ d: DeviceRecord) -> HomeDevice {
        let state = states[d.nodeID] ?? NodeState()
        let connectivity = SourceConnectivity.direct(state.connectivity)
        func traits(endpoint: EndpointNumber) -> TraitCollection {
            var contexts: [ClusterID: TraitContext] = [:]
            for trait in traitTypes {
                let ep: EndpointNumber = trait.clusterID == Matter.BasicInformationTrait.clusterID ? 0 : endpoint
                var attributes: [AttributeID: TLVValue] = [:]
                for (path, value) in state.attributes where path.endpoint == ep && path.cluster == trait.clusterID {
                    attributes[path.attribute] = value
                }
                // A cluster is present when the device reported it, or (before its first
                // report) when the device type requires it.
                if attributes.isEmpty && ep != 0 && !requiredClusters(of: d, endpoint: endpoint).contains(trait.clusterID) { continue }
                contexts[trait.clusterID] = TraitContext(deviceID: d.id, nodeID: d.nodeID, endpoint: ep, cluster: trait.clusterID,
                                                         attributes: attributes, connectivity: connectivity, engine: self)
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
        return HomeDevice(id: d.id, name: d.name, structureID: d.structureID, roomID: d.roomID, isMatterDevice: true,
                          sourceConnectivity: connectivity,
                          types: DeviceTypeController(deviceID: d.id, collection: DeviceTypeCollection(contexts: types), engine: self),
                          nodeID: d.nodeID)
    }

    private func requiredClusters(of d: DeviceRecord, endpoint: EndpointNumber) -> Set<ClusterID> {
        let types = d.endpoints.first { $0.endpoint == endpoint }?.deviceTypes ?? []
        var clusters = Set<ClusterID>()
        for t in types {
            switch t {
            case 0x0100, 0x0101, 0x010A: clusters.insert(Matter.OnOffTrait.clusterID)
            case 0x0202: clusters.insert(Matter.WindowCoveringTrait.clusterID)
            default: break
            }
            if t == 0x0101 { clusters.insert(Matter.LevelControlTrait.clusterID) }
        }
        return clusters
    }

    // MARK: Graph edits

    private func require<T>(_ value: T?, _ what: String) throws -> T {
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
            if let index = try? await controller.read(record.nodeID, AttributePath(
                endpoint: 0, cluster: ControllerIDs.operationalCredentials, attribute: ControllerIDs.OperationalCredentials.currentFabricIndex)),
               let fabricIndex = index.uintValue {
                _ = try? await controller.invoke(record.nodeID, ConcreteCommandPath(
                    endpoint: 0, cluster: ControllerIDs.operationalCredentials, command: ControllerIDs.OperationalCredentials.removeFabric),
                    fields: .structure([.context(0, .unsigned(fabricIndex))]))
            }
        }
        subscriptions.removeValue(forKey: record.nodeID)?.cancel()
        states[record.nodeID] = nil
        try await store.deleteDevice(id)
        try await reload()
    }

    // MARK: Controller

    /// The controller, started on first use with the stored fabric (created once).
    func controller() async throws -> MatterController {
        if closed { throw HomeError.cancelled("the home is closed") }
        if let task = controllerTask {
            // A concurrent first caller may still be handing over addresses: every caller
            // makes sure they are known before it uses the controller.
            let controller = try await task.value
            await handOverAddresses(to: controller)
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
            var c = MatterController.Configuration(port: configuration.controllerPort, binding: configuration.controllerBinding,
                                                   responseTimeout: configuration.responseTimeout,
                                                   handshakeStepTimeout: configuration.responseTimeout,
                                                   subscriptionMaxInterval: configuration.subscriptionMaxInterval)
            c.maxResubscribeDelay = configuration.maxResubscribeDelay
            let resolver: (any OperationalResolver)? = configuration.useDNSSD ? try? DNSSDDiscovery() : nil
            return try await MatterController.start(fabric: fabric, configuration: c, resolver: resolver, logger: logger)
        }
        controllerTask = task
        do {
            let controller = try await task.value
            await handOverAddresses(to: controller)
            return controller
        } catch {
            controllerTask = nil
            throw HomeError.from(error, "starting the Matter controller")
        }
    }

    /// Gives the controller the stored address of every device it has not been told of.
    private func handOverAddresses(to controller: MatterController) async {
        for d in graph.devices.values where knownAddresses[d.nodeID] != "\(d.host):\(d.port)" {
            if let address = try? SocketAddress(ipAddress: d.host, port: d.port) { await controller.setAddress(address, for: d.nodeID) }
            knownAddresses[d.nodeID] = "\(d.host):\(d.port)"
        }
    }

    // MARK: Live state

    private func syncSubscriptions() {
        let nodes = Set(graph.devices.values.map(\.nodeID))
        for (node, task) in subscriptions where !nodes.contains(node) {
            task.cancel()
            subscriptions[node] = nil
        }
        for d in graph.devices.values where subscriptions[d.nodeID] == nil {
            let node = d.nodeID
            let address = try? SocketAddress(ipAddress: d.host, port: d.port)
            subscriptions[node] = Task { [weak self] in
                guard let self, let controller = try? await self.controller() else { return }
                if let address { await controller.setAddress(address, for: node) }
                for await event in controller.subscribe(node, paths: subscribedPaths) {
                    await self.apply(event, node: node)
                }
            }
        }
    }

    private func apply(_ event: SubscriptionEvent, node: UInt64) {
        var state = states[node] ?? NodeState()
        switch event {
        case .established:
            state.connectivity = .online
            state.lastError = nil
        case .reports(let reports):
            state.connectivity = .online
            for r in reports {
                if let v = r.value { state.attributes[r.path] = v } else { state.attributes[r.path] = nil }
            }
        case .lost(let error):
            state.connectivity = .offline
            state.lastError = error.description
        }
        states[node] = state
        publish()
    }

    /// Marks a node unreachable after a failed command (its subscription will catch up).
    private func markOffline(_ node: UInt64, _ error: HomeError) {
        guard error.code == .deadlineExceeded || error.code == .unavailable else { return }
        var state = states[node] ?? NodeState()
        state.connectivity = .offline
        state.lastError = error.message
        states[node] = state
        publish()
    }

    /// Reads the node's trait attributes at once (when no report arrived yet).
    func refresh(nodeID: UInt64) async throws {
        let controller = try await controller()
        let reports = try await withDeadline(configuration.commandTimeout, "reading node 0x\(String(nodeID, radix: 16))") {
            try await controller.read(nodeID, subscribedPaths)
        }
        var state = states[nodeID] ?? NodeState()
        for r in reports { if let v = r.value { state.attributes[r.path] = v } }
        state.connectivity = .online
        states[nodeID] = state
        publish()
    }

    func currentTypes(deviceID: String) async -> DeviceTypeCollection? {
        guard let d = graph.devices[deviceID] else { return nil }
        if (states[d.nodeID]?.attributes.isEmpty ?? true) {
            do { try await refresh(nodeID: d.nodeID) } catch {
                markOffline(d.nodeID, HomeError.from(error, "reading \(d.name)"))
            }
        }
        return snapshot.devices[deviceID]?.types.collection
    }

    func invoke(deviceID: String, nodeID: UInt64, _ path: ConcreteCommandPath, fields: TLVValue) async throws {
        guard graph.devices[deviceID] != nil else { throw HomeError.notFound("no device with ID \(deviceID)") }
        let controller = try await controller()
        do {
            _ = try await withDeadline(configuration.commandTimeout, "command \(path) on \(deviceID)") {
                try await controller.invoke(nodeID, path, fields: fields)
            }
        } catch {
            let homeError = HomeError.from(error, "command \(path) on \(deviceID)")
            markOffline(nodeID, homeError)
            throw homeError
        }
    }

    func write(deviceID: String, nodeID: UInt64, _ path: AttributePath, _ value: TLVValue) async throws {
        guard graph.devices[deviceID] != nil else { throw HomeError.notFound("no device with ID \(deviceID)") }
        let controller = try await controller()
        do {
            try await withDeadline(configuration.commandTimeout, "write \(path) on \(deviceID)") {
                try await controller.write(nodeID, path, value: value)
            }
        } catch {
            let homeError = HomeError.from(error, "write \(path) on \(deviceID)")
            markOffline(nodeID, homeError)
            throw homeError
        }
    }

    // MARK: Commissioning

    func commission(payload: OnboardingPayload, address: SocketAddress?, structureID: String?, roomID: String?,
                    name: String?) async throws -> HomeDevice {
        if let structureID, graph.structures[structureID] == nil { throw HomeError.notFound("no structure with ID \(structureID)") }
        if let roomID {
            guard let room = graph.rooms[roomID] else { throw HomeError.notFound("no room with ID \(roomID)") }
            if let structureID, room.structureID != structureID {
                throw HomeError.invalidArgument("room \(roomID) is not in structure \(structureID)")
            }
        }
        let structure = structureID ?? roomID.flatMap { graph.rooms[$0]?.structureID }
            ?? (graph.structures.count == 1 ? graph.structures.keys.first : nil)
        let deviceName = try name.map { try normalizedName($0, "device") }
        let controller = try await controller()
        let target: SocketAddress
        if let address {
            target = address
        } else {
            target = try await discover(payload)
        }
        let nodeID = try await store.allocateNodeID()
        let options = CommissioningOptions(trustStore: try configuration.paaTrustStore.map { try PAATrustStore(directory: $0) },
                                           allowUntrustedAttestation: configuration.allowUntrustedAttestation)
        do {
            _ = try await controller.commission(address: target, passcode: payload.passcode, nodeID: nodeID, options: options)
        } catch {
            throw HomeError.from(error, "commissioning")
        }
        // What the node is: its endpoints' device types and its identity.
        let reports: [AttributeReport]
        do {
            reports = try await controller.read(nodeID, [
                AttributePathIB(cluster: ControllerIDs.descriptor, attribute: ControllerIDs.Descriptor.deviceTypeList),
                AttributePathIB(endpoint: 0, cluster: ControllerIDs.basicInformation),
            ])
        } catch {
            throw HomeError.from(error, "reading the new device's description")
        }
        var endpoints: [EndpointRecord] = []
        for r in reports where r.path.cluster == ControllerIDs.descriptor {
            let types = (r.value?.members ?? []).compactMap { $0.value[context: 0]?.uintValue }.compactMap { UInt32(exactly: $0) }
            endpoints.append(EndpointRecord(endpoint: r.path.endpoint, deviceTypes: types))
        }
        func basic(_ id: UInt32) -> TLVValue? {
            reports.first { $0.path.cluster == ControllerIDs.basicInformation && $0.path.attribute == AttributeID(id) }?.value
        }
        let productName = basic(0x0003)?.stringValue
        let record = DeviceRecord(
            id: "matter-" + String(nodeID, radix: 16), nodeID: nodeID,
            name: deviceName ?? (try? normalizedName(productName ?? "", "device")) ?? "Matter device",
            structureID: structure, roomID: roomID, host: target.ipAddress ?? "127.0.0.1", port: target.port ?? 5540,
            endpoints: endpoints.sorted { $0.endpoint < $1.endpoint },
            vendorID: basic(0x0002)?.uintValue.flatMap { UInt16(exactly: $0) },
            productID: basic(0x0004)?.uintValue.flatMap { UInt16(exactly: $0) },
            vendorName: basic(0x0001)?.stringValue, productName: productName, serialNumber: basic(0x000F)?.stringValue)
        try await store.upsertDevice(record)
        var state = states[nodeID] ?? NodeState()
        for r in reports where r.path.cluster == ControllerIDs.basicInformation { if let v = r.value { state.attributes[r.path] = v } }
        states[nodeID] = state
        try await reload()
        return try require(snapshot.devices[record.id], "device \(record.id)")
    }

    private func discover(_ payload: OnboardingPayload) async throws -> SocketAddress {
        let discovery: DNSSDDiscovery
        do { discovery = try DNSSDDiscovery() } catch {
            throw HomeError.unavailable("DNS-SD is not available (\(error)); give the device's address")
        }
        let nodes = try await discovery.commissionableNodes(
            duration: .seconds(3),
            longDiscriminator: payload.hasShortDiscriminatorOnly ? nil : payload.discriminator,
            shortDiscriminator: payload.hasShortDiscriminatorOnly ? payload.shortDiscriminator : nil)
        guard let address = nodes.first?.addresses.first else {
            throw HomeError.notFound("no commissionable device with discriminator \(payload.discriminator) answered")
        }
        return address
    }
}
