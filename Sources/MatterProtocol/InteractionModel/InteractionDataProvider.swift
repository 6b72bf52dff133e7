import MatterModel
import MatterTLV

/// What the Interaction Model needs to know about one attribute to route a
/// read or write before it reaches the data (spec 7.6 access, 7.7 qualities).
public struct AttributeMetadata: Hashable, Sendable {
    public var id: AttributeID
    public var readPrivilege: Privilege
    /// nil: the attribute is read-only.
    public var writePrivilege: Privilege?
    /// Writes must be timed (access letter T).
    public var requiresTimedWrite: Bool
    /// The attribute is a fabric-scoped list (access letter F).
    public var isFabricScoped: Bool

    public init(
        id: AttributeID, readPrivilege: Privilege = .view, writePrivilege: Privilege? = nil,
        requiresTimedWrite: Bool = false, isFabricScoped: Bool = false
    ) {
        self.id = id
        self.readPrivilege = readPrivilege
        self.writePrivilege = writePrivilege
        self.requiresTimedWrite = requiresTimedWrite
        self.isFabricScoped = isFabricScoped
    }
}

/// What the Interaction Model needs to know about one accepted command.
public struct CommandMetadata: Hashable, Sendable {
    public var id: CommandID
    public var invokePrivilege: Privilege
    /// Invokes must be timed (access letter T).
    public var requiresTimedInvoke: Bool
    /// The command needs an accessing fabric (access letter F).
    public var isFabricScoped: Bool

    public init(id: CommandID, invokePrivilege: Privilege = .operate, requiresTimedInvoke: Bool = false, isFabricScoped: Bool = false) {
        self.id = id
        self.invokePrivilege = invokePrivilege
        self.requiresTimedInvoke = requiresTimedInvoke
        self.isFabricScoped = isFabricScoped
    }
}

/// An attribute value with its cluster's data version at the time it was read.
public struct VersionedAttributeValue: Hashable, Sendable {
    public var value: TLVValue
    public var dataVersion: DataVersion

    public init(_ value: TLVValue, dataVersion: DataVersion) {
        self.value = value
        self.dataVersion = dataVersion
    }
}

/// Context of one read.
public struct AttributeReadContext: Hashable, Sendable {
    public var subject: SubjectDescriptor
    /// Fabric-scoped lists keep only the accessing fabric's entries
    /// (spec chapter 8, Read Interaction); when false, other fabrics' fabric-sensitive fields are omitted.
    public var isFabricFiltered: Bool
    /// The session the read (or the subscription) arrived on.
    public var session: InteractionSessionIdentity?

    public init(subject: SubjectDescriptor, isFabricFiltered: Bool, session: InteractionSessionIdentity? = nil) {
        self.subject = subject
        self.isFabricFiltered = isFabricFiltered
        self.session = session
    }
}

/// One write of a WriteRequest, after list-chunk reassembly (spec 10.6.4).
public enum AttributeWriteOperation: Hashable, Sendable {
    /// Replace the whole value (for a list: replace all entries with this array).
    case replace(TLVValue)
    /// Append one entry to a list attribute (ListIndex null).
    case appendItem(TLVValue)
}

/// Context of one write or invoke.
public struct InteractionContext: Hashable, Sendable {
    public var subject: SubjectDescriptor
    /// The action came inside a timed interaction.
    public var isTimed: Bool
    /// The session the action arrived on.
    public var session: InteractionSessionIdentity?

    public init(subject: SubjectDescriptor, isTimed: Bool, session: InteractionSessionIdentity? = nil) {
        self.subject = subject
        self.isTimed = isTimed
        self.session = session
    }
}

/// The outcome of one command.
public enum CommandOutcome: Hashable, Sendable {
    /// A status (SUCCESS for commands without a response).
    case status(InteractionStatus)
    /// A response command with its fields (a TLV structure).
    case response(CommandID, TLVValue)
}

/// The seam to a node's data model. The Interaction Model engine asks it for
/// structure (for wildcard expansion and path errors), metadata (for access,
/// timed and fabric checks), data, and changes (for subscriptions). The
/// device's node actor conforms to this.
public protocol InteractionDataProvider: Sendable {
    /// The node's endpoints.
    func endpoints() async -> [EndpointNumber]
    /// Server clusters on an endpoint; empty when the endpoint does not exist.
    func clusters(on endpoint: EndpointNumber) async -> [ClusterID]
    /// Attributes of a cluster instance, global ones included; empty when it does not exist.
    func attributes(of cluster: ClusterPath) async -> [AttributeMetadata]
    /// Commands the cluster instance accepts (its AcceptedCommandList).
    func commands(of cluster: ClusterPath) async -> [CommandMetadata]
    /// The cluster instance's current data version; nil when it does not exist.
    func dataVersion(of cluster: ClusterPath) async -> DataVersion?

    /// Grants or denies a privilege on a cluster instance (Access Control, spec 6.6).
    func checkAccess(_ subject: SubjectDescriptor, to cluster: ClusterPath, privilege: Privilege) async -> Bool

    /// Reads one attribute: a whole list for list attributes, fabric-filtered as asked.
    func read(_ path: AttributePath, context: AttributeReadContext) async -> Result<VersionedAttributeValue, InteractionStatus>
    /// Writes one attribute after the engine checked existence, access and timing;
    /// returns SUCCESS or why not (CONSTRAINT_ERROR, INVALID_DATA_TYPE, ...).
    func write(_ path: AttributePath, _ operation: AttributeWriteOperation, context: InteractionContext) async -> InteractionStatus
    /// Invokes one command after the engine checked existence, access and timing.
    func invoke(_ path: ConcreteCommandPath, fields: TLVValue?, context: InteractionContext) async -> CommandOutcome

    /// Events matching the paths, numbered at or above `minimumEventNumber`.
    func events(matching paths: [EventPathIB], minimumEventNumber: UInt64?, subject: SubjectDescriptor) async -> [EventReportIB]

    /// The privilege reading one of the cluster's events needs (Core 9.10.7: most need View,
    /// AccessControlEntryChanged Administer).
    func eventReadPrivilege(_ event: EventID, of cluster: ClusterPath) async -> Privilege

    /// A fresh stream of attributes whose value changed, one per subscription.
    func attributeChanges() -> AsyncStream<AttributePath>

    /// A fresh stream of the paths of events recorded from now on, one per subscription.
    func recordedEvents() -> AsyncStream<EventPathIB>

    /// Makes what an interaction's writes and commands changed durable. The engine calls it
    /// before the WriteResponse or InvokeResponse goes out: an acknowledged change must
    /// survive the process being killed right after.
    func persistChanges() async

    /// Returns once the change that woke a subscription has been made whole: the interaction
    /// that made it has finished and what else it changed has been posted. A report then
    /// carries all of one command's changes (an On that also moves the level) instead of
    /// sending the first alone and holding the rest back by MinInterval.
    func settleChanges() async

    /// The endpoints that are members of a fabric's group (Groups cluster): where a group
    /// command acts.
    func endpoints(inGroup group: UInt16, fabricIndex: FabricIndex) async -> [EndpointNumber]
}

extension InteractionDataProvider {
    /// Nodes without groups have no members.
    public func endpoints(inGroup group: UInt16, fabricIndex: FabricIndex) async -> [EndpointNumber] { [] }

    /// A provider with nothing to keep.
    public func persistChanges() async {}

    /// Providers that change attributes synchronously have nothing to wait for.
    public func settleChanges() async {}

    /// Nodes without an event log report no events.
    public func events(matching paths: [EventPathIB], minimumEventNumber: UInt64?, subject: SubjectDescriptor) async -> [EventReportIB] {
        []
    }

    /// Without event definitions every event is readable with View.
    public func eventReadPrivilege(_ event: EventID, of cluster: ClusterPath) async -> Privilege { .view }

    /// Nodes without an event log record none.
    public func recordedEvents() -> AsyncStream<EventPathIB> {
        AsyncStream { $0.finish() }
    }
}
