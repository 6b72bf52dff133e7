import Logging
import MatterModel
import MatterTLV
import Synchronization

/// What a subscription is, for diagnostics and tests.
public struct SubscriptionSummary: Hashable, Sendable {
    public var subscriptionID: UInt32
    public var subject: SubjectDescriptor
    public var attributePaths: [AttributePathIB]
    /// Seconds.
    public var minInterval: UInt16
    /// Seconds.
    public var maxInterval: UInt16
}

/// A subscription report its subscriber acknowledged: what that subscriber now knows.
public struct AcknowledgedReport: Sendable {
    public var subscriptionID: UInt32
    public var subject: SubjectDescriptor
    public var attributeReports: [AttributeReportIB]
}

/// One established subscription. Its mutable reporting state lives in the
/// serving task (`InteractionServer.serve`); this object carries the fixed
/// parameters and the event channel that wakes that task.
final class Subscription: Sendable {
    enum Event: Sendable {
        /// Changed attributes wait in `takeChanges()`.
        case changed
        /// An event on an urgent subscribed path was recorded (spec 8.5.2: reported after
        /// MinInterval, not held until MaxInterval; other events go with the next report).
        case urgentEvent
        case timer(Duration)
        case end
    }

    let summary: SubscriptionSummary
    /// The priming exchange; later reports open new exchanges on its session.
    let session: any IMExchange
    let isFabricFiltered: Bool
    let eventPaths: [EventPathIB]
    let changes: AsyncStream<AttributePath>
    let recordedEvents: AsyncStream<EventPathIB>
    /// The lowest event number not yet reported.
    let firstUnreportedEvent: UInt64
    let establishedAt: Duration
    let events: AsyncStream<Event>
    private let eventSink: AsyncStream<Event>.Continuation
    /// Changed attributes the subscription covers, not yet taken into a report.
    private let pendingChanges = Mutex<Set<AttributePath>>([])

    init(
        summary: SubscriptionSummary, session: any IMExchange, isFabricFiltered: Bool, eventPaths: [EventPathIB],
        changes: AsyncStream<AttributePath>, recordedEvents: AsyncStream<EventPathIB>, firstUnreportedEvent: UInt64,
        establishedAt: Duration
    ) {
        self.summary = summary
        self.session = session
        self.isFabricFiltered = isFabricFiltered
        self.eventPaths = eventPaths
        self.changes = changes
        self.recordedEvents = recordedEvents
        self.firstUnreportedEvent = firstUnreportedEvent
        self.establishedAt = establishedAt
        (events, eventSink) = AsyncStream.makeStream(of: Event.self)
    }

    var id: UInt32 { summary.subscriptionID }
    var subject: SubjectDescriptor { summary.subject }
    var minInterval: Duration { .seconds(Int64(summary.minInterval)) }
    var maxInterval: Duration { .seconds(Int64(summary.maxInterval)) }

    func post(_ event: Event) { eventSink.yield(event) }

    /// A changed attribute: kept when a subscribed path covers it, and the serving task woken.
    func noteChange(_ path: AttributePath) {
        guard covers(path) else { return }
        pendingChanges.withLock { _ = $0.insert(path) }
        eventSink.yield(.changed)
    }

    func takeChanges() -> Set<AttributePath> {
        pendingChanges.withLock { pending in
            defer { pending.removeAll() }
            return pending
        }
    }
    func end() { eventSink.yield(.end) }

    /// Whether a changed attribute is covered by any subscribed path.
    func covers(_ path: AttributePath) -> Bool {
        summary.attributePaths.contains { $0.matches(path) }
    }

    /// An urgent subscribed path covering an event just recorded at `path` (a concrete path).
    func isUrgent(_ path: EventPathIB) -> Bool {
        eventPaths.contains { p in
            p.isUrgent == true && (p.endpoint == nil || p.endpoint == path.endpoint) && (p.cluster == nil || p.cluster == path.cluster)
                && (p.event == nil || p.event == path.event)
        }
    }

    /// Errors are reported for an attribute only when a subscribed path names it exactly.
    func namesExactly(_ path: AttributePath) -> Bool {
        summary.attributePaths.contains { $0.concretePath == path }
    }
}

/// The subscriptions a server holds.
actor SubscriptionRegistry {
    private var active: [UInt32: Subscription] = [:]
    private var nextID = UInt32.random(in: 1...UInt32.max / 2)

    func allocateID() -> UInt32 {
        repeat { nextID &+= 1 } while nextID == 0 || active[nextID] != nil
        return nextID
    }

    private var countWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    /// Yields after each subscription added or removed.
    nonisolated let changed = EventBroadcaster<Void>()

    func add(_ subscription: Subscription) {
        active[subscription.id] = subscription
        countChanged()
    }

    func remove(_ id: UInt32) {
        active[id] = nil
        countChanged()
    }

    /// Ends and forgets the matching subscriptions.
    func end(where predicate: (Subscription) -> Bool) {
        for (id, subscription) in active where predicate(subscription) {
            subscription.end()
            active[id] = nil
        }
        countChanged()
    }

    /// Returns once exactly `count` subscriptions are active.
    func untilCount(_ count: Int) async {
        guard active.count != count else { return }
        await withCheckedContinuation { countWaiters.append((count, $0)) }
    }

    private func countChanged() {
        changed.publish(())
        let now = active.count
        let (due, waiting) = (countWaiters.filter { $0.count == now }, countWaiters.filter { $0.count != now })
        countWaiters = waiting
        for waiter in due { waiter.continuation.resume() }
    }

    func summaries() -> [SubscriptionSummary] {
        active.values.map(\.summary).sorted { $0.subscriptionID < $1.subscriptionID }
    }
}

extension InteractionServer {
    /// A Subscribe interaction (spec chapter 8): priming report(s), each
    /// acknowledged, then SubscribeResponse; reporting continues in `run()`.
    func handleSubscribe(_ payload: [UInt8], on exchange: any IMExchange) async throws {
        let request: SubscribeRequestMessage
        do {
            request = try SubscribeRequestMessage(payload: payload)
        } catch {
            logger.debug("malformed SubscribeRequest: \(error)")
            return try await reply(.invalidAction, on: exchange)
        }
        guard !(request.attributeRequests.isEmpty && request.eventRequests.isEmpty),
            request.minIntervalFloor <= request.maxIntervalCeiling,
            Self.validRequestPaths(request.attributeRequests)
        else {
            return try await reply(.invalidAction, on: exchange)
        }
        guard request.attributeRequests.count + request.eventRequests.count <= configuration.maxPathsPerRequest else {
            return try await reply(.pathsExhausted, on: exchange)
        }
        let subject = exchange.subject
        // Core 8.5.1 / 8.2: a subscription with no valid path (one that exists and that the
        // subscriber may read) is refused with INVALID_ACTION, not primed with UNSUPPORTED_ACCESS
        // or UNSUPPORTED_ATTRIBUTE (TC-IDM-4.2 step 3; connectedhomeip rejects it the same way).
        guard await mayReadAny(request, subject: subject) else {
            return try await reply(.invalidAction, on: exchange)
        }
        if !request.keepSubscriptions {
            await registry.end { $0.subject.fabricIndex == subject.fabricIndex && $0.subject.subject == subject.subject }
        }

        // Listen before priming, so a change (or an event) made while priming is not lost.
        let changes = provider.attributeChanges()
        let recordedEvents = request.eventRequests.isEmpty ? AsyncStream { $0.finish() } : provider.recordedEvents()
        let id = await registry.allocateID()
        let scope = ReadScope(
            subject: subject, isFabricFiltered: request.isFabricFiltered,
            dataVersionFilters: Self.filterTable(request.dataVersionFilters), session: exchange.sessionIdentity)
        let primingEvents =
            request.eventRequests.isEmpty
            ? [] : await eventReports(for: request.eventRequests, filters: request.eventFilters, subject: subject)
        // Later reports carry events past those the priming report had (and the client's EventMin).
        var firstUnreportedEvent = request.eventFilters.map(\.eventMin).max() ?? 0
        for case .data(let event) in primingEvents { firstUnreportedEvent = max(firstUnreportedEvent, event.eventNumber + 1) }
        guard
            try await sendReports(
                for: request.attributeRequests, scope: scope, events: { primingEvents },
                subscriptionID: id, isRead: false, on: exchange)
        else { return }

        let maxInterval = chooseMaxInterval(floor: request.minIntervalFloor, ceiling: request.maxIntervalCeiling)
        try await exchange.send(
            SubscribeResponseMessage(
                subscriptionID: id, maxInterval: maxInterval, interactionModelRevision: configuration.interactionModelRevision))
        let subscription = Subscription(
            summary: SubscriptionSummary(
                subscriptionID: id, subject: subject, attributePaths: request.attributeRequests,
                minInterval: request.minIntervalFloor, maxInterval: maxInterval),
            session: exchange, isFabricFiltered: request.isFabricFiltered, eventPaths: request.eventRequests,
            changes: changes, recordedEvents: recordedEvents, firstUnreportedEvent: firstUnreportedEvent, establishedAt: clock.now)
        await registry.add(subscription)
        guard enqueue(subscription) else {
            await registry.remove(id)
            logger.warning("subscription \(id) dropped: the server is no longer running")
            return
        }
        logger.debug("subscription \(id) established, intervals \(request.minIntervalFloor)...\(maxInterval) s")
    }

    /// Whether one of the request's paths is valid: it reaches something that exists and that
    /// the subscriber may read. A concrete attribute path to nothing is not (a read would name
    /// what is missing; a subscription to nothing but that is refused), nor is a path whose every
    /// attribute is denied, or a wildcard that reaches nothing readable. An event path counts
    /// unless it names one cluster the node lacks or the subscriber may not view, or one event
    /// it may not read (AccessControlEntryChanged needs Administer: TC-ACE-1.2 step 14).
    func mayReadAny(_ request: SubscribeRequestMessage, subject: SubjectDescriptor) async -> Bool {
        let endpoints = await provider.endpoints()
        for path in request.eventRequests {
            guard let endpoint = path.endpoint, let cluster = path.cluster else { return true }
            guard endpoints.contains(endpoint), await provider.clusters(on: endpoint).contains(cluster) else { continue }
            let clusterPath = ClusterPath(endpoint: endpoint, cluster: cluster)
            let privilege = if let event = path.event { await provider.eventReadPrivilege(event, of: clusterPath) } else { Privilege.view }
            if await provider.checkAccess(subject, to: clusterPath, privilege: privilege) {
                return true
            }
        }
        for path in request.attributeRequests {
            for endpoint in path.endpoint.map({ [$0] }) ?? endpoints where endpoints.contains(endpoint) {
                let present = await provider.clusters(on: endpoint)
                for cluster in path.cluster.map({ [$0] }) ?? present where present.contains(cluster) {
                    let clusterPath = ClusterPath(endpoint: endpoint, cluster: cluster)
                    for metadata in await provider.attributes(of: clusterPath) where path.attribute.map({ $0 == metadata.id }) ?? true {
                        if await provider.checkAccess(subject, to: clusterPath, privilege: metadata.readPrivilege) { return true }
                    }
                }
            }
        }
        return false
    }

    /// The publisher's MaxInterval: the client's ceiling, capped at the
    /// publisher limit, never below the client's floor (the spec has it lie
    /// in MinIntervalFloor...max(limit, MaxIntervalCeiling)), and at least one
    /// second so a zero ceiling cannot turn keep-alives into a busy loop.
    func chooseMaxInterval(floor: UInt16, ceiling: UInt16) -> UInt16 {
        max(1, floor, min(ceiling, configuration.subscriptionMaxIntervalCeiling))
    }

    /// Reports for one subscription until it ends: changed attributes once
    /// MinInterval has passed since the last report, an empty report when
    /// MaxInterval passes without one. A report the subscriber does not
    /// acknowledge ends the subscription.
    func serve(_ subscription: Subscription) async {
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await path in subscription.changes { subscription.noteChange(path) }
            }
            group.addTask {
                for await path in subscription.recordedEvents where subscription.isUrgent(path) { subscription.post(.urgentEvent) }
            }
            var lastReport = subscription.establishedAt
            var dirty = Set<AttributePath>()
            var urgentEvent = false
            var nextEvent = subscription.firstUnreportedEvent
            // One timer at a time: the earliest deadline the loop waits for.
            var armed: (deadline: Duration, timer: ClockTimer)? = nil

            func arm(_ deadline: Duration) {
                armed?.timer.cancel()
                armed = (deadline, clock.schedule(at: deadline) { subscription.post(.timer(deadline)) })
            }

            arm(lastReport + subscription.maxInterval)
            loop: for await event in subscription.events {
                switch event {
                case .end: break loop
                case .changed: dirty.formUnion(subscription.takeChanges())
                case .urgentEvent: urgentEvent = true
                case .timer(let deadline): if armed?.deadline == deadline { armed = nil }
                }
                let now = clock.now
                let due = !dirty.isEmpty || urgentEvent
                if (due && now >= lastReport + subscription.minInterval) || now >= lastReport + subscription.maxInterval {
                    // One interaction's changes go in one report (Core 8.5: a report follows the
                    // interaction that made the changes).
                    if !dirty.isEmpty {
                        await provider.settleChanges()
                        dirty.formUnion(subscription.takeChanges())
                    }
                    let paths = dirty
                    dirty = []
                    urgentEvent = false
                    // Every report carries the events recorded since the last (urgent or not).
                    let events =
                        subscription.eventPaths.isEmpty
                        ? []
                        : await provider.events(
                            matching: subscription.eventPaths, minimumEventNumber: nextEvent,
                            subject: subscription.subject)
                    for case .data(let event) in events { nextEvent = max(nextEvent, event.eventNumber + 1) }
                    // An urgent event the last report already carried (it went out with the
                    // change that raised it) leaves nothing to send: no empty report before
                    // MaxInterval, which would hold the next change back by a MinInterval.
                    if paths.isEmpty, events.isEmpty, now < lastReport + subscription.maxInterval {
                        if armed == nil { arm(lastReport + subscription.maxInterval) }
                        continue loop
                    }
                    // Intervals run from when a report goes out, not from its acknowledgement.
                    lastReport = now
                    guard await sendSubscriptionReport(subscription, changed: paths, events: events) else { break loop }
                }
                let next = dirty.isEmpty && !urgentEvent ? lastReport + subscription.maxInterval : lastReport + subscription.minInterval
                if armed.map({ next < $0.deadline }) ?? true { arm(next) }
            }
            armed?.timer.cancel()
            group.cancelAll()
        }
        await registry.remove(subscription.id)
        logger.debug("subscription \(subscription.id) ended")
    }

    /// One report on a new exchange; empty when nothing changed (a keep-alive).
    private func sendSubscriptionReport(
        _ subscription: Subscription, changed: Set<AttributePath>,
        events: [EventReportIB]
    ) async -> Bool {
        let scope = ReadScope(
            subject: subscription.subject, isFabricFiltered: subscription.isFabricFiltered,
            session: subscription.session.sessionIdentity)
        var reports: [AttributeReportIB] = []
        for path in changed.sorted(by: Self.pathOrder) {
            await expand(AttributePathIB(path), reportErrors: subscription.namesExactly(path), scope: scope, into: &reports)
        }
        do {
            let exchange = try await subscription.session.openExchange()
            let acknowledged: Bool
            do {
                acknowledged = try await sendReportData(
                    attributeReports: reports, eventReports: events, subscriptionID: subscription.id, isRead: false, on: exchange)
            } catch {
                await exchange.close()
                throw error
            }
            await exchange.close()
            if acknowledged {
                reportsAcknowledged.publish(
                    AcknowledgedReport(subscriptionID: subscription.id, subject: subscription.subject, attributeReports: reports))
            }
            return acknowledged
        } catch {
            logger.debug("subscription \(subscription.id) report failed: \(error)")
            return false
        }
    }

    private static func pathOrder(_ a: AttributePath, _ b: AttributePath) -> Bool {
        (a.endpoint, a.cluster.rawValue, a.attribute.rawValue) < (b.endpoint, b.cluster.rawValue, b.attribute.rawValue)
    }
}
