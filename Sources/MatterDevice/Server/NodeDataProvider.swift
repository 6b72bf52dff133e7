import MatterModel
import MatterProtocol
import MatterTLV

/// The Interaction Model's view of a MatterNode: structure and metadata from the node's
/// fixed composition and the model, data and access checks through the node actor,
/// subscriptions fed from the node's change stream.
///
/// One view per transport: the view the UDP side serves withholds the node's cloud-only
/// clusters (they do not exist over the LAN: not in Descriptor ServerList, concrete
/// paths answer UNSUPPORTED_CLUSTER, wildcards skip them), the cloud relay's view
/// withholds nothing.
struct NodeDataProvider: InteractionDataProvider {
    let node: MatterNode
    /// Cluster instances this view does not have.
    let withheld: Set<ClusterPath>
    private let composition: NodeComposition
    /// Per cluster instance, computed once: the composition never changes.
    private let attributeMetadata: [ClusterPath: [AttributeMetadata]]
    private let commandMetadata: [ClusterPath: [CommandMetadata]]
    /// Per endpoint, the clusters of this view, in the composition's order.
    private let visibleClusters: [EndpointNumber: [ClusterID]]
    /// Per endpoint whose clusters this view withholds, device type → (stand-in, revision):
    /// the DeviceTypeList of this view names only types its clusters conform to.
    private let deviceTypeStandIns: [EndpointNumber: [UInt64: (id: UInt64, revision: UInt64)]]

    /// Runs after an AddNOC that added a fabric and before its response goes out: the node
    /// server puts the fabric's operational record on the daemon, so the commissioner's
    /// lookup that follows the response (Core §4.3.2.1) finds it at once.
    let fabricAdded: (@Sendable (FabricIndex) async -> Void)?

    /// `--trace`: each invoke of a commissioning, by its cluster and command names.
    let trace: CommissioningTrace?

    init(
        node: MatterNode, withholding withheld: Set<ClusterPath> = [], trace: CommissioningTrace? = nil,
        fabricAdded: (@Sendable (FabricIndex) async -> Void)? = nil
    ) {
        self.node = node
        self.trace = trace
        self.fabricAdded = fabricAdded
        let composition = node.composition
        self.composition = composition
        var attributes: [ClusterPath: [AttributeMetadata]] = [:]
        var commands: [ClusterPath: [CommandMetadata]] = [:]
        var visible: [EndpointNumber: [ClusterID]] = [:]
        for endpoint in composition.endpoints {
            visible[endpoint] = composition.clusters(on: endpoint).filter {
                !withheld.contains(ClusterPath(endpoint: endpoint, cluster: $0))
            }
            for cluster in visible[endpoint] ?? [] {
                let path = ClusterPath(endpoint: endpoint, cluster: cluster)
                let definition = composition.definition(of: path)
                attributes[path] = composition.attributes(of: path).map { id in
                    guard let attribute = definition?.attribute(id) else { return AttributeMetadata(id: id) }
                    return AttributeMetadata(
                        id: id, readPrivilege: attribute.readPrivilege, writePrivilege: attribute.writePrivilege,
                        requiresTimedWrite: attribute.timedWrite, isFabricScoped: attribute.fabricScoped)
                }
                commands[path] = composition.acceptedCommands(of: path).map { id in
                    guard let command = definition?.command(id) else { return CommandMetadata(id: id) }
                    return CommandMetadata(
                        id: id, invokePrivilege: command.invokePrivilege,
                        requiresTimedInvoke: command.timed, isFabricScoped: command.fabricScoped)
                }
            }
        }
        var standIns: [EndpointNumber: [UInt64: (id: UInt64, revision: UInt64)]] = [:]
        for endpoint in composition.endpoints where withheld.contains(where: { $0.endpoint == endpoint }) {
            let served = Set(visible[endpoint] ?? [])
            for type in node.model.deviceTypes {
                if let standIn = node.model.standIn(for: type.id, servedClusters: served) {
                    standIns[endpoint, default: [:]][UInt64(type.id.rawValue)] =
                        (UInt64(standIn.id.rawValue), UInt64(standIn.revision))
                }
            }
        }
        deviceTypeStandIns = standIns
        self.withheld = withheld
        attributeMetadata = attributes
        commandMetadata = commands
        visibleClusters = visible
    }

    /// Descriptor (Core spec 9.5) and its ServerList attribute.
    static let descriptor = Clusters.Descriptor.id
    static let serverList = Clusters.Descriptor.Attribute.serverList
    static let deviceTypeList = Clusters.Descriptor.Attribute.deviceTypeList

    func endpoints() async -> [EndpointNumber] { composition.endpoints }

    func clusters(on endpoint: EndpointNumber) async -> [ClusterID] { visibleClusters[endpoint] ?? [] }

    func attributes(of cluster: ClusterPath) async -> [AttributeMetadata] { attributeMetadata[cluster] ?? [] }

    func commands(of cluster: ClusterPath) async -> [CommandMetadata] { commandMetadata[cluster] ?? [] }

    func dataVersion(of cluster: ClusterPath) async -> DataVersion? {
        guard !withheld.contains(cluster) else { return nil }
        return await node.dataVersion(of: cluster)
    }

    func endpoints(inGroup group: UInt16, fabricIndex: FabricIndex) async -> [EndpointNumber] {
        await node.endpoints(inGroup: group, fabricIndex: fabricIndex)
    }

    func checkAccess(_ subject: SubjectDescriptor, to cluster: ClusterPath, privilege: Privilege) async -> Bool {
        guard !withheld.contains(cluster) else { return false }
        return await node.canAccess(subject, cluster, privilege: privilege)
    }

    func eventReadPrivilege(_ event: EventID, of cluster: ClusterPath) async -> Privilege {
        composition.definition(of: cluster)?.event(event)?.readPrivilege ?? .view
    }

    func read(_ path: AttributePath, context: AttributeReadContext) async -> Result<VersionedAttributeValue, InteractionStatus> {
        guard !withheld.contains(path.clusterPath) else { return .failure(InteractionStatus(.unsupportedCluster)) }
        let session = SessionContext(subject: context.subject, session: context.session)
        switch await node.read(path, session: session, fabricFiltered: context.isFabricFiltered) {
        case .success(let data):
            var value = data.value
            // The node's own ServerList names every cluster; this view's names its own.
            if path.cluster == Self.descriptor, path.attribute == Self.serverList, !withheld.isEmpty, let items = value.listItems {
                value = .arrayOf(
                    items.filter { item in
                        guard let id = item.uintValue.flatMap({ UInt32(exactly: $0) }) else { return true }
                        return !withheld.contains(ClusterPath(endpoint: path.endpoint, cluster: ClusterID(id)))
                    })
            }
            if path.cluster == Self.descriptor, path.attribute == Self.deviceTypeList,
                let standIns = deviceTypeStandIns[path.endpoint], let items = value.listItems
            {
                value = .arrayOf(
                    items.map { item in
                        guard let type = item[context: 0]?.uintValue, let standIn = standIns[type] else { return item }
                        return TLVValue.contextStructure([(0, .uint(standIn.id)), (1, .uint(standIn.revision))])
                    })
            }
            return .success(VersionedAttributeValue(value, dataVersion: data.dataVersion))
        case .failure(let status): return .failure(status)
        }
    }

    func write(_ path: AttributePath, _ operation: AttributeWriteOperation, context: InteractionContext) async -> InteractionStatus {
        guard !withheld.contains(path.clusterPath) else { return InteractionStatus(.unsupportedCluster) }
        let session = SessionContext(subject: context.subject, session: context.session)
        switch operation {
        case .replace(let value):
            return await node.write(path, value: value, session: session, timed: context.isTimed)
        case .appendItem(let item):
            return await node.appendItem(item, to: path, session: session, timed: context.isTimed)
        }
    }

    func invoke(_ path: ConcreteCommandPath, fields: TLVValue?, context: InteractionContext) async -> CommandOutcome {
        guard !withheld.contains(ClusterPath(endpoint: path.endpoint, cluster: path.cluster)) else {
            return .status(InteractionStatus(.unsupportedCluster))
        }
        let session = SessionContext(subject: context.subject, session: context.session)
        let command = CommandPath(endpoint: path.endpoint, cluster: path.cluster, command: path.command)
        let traced = trace.map { _ in commandName(path) }
        if let traced { trace?.mark("invoke \(traced)") }
        let outcome = await node.invoke(command, fields: fields ?? .structure([]), session: session, timed: context.isTimed)
        if let traced {
            let done = "\(traced) answered"
            if path.cluster == GeneralCommissioningServer.clusterID,
                path.command == GeneralCommissioningServer.Command.commissioningComplete
            {
                trace?.end(done)
            } else {
                trace?.mark(done)
            }
        }
        switch outcome {
        case .status(let status): return .status(status)
        case .response(let id, let fields):
            if let fabricAdded, path.cluster == OperationalCredentialsServer.clusterID,
                path.command == OperationalCredentialsServer.Command.addNOC,
                id == OperationalCredentialsServer.Command.nocResponse, fields[context: 0]?.uintValue == 0,
                let raw = fields[context: 1]?.uintValue, let index = FabricIndex(exactly: raw)
            {
                await fabricAdded(index)
            }
            return .response(id, fields)
        }
    }

    /// `Cluster.Command` from the model, ids where it has no name.
    private func commandName(_ path: ConcreteCommandPath) -> String {
        let cluster = composition.definition(of: ClusterPath(endpoint: path.endpoint, cluster: path.cluster))
        let clusterName = cluster?.name ?? "cluster \(path.cluster)"
        return "\(clusterName).\(cluster?.command(path.command)?.name ?? "command \(path.command)")"
    }

    func persistChanges() async { await node.persistChanges() }

    func settleChanges() async {
        // A turn on the node's actor waits for the command in progress to finish; the yields
        // let the change forwarding (here, then the subscription's) hand on what it posted.
        _ = await node.fabrics.isEmpty
        for _ in 0..<8 { await Task.yield() }
    }

    /// Events of the log on `paths` (Core spec 8.4.3.3): wildcards take what this view has
    /// and the subject may View; a concrete path to an endpoint or cluster that is not there
    /// gets a status instead.
    func events(matching paths: [EventPathIB], minimumEventNumber: UInt64?, subject: SubjectDescriptor) async -> [EventReportIB] {
        var reports: [EventReportIB] = []
        var wanted: [EventPathIB] = []
        for path in paths {
            if let endpoint = path.endpoint, !composition.endpoints.contains(endpoint) {
                reports.append(.status(EventStatusIB(path: path, status: StatusIB(.unsupportedEndpoint))))
            } else if let endpoint = path.endpoint, let cluster = path.cluster, !(visibleClusters[endpoint] ?? []).contains(cluster) {
                reports.append(.status(EventStatusIB(path: path, status: StatusIB(.unsupportedCluster))))
            } else {
                wanted.append(path)
            }
        }
        guard !wanted.isEmpty else { return reports }
        var allowed: [EventPathIB: Bool] = [:]
        for event in await node.events(matching: wanted, from: minimumEventNumber ?? 0) {
            let cluster = ClusterPath(endpoint: event.endpoint, cluster: event.cluster)
            guard !withheld.contains(cluster) else { continue }
            // Each event's own read privilege (AccessControlEntryChanged needs Administer).
            if allowed[event.path] == nil {
                let privilege = await eventReadPrivilege(event.event, of: cluster)
                allowed[event.path] = await checkAccess(subject, to: cluster, privilege: privilege)
            }
            guard allowed[event.path] == true else { continue }
            // A fabric-sensitive event (AccessControlEntryChanged) goes only to the fabric named
            // in its FabricIndex field (Core 7.14.2.1).
            if composition.definition(of: cluster)?.event(event.event)?.fabricSensitive == true,
                event.data[context: 254]?.unsignedValue != UInt64(subject.fabricIndex)
            {
                continue
            }
            reports.append(.data(event.dataIB))
        }
        return reports
    }

    func recordedEvents() -> AsyncStream<EventPathIB> {
        let source = node.recordedEvents
        return AsyncStream(bufferingPolicy: .bufferingNewest(256)) { continuation in
            let withheld = withheld
            let forwarding = Task {
                for await event in source where !withheld.contains(ClusterPath(endpoint: event.endpoint, cluster: event.cluster)) {
                    continuation.yield(event.path)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in forwarding.cancel() }
        }
    }

    func attributeChanges() -> AsyncStream<AttributePath> {
        // Subscribe now (not when the stream is first iterated): a change made while the
        // subscription is being primed must not be lost.
        let source = node.changes
        return AsyncStream(bufferingPolicy: .unbounded) { continuation in
            let withheld = withheld
            let forwarding = Task {
                for await change in source where !withheld.contains(change.path.clusterPath) { continuation.yield(change.path) }
                continuation.finish()
            }
            // The subscription ended: stop listening, which unsubscribes from the node.
            continuation.onTermination = { _ in forwarding.cancel() }
        }
    }
}

extension MatterNode {
    /// Appends one entry to a list attribute (a WriteRequest with ListIndex null, Core spec
    /// 10.6.4.3.1): the list as the writer sees it (its own fabric's entries of a
    /// fabric-scoped list) plus the item, written with the same checks as a whole write.
    func appendItem(_ item: TLVValue, to path: AttributePath, session: SessionContext, timed: Bool) -> InteractionStatus {
        let current: TLVValue
        switch read(path, session: session, fabricFiltered: true) {
        case .success(let data): current = data.value
        case .failure(let status): return status
        }
        guard let items = current.listItems else { return InteractionStatus(.invalidDataType) }
        return write(path, value: .arrayOf(items + [item]), session: session, timed: timed)
    }
}

private extension AttributePath {
    var clusterPath: ClusterPath { ClusterPath(endpoint: endpoint, cluster: cluster) }
}
