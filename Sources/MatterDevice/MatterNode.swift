import Logging
import MatterModel
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
/// `write` and `invoke`, expands wildcards through `composition`, and feeds
/// subscriptions from `changes`.
public actor MatterNode {
    public nonisolated let model: MatterModel
    public nonisolated let clock: any NodeClock
    /// Endpoints, clusters, attributes and commands; fixed after construction.
    public nonisolated let composition: NodeComposition

    private let runtime: NodeRuntime
    private nonisolated let broadcaster: ChangeBroadcaster
    private let logger: Logger

    /// Builds a node and applies start-up behaviour (StartUpOnOff, StartUpCurrentLevel)
    /// to the described values, which stand for the persisted state.
    public init(
        description: NodeDescription,
        model: MatterModel = .standard,
        clock: any NodeClock = SystemNodeClock(),
        logger: Logger = Logger(label: "matter.node")
    ) throws(NodeDescriptionError) {
        let broadcaster = ChangeBroadcaster()
        let runtime = try NodeRuntime.build(
            description: description, model: model, clock: clock, logger: logger, broadcaster: broadcaster
        )
        self.model = model
        self.clock = clock
        self.composition = runtime.composition
        self.broadcaster = broadcaster
        self.logger = logger
        self.runtime = runtime
        runtime.owner = self
        runtime.startUp()
    }

    /// A new subscription to every attribute change from now on. Each access
    /// subscribes afresh; the stream ends when the node stops.
    public nonisolated var changes: AsyncStream<AttributeChange> {
        broadcaster.subscribe()
    }

    /// Stops all timers and ends every change stream.
    public func stop() {
        runtime.stop()
        broadcaster.finish()
    }

    // MARK: Interaction Model surface

    /// Reads one concrete attribute (Core spec 8.4.3.2 for the status codes).
    public func read(_ path: AttributePath, privilege: Privilege = .administer) -> Result<AttributeData, InteractionStatus> {
        let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        if let missing = missingStatus(cluster) { return .failure(missing) }
        guard let value = runtime.store.value(path), let version = runtime.store.dataVersion(cluster) else {
            return .failure(InteractionStatus(.unsupportedAttribute))
        }
        let required = composition.definition(of: cluster)?.attribute(path.attribute)?.readPrivilege ?? .view
        guard privilege >= required else { return .failure(InteractionStatus(.unsupportedAccess)) }
        return .success(AttributeData(value: value, dataVersion: version))
    }

    /// The current data version of a cluster instance, for DataVersionFilters.
    public func dataVersion(of cluster: ClusterPath) -> DataVersion? {
        runtime.store.dataVersion(cluster)
    }

    /// Writes one concrete attribute from outside the node (Core spec 8.7.3.2),
    /// checking writability, privilege, timed interaction and the model's constraints.
    public func write(
        _ path: AttributePath, value: TLVValue, timed: Bool = false, privilege: Privilege = .administer
    ) -> InteractionStatus {
        let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        if let missing = missingStatus(cluster) { return missing }
        guard runtime.store.contains(path) else { return InteractionStatus(.unsupportedAttribute) }
        guard let definition = composition.definition(of: cluster),
              let attribute = definition.attribute(path.attribute),
              !GlobalAttribute.isGlobal(path.attribute),
              let writePrivilege = attribute.writePrivilege else {
            return InteractionStatus(.unsupportedWrite)
        }
        guard privilege >= writePrivilege else { return InteractionStatus(.unsupportedAccess) }
        if attribute.timedWrite && !timed { return InteractionStatus(.needsTimedInteraction) }
        let store = runtime.store
        if let violation = definition.validate(value, for: attribute, current: { id in
            store.value(AttributePath(endpoint: path.endpoint, cluster: path.cluster, attribute: id))
        }) {
            logger.debug("write \(path) rejected: \(violation)")
            return InteractionStatus(Self.statusCode(for: violation))
        }
        guard let server = runtime.servers[cluster] else { return InteractionStatus(.failure) }
        let context = runtime.context(cluster)
        if let rejected = server.validateWrite(path.attribute, value: value, context: context) { return rejected }
        if store.update(path, to: value) {
            server.didWrite(path.attribute, context: context)
        }
        return .success
    }

    /// Invokes a command (Core spec 8.8.3.2): path and access checks, field checks
    /// against the model, then the cluster server.
    public func invoke(
        _ path: CommandPath, fields: TLVValue, timed: Bool = false, privilege: Privilege = .administer
    ) async -> InvokeResult {
        let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        if let missing = missingStatus(cluster) { return .status(missing) }
        guard composition.acceptedCommands(of: cluster).contains(path.command),
              let definition = composition.definition(of: cluster),
              let command = definition.command(path.command),
              let server = runtime.servers[cluster] else {
            return .failure(.unsupportedCommand)
        }
        guard privilege >= command.invokePrivilege else { return .failure(.unsupportedAccess) }
        if command.timed && !timed { return .failure(.needsTimedInteraction) }
        if let rejected = checkFields(fields, of: command, in: definition, features: composition.features(of: cluster)) {
            logger.debug("invoke \(path) rejected: \(rejected)")
            return .status(rejected)
        }
        return server.invoke(path.command, fields: CommandFields(fields), context: runtime.context(cluster))
    }

    // MARK: Internals

    func timerFired(_ key: TimerKey, generation: UInt64) {
        runtime.fireTimer(key, generation: generation)
    }

    private func missingStatus(_ cluster: ClusterPath) -> InteractionStatus? {
        guard composition.endpoints.contains(cluster.endpoint) else { return InteractionStatus(.unsupportedEndpoint) }
        guard composition.definition(of: cluster) != nil else { return InteractionStatus(.unsupportedCluster) }
        return nil
    }

    /// Missing mandatory fields or fields of the wrong type make the command invalid;
    /// well-typed values outside their constraints are constraint errors.
    private func checkFields(
        _ fields: TLVValue, of command: CommandDefinition, in definition: ClusterDefinition, features: Set<String>
    ) -> InteractionStatus? {
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
            if let violation = definition.validate(value, for: field) {
                return InteractionStatus(Self.statusCode(for: violation, typeMismatch: .invalidCommand))
            }
        }
        return nil
    }

    private static func statusCode(for violation: ConstraintViolation, typeMismatch: StatusCode = .invalidDataType) -> StatusCode {
        violation.kind == .typeMismatch ? typeMismatch : .constraintError
    }
}
