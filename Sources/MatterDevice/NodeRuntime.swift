import Logging
import MatterModel
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
    let clock: any NodeClock
    let logger: Logger
    let store: AttributeStore
    let layout: NodeLayout
    var composition: NodeComposition
    var servers: [ClusterPath: any ClusterServer] = [:]

    /// The node timers call back into; weak so a dropped node is not kept alive by its timers.
    weak var owner: MatterNode?
    private(set) var stopped = false

    private struct RunningTimer {
        var generation: UInt64
        var handle: NodeTimer
    }
    private var timers: [TimerKey: RunningTimer] = [:]
    private var timerGeneration: UInt64 = 0

    init(model: MatterModel, clock: any NodeClock, logger: Logger, store: AttributeStore, layout: NodeLayout) {
        self.model = model
        self.clock = clock
        self.logger = logger
        self.store = store
        self.layout = layout
        self.composition = NodeComposition(entries: [:], endpoints: [])
    }

    func context(_ cluster: ClusterPath) -> ClusterContext {
        ClusterContext(cluster: cluster, runtime: self)
    }

    // MARK: Timers

    /// Starts (or restarts) a timer. Each start gets a new generation, so a firing
    /// that raced with a restart or cancel is recognised as stale and dropped.
    func startTimer(_ key: TimerKey, at deadline: NodeInstant) {
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

    func fireTimer(_ key: TimerKey, generation: UInt64) {
        guard !stopped, timers[key]?.generation == generation else { return }
        timers.removeValue(forKey: key)
        servers[key.cluster]?.timerFired(key.name, context: context(key.cluster))
    }

    func stop() {
        stopped = true
        for timer in timers.values { timer.handle.cancel() }
        timers.removeAll()
    }
}
