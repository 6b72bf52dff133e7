import Logging
import MatterModel
import MatterProtocol
import MatterTLV

/// The outcome of an invoke (Core spec 8.8 "Invoke Interaction"): a status, or a
/// response command with its fields.
public enum InvokeResult: Sendable, Hashable {
    case status(InteractionStatus)
    case response(CommandID, TLVValue)

    public static let success = InvokeResult.status(.success)

    static func failure(_ code: StatusCode) -> InvokeResult { .status(InteractionStatus(code)) }
}

/// The behaviour of one cluster instance on one endpoint.
///
/// Servers are owned by the node actor and called on it, synchronously; they keep
/// no attribute values of their own but read and write the store through the
/// context, so every change is versioned and reported.
protocol ClusterServer: AnyObject {
    /// The value for an attribute the description leaves out, or nil to fall back
    /// to the model's default. Returning a value for an optional attribute also
    /// makes the server provide that attribute.
    func initialValue(for attribute: AttributeID) -> TLVValue?

    /// Whether the server implements a command (accepted ones are further limited
    /// by the model's conformance for the enabled features).
    func handles(_ command: CommandID) -> Bool

    /// Start-up behaviour, run once when the node is built (e.g. StartUpOnOff).
    func startUp(_ context: ClusterContext)

    /// Cluster-specific write checks beyond the model's constraints.
    func validateWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> InteractionStatus?

    /// Side effects of an accepted write from outside the node.
    func didWrite(_ attribute: AttributeID, context: ClusterContext)

    /// Takes over an accepted write whose state lives outside the store (the ACL, the
    /// group key map): returns true once it has applied it. False lets the node store it.
    func commitWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> Bool

    /// The value a read returns, from the stored one; attributes that depend on the
    /// reader or on time (CurrentFabricIndex, UpTime) compute it here.
    func readValue(_ attribute: AttributeID, stored: TLVValue, context: ClusterContext) -> TLVValue

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult

    /// Whether the command's response reports its fields' constraint violations itself
    /// (Groups: CONSTRAINT_ERROR goes in AddGroupResponse's Status), so the node passes
    /// well-typed fields through unchecked.
    func answersConstraintErrors(_ command: CommandID) -> Bool

    /// A timer started through the context ran out.
    func timerFired(_ name: String, context: ClusterContext)
}

extension ClusterServer {
    func answersConstraintErrors(_ command: CommandID) -> Bool { false }
    func initialValue(for attribute: AttributeID) -> TLVValue? { nil }
    func handles(_ command: CommandID) -> Bool { false }
    func startUp(_ context: ClusterContext) {}
    func validateWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> InteractionStatus? { nil }
    func didWrite(_ attribute: AttributeID, context: ClusterContext) {}
    func commitWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> Bool { false }
    func readValue(_ attribute: AttributeID, stored: TLVValue, context: ClusterContext) -> TLVValue { stored }
    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        .failure(.unsupportedCommand)
    }
    func timerFired(_ name: String, context: ClusterContext) {}
}

/// A server for one specific cluster, so peers on an endpoint can find each other.
protocol StandardClusterServer: ClusterServer {
    static var clusterID: ClusterID { get }
}

/// A cluster without simulated behaviour: its attributes live in the store and
/// can be read and written; it accepts no commands.
final class PlainClusterServer: ClusterServer {}

/// What a cluster server may touch: its own attributes (bypassing access checks,
/// Core spec 8.2 applies only to the Interaction Model), its peers on the same
/// endpoint, timers, the node's layout, the shared commissioning state and the
/// session of the request being served (nil for internal requests and timers).
struct ClusterContext {
    let cluster: ClusterPath
    unowned let runtime: NodeRuntime
    let session: SessionContext?

    init(cluster: ClusterPath, runtime: NodeRuntime, session: SessionContext? = nil) {
        self.cluster = cluster
        self.runtime = runtime
        self.session = session
    }

    var commissioning: CommissioningCoordinator { runtime.commissioning }

    var endpoint: EndpointNumber { cluster.endpoint }
    var now: Duration { runtime.clock.now }
    var logger: Logger { runtime.logger }
    var layout: NodeLayout { runtime.layout }
    /// The node's state directory, for what a cluster keeps beside its attributes (a lock's users).
    var stateStore: NodeStateStore? { runtime.commissioningConfiguration.stateStore }

    private func path(_ attribute: AttributeID) -> AttributePath {
        AttributePath(endpoint: cluster.endpoint, cluster: cluster.cluster, attribute: attribute)
    }

    func value(_ attribute: AttributeID) -> TLVValue? { runtime.store.value(path(attribute)) }
    func unsigned(_ attribute: AttributeID) -> UInt64? { value(attribute)?.unsignedValue }
    func bool(_ attribute: AttributeID) -> Bool? { value(attribute)?.boolValue }
    func has(_ attribute: AttributeID) -> Bool { runtime.store.contains(path(attribute)) }

    /// Updates one of this cluster's attributes. Attributes the instance does not
    /// have are ignored, so servers can drive optional attributes unconditionally.
    /// A quieter-reporting attribute (quality Q) changed as a transition's `.progress` is
    /// reported only as its rule allows (`QuietRule`); every other change is a milestone.
    @discardableResult
    func set(_ attribute: AttributeID, _ value: TLVValue, _ change: QuietChange = .milestone) -> Bool {
        runtime.store.update(path(attribute), to: value, change)
    }

    /// A transition of this cluster starts: its Q attributes' steps are reported from a second on.
    func beginQuietChanges() {
        runtime.store.begin(cluster)
    }

    /// Reports this cluster's Q attributes that changed unreported: its transition is over.
    func settleQuietChanges() {
        runtime.store.settle(cluster)
    }

    /// Records one of this cluster's events (Core spec 7.14) and tells the subscriptions.
    func recordEvent(_ event: EventID, priority: EventDataIB.Priority, fields: [TLVElement]) {
        runtime.recordEvent(cluster, event, priority: priority, data: .structure(fields))
    }

    /// Records one of this cluster's events from its generated payload, at the model's priority.
    func record<Event: ClusterEvent>(_ event: Event) {
        let priority = EventDataIB.Priority(rawValue: Event.priority.rawLevel) ?? .info
        runtime.recordEvent(cluster, Event.eventID, priority: priority, data: event.tlv)
    }

    func startTimer(_ name: String, after delay: Duration) {
        runtime.startTimer(TimerKey(cluster: cluster, name: name), at: now + delay)
    }

    func startTimer(_ name: String, at deadline: Duration) {
        runtime.startTimer(TimerKey(cluster: cluster, name: name), at: deadline)
    }

    func cancelTimer(_ name: String) {
        runtime.cancelTimer(TimerKey(cluster: cluster, name: name))
    }

    /// Whether the named timer is set and has not fired yet.
    func isTimerPending(_ name: String) -> Bool {
        runtime.isTimerPending(TimerKey(cluster: cluster, name: name))
    }

    /// Options processing of Level Control (1.6.6.9) and Color Control (3.2.6.x): while the
    /// endpoint's OnOff is FALSE a command runs only with the effective ExecuteIfOff bit (bit 0),
    /// the command's OptionsOverride where its OptionsMask selects it, else the Options
    /// attribute's.
    func executesWhileOff(mask: UInt64, override: UInt64, options: AttributeID) -> Bool {
        guard let onOff = peer(OnOffServer.self), onOff.context.bool(OnOffServer.Attribute.onOff) == false else { return true }
        let executeIfOff = UInt64(Clusters.LevelControl.OptionsBitmap.executeIfOff.rawValue)
        let effective = mask & executeIfOff != 0 ? override : unsigned(options) ?? 0
        return effective & executeIfOff != 0
    }

    /// The server of another cluster on the same endpoint, with its context.
    func peer<Server: StandardClusterServer>(_ type: Server.Type) -> (server: Server, context: ClusterContext)? {
        let peerPath = ClusterPath(endpoint: cluster.endpoint, cluster: Server.clusterID)
        guard let server = runtime.servers[peerPath] as? Server else { return nil }
        return (server, ClusterContext(cluster: peerPath, runtime: runtime, session: session))
    }

    /// The same endpoint's server of that cluster, else the node's (the lowest endpoint with
    /// one): a device type the device includes sits on an endpoint of its own, as an air
    /// purifier's Air Quality Sensor does (one application device type per endpoint).
    func nodePeer<Server: StandardClusterServer>(_ type: Server.Type) -> (server: Server, context: ClusterContext)? {
        if let here = peer(type) { return here }
        let paths = runtime.servers.keys.filter { $0.cluster == Server.clusterID && $0.endpoint != cluster.endpoint }
        guard let peerPath = paths.min(by: { $0.endpoint < $1.endpoint }), let server = runtime.servers[peerPath] as? Server else {
            return nil
        }
        return (server, ClusterContext(cluster: peerPath, runtime: runtime, session: session))
    }
}
