import Logging
import MatterModel
import MatterProtocol
import MatterTLV

/// Identifies one named timer of one cluster instance.
struct TimerKey: Hashable, Sendable {
    var cluster: ClusterPath
    var name: String
}

/// The node's mutable insides: store, servers and timers. Owned and only touched
/// by the MatterNode actor; cluster servers reach it through ClusterContext.
final class NodeRuntime {
    let model: MatterModel
    let clock: any MatterClock
    let logger: Logger
    let store: AttributeStore
    let layout: NodeLayout
    var composition: NodeComposition
    var servers: [ClusterPath: any ClusterServer] = [:]
    /// When the node started, for UpTime and TimeSnapshot.
    let startedAt: Duration
    let persistence: NodePersistence
    let commissioningConfiguration: CommissioningConfiguration
    /// The event log (Events/NodeEventLog.swift) and who listens for new events.
    var events: NodeEventLog
    let recordedEvents = Broadcaster<RecordedEvent>()
    /// Commands the node sends to its bound targets (a switch's press), for its server to send.
    let boundCommands = Broadcaster<BoundCommand>()
    private let commissioningEvents: Broadcaster<CommissioningEvent>
    /// Fabrics, ACL, group keys, fail-safe and commissioning window.
    lazy var commissioning = CommissioningCoordinator(
        configuration: commissioningConfiguration, runtime: self, events: commissioningEvents
    )
    private static let persistTimer = TimerKey(cluster: CommissioningCoordinator.timerOwner, name: "persist-attributes")

    /// The node timers call back into; weak so a dropped node is not kept alive by its timers.
    weak var owner: MatterNode?
    private(set) var stopped = false

    private struct RunningTimer {
        var generation: UInt64
        var handle: ClockTimer
    }
    private var timers: [TimerKey: RunningTimer] = [:]
    private var timerGeneration: UInt64 = 0

    init(
        model: MatterModel, clock: any MatterClock, logger: Logger, store: AttributeStore, layout: NodeLayout,
        commissioning: CommissioningConfiguration, commissioningEvents: Broadcaster<CommissioningEvent>
    ) {
        self.model = model
        self.clock = clock
        self.logger = logger
        self.store = store
        self.layout = layout
        self.composition = NodeComposition(entries: [:], endpoints: [])
        self.startedAt = clock.now
        self.persistence = NodePersistence(store: commissioning.stateStore, logger: logger)
        self.events = NodeEventLog(stateStore: commissioning.stateStore, logger: logger)
        self.commissioningConfiguration = commissioning
        self.commissioningEvents = commissioningEvents
    }

    /// Every Descriptor's PartsList without the endpoints taken out (a bridged device removed).
    func refreshPartsLists() {
        let absent = composition.absent.all
        for endpoint in composition.endpoints where composition.clusters(on: endpoint).contains(DescriptorServer.clusterID) {
            let parts = layout.parts(of: endpoint).filter { !absent.contains($0) }
            store.update(
                AttributePath(endpoint: endpoint, cluster: DescriptorServer.clusterID, attribute: Clusters.Descriptor.Attribute.partsList),
                to: .arrayOf(parts.map { .uint($0) }))
        }
    }

    func context(_ cluster: ClusterPath, session: SessionContext? = nil) -> ClusterContext {
        ClusterContext(cluster: cluster, runtime: self, session: session)
    }

    // MARK: Events

    /// Records an event of a cluster instance and tells the subscriptions.
    @discardableResult
    func recordEvent(
        _ cluster: ClusterPath, _ event: EventID, priority: EventDataIB.Priority, data: TLVValue = .structure([])
    )
        -> RecordedEvent
    {
        let recorded = events.record(
            endpoint: cluster.endpoint, cluster: cluster.cluster, event: event, priority: priority,
            data: data, logger: logger)
        recordedEvents.publish(recorded)
        return recorded
    }

    // MARK: Persistence

    /// Non-volatile attributes are written a little after they change, in one batch.
    private func attributeChanged(_ path: AttributePath) {
        guard persistence.markChanged(path), timers[Self.persistTimer] == nil else { return }
        startTimer(Self.persistTimer, at: clock.now + commissioningConfiguration.attributePersistenceDelay)
    }

    func saveAttributes() {
        cancelTimer(Self.persistTimer)
        persistence.saveAttributes(from: store)
    }

    /// From now on every change of a non-volatile attribute is saved.
    func startPersisting() {
        store.onUpdate = { [unowned self] path in self.attributeChanged(path) }
    }

    // MARK: Timers

    /// Starts (or restarts) a timer. Each start gets a new generation, so a firing
    /// that raced with a restart or cancel is recognised as stale and dropped.
    func startTimer(_ key: TimerKey, at deadline: Duration) {
        guard !stopped else { return }
        timers[key]?.handle.cancel()
        timerGeneration += 1
        let generation = timerGeneration
        let handle = clock.schedule(at: deadline) { [weak owner] in
            await owner?.timerFired(key, generation: generation)
        }
        timers[key] = RunningTimer(generation: generation, handle: handle)
    }

    func cancelTimer(_ key: TimerKey) {
        timers.removeValue(forKey: key)?.handle.cancel()
    }

    func isTimerPending(_ key: TimerKey) -> Bool { timers[key] != nil }

    /// What a person does at the device (MatterNode.act), or a test event trigger standing for it.
    @discardableResult
    func act(_ action: PhysicalAction, on endpoint: EndpointNumber? = nil) throws(PhysicalActionError) -> EndpointNumber {
        let endpoints = (endpoint ?? action.endpoint).map { [$0] } ?? composition.endpoints
        for cluster in action.clusters {
            for candidate in endpoints {
                let path = ClusterPath(endpoint: candidate, cluster: cluster)
                guard let server = servers[path] as? any PhysicallyOperable else { continue }
                try server.perform(action, context: context(path))
                return candidate
            }
        }
        let missing = endpoint.map { "endpoint \($0) has no cluster" } ?? "no endpoint has a cluster"
        throw PhysicalActionError("\(missing) that can \(action) (it takes cluster \(action.cluster))")
    }

    func fireTimer(_ key: TimerKey, generation: UInt64) {
        guard !stopped, timers[key]?.generation == generation else { return }
        timers.removeValue(forKey: key)
        if key == Self.persistTimer {
            persistence.saveAttributes(from: store)
        } else if key.cluster == CommissioningCoordinator.timerOwner {
            commissioning.timerFired(key.name)
        } else {
            servers[key.cluster]?.timerFired(key.name, context: context(key.cluster))
        }
    }

    func stop() {
        guard !stopped else { return }
        saveAttributes()
        store.onUpdate = nil
        stopped = true
        for timer in timers.values { timer.handle.cancel() }
        timers.removeAll()
    }
}
