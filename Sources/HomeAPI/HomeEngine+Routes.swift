import Foundation
import MatterController
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore
import RelayProtocol

/// Routing (issue #6): each trait reaches its device over the LAN session when it works,
/// else through the hub, else through the cloud relay; cloud-only traits always through the
/// relay. Every allowed route keeps its own subscription, so a failover shows live values at
/// once; a LAN probe notices a dead LAN path within `routeProbeInterval + routeProbeTimeout`.
extension HomeEngine {
    // MARK: Policy

    nonisolated var routingPolicy: RoutingPolicy { policyBox.withLockedValue { $0 } }

    nonisolated func setRoutingPolicy(_ policy: RoutingPolicy) {
        let changed = policyBox.withLockedValue { old -> Bool in
            defer { old = policy }
            return old != policy
        }
        if changed { Task { await self.applyRoutingPolicy() } }
    }

    func applyRoutingPolicy() {
        guard !closed else { return }
        if configuration.connectDevices { syncRoutes() }
        publish()
    }

    /// The routes the policy and configuration allow for a device, in order of preference.
    func routeKinds(for d: DeviceRecord) -> [RouteKind] {
        let policy = routingPolicy
        let hasRelayID = d.serialNumber.map(RelayFrame.isValidIdentifier) ?? false
        var kinds: [RouteKind] = []
        if policy != .cloudOnly {
            if configuration.directRoute { kinds.append(.direct) }
            if hubClient != nil && hasRelayID { kinds.append(.hub) }
        }
        if policy != .localOnly && relayClient != nil && hasRelayID { kinds.append(.relay) }
        return kinds
    }

    /// The routes a trait may take: cloud-only clusters only through the relay.
    func candidates(_ kinds: [RouteKind], _ d: DeviceRecord, endpoint: EndpointNumber, cluster: ClusterID) -> [RouteKind] {
        d.isCloudOnly(endpoint: endpoint, cluster: cluster.rawValue) ? kinds.filter { $0 == .relay } : kinds
    }

    nonisolated func client(_ kind: RouteKind) -> (any RelayControllerLink)? {
        switch kind {
        case .direct: nil
        case .hub: hubClient
        case .relay: relayClient
        }
    }

    // MARK: Route tasks

    /// Starts the subscriptions (and LAN probes) the graph and policy call for, stops the rest.
    func syncRoutes() {
        guard !closed else { return }
        var wanted: [RouteTaskKey: DeviceRecord] = [:]
        for d in graph.devices.values {
            for kind in routeKinds(for: d) {
                wanted[RouteTaskKey(node: d.nodeID, kind: kind, role: .subscription)] = d
                if kind == .direct { wanted[RouteTaskKey(node: d.nodeID, kind: kind, role: .probe)] = d }
            }
        }
        for (key, task) in routeTasks where wanted[key] == nil {
            task.cancel()
            routeTasks[key] = nil
            // A route no longer used knows nothing any more.
            if key.role == .subscription { states[key.node]?.routes[key.kind] = nil }
        }
        for (key, d) in wanted where routeTasks[key] == nil {
            routeTasks[key] = startRoute(key, d)
        }
    }

    private func startRoute(_ key: RouteTaskKey, _ d: DeviceRecord) -> Task<Void, Never> {
        let node = d.nodeID, kind = key.kind
        switch key.role {
        case .probe:
            let interval = configuration.routeProbeInterval, clock = configuration.clock
            return Task { [weak self] in
                while !Task.isCancelled {
                    do { try await clock.sleep(until: clock.now + interval) } catch { return }
                    guard let self else { return }
                    await self.probeDirect(node)
                }
            }
        case .subscription:
            let address = kind == .direct ? try? SocketAddress(ipAddress: d.host, port: d.port) : nil
            var keeper = SubscriptionKeeper(
                paths: subscribedPaths, maxInterval: configuration.subscriptionMaxInterval,
                maxResubscribeDelay: kind == .direct ? configuration.maxResubscribeDelay : .seconds(2), clock: configuration.clock)
            keeper.eventPaths = subscribedEventPaths
            // Reports through a relay or hub take a longer path (two WebSocket hops).
            if kind != .direct { keeper.livenessMargin = .seconds(10) }
            keeper.publisher = "node 0x\(String(node, radix: 16)) via \(kind)"
            let pause = client(kind).flatMap { c in d.serialNumber.map { Self.pauseUntilPresent(c, $0, clock: keeper.clock) } }
            // The engine is held only for each step: a closed home's route must not keep it.
            return Task { [weak self] in
                guard let route = try? await self?.route(kind, d) else { return }
                if let address, let controller = try? await self?.controller() { await controller.setAddress(address, for: node) }
                for await event in keeper.events(router: route.router, client: route.client, failed: route.failed, pause: pause) {
                    guard let self else { return }
                    await self.applySubscription(event, node: node, kind: kind)
                }
            }
        }
    }

    /// Waits out a pause between subscription attempts through a relay or hub, ending it
    /// early when the device comes (back) online there.
    private static func pauseUntilPresent(
        _ client: any RelayControllerLink, _ deviceID: String, clock: any MatterClock
    ) -> @Sendable (Duration) async throws -> Void {
        { delay in
            let updates = client.presenceUpdates()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await clock.sleep(until: clock.now + delay) }
                group.addTask {
                    for await presence in updates where presence.deviceID == deviceID && presence.online { return }
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    /// Drops every route of a node (the device left the home).
    func stopRoutes(_ node: UInt64) {
        for (key, task) in routeTasks where key.node == node {
            task.cancel()
            routeTasks[key] = nil
        }
        states[node] = nil
        directRestartedAt[node] = nil
        lastEventNumber[node] = nil
        eventsWatched.remove(node)
    }

    /// Restarts a node's LAN subscription now (after the probe found the LAN back), rather
    /// than waiting for the controller's resubscription backoff.
    private func restartDirect(_ node: UInt64) {
        let key = RouteTaskKey(node: node, kind: .direct, role: .subscription)
        guard let d = graph.devices.values.first(where: { $0.nodeID == node }), routeTasks[key] != nil else { return }
        let now = configuration.clock.now
        if let last = directRestartedAt[node], now - last < .seconds(2) { return }
        directRestartedAt[node] = now
        routeTasks[key]?.cancel()
        routeTasks[key] = startRoute(key, d)
    }

    // MARK: Route state

    func setHealth(_ node: UInt64, _ kind: RouteKind, _ health: RouteHealth, error: String? = nil) {
        guard graph.devices.values.contains(where: { $0.nodeID == node }) else { return }
        var state = states[node] ?? NodeState()
        let before = state[kind]
        state[kind].health = health
        state[kind].lastError = health == .down ? error : nil
        guard state[kind] != before else { return }
        states[node] = state
        if health == .down { logger.debug("route \(kind) to node 0x\(String(node, radix: 16)) down: \(error ?? "-")") }
        publish()
        if health == .up { learnCloudOnlyIfNeeded(node) }
    }

    func apply(_ reports: [AttributeReport], node: UInt64, kind: RouteKind, up: Bool = true) {
        guard graph.devices.values.contains(where: { $0.nodeID == node }) else { return }
        var state = states[node] ?? NodeState()
        for r in reports {
            if let v = r.value { state[kind].attributes[r.path] = v } else { state[kind].attributes[r.path] = nil }
        }
        let wasUp = state[kind].health == .up
        if up {
            state[kind].health = .up
            state[kind].lastError = nil
        }
        states[node] = state
        publish()
        if up && !wasUp { learnCloudOnlyIfNeeded(node) }
    }

    /// Passes on a node's events not delivered yet. Those primed before the node's first
    /// subscription was established happened before the home was watching: they only set
    /// where delivery starts.
    func deliver(_ events: [EventReport], node: UInt64, kind: RouteKind) {
        guard graph.devices.values.contains(where: { $0.nodeID == node }) else { return }
        let fresh = events.filter { event in lastEventNumber[node].map { event.number > $0 } ?? true }
        guard let newest = fresh.last else { return }
        lastEventNumber[node] = newest.number
        guard eventsWatched.contains(node) else { return }
        for report in fresh { deviceEvents.publish(DeviceEventReport(node: node, report: report)) }
    }

    private func applySubscription(_ event: SubscriptionEvent, node: UInt64, kind: RouteKind) {
        switch event {
        case .established:
            eventsWatched.insert(node)
            setHealth(node, kind, .up)
        case .reports(let reports):
            apply(reports, node: node, kind: kind)
        case .events(let events):
            deliver(events, node: node, kind: kind)
        case .lost(let error):
            setHealth(node, kind, .down, error: error.description)
        }
    }

    /// Checks the LAN path (every `routeProbeInterval`, so a dead path is seen within
    /// interval + timeout even while reports flow): a failed read marks it down; a good
    /// read after a failure brings the subscription back at once.
    private func probeDirect(_ node: UInt64) async {
        guard !closed else { return }
        guard let controller = try? await controller() else { return }
        let path = AttributePath(
            endpoint: 0, cluster: Clusters.BasicInformation.id, attribute: Clusters.BasicInformation.Attribute.dataModelRevision)
        do {
            _ = try await withDeadline(
                configuration.routeProbeTimeout, "LAN probe of node 0x\(String(node, radix: 16))", clock: configuration.clock
            ) {
                try await controller.read(node, path)
            }
            if states[node]?[.direct].health == .down { restartDirect(node) }
        } catch {
            let e = HomeError.from(error, "LAN probe")
            if e.code == .deadlineExceeded || e.code == .unavailable {
                setHealth(node, .direct, .down, error: e.message)
            }
        }
    }

    // MARK: Cloud-only clusters

    /// Learns a node's cloud-only clusters once per opening, when both the LAN and the relay work.
    func learnCloudOnlyIfNeeded(_ node: UInt64) {
        guard relayClient != nil, !cloudOnlyLearned.contains(node), !cloudOnlyLearning.contains(node),
            let state = states[node], state[.direct].health == .up, state[.relay].health == .up,
            let d = graph.devices.values.first(where: { $0.nodeID == node }), let serial = d.serialNumber
        else { return }
        cloudOnlyLearning.insert(node)
        Task { [weak self] in await self?.learnCloudOnly(d.id, node: node, serial: serial) }
    }

    private func learnCloudOnly(_ deviceID: String, node: UInt64, serial: String) async {
        defer { cloudOnlyLearning.remove(node) }
        guard let relay = relayClient, let controller = try? await controller() else { return }
        let path = AttributePathIB(cluster: Clusters.Descriptor.id, attribute: Clusters.Descriptor.Attribute.serverList)
        let types = AttributePathIB(cluster: Clusters.Descriptor.id, attribute: Clusters.Descriptor.Attribute.deviceTypeList)
        let timeout = configuration.responseTimeout
        do {
            let viaRelay = try await InteractionClient(channel: relay.interactionChannel(to: serial, connectionWait: nil), timeout: timeout)
                .read([path, types])
            let viaLAN = try await withDeadline(timeout, "reading the ServerList over the LAN", clock: configuration.clock) {
                try await controller.read(node, [path])
            }
            let learned = cloudOnlyClusters(relay: serverLists(viaRelay), lan: serverLists(viaLAN))
            guard var d = graph.devices[deviceID] else { return }
            let wholeDevice = endpoints(d.endpoints, withRelayTypes: deviceTypeLists(viaRelay))
            guard d.cloudOnlyClusters != learned || (!learned.isEmpty && wholeDevice != d.endpoints) else {
                cloudOnlyLearned.insert(node)
                return
            }
            logger.info("\(d.name): cloud-only clusters \(learned.map { "\($0.endpoint):\($0.clusters)" })")
            if !learned.isEmpty, wholeDevice != d.endpoints {
                logger.info("\(d.name): device types through the relay \(wholeDevice.map { "\($0.endpoint):\($0.deviceTypes)" })")
                d.endpoints = wholeDevice
                try await store.upsertDevice(d)
            }
            try await store.setCloudOnlyClusters(deviceID, learned)
            try await reload()
            // Learned once the graph shows it (allRoutesUp reads this).
            cloudOnlyLearned.insert(node)
        } catch {
            logger.debug("learning the cloud-only clusters of \(deviceID) failed: \(error)")
        }
    }

    /// Whether every route each device may take works, with the clusters it serves only
    /// through the relay learned (until then a cloud-only trait is missing and the device
    /// looks `direct`).
    var allRoutesUp: Bool {
        graph.devices.values.allSatisfy { d in
            let state = states[d.nodeID] ?? NodeState()
            let kinds = routeKinds(for: d)
            guard kinds.allSatisfy({ state[$0].health == .up }) else { return false }
            return !(kinds.contains(.direct) && kinds.contains(.relay)) || cloudOnlyLearned.contains(d.nodeID)
        }
    }

    // MARK: Operations

    /// Runs `body` over the trait's best route, falling over to the next when a route turns
    /// out dead (or, over the LAN, lacks a cluster that may be cloud-only and not learned
    /// yet). When every route is known down: one short last try, then `unavailable`.
    private func routed<T: Sendable>(
        _ d: DeviceRecord, endpoint: EndpointNumber?, cluster: ClusterID?, _ what: String,
        _ body: @escaping @Sendable (RouteKind) async throws -> T
    ) async throws -> (T, RouteKind) {
        let kinds = routeKinds(for: d)
        let candidates =
            endpoint.flatMap { ep in cluster.map { self.candidates(kinds, d, endpoint: ep, cluster: $0) } }
            ?? kinds
        guard !candidates.isEmpty else {
            throw HomeError.unavailable("\(what): no route allowed (policy \(routingPolicy.rawValue))")
        }
        let state = states[d.nodeID] ?? NodeState()
        var ordered = candidates.filter { state[$0].health == .up } + candidates.filter { state[$0].health == .unknown }
        var budget = configuration.commandTimeout
        if ordered.isEmpty, let first = candidates.first {
            // Every route is known down: one short last try on the preferred one (a route
            // may have come back since it was judged), then a clear error, never a hang.
            ordered = [first]
            budget = min(budget, configuration.routeAttemptTimeout)
        }
        let clock = configuration.clock
        let deadline = clock.now + budget
        var lastError = HomeError.unavailable("\(what): no route answered")
        for (i, kind) in ordered.enumerated() {
            let remaining = deadline - clock.now
            guard remaining > .zero else { break }
            let limit = i == ordered.count - 1 ? remaining : min(remaining, configuration.routeAttemptTimeout)
            do {
                let value = try await withDeadline(limit, "\(what) via \(kind)", clock: configuration.clock) { try await body(kind) }
                return (value, kind)
            } catch {
                let e = HomeError.from(error, "\(what) via \(kind)")
                if e.code == .unimplemented && kind != .relay && ordered.contains(.relay) {
                    lastError = e
                    continue
                }
                guard e.code == .deadlineExceeded || e.code == .unavailable else { throw e }
                setHealth(d.nodeID, kind, .down, error: e.message)
                lastError = e
            }
        }
        if ordered.count == 1 && state[ordered[0]].health == .down {
            let reasons = candidates.map { "\($0): \(states[d.nodeID]?[$0].lastError ?? "down")" }.joined(separator: "; ")
            throw HomeError(code: lastError.code, message: "\(what): every route is down (\(reasons))")
        }
        throw lastError
    }

    private func device(_ id: String) throws -> DeviceRecord {
        guard let d = graph.devices[id] else { throw HomeError.notFound("no device with ID \(id)") }
        return d
    }

    /// The route of `kind` to `d`: the LAN's CASE session, or the hub's or relay's channel.
    func route(_ kind: RouteKind, _ d: DeviceRecord) async throws -> Route {
        let node = d.nodeID
        if kind == .direct {
            let controller = try await controller()
            return Route(
                kind: kind, router: controller.subscriptionRouter, client: { try await controller.client(for: node) },
                failed: { error in
                    // A dead session is dropped so the next attempt makes a new one.
                    if error.isConnectivityFailure { await controller.invalidateSession(for: node) }
                })
        }
        guard let client = client(kind), let serial = d.serialNumber else { throw HomeError.unavailable("no \(kind) route") }
        // A connection that does not come up within a response time counts as a failed attempt,
        // so the route shows down (not unknown) while the relay or hub is unreachable.
        let timeout = configuration.responseTimeout
        let channel = client.interactionChannel(to: serial, connectionWait: timeout)
        return Route(kind: kind, router: relayRouter, client: { InteractionClient(channel: channel, timeout: timeout) })
    }

    /// The routes `d` may take, by kind, made once for one operation.
    private func routes(_ d: DeviceRecord) async throws -> [RouteKind: Route] {
        var routes: [RouteKind: Route] = [:]
        for kind in routeKinds(for: d) { routes[kind] = try await route(kind, d) }
        return routes
    }

    /// Reads the node's trait attributes at once (when no report arrived yet), through its
    /// best route, and the cloud-only ones through the relay.
    func refresh(nodeID: UInt64) async throws {
        guard let d = graph.devices.values.first(where: { $0.nodeID == nodeID }) else {
            throw HomeError.notFound("no device with node ID 0x\(String(nodeID, radix: 16))")
        }
        let routes = try await routes(d)
        let read: @Sendable (RouteKind) async throws -> [AttributeReport] = { kind in
            guard let route = routes[kind] else { throw HomeError.unavailable("no \(kind) route") }
            return try await route.perform(retry: true) { try await $0.read(subscribedPaths) }
        }
        let (reports, kind) = try await routed(d, endpoint: nil, cluster: nil, "reading node 0x\(String(nodeID, radix: 16))") {
            try await read($0)
        }
        apply(reports, node: nodeID, kind: kind)
        if kind != .relay && !d.cloudOnlyClusters.isEmpty && routes[.relay] != nil {
            if let cloud = try? await withDeadline(
                configuration.routeAttemptTimeout, "reading cloud-only traits", clock: configuration.clock, { try await read(.relay) })
            {
                apply(cloud, node: nodeID, kind: .relay)
            }
        }
    }

    /// Every attribute of a node, unfiltered by fabric (a wildcard read, as Home Assistant's
    /// Matter server interviews a node): what `homectl dump` writes. Not applied to the graph.
    func readAllAttributes(nodeID: UInt64) async throws -> [AttributeReport] {
        guard let d = graph.devices.values.first(where: { $0.nodeID == nodeID }) else {
            throw HomeError.notFound("no device with node ID 0x\(String(nodeID, radix: 16))")
        }
        let routes = try await routes(d)
        let (reports, _) = try await routed(d, endpoint: nil, cluster: nil, "reading every attribute of node 0x\(String(nodeID, radix: 16))") { kind in
            guard let route = routes[kind] else { throw HomeError.unavailable("no \(kind) route") }
            return try await route.perform(retry: true) { try await $0.read([AttributePathIB()], fabricFiltered: false) }
        }
        return reports
    }

    func currentTypes(deviceID: String) async -> DeviceTypeCollection? {
        guard let d = graph.devices[deviceID] else { return nil }
        if !(states[d.nodeID]?.hasAttributes ?? false) {
            try? await refresh(nodeID: d.nodeID)
        }
        return snapshot.devices[deviceID]?.types.collection
    }

    /// Invokes a command on the device's best route; `timed` sends it as a Timed Invoke
    /// (spec 8.8.2.2: a lock's commands must be). Returns the device's response fields.
    @discardableResult
    func invoke(
        deviceID: String, nodeID: UInt64, _ path: ConcreteCommandPath, fields: TLVValue, timed: Duration? = nil
    ) async throws -> CommandResponse {
        let d = try device(deviceID)
        let routes = try await routes(d)
        let (response, _) = try await routed(d, endpoint: path.endpoint, cluster: path.cluster, "command \(path) on \(deviceID)") { kind in
            guard let route = routes[kind] else { throw HomeError.unavailable("no \(kind) route") }
            // Resent after no answer only when a second arrival would not show (On, not Toggle).
            let retry = timed == nil && IdempotentCommands.contains(path)
            return try await route.perform(retry: retry) { try await $0.invoke(path, fields: fields, timed: timed) }
        }
        return response
    }

    func write(deviceID: String, nodeID: UInt64, _ path: AttributePath, _ value: TLVValue) async throws {
        let d = try device(deviceID)
        let routes = try await routes(d)
        _ = try await routed(d, endpoint: path.endpoint, cluster: path.cluster, "write \(path) on \(deviceID)") { kind in
            guard let route = routes[kind] else { throw HomeError.unavailable("no \(kind) route") }
            try await route.perform(retry: true) { try await $0.write(path, value: value) }
        }
    }
}

/// One way to reach one node, as a value: the Interaction Model client for each attempt
/// and what a failure means for the path. Every route runs the same interactions.
struct Route: Sendable {
    let kind: RouteKind
    /// Where the reports of this route's subscriptions arrive.
    let router: SubscriptionRouter
    /// A client for the next attempt (the LAN's CASE session may be new each time).
    let client: @Sendable () async throws -> InteractionClient
    /// Told of each failure (the LAN drops a dead session).
    var failed: @Sendable (ControllerError) async -> Void = { _ in }

    /// Runs `body` with a client. When the path turns out dead, `failed` hears of it and,
    /// with `retry`, `body` runs once more on a fresh client (a new session).
    func perform<T: Sendable>(retry: Bool, _ body: @Sendable (InteractionClient) async throws -> T) async throws -> T {
        do {
            return try await body(try await client())
        } catch let error as ControllerError where error.isConnectivityFailure {
            await failed(error)
            guard retry else { throw error }
            return try await body(try await client())
        }
    }
}
