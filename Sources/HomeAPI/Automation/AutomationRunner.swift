import Foundation
import Logging
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
import OpenCombine

/// Per-Home state of issue #8's services: the Discovery cache and the running automation runners.
final class HomeServices: Sendable {
    let discovery = DiscoveryCache()
    private let runners = NIOLockedValueBox<[AutomationRunner]>([])

    func add(_ runner: AutomationRunner) { runners.withLockedValue { $0.append(runner) } }

    func stopRunners() async {
        let all = runners.withLockedValue { r -> [AutomationRunner] in
            defer { r = [] }
            return r
        }
        for r in all { await r.stop() }
    }
}

extension Home {
    /// Starts running this home's active automations in this process: attribute starters on
    /// the devices' live state, scheduled starters on `clock` in `timeZone`, actions through
    /// the normal command path. Runs until `stop()` or `close()`.
    public func startAutomations(
        clock: any MatterClock = SystemClock(), timeZone: TimeZone = .current,
        pollInterval: Duration = .milliseconds(100)
    ) async -> AutomationRunner {
        let runner = AutomationRunner(engine: engine, clock: clock, timeZone: timeZone, pollInterval: pollInterval)
        engine.services.add(runner)
        await runner.start()
        return runner
    }

    /// The latest automation runs of every structure, newest first.
    public func automationHistory(automationID: String? = nil, limit: Int = 100) async throws(HomeError) -> [AutomationRun] {
        try await homeCall { try await engine.store.runs(automationID: automationID, limit: max(1, limit)) }
    }

    /// Every structure's automations.
    public func listAutomations() async throws(HomeError) -> [Automation] {
        try await homeCall { try await engine.store.automations(structureID: nil).map(Automation.init) }
    }
}

/// Runs automations: watches the home's snapshots for trait changes and its clock for
/// scheduled times, checks conditions on current state and sends the actions.
public actor AutomationRunner {
    let engine: HomeEngine
    /// Scheduled starters follow its `date`: read every poll, every clock time it passed since
    /// the previous poll fires, so a clock that jumps still fires each once.
    let clock: any MatterClock
    let timeZone: TimeZone
    let pollInterval: Duration
    private var lastTick: Date
    /// Each trait's attributes as last seen, by device, endpoint and cluster.
    private var seen: [CandidateLocation: [AttributeID: TLVValue]] = [:]
    private var tasks: [Task<Void, Never>] = []
    private var cancellable: AnyCancellable?
    private let recorded = EventBroadcaster<AutomationRun>()
    private var stopped = false
    private let logger: Logger

    init(engine: HomeEngine, clock: any MatterClock, timeZone: TimeZone, pollInterval: Duration) {
        self.engine = engine
        self.clock = clock
        self.timeZone = timeZone
        self.pollInterval = pollInterval
        lastTick = clock.date
        var l = engine.logger
        l[metadataKey: "part"] = "automations"
        logger = l
    }

    func start() {
        guard !stopped, tasks.isEmpty else { return }
        lastTick = clock.date
        for (loc, attributes) in traitStates(engine.snapshot) { seen[loc] = attributes }
        let (stream, continuation) = AsyncStream.makeStream(of: HomeSnapshot.self, bufferingPolicy: .bufferingNewest(256))
        cancellable = engine.snapshots().sink { continuation.yield($0) }
        let interval = pollInterval, ticks = engine.configuration.clock
        tasks.append(
            Task { [weak self] in
                for await snapshot in stream {
                    guard let self else { return }
                    await self.observe(snapshot)
                }
            })
        let events = engine.deviceEvents.stream()
        tasks.append(
            Task { [weak self] in
                for await event in events {
                    guard let self else { return }
                    await self.observe(event)
                }
            })
        tasks.append(
            Task { [weak self] in
                while !Task.isCancelled {
                    do { try await ticks.sleep(until: ticks.now + interval) } catch { return }
                    guard let self else { return }
                    await self.fireScheduledStarters()
                }
            })
    }

    /// The runs from now on, each once it is in the history (`automationHistory`), for a
    /// caller that follows them live instead of polling the history.
    public nonisolated func runs() -> AsyncStream<AutomationRun> { recorded.subscribe() }

    /// Stops running (runs in progress finish their current action).
    public func stop() {
        stopped = true
        cancellable?.cancel()
        cancellable = nil
        for t in tasks { t.cancel() }
        tasks = []
    }

    private func activeAutomations() async -> [AutomationRecord] {
        do { return try await engine.store.automations(structureID: nil).filter(\.isActive) } catch {
            logger.warning("cannot read automations: \(error)")
            return []
        }
    }

    /// Scheduled starters: fire every clock time passed since the last tick.
    /// Fires, now, the scheduled starters whose clock times passed since the last check
    /// (the runner checks every `pollInterval` on its own); returns once their runs are done.
    /// For a `ManualClock`: advance it, then call this.
    public func fireScheduledStarters() async {
        guard !stopped else { return }
        let now = clock.date
        let from = lastTick
        lastTick = now
        guard now > from else { return }
        for automation in await activeAutomations() {
            for starter in automation.definition.starters {
                guard case .scheduled(let time) = starter.kind else { continue }
                for at in occurrences(of: time, after: from, upTo: now, in: timeZone) {
                    await run(automation, starter: starter.label, at: at)
                }
            }
        }
    }

    /// Attribute starters: fire when a watched attribute of a starter's trait changed.
    private func observe(_ snapshot: HomeSnapshot) async {
        guard !stopped else { return }
        var changed: [CandidateLocation: Set<AttributeID>] = [:]
        for (loc, attributes) in traitStates(snapshot) {
            if let before = seen[loc], before != attributes {
                let ids = Set(before.keys).union(attributes.keys).filter { before[$0] != attributes[$0] }
                changed[loc] = ids
            }
            seen[loc] = attributes
        }
        guard !changed.isEmpty else { return }
        for automation in await activeAutomations() {
            for starter in automation.definition.starters {
                guard case .attributeChange(let deviceID, let endpoint, let cluster, _) = starter.kind,
                    let ids = changed[CandidateLocation(deviceID: deviceID, endpoint: endpoint, cluster: cluster)]
                else { continue }
                // With conditions on this trait, only a change of what they read counts.
                let watched = Set(
                    automation.definition.conditions
                        .filter { $0.deviceID == deviceID && $0.endpoint == endpoint && $0.cluster == cluster }
                        .map { AttributeID($0.attribute) })
                guard watched.isEmpty || !watched.isDisjoint(with: ids) else { continue }
                await run(automation, starter: starter.label, at: clock.date)
            }
        }
    }

    /// Event starters: fire on the device's event, once per event (the engine delivers each once).
    private func observe(_ event: DeviceEventReport) async {
        guard !stopped,
            let device = engine.snapshot.devices.values.first(where: { $0.nodeID == event.node })
        else { return }
        let path = event.report.path
        for automation in await activeAutomations() {
            for starter in automation.definition.starters {
                guard case .deviceEvent(let deviceID, let endpoint, let cluster, let eventID, let fields) = starter.kind,
                    deviceID == device.id, endpoint == path.endpoint, cluster == path.cluster.rawValue, eventID == path.event.rawValue,
                    fields.allSatisfy({ wanted in
                        event.report.data?[context: wanted.tag].map { compare($0, .equals, wanted.value) } ?? false
                    })
                else { continue }
                await run(automation, starter: starter.label, at: clock.date)
            }
        }
    }

    private func run(_ automation: AutomationRecord, starter: String, at time: Date) async {
        let snapshot = engine.snapshot
        let labels = automation.definition.actions.map(\.label)
        let failed = automation.definition.conditions.filter { !holds($0, in: snapshot) }
        var outcome = AutomationRun.Outcome.success
        var message = ""
        if !failed.isEmpty {
            outcome = .conditionsNotMet
            message = failed.map { "\($0.attributeName) \($0.op.rawValue) \($0.value) is false" }.joined(separator: "; ")
        } else {
            var errors: [String] = []
            for action in automation.definition.actions {
                do {
                    guard let context = traitContext(snapshot, action.deviceID, action.endpoint, action.cluster) else {
                        throw HomeError.notFound(
                            "device \(action.deviceName) has no cluster \(action.cluster) on endpoint \(action.endpoint)")
                    }
                    try await context.invoke(action.commandID, action.fields.map { .context($0.tag, $0.value.tlv) })
                } catch {
                    errors.append("\(action.label): \(HomeError.from(error, action.commandName))")
                }
            }
            if !errors.isEmpty {
                outcome = .failure
                message = errors.joined(separator: "; ")
            }
        }
        let record = AutomationRun(
            id: 0, automationID: automation.id, automationName: automation.name, time: time,
            starter: starter, actions: labels, outcome: outcome, message: message)
        do { try await engine.store.recordRun(record) } catch { logger.warning("cannot record a run: \(error)") }
        recorded.publish(record)
    }

    private func holds(_ c: ConditionSpec, in snapshot: HomeSnapshot) -> Bool {
        guard let value = traitContext(snapshot, c.deviceID, c.endpoint, c.cluster)?.attributes[AttributeID(c.attribute)] else {
            return false
        }
        return compare(value, c.op, c.value)
    }

    private func traitStates(_ snapshot: HomeSnapshot) -> [CandidateLocation: [AttributeID: TLVValue]] {
        var out: [CandidateLocation: [AttributeID: TLVValue]] = [:]
        for device in snapshot.devices.values {
            for type in device.types.collection.contexts.values {
                for context in type.traits.contexts.values where automatableTraits.contains(where: { $0.clusterID == context.cluster }) {
                    out[CandidateLocation(deviceID: device.id, endpoint: context.endpoint, cluster: context.cluster.rawValue)] =
                        context.attributes
                }
            }
        }
        return out
    }

    private func traitContext(_ snapshot: HomeSnapshot, _ deviceID: String, _ endpoint: UInt16, _ cluster: UInt32) -> TraitContext? {
        snapshot.devices[deviceID]?.types.collection.contexts.values.lazy
            .compactMap { $0.traits.contexts[ClusterID(cluster)] }
            .first { $0.endpoint == endpoint }
    }
}

/// Compares a reported attribute value with a condition's literal.
func compare(_ value: TLVValue, _ op: ComparisonOperator, _ literal: AutomationValue) -> Bool {
    let ordering: Int?
    switch (value, literal) {
    case (.bool(let a), .bool(let b)): ordering = a == b ? 0 : nil
    case (.utf8(let a), .string(let b)): ordering = a == b ? 0 : (a < b ? -1 : 1)
    case (.null, .null): ordering = 0
    case (.unsigned(let a), _):
        if let b = literal.uint64 {
            ordering = a == b ? 0 : (a < b ? -1 : 1)
        } else if literal.int64 != nil {
            ordering = 1
        } else {
            ordering = nil
        }
    case (.signed(let a), _):
        if let b = literal.int64 {
            ordering = a == b ? 0 : (a < b ? -1 : 1)
        } else if literal.uint64 != nil {
            ordering = -1
        } else {
            ordering = nil
        }
    default: ordering = nil
    }
    switch op {
    case .equals: return ordering == 0
    case .notEquals: return ordering != 0
    case .greaterThan: return ordering.map { $0 > 0 } ?? false
    case .greaterThanOrEquals: return ordering.map { $0 >= 0 } ?? false
    case .lessThan: return ordering.map { $0 < 0 } ?? false
    case .lessThanOrEquals: return ordering.map { $0 <= 0 } ?? false
    }
}

extension AutomationValue {
    var tlv: TLVValue {
        switch self {
        case .bool(let b): .bool(b)
        case .uint(let u): .unsigned(u)
        case .int(let i): .signed(i)
        case .string(let s): .utf8(s)
        case .null: .null
        }
    }
}
