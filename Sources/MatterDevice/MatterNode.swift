import Logging
import MatterModel
import MatterProtocol
import MatterTLV

/// A concrete command path (endpoint, cluster, command).
public struct CommandPath: Hashable, Sendable, CustomStringConvertible {
    public var endpoint: EndpointNumber
    public var cluster: ClusterID
    public var command: CommandID

    public init(endpoint: EndpointNumber, cluster: ClusterID, command: CommandID) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.command = command
    }

    public var description: String { "\(endpoint)/\(cluster)/\(command)" }
}

/// An attribute value with the data version of its cluster instance at read time.
public struct AttributeData: Sendable, Hashable {
    public var value: TLVValue
    public var dataVersion: DataVersion

    public init(value: TLVValue, dataVersion: DataVersion) {
        self.value = value
        self.dataVersion = dataVersion
    }
}

/// A Matter node's data model: endpoints, cluster servers and their one attribute
/// store, driven by an injectable clock. The Interaction Model layer calls `read`,
/// `write` and `invoke` with the session each request arrived on, expands wildcards
/// through `composition` (filtering with `canAccess`), and feeds subscriptions from
/// `changes`. The runtime follows `commissioningEvents` (advertising, PASE verifiers,
/// closing sessions) and reports session life cycles back.
public actor MatterNode {
    public nonisolated let model: MatterModel
    public nonisolated let clock: any MatterClock
    /// Endpoints, clusters, attributes and commands; fixed after construction.
    public nonisolated let composition: NodeComposition
    /// Where the node keeps its state (nil: nothing survives a restart).
    public nonisolated let stateStore: NodeStateStore?

    let runtime: NodeRuntime
    private nonisolated let broadcaster: ChangeBroadcaster
    private nonisolated let commissioningBroadcaster: Broadcaster<CommissioningEvent>
    private nonisolated let eventBroadcaster: Broadcaster<RecordedEvent>
    private nonisolated let boundCommandBroadcaster: Broadcaster<BoundCommand>
    private let logger: Logger

    /// Builds a node, restores what `commissioning.stateStore` holds (non-volatile
    /// attributes, fabrics, ACL, group keys) and applies start-up behaviour
    /// (StartUpOnOff, StartUpCurrentLevel, RebootCount). A state directory that cannot
    /// be read is reported as a NodeDescriptionError whose path names it.
    public init(
        description: NodeDescription,
        model: MatterModel = .standard,
        clock: any MatterClock = SystemClock(),
        logger: Logger = Logger(label: "matter.node"),
        commissioning: CommissioningConfiguration = CommissioningConfiguration()
    ) throws(NodeDescriptionError) {
        let broadcaster = ChangeBroadcaster()
        let commissioningBroadcaster = Broadcaster<CommissioningEvent>()
        let runtime = try NodeRuntime.build(
            description: description, model: model, clock: clock, logger: logger, broadcaster: broadcaster,
            commissioning: commissioning, commissioningEvents: commissioningBroadcaster
        )
        self.model = model
        self.clock = clock
        self.composition = runtime.composition
        self.stateStore = commissioning.stateStore
        self.broadcaster = broadcaster
        self.commissioningBroadcaster = commissioningBroadcaster
        self.logger = logger
        self.runtime = runtime
        self.eventBroadcaster = runtime.recordedEvents
        self.boundCommandBroadcaster = runtime.boundCommands
        runtime.owner = self
        Self.boot(runtime)
    }

    /// Power comes back after a power cut (`NodeServer.powerOn`): the node boots again from what
    /// it kept, with every start-up behaviour (StartUpOnOff 1.5.6.6, StartUpCurrentLevel,
    /// StartUpColorTemperatureMireds, RebootCount, the StartUp event), as a reboot does.
    public func powerUp() {
        Self.boot(runtime)
    }

    /// Every server's start-up behaviour, then BasicInformation's StartUp event (Core spec
    /// 11.1.6.1): critical, with the software version.
    private static func boot(_ runtime: NodeRuntime) {
        runtime.startUp()
        let basic = ClusterPath(endpoint: 0, cluster: Self.basicInformation)
        if runtime.composition.clusters(on: 0).contains(Self.basicInformation) {
            let version = runtime.store.value(
                AttributePath(endpoint: 0, cluster: Self.basicInformation, attribute: Clusters.BasicInformation.Attribute.softwareVersion))
            runtime.recordEvent(
                basic, Clusters.BasicInformation.Event.startUp, priority: .critical,
                data: .structure([TLVElement(tag: .context(0), version ?? .unsigned(0))]))
        }
    }

    static let basicInformation = Clusters.BasicInformation.id

    /// A new subscription to the events recorded from now on; ends when the node stops.
    public nonisolated var recordedEvents: AsyncStream<RecordedEvent> {
        eventBroadcaster.subscribe()
    }

    /// Commands the node sends on its own to the targets its Binding names, from now on (a light
    /// switch's press); the node's server sends them. Ends when the node stops.
    public nonisolated var boundCommands: AsyncStream<BoundCommand> {
        boundCommandBroadcaster.subscribe()
    }

    /// The events the log still holds, numbered at or above `minimumNumber`, in order.
    public func events(from minimumNumber: UInt64 = 0) -> [RecordedEvent] {
        runtime.events.events(from: minimumNumber)
    }

    /// The events the log still holds on any of `paths` (wildcards allowed), numbered at or
    /// above `minimumNumber`, in order.
    public func events(matching paths: [EventPathIB], from minimumNumber: UInt64 = 0) -> [RecordedEvent] {
        runtime.events.events(from: minimumNumber).filter { event in
            paths.contains { p in
                (p.endpoint == nil || p.endpoint == event.endpoint) && (p.cluster == nil || p.cluster == event.cluster)
                    && (p.event == nil || p.event == event.event)
            }
        }
    }

    /// Records an event of a cluster instance (for clusters, and for tests).
    @discardableResult
    public func recordEvent(
        _ cluster: ClusterPath, _ event: EventID, priority: EventDataIB.Priority,
        data: TLVValue = .structure([])
    ) -> RecordedEvent {
        runtime.recordEvent(cluster, event, priority: priority, data: data)
    }

    /// Carries out what a person does at the device (`matter-sim act`), on `endpoint` or on
    /// the first endpoint whose cluster can. The change is local: controllers see it as an
    /// ordinary report or event. Returns the endpoint it acted on.
    @discardableResult
    public func act(_ action: PhysicalAction, on endpoint: EndpointNumber? = nil) throws(PhysicalActionError) -> EndpointNumber {
        try runtime.act(action, on: endpoint)
    }

    /// Whether some endpoint has the cluster that carries out `action`.
    public nonisolated func canAct(_ action: PhysicalAction) -> Bool {
        composition.endpoints.contains { !Set(composition.clusters(on: $0)).isDisjoint(with: action.clusters) }
    }

    /// A new subscription to every attribute change from now on. Each access
    /// subscribes afresh; the stream ends when the node stops.
    public nonisolated var changes: AsyncStream<AttributeChange> {
        broadcaster.subscribe()
    }

    /// A new subscription to the commissioning events from now on; ends when the node stops.
    public nonisolated var commissioningEvents: AsyncStream<CommissioningEvent> {
        commissioningBroadcaster.subscribe()
    }

    /// Stops all timers, saves pending non-volatile attributes and ends every stream.
    public func stop() {
        // BasicInformation ShutDown (11.1.6.2): the last event of an orderly stop.
        if !runtime.stopped, runtime.composition.clusters(on: 0).contains(Self.basicInformation) {
            runtime.recordEvent(
                ClusterPath(endpoint: 0, cluster: Self.basicInformation), Clusters.BasicInformation.Event.shutDown, priority: .critical)
        }
        runtime.stop()
        broadcaster.finish()
        commissioningBroadcaster.finish()
        runtime.recordedEvents.finish()
        runtime.boundCommands.finish()
    }

    // MARK: Interaction Model surface

    /// Reads one concrete attribute (Core spec 8.4.3.2 for the status codes) for a
    /// session (nil: an internal read, unchecked and unfiltered). Fabric-scoped lists
    /// keep only the accessing fabric's entries when `fabricFiltered`; otherwise other
    /// fabrics' entries lose their fabric-sensitive fields (7.13.6).
    public func read(
        _ path: AttributePath, session: SessionContext? = nil, fabricFiltered: Bool = true
    ) -> Result<AttributeData, InteractionStatus> {
        let session = runtime.commissioning.effective(session)
        let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        if let missing = missingStatus(cluster) { return .failure(missing) }
        guard let stored = runtime.store.value(path), let version = runtime.store.dataVersion(cluster) else {
            return .failure(InteractionStatus(.unsupportedAttribute))
        }
        let attribute = composition.definition(of: cluster)?.attribute(path.attribute)
        if let session, !isGranted(session.subject, cluster, attribute?.readPrivilege ?? .view) {
            return .failure(InteractionStatus(.unsupportedAccess))
        }
        var value =
            runtime.servers[cluster]?.readValue(path.attribute, stored: stored, context: runtime.context(cluster, session: session))
            ?? stored
        if let session, let attribute, attribute.fabricScoped, let definition = composition.definition(of: cluster) {
            value = FabricScopedList.filtered(
                value, accessingFabric: session.fabricIndex, fabricFiltered: fabricFiltered,
                sensitiveFields: FabricScopedList.sensitiveFields(of: attribute, in: definition))
        }
        return .success(AttributeData(value: value, dataVersion: version))
    }

    /// Reads one attribute for a subject without a session of its own.
    public func read(
        _ path: AttributePath, subject: SubjectDescriptor?, fabricFiltered: Bool = true
    ) -> Result<AttributeData, InteractionStatus> {
        read(path, session: subject.map { SessionContext(subject: $0) }, fabricFiltered: fabricFiltered)
    }

    /// The current data version of a cluster instance, for DataVersionFilters.
    public func dataVersion(of cluster: ClusterPath) -> DataVersion? {
        runtime.store.dataVersion(cluster)
    }

    /// Whether a subject holds a privilege on a cluster instance (Core spec 6.6.6), for
    /// the Interaction Model's wildcard expansion, which skips what it may not see.
    /// nil (internal) is always granted.
    public func canAccess(_ subject: SubjectDescriptor?, _ cluster: ClusterPath, privilege: Privilege) -> Bool {
        guard let subject else { return true }
        return isGranted(subject, cluster, privilege)
    }

    /// Whether a subject may read (or, with `.write`, write) one attribute, using the
    /// attribute's own required privilege.
    public func canAccess(_ subject: SubjectDescriptor?, _ path: AttributePath, for operation: AttributeOperation = .read) -> Bool {
        let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        let attribute = composition.definition(of: cluster)?.attribute(path.attribute)
        let privilege: Privilege
        switch operation {
        case .read: privilege = attribute?.readPrivilege ?? .view
        case .write:
            guard let write = attribute?.writePrivilege else { return false }
            privilege = write
        }
        return canAccess(subject, cluster, privilege: privilege)
    }

    /// Writes one concrete attribute from outside the node (Core spec 8.7.3.2),
    /// checking writability, access, timed interaction and the model's constraints.
    /// A fabric-scoped list replaces only the writer's fabric's entries (7.13.7).
    public func write(
        _ path: AttributePath, value: TLVValue, session: SessionContext? = nil, timed: Bool = false
    ) -> InteractionStatus {
        let session = runtime.commissioning.effective(session)
        let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        if let missing = missingStatus(cluster) { return missing }
        guard runtime.store.contains(path) else { return InteractionStatus(.unsupportedAttribute) }
        guard let definition = composition.definition(of: cluster),
            let attribute = definition.attribute(path.attribute),
            !GlobalAttribute.isGlobal(path.attribute),
            let writePrivilege = attribute.writePrivilege
        else {
            return InteractionStatus(.unsupportedWrite)
        }
        if let session, !isGranted(session.subject, cluster, writePrivilege) { return InteractionStatus(.unsupportedAccess) }
        if attribute.timedWrite && !timed { return InteractionStatus(.needsTimedInteraction) }
        let store = runtime.store
        let current: (AttributeID) -> TLVValue? = { id in
            store.value(AttributePath(endpoint: path.endpoint, cluster: path.cluster, attribute: id))
        }
        var newValue = value
        if attribute.fabricScoped, let session {
            // Fabric-scoped lists need an accessing fabric (8.7.3.2).
            guard session.fabricIndex != 0 else { return InteractionStatus(.unsupportedAccess) }
            guard let items = value.listItems else { return InteractionStatus(.invalidDataType) }
            let stamped = items.map { FabricScopedList.stamped($0, fabric: session.fabricIndex) }
            if let violation = definition.validate(.arrayOf(stamped), for: attribute, current: current) {
                logger.debug("write \(path) rejected: \(violation)")
                return InteractionStatus(Self.statusCode(for: violation))
            }
            newValue = FabricScopedList.replacing(entriesOf: session.fabricIndex, in: store.value(path) ?? .array([]), with: stamped)
        } else if let violation = definition.validate(value, for: attribute, current: current) {
            logger.debug("write \(path) rejected: \(violation)")
            return InteractionStatus(Self.statusCode(for: violation))
        }
        guard let server = runtime.servers[cluster] else { return InteractionStatus(.failure) }
        let context = runtime.context(cluster, session: session)
        if let rejected = server.validateWrite(path.attribute, value: newValue, context: context) { return rejected }
        if server.commitWrite(path.attribute, value: newValue, context: context) { return .success }
        if store.update(path, to: newValue) {
            server.didWrite(path.attribute, context: context)
        }
        return .success
    }

    /// Writes one attribute for a subject without a session of its own.
    public func write(_ path: AttributePath, value: TLVValue, subject: SubjectDescriptor?, timed: Bool = false) -> InteractionStatus {
        write(path, value: value, session: subject.map { SessionContext(subject: $0) }, timed: timed)
    }

    /// Invokes a command (Core spec 8.8.3.2): path, access, fabric-scope and timing
    /// checks, field checks against the model, then the cluster server.
    public func invoke(
        _ path: CommandPath, fields: TLVValue, session: SessionContext? = nil, timed: Bool = false
    ) async -> InvokeResult {
        let session = runtime.commissioning.effective(session)
        let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        if let missing = missingStatus(cluster) { return .status(missing) }
        guard composition.acceptedCommands(of: cluster).contains(path.command),
            let definition = composition.definition(of: cluster),
            let command = definition.command(path.command),
            let server = runtime.servers[cluster]
        else {
            return .failure(.unsupportedCommand)
        }
        if let session {
            guard isGranted(session.subject, cluster, command.invokePrivilege) else { return .failure(.unsupportedAccess) }
            // Fabric-scoped commands need an accessing fabric.
            if command.fabricScoped && session.fabricIndex == 0 { return .failure(.unsupportedAccess) }
        }
        if command.timed && !timed { return .failure(.needsTimedInteraction) }
        if let rejected = checkFields(
            fields, of: command, in: cluster, definition, features: composition.features(of: cluster),
            constraints: !server.answersConstraintErrors(path.command))
        {
            logger.debug("invoke \(path) rejected: \(rejected)")
            return .status(rejected)
        }
        return server.invoke(path.command, fields: CommandFields(fields), context: runtime.context(cluster, session: session))
    }

    /// Writes changed non-volatile attributes now instead of after the batching delay:
    /// the interaction server calls it before acknowledging a write or a command.
    public func persistChanges() {
        runtime.saveAttributes()
    }

    // MARK: Commissioning surface

    /// Opens the device's own (basic) commissioning window, as at first boot; nil keeps
    /// it open until commissioning completes or it is closed.
    public func openCommissioningWindow(timeout: Duration?) {
        runtime.commissioning.openWindow(.basic, timeout: timeout, openedBy: nil)
    }

    /// Closes the commissioning window (e.g. after too many failed PASE attempts, 5.4.2.5).
    public func closeCommissioningWindow() {
        runtime.commissioning.closeWindow()
    }

    public var commissioningWindow: CommissioningWindowInfo? { runtime.commissioning.window }

    /// A PASE session was established: arms the fail-safe for it (Core spec 5.5).
    public func paseSessionEstablished(_ session: SessionContext) {
        runtime.commissioning.paseSessionEstablished(session)
    }

    /// A session ended; forgets what was bound to it.
    public func sessionClosed(_ id: SessionID) {
        runtime.commissioning.sessionClosed(id)
    }

    /// The node's fabrics, including one AddNOC installed under the armed fail-safe
    /// (CASE must work before CommissioningComplete).
    public var fabrics: [FabricInfo] { runtime.commissioning.fabrics.fabrics }

    /// The endpoints of a fabric's group.
    public func endpoints(inGroup group: UInt16, fabricIndex: FabricIndex) -> [EndpointNumber] {
        runtime.commissioning.group(group, fabric: fabricIndex)?.endpoints ?? []
    }

    /// The ACL the access checks use.
    public var accessControlEntries: [AccessControlEntry] { runtime.commissioning.accessControlEntries }

    /// Whether the fail-safe is armed.
    public var isFailSafeArmed: Bool { runtime.commissioning.failSafe != nil }

    // MARK: Internals

    /// Replaces one fabric's ACL entries directly, as an administrator's write would.
    func replaceAccessControlEntries(of fabric: FabricIndex, with entries: [AccessControlEntry]) {
        runtime.commissioning.replaceAccessControlEntries(of: fabric, with: entries)
    }

    func timerFired(_ key: TimerKey, generation: UInt64) {
        runtime.fireTimer(key, generation: generation)
    }

    /// Core spec 6.6.6 with the endpoint's device types as targets.
    private func isGranted(_ subject: SubjectDescriptor, _ cluster: ClusterPath, _ privilege: Privilege) -> Bool {
        let deviceTypes = runtime.layout.endpoint(cluster.endpoint)?.deviceTypes.map(\.id) ?? []
        return runtime.commissioning.isGranted(
            subject, AccessRequest(endpoint: cluster.endpoint, cluster: cluster.cluster, deviceTypes: deviceTypes, privilege: privilege))
    }

    private func missingStatus(_ cluster: ClusterPath) -> InteractionStatus? {
        guard composition.endpoints.contains(cluster.endpoint) else { return InteractionStatus(.unsupportedEndpoint) }
        guard composition.definition(of: cluster) != nil else { return InteractionStatus(.unsupportedCluster) }
        return nil
    }

    /// Missing mandatory fields or fields of the wrong type make the command invalid;
    /// well-typed values outside their constraints are constraint errors.
    /// Checks a command's fields against the model; bounds that name an attribute
    /// ("1 to NumberOfTotalUsersSupported") take its value on this instance.
    private func checkFields(
        _ fields: TLVValue, of command: CommandDefinition, in cluster: ClusterPath, _ definition: ClusterDefinition,
        features: Set<String>, constraints: Bool = true
    ) -> InteractionStatus? {
        let store = runtime.store
        let current = { (id: AttributeID) in store.value(AttributePath(endpoint: cluster.endpoint, cluster: cluster.cluster, attribute: id))
        }
        guard case .structure = fields else { return InteractionStatus(.invalidCommand) }
        for field in command.fields where field.conformance.isAllowed(features: features) {
            guard let value = fields[context: field.id] else {
                // Fields with a spec default (OptionsMask, OptionsOverride) may be left
                // out by legacy clients (Application Cluster spec 1.6.7.1.1).
                if field.optional || field.defaultValue != nil || !field.conformance.isMandatory(features: features) {
                    continue
                }
                return InteractionStatus(.invalidCommand)
            }
            if let violation = definition.validate(value, for: field, current: current), constraints || violation.kind == .typeMismatch {
                return InteractionStatus(Self.statusCode(for: violation, typeMismatch: .invalidCommand))
            }
        }
        return nil
    }

    private static func statusCode(for violation: ConstraintViolation, typeMismatch: StatusCode = .invalidDataType) -> StatusCode {
        violation.kind == .typeMismatch ? typeMismatch : .constraintError
    }
}

/// Which access an attribute check is for.
public enum AttributeOperation: Sendable, Hashable {
    case read
    case write
}
