import Logging
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
import Synchronization

/// What a subscription delivers to its consumer.
public enum SubscriptionEvent: Sendable, Hashable {
    /// The subscription is (re-)established; the priming reports precede this event.
    case established(subscriptionID: UInt32, maxInterval: UInt16)
    /// Attribute reports, from priming or from a later report.
    case reports([AttributeReport])
    /// Events, in number order, from priming or from a later report; after a
    /// resubscription only those numbered past the last one delivered.
    case events([EventReport])
    /// The subscription was lost (no report within MaxInterval, session gone, node
    /// unreachable); a new one is being tried.
    case lost(ControllerError)
}

/// Routes the ReportData messages a publisher sends on exchanges it opens (spec 8.5:
/// reports after priming) to the subscription they belong to, acknowledging each with
/// a StatusResponse. Subscriptions are keyed by peer and ID (each publisher numbers its
/// own); unknown ones are answered INVALID_SUBSCRIPTION, which ends the publisher's side
/// (spec 8.5.2). Serves a controller's exchange manager and relay or hub connections alike.
public final class SubscriptionRouter: ProtocolHandler, IncomingInteractionHandler {
    struct Key: Hashable {
        let peer: InteractionPeer
        let id: UInt32
    }

    struct Route {
        let sink: @Sendable ([AttributeReport]) -> Void
        let events: @Sendable ([EventReport]) -> Void
        let lost: @Sendable (String) -> Void
    }

    // Guards the routing table; sinks are called outside the lock.
    private let routes = NIOLockedValueBox<[Key: Route]>([:])
    let logger: Logger

    public init(logger: Logger = Logger(label: "matter.controller.subscriptions")) {
        self.logger = logger
    }

    func register(
        _ id: UInt32, peer: InteractionPeer, sink: @escaping @Sendable ([AttributeReport]) -> Void,
        events: @escaping @Sendable ([EventReport]) -> Void, lost: @escaping @Sendable (String) -> Void
    ) {
        routes.withLockedValue { $0[Key(peer: peer, id: id)] = Route(sink: sink, events: events, lost: lost) }
    }

    func unregister(_ id: UInt32, peer: InteractionPeer) {
        _ = routes.withLockedValue { $0.removeValue(forKey: Key(peer: peer, id: id)) }
    }

    public func handle(exchange: Exchange, first message: Message) async {
        guard message.session.isSecure else { return }
        await handle(exchange: exchange, opcode: message.opcode, payload: message.payload, from: .session(message.session.handle))
    }

    public func handle(exchange: any InteractionExchange, opcode: UInt8, payload: [UInt8], from peer: InteractionPeer) async {
        var current = (opcode: opcode, payload: payload)
        while true {
            guard current.opcode == InteractionOpcode.reportData.rawValue,
                let report = try? ReportDataMessage(payload: current.payload)
            else {
                await reply(.invalidAction, on: exchange)
                return
            }
            let route = report.subscriptionID.flatMap { id in routes.withLockedValue { $0[Key(peer: peer, id: id)] } }
            guard let route else {
                logger.debug("report from \(peer) for unknown subscription \(report.subscriptionID.map(String.init) ?? "-")")
                await reply(.invalidSubscription, on: exchange)
                return
            }
            var reports: [AttributeReport] = []
            AttributeReport.collect(report.attributeReports, into: &reports)
            // An empty report is the publisher's keep-alive; it still proves liveness.
            route.sink(reports)
            let events = EventReport.collect(report.eventReports)
            if !events.isEmpty { route.events(events) }
            if report.suppressResponse { return }
            await reply(.success, on: exchange)
            guard report.moreChunkedMessages else { return }
            do {
                current = try await exchange.receive(within: .seconds(10))
            } catch {
                return
            }
        }
    }

    /// Ends every subscription to `peer` now (its carrier says it is gone).
    public func peerLost(_ peer: InteractionPeer, reason: String) {
        end(reason) { $0 == peer }
    }

    /// Ends every subscription carried by `route` (the whole connection is gone).
    public func routeLost(_ route: String, reason: String) {
        end(reason) { $0.route == route }
    }

    private func end(_ reason: String, where matches: (InteractionPeer) -> Bool) {
        let ended = routes.withLockedValue { table -> [Route] in
            let gone = table.filter { matches($0.key.peer) }
            for key in gone.keys { table[key] = nil }
            return Array(gone.values)
        }
        for route in ended { route.lost(reason) }
    }

    private func reply(_ status: StatusCode, on exchange: any InteractionExchange) async {
        try? await exchange.send(StatusResponseMessage(status: status))
    }
}

extension InteractionClient {
    /// Establishes one subscription (spec 8.5): priming reports, each acknowledged, then
    /// SubscribeResponse. The ID is routed from the first priming report on, so no later
    /// report can slip past; `sink` gets the priming reports and every later one, `events`
    /// the events they carry (`primedEvents` those of the priming reports, when given), `lost`
    /// the reason when the carrier ends the subscription. Returns the ID and the publisher's
    /// MaxInterval.
    public func subscribe(
        _ request: SubscribeRequestMessage, router: SubscriptionRouter,
        sink: @escaping @Sendable ([AttributeReport]) -> Void,
        events: @escaping @Sendable ([EventReport]) -> Void = { _ in },
        primedEvents: (@Sendable ([EventReport]) -> Void)? = nil,
        lost: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> (subscriptionID: UInt32, maxInterval: UInt16) {
        let peer = channel.peer
        return try await withExchange("Subscribe") { exchange in
            try await send(request, on: exchange, "Subscribe")
            var registered: UInt32?
            do {
                while true {
                    let message: (opcode: UInt8, payload: [UInt8])
                    do {
                        message = try await exchange.receive(within: timeout)
                    } catch {
                        throw Self.failure(error, "Subscribe")
                    }
                    if message.opcode == InteractionOpcode.reportData.rawValue {
                        let report: ReportDataMessage = try Self.decode(message, "Subscribe")
                        if registered == nil, let id = report.subscriptionID {
                            // Registered before acknowledging: the publisher reports only after our ack.
                            router.register(id, peer: peer, sink: sink, events: events, lost: lost)
                            registered = id
                        }
                        var reports: [AttributeReport] = []
                        AttributeReport.collect(report.attributeReports, into: &reports)
                        sink(reports)
                        let primed = EventReport.collect(report.eventReports)
                        if !primed.isEmpty { (primedEvents ?? events)(primed) }
                        try await send(StatusResponseMessage(status: .success), on: exchange, "Subscribe")
                        continue
                    }
                    let response: SubscribeResponseMessage = try Self.decode(message, "Subscribe")
                    if registered != response.subscriptionID {
                        if let r = registered { router.unregister(r, peer: peer) }
                        router.register(response.subscriptionID, peer: peer, sink: sink, events: events, lost: lost)
                    }
                    return (response.subscriptionID, response.maxInterval)
                }
            } catch {
                if let r = registered { router.unregister(r, peer: peer) }
                throw error
            }
        }
    }

    /// Subscribes to attribute paths.
    public func subscribe(
        _ paths: [AttributePathIB], minInterval: UInt16, maxInterval: UInt16, router: SubscriptionRouter,
        keepSubscriptions: Bool = true,
        sink: @escaping @Sendable ([AttributeReport]) -> Void,
        lost: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> (subscriptionID: UInt32, maxInterval: UInt16) {
        try await subscribe(
            SubscribeRequestMessage(
                keepSubscriptions: keepSubscriptions, minIntervalFloor: minInterval,
                maxIntervalCeiling: maxInterval, attributeRequests: paths),
            router: router, sink: sink, lost: lost)
    }
}

/// Keeps one subscription alive over whatever channel `client` yields: when no report
/// arrives within MaxInterval plus a margin, the carrier reports the node gone, or the
/// session fails, it subscribes again with growing pauses. The same keeper serves the
/// LAN, the hub and the relay.
public struct SubscriptionKeeper: Sendable {
    public var paths: [AttributePathIB]
    /// Events to subscribe to as well (urgent ones marked in the path, spec 8.5.1).
    public var eventPaths: [EventPathIB] = []
    public var minInterval: UInt16
    public var maxInterval: UInt16
    /// The first pause after a failure; it doubles up to `maxResubscribeDelay`.
    public var firstResubscribeDelay: Duration = .milliseconds(250)
    public var maxResubscribeDelay: Duration
    /// Past MaxInterval before a silent subscription counts as lost (MRP retries of the
    /// publisher's last report).
    public var livenessMargin: Duration = .seconds(3)
    public var clock: any MatterClock
    /// Names the publisher in the reasons of `.lost` events, e.g. "node 0x12".
    public var publisher: String = "the publisher"

    public init(
        paths: [AttributePathIB], minInterval: UInt16 = 0, maxInterval: UInt16, maxResubscribeDelay: Duration,
        clock: any MatterClock = SystemClock()
    ) {
        self.paths = paths
        self.minInterval = minInterval
        self.maxInterval = max(maxInterval, minInterval)
        self.maxResubscribeDelay = maxResubscribeDelay
        self.clock = clock
    }

    /// The subscription's events until the consumer stops iterating.
    /// - Parameters:
    ///   - client: the client for each attempt (a session may be new each time).
    ///   - failed: each failure, e.g. to drop a dead session.
    ///   - pause: waits between attempts; may return early (the node came back). Defaults
    ///     to sleeping on `clock`.
    public func events(
        router: SubscriptionRouter,
        client: @escaping @Sendable () async throws -> InteractionClient,
        failed: @escaping @Sendable (ControllerError) async -> Void = { _ in },
        pause: (@Sendable (Duration) async throws -> Void)? = nil
    ) -> AsyncStream<SubscriptionEvent> {
        let (stream, continuation) = AsyncStream<SubscriptionEvent>.makeStream(bufferingPolicy: .unbounded)
        let clock = clock
        let pause = pause ?? { delay in try await clock.sleep(until: clock.now + delay) }
        let task = Task { await run(router: router, client: client, failed: failed, pause: pause, continuation: continuation) }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// The events not delivered yet (numbered from `next` on), moving `next` past them.
    private static func undelivered(_ events: [EventReport], next: borrowing Mutex<UInt64?>) -> [EventReport] {
        next.withLock { next in
            let fresh = events.filter { $0.number >= next ?? 0 }
            if let last = fresh.last { next = last.number + 1 }
            return fresh
        }
    }

    private func run(
        router: SubscriptionRouter, client: @Sendable () async throws -> InteractionClient,
        failed: @Sendable (ControllerError) async -> Void, pause: @Sendable (Duration) async throws -> Void,
        continuation: AsyncStream<SubscriptionEvent>.Continuation
    ) async {
        var delay = firstResubscribeDelay
        // The next event number wanted: a resubscription asks only for events not yet
        // delivered (EventFilter's EventMin, spec 8.5.1), so none is seen twice.
        let nextEvent = Mutex<UInt64?>(nil)
        while !Task.isCancelled {
            let liveness = LivenessSignal(clock: clock)
            var subscribed: (client: InteractionClient, id: UInt32)?
            // A report after the SubscribeResponse comes through the router, on another task,
            // and can beat this one's `.established`: its events wait for it, so the consumer
            // always sees priming events, then `.established`, then live ones (a consumer that
            // skips what was primed must not skip a live event).
            let live = Mutex<(established: Bool, held: [EventReport])>((false, []))
            do {
                let client = try await client()
                let request = SubscribeRequestMessage(
                    keepSubscriptions: true, minIntervalFloor: minInterval, maxIntervalCeiling: maxInterval,
                    attributeRequests: paths, eventRequests: eventPaths,
                    eventFilters: nextEvent.withLock { $0 }.map { [EventFilterIB(eventMin: $0)] } ?? [])
                let (id, maxInterval) = try await client.subscribe(
                    request, router: router,
                    sink: { reports in
                        liveness.heard()
                        if !reports.isEmpty { continuation.yield(.reports(reports)) }
                    },
                    events: { events in
                        let fresh = Self.undelivered(events, next: nextEvent)
                        guard !fresh.isEmpty else { return }
                        live.withLock { state in
                            if state.established { continuation.yield(.events(fresh)) } else { state.held += fresh }
                        }
                    },
                    primedEvents: { events in
                        let fresh = Self.undelivered(events, next: nextEvent)
                        if !fresh.isEmpty { continuation.yield(.events(fresh)) }
                    },
                    lost: { reason in liveness.lose(reason) })
                subscribed = (client, id)
                live.withLock { state in
                    continuation.yield(.established(subscriptionID: id, maxInterval: maxInterval))
                    if !state.held.isEmpty { continuation.yield(.events(state.held)) }
                    state = (true, [])
                }
                delay = firstResubscribeDelay
                try await liveness.waitForSilence(longerThan: .seconds(Int64(maxInterval)) + livenessMargin)
                router.unregister(id, peer: client.channel.peer)
                let error = ControllerError.timeout("no report from \(publisher) within \(maxInterval) s")
                continuation.yield(.lost(error))
                await failed(error)
            } catch is CancellationError {
                if let s = subscribed { router.unregister(s.id, peer: s.client.channel.peer) }
                break
            } catch {
                if let s = subscribed { router.unregister(s.id, peer: s.client.channel.peer) }
                if Task.isCancelled { break }
                let controllerError = ControllerError.transport(error, "subscription")
                if controllerError == .cancelled { break }
                continuation.yield(.lost(controllerError))
                await failed(controllerError)
            }
            do { try await pause(delay) } catch { break }
            delay = min(delay * 2, maxResubscribeDelay)
        }
        continuation.finish()
    }
}

/// Remembers when a subscription last heard from its publisher, and whether its carrier
/// gave it up. Its timer re-arms itself inside the clock action, so a manual clock's
/// `advance` past the silence deadline has woken the waiter when it returns.
final class LivenessSignal: Sendable {
    private struct State {
        var last: Duration
        var limit: Duration = .zero
        var lostReason: String?
        var waiter: CheckedContinuation<Void, Never>?
        var woken = false
        var timer: ClockTimer?
    }

    private let clock: any MatterClock
    // Guards the bookkeeping; the waiter is resumed outside the lock.
    private let state: Mutex<State>

    init(clock: any MatterClock) {
        self.clock = clock
        state = Mutex(State(last: clock.now))
    }

    func heard() {
        let now = clock.now
        state.withLock { $0.last = now }
    }

    /// The carrier ended the subscription: the wait ends now with `reason`.
    func lose(_ reason: String) {
        state.withLock { s in if s.lostReason == nil { s.lostReason = reason } }
        wake()
    }

    /// Returns once nothing was heard for `limit`; throws `.unreachable` when the carrier
    /// gave the subscription up, and `CancellationError` when cancelled.
    func waitForSilence(longerThan limit: Duration) async throws {
        state.withLock { $0.limit = limit }
        check()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { s -> Bool in
                    if s.woken { return true }
                    s.waiter = c
                    return false
                }
                if resumeNow { c.resume() }
            }
        } onCancel: {
            wake()
        }
        let (lost, timer) = state.withLock { s in
            defer {
                s.woken = false
                s.timer = nil
            }
            return (s.lostReason, s.timer)
        }
        timer?.cancel()
        if let lost { throw ControllerError.unreachable(lost) }
        try Task.checkCancellation()
    }

    /// Wakes the waiter when the silence deadline has passed (or the carrier gave up), else
    /// sets the timer for the deadline as it stands now.
    private func check() {
        let (due, lost) = state.withLock { ($0.last + $0.limit, $0.lostReason) }
        if lost != nil || clock.now >= due {
            wake()
            return
        }
        let timer = clock.schedule(at: due) { [weak self] in self?.check() }
        let previous = state.withLock { s -> ClockTimer? in
            defer { s.timer = timer }
            return s.timer
        }
        previous?.cancel()
    }

    private func wake() {
        let waiter = state.withLock { s -> CheckedContinuation<Void, Never>? in
            s.woken = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }
}
