import CloudRelay
import Foundation
import Logging
import MatterController
import MatterModel
import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore
import RelayProtocol
import ServiceLifecycle

/// The local hub (`matter-relay serve --mode hub`): a Matter controller on the home's
/// fabric, with an operational identity the home's controller issued (`HubCredentials`),
/// that serves the relay's controller protocol on the LAN. A controller's IM exchange
/// with device ID D (a serial number) is forwarded, message for message, on a Matter
/// exchange over the hub's CASE session with D's node; subscription reports the node
/// sends come back to the controller that subscribed.
///
/// A device is present while the hub's own small subscription to it is alive. The hub
/// finds a node at the address in its device table and, when that fails and DNS-SD is
/// available, by its operational instance name (`_matter._tcp`).
///
/// Run it (once) as a `Service` or with `run()`; it ends when cancelled or on graceful
/// shutdown, and then closes its sessions.
public final class LocalHub: Service, Sendable {
    public struct Configuration: Sendable {
        /// Local UDP port of the hub's Matter controller (0: any free port).
        public var controllerPort: Int = 0
        public var controllerBinding: UDPTransport.Binding = .dualStack
        /// How long the hub waits for each response of a device (CASE steps included).
        public var responseTimeout: Duration = .seconds(5)
        /// MaxInterval of the presence subscription (seconds): how fast a silent device is noticed.
        public var presenceMaxInterval: UInt16 = 10
        /// Longest pause between attempts to reach an absent device.
        public var presenceRetryDelay: Duration = .seconds(5)
        /// A forwarded exchange on which nothing moves this long is ended.
        public var exchangeIdleTimeout: Duration = .seconds(15)
        /// Exchanges one controller connection may have open through the hub at once.
        public var maxExchangesPerController = 256
        /// Look nodes up with DNS-SD when their address fails (needs Avahi's D-Bus).
        public var useDNSSD = true
        /// The time source of the hub's controller and its forwarding deadlines.
        public var clock: any MatterClock = SystemClock()

        public init() {}
    }

    /// Whether a device answers the hub.
    enum Presence: Sendable, Hashable {
        case unknown
        case present
        case absent
    }

    /// One exchange between a controller connection and a device, as the hub keys it: by
    /// connection (relay session), device, relay exchange ID and who opened it.
    struct ExchangeKey: Hashable, Sendable {
        var session: UInt32
        var deviceID: String
        var exchangeID: UInt32
        var openedByController: Bool
    }

    /// A device's subscription the hub forwards: the node and its subscription ID.
    struct SubscriptionKey: Hashable, Sendable {
        var node: UInt64
        var subscriptionID: UInt32
    }

    struct SubscriptionRoute: Sendable {
        var session: UInt32
        var deviceID: String
    }

    private struct State {
        var controllers: [UInt32: RelayPeer] = [:]
        var nextPeerID: UInt32 = 0
        var nextExchangeID = UInt32.random(in: 1...0x7FFF_FFFF)
        var presence: [String: Presence] = [:]
        var exchanges: [ExchangeKey: Mailbox<IMEnvelope>] = [:]
        var subscriptions: [SubscriptionKey: SubscriptionRoute] = [:]
    }

    /// The presence subscription: one small attribute (BasicInformation DataModelRevision);
    /// its empty keep-alive reports prove the node is there.
    static let presencePath = AttributePathIB(
        endpoint: 0, cluster: Clusters.BasicInformation.id, attribute: Clusters.BasicInformation.Attribute.dataModelRevision)

    public let credentials: HubCredentials
    public let configuration: Configuration
    public let controller: MatterController
    public let metrics = RelayMetrics()
    let devices: [String: HubCredentials.Device]
    let logger: Logger
    // The lock guards the tables; frames are queued and mailboxes fed under it only where
    // ordering needs it (presence), both of which never block.
    private let state = NIOLockedValueBox(State())
    private let jobs: AsyncStream<@Sendable () async -> Void>
    private let jobSink: AsyncStream<@Sendable () async -> Void>.Continuation

    /// Starts the hub's Matter controller with the credentials' identity; nothing is
    /// forwarded or watched until `run()`.
    public static func start(
        credentials: HubCredentials, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "matter.hub")
    ) async throws -> LocalHub {
        var table: [String: HubCredentials.Device] = [:]
        for device in credentials.devices {
            guard RelayFrame.isValidIdentifier(device.deviceID) else {
                throw RelayError.invalidArgument("device ID '\(device.deviceID)' in the hub credentials: use 1...64 of A-Z a-z 0-9 . _ -")
            }
            guard table[device.deviceID] == nil else {
                throw RelayError.invalidArgument("device ID '\(device.deviceID)' appears twice in the hub credentials")
            }
            table[device.deviceID] = device
        }
        guard RelayFrame.isValidIdentifier(credentials.homeID) else {
            throw RelayError.invalidArgument("home ID '\(credentials.homeID)' in the hub credentials: use 1...64 of A-Z a-z 0-9 . _ -")
        }
        var c = MatterController.Configuration(
            port: configuration.controllerPort, binding: configuration.controllerBinding,
            responseTimeout: configuration.responseTimeout, handshakeStepTimeout: configuration.responseTimeout,
            subscriptionMinInterval: 0, subscriptionMaxInterval: configuration.presenceMaxInterval,
            maxResubscribeDelay: configuration.presenceRetryDelay)
        c.clock = configuration.clock
        // Many devices and many controllers' exchanges meet in this one exchange manager.
        c.exchange = ExchangeManager.Configuration(
            maxSecureSessions: 512, maxExchanges: 2048, exchangeInboxLimit: 64,
            defaultReceiveTimeout: .seconds(10))
        let resolver: (any OperationalResolver)? = configuration.useDNSSD ? try? DNSSDDiscovery() : nil
        let controller = try await MatterController.start(
            identity: try credentials.identity, configuration: c, resolver: resolver,
            logger: logger)
        for device in table.values {
            if let address = try? SocketAddress(ipAddress: device.host, port: device.port) {
                await controller.setAddress(address, for: device.nodeID)
            } else {
                logger.warning("device \(device.deviceID): '\(device.host)' is not an IP address; finding it with DNS-SD")
            }
        }
        let hub = LocalHub(credentials: credentials, configuration: configuration, controller: controller, devices: table, logger: logger)
        // Reports of subscriptions the hub forwards go to their controllers; the hub's own
        // (presence) go on to the controller's subscription router.
        await controller.forwardIncomingInteractions { [weak hub] exchange, message in
            await hub?.forwardReport(exchange, first: message) ?? false
        }
        return hub
    }

    private init(
        credentials: HubCredentials, configuration: Configuration, controller: MatterController,
        devices: [String: HubCredentials.Device], logger: Logger
    ) {
        self.credentials = credentials
        self.configuration = configuration
        self.controller = controller
        self.devices = devices
        self.logger = logger
        (jobs, jobSink) = AsyncStream.makeStream()
        state.withLockedValue { s in
            for id in devices.keys { s.presence[id] = .unknown }
        }
        // The hub's devices are Matter nodes, not connections: shown by whether they answer.
        let shown = ["present", "absent", "unknown"].map { ($0, metrics.registry.meter("hub_devices", [("presence", $0)])) }
        metrics.registry.beforeScrape { [weak self] in
            let presence = self?.state.withLockedValue { $0.presence.values.map { "\($0)" } } ?? []
            for (name, gauge) in shown { gauge.set(presence.filter { $0 == name }.count) }
        }
    }

    /// The UDP port of the hub's Matter controller.
    public var controllerPort: Int { controller.port }

    /// Whether each device answers the hub now (nil: not tried yet).
    public var presence: [String: Bool?] {
        state.withLockedValue { s in
            s.presence.mapValues { p -> Bool? in
                switch p {
                case .unknown: nil
                case .present: true
                case .absent: false
                }
            }
        }
    }

    // MARK: Running

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for device in self.devices.values {
                    group.addTask { await self.watchPresence(of: device) }
                }
                // Iterating an AsyncStream ends when the task is cancelled.
                for await job in self.jobs {
                    group.addTask { await job() }
                }
                group.cancelAll()
            }
        }
        await shutdown()
    }

    private func shutdown() async {
        jobSink.finish()
        let mailboxes = state.withLockedValue { s -> [Mailbox<IMEnvelope>] in
            defer {
                s.exchanges = [:]
                s.subscriptions = [:]
            }
            return Array(s.exchanges.values)
        }
        for mailbox in mailboxes { mailbox.close(.connectionLost) }
        await controller.forwardIncomingInteractions(to: nil)
        await controller.shutdown()
    }

    /// Keeps a small subscription to the device; its life is the device's presence.
    private func watchPresence(of device: HubCredentials.Device) async {
        for await event in controller.subscribe(device.nodeID, paths: [Self.presencePath]) {
            switch event {
            case .established, .reports, .events:
                setPresence(device.deviceID, .present)
            case .lost(let error):
                logger.debug("device \(device.deviceID) is not answering: \(error)")
                setPresence(device.deviceID, .absent)
            }
        }
    }

    /// Records a presence change and tells every controller, under the lock so racing
    /// changes reach them in the order they happened.
    private func setPresence(_ deviceID: String, _ presence: Presence) {
        let changed = state.withLockedValue { s -> Bool in
            let old = s.presence[deviceID] ?? .unknown
            guard old != presence else { return false }
            s.presence[deviceID] = presence
            let online = presence == .present
            // Only a change of what controllers see (present or not) is news to them.
            if online != (old == .present) {
                for controller in s.controllers.values {
                    _ = controller.send(.presence(RelayPresence(deviceID: deviceID, online: online)))
                }
            }
            if !online {
                // The device's subscriptions went with it (controllers drop theirs on this presence).
                s.subscriptions = s.subscriptions.filter { $0.value.deviceID != deviceID }
            }
            return true
        }
        if changed { logger.info("device \(deviceID) is \(presence == .present ? "present" : "absent")") }
    }

    // MARK: Forwarding, controller → device

    /// Opens the Matter side of an exchange the controller opened and moves its messages
    /// both ways until the interaction is over, it idles out or either side fails.
    /// `openedAt`: when the controller's request arrived (the round trip's start, on the hub's clock).
    func forward(
        _ key: ExchangeKey, mailbox: Mailbox<IMEnvelope>, device: HubCredentials.Device, peer: RelayPeer, openedAt: Duration
    ) async {
        defer {
            mailbox.close(.connectionLost)
            state.withLockedValue { s in
                if s.exchanges[key] === mailbox { s.exchanges[key] = nil }
            }
        }
        let exchange: Exchange
        do {
            exchange = try await controller.openInteractionExchange(to: device.nodeID)
        } catch {
            logger.debug("cannot reach device \(device.deviceID): \(error)")
            failToController(peer, key, .deviceOffline)
            return
        }
        let progress = NIOLockedValueBox(HubInteractionProgress())
        let idle = configuration.exchangeIdleTimeout
        let clock = configuration.clock
        // Whether the device answered: its first message ends the request's round trip.
        let answered = NIOLockedValueBox(false)
        let outcome: Bool = await withTaskGroup(of: Bool?.self) { group in
            // Controller → device.
            group.addTask {
                while true {
                    let envelope: IMEnvelope
                    do { envelope = try await mailbox.next() } catch { return nil }
                    var payload = envelope.payload
                    if envelope.opcode == InteractionOpcode.subscribeRequest.rawValue,
                        var request = try? SubscribeRequestMessage(payload: payload), !request.keepSubscriptions
                    {
                        // Every controller behind the hub shares its subject on the device: one
                        // controller's subscribe must not end the others' (or the hub's own).
                        request.keepSubscriptions = true
                        payload = request.encoded()
                    }
                    let finished = progress.withLockedValue { p in
                        p.controllerSent(opcode: envelope.opcode, payload: payload)
                        return p.finished
                    }
                    do {
                        try await exchange.send(opcode: envelope.opcode, payload: payload, reliable: true)
                    } catch {
                        return false
                    }
                    if finished {
                        // Let MRP deliver the last message before the exchange closes.
                        try? await exchange.waitForAcknowledgement()
                        return true
                    }
                }
            }
            // Device → controller.
            group.addTask {
                while true {
                    let message: Message
                    do { message = try await exchange.receive(timeout: idle) } catch { return false }
                    guard message.protocolID == .interactionModel else { continue }
                    let (finished, request) = progress.withLockedValue { p in
                        p.deviceSent(opcode: message.opcode, payload: message.payload)
                        return (p.finished, p.request)
                    }
                    if request == .subscribeRequest { self.noteSubscription(message, key: key, device: device) }
                    let first = answered.withLockedValue { was in
                        defer { was = true }
                        return !was
                    }
                    if first {
                        self.metrics.observeRoundTrip(clock.now - openedAt)
                    }
                    let forwarded = RelayMessage(
                        deviceID: key.deviceID, exchangeID: key.exchangeID, fromInitiator: false, opcode: message.opcode,
                        payload: message.payload)
                    if peer.send(.message(forwarded)) {
                        self.metrics.routed(.toController)
                    } else {
                        self.metrics.rejected(.overflow)
                        return false
                    }
                    if finished { return true }
                }
            }
            var result = false
            if let first = await group.next() { result = first ?? false }
            group.cancelAll()
            return result
        }
        await exchange.close()
        if !outcome && !progress.withLockedValue({ $0.finished }) {
            // The controller would otherwise wait out its own timeout.
            failToController(peer, key, .deviceOffline, counted: !answered.withLockedValue { $0 })
        }
    }

    /// Learns the subscription ID of a Subscribe the hub forwards, from its priming
    /// report, before the controller sees that report (and so before any later report).
    private func noteSubscription(_ message: Message, key: ExchangeKey, device: HubCredentials.Device) {
        switch InteractionOpcode(rawValue: message.opcode) {
        case .reportData:
            guard let id = (try? ReportDataMessage(payload: message.payload))?.subscriptionID else { return }
            state.withLockedValue { s in
                guard s.controllers[key.session] != nil else { return }
                s.subscriptions[SubscriptionKey(node: device.nodeID, subscriptionID: id)] = SubscriptionRoute(
                    session: key.session, deviceID: device.deviceID)
            }
        case .subscribeResponse:
            guard let id = (try? SubscribeResponseMessage(payload: message.payload))?.subscriptionID else { return }
            state.withLockedValue { s in
                guard s.controllers[key.session] != nil else { return }
                s.subscriptions[SubscriptionKey(node: device.nodeID, subscriptionID: id)] = SubscriptionRoute(
                    session: key.session, deviceID: device.deviceID)
            }
        default:
            break
        }
    }

    /// `counted`: the request's outcome is this failure (it was not answered before).
    private func failToController(_ peer: RelayPeer, _ key: ExchangeKey, _ reason: RelayFailureReason, counted: Bool = true) {
        metrics.rejected(reason == .deviceOffline ? .deviceOffline : .overflow)
        if counted && key.openedByController { metrics.request(reason == .deviceOffline ? .deviceOffline : .overloaded) }
        _ = peer.send(
            .failure(
                RelayFailure(deviceID: key.deviceID, exchangeID: key.exchangeID, fromInitiator: key.openedByController, reason: reason)))
    }

    // MARK: Forwarding, device → controller (subscription reports)

    /// A report the device sent on an exchange it opened: to the controller whose
    /// subscription it belongs to, chunk by chunk with that controller's answers. False
    /// when the subscription is not one the hub forwards.
    func forwardReport(_ exchange: Exchange, first: Message) async -> Bool {
        guard first.opcode == InteractionOpcode.reportData.rawValue,
            let report = try? ReportDataMessage(payload: first.payload), let id = report.subscriptionID
        else { return false }
        let node = exchange.session.peerNodeID
        let subscriptionKey = SubscriptionKey(node: node, subscriptionID: id)
        let mailbox = Mailbox<IMEnvelope>(capacity: 4)
        enum Lookup {
            case notForwarded
            case controllerGone
            case forward(RelayPeer, ExchangeKey)
        }
        let lookup = state.withLockedValue { s -> Lookup in
            guard let route = s.subscriptions[subscriptionKey] else { return .notForwarded }
            guard let peer = s.controllers[route.session] else {
                s.subscriptions[subscriptionKey] = nil
                return .controllerGone
            }
            var key: ExchangeKey
            repeat {
                s.nextExchangeID = s.nextExchangeID == UInt32.max ? 1 : s.nextExchangeID + 1
                key = ExchangeKey(session: route.session, deviceID: route.deviceID, exchangeID: s.nextExchangeID, openedByController: false)
            } while s.exchanges[key] != nil
            s.exchanges[key] = mailbox
            return .forward(peer, key)
        }
        switch lookup {
        case .notForwarded:
            return false
        case .controllerGone:
            // Nobody listens any more: INVALID_SUBSCRIPTION ends it on the device (spec 8.5.2).
            try? await exchange.send(
                opcode: InteractionOpcode.statusResponse.rawValue,
                payload: StatusResponseMessage(status: .invalidSubscription).encoded(), reliable: true)
            return true
        case .forward(let peer, let key):
            defer {
                mailbox.close(.connectionLost)
                state.withLockedValue { s in
                    if s.exchanges[key] === mailbox { s.exchanges[key] = nil }
                }
            }
            var current = first
            while true {
                let chunk = try? ReportDataMessage(payload: current.payload)
                let message = RelayMessage(
                    deviceID: key.deviceID, exchangeID: key.exchangeID, fromInitiator: true, opcode: current.opcode,
                    payload: current.payload)
                guard peer.send(.message(message)) else {
                    metrics.rejected(.overflow)
                    return true
                }
                metrics.routed(.toController)
                guard let chunk, current.opcode == InteractionOpcode.reportData.rawValue else { return true }
                if chunk.suppressResponse && !chunk.moreChunkedMessages { return true }
                let answer: IMEnvelope
                do {
                    answer = try await withTimeLimit(
                        configuration.responseTimeout, on: configuration.clock,
                        orThrow: { RelayError.timeout("controller's answer to a report") }
                    ) {
                        try await mailbox.next()
                    }
                } catch RelayError.connectionLost {
                    // The controller left mid-report: end the subscription on the device now.
                    _ = state.withLockedValue { $0.subscriptions.removeValue(forKey: subscriptionKey) }
                    try? await exchange.send(
                        opcode: InteractionOpcode.statusResponse.rawValue,
                        payload: StatusResponseMessage(status: .invalidSubscription).encoded(), reliable: true)
                    return true
                } catch {
                    return true
                }
                if answer.opcode == InteractionOpcode.statusResponse.rawValue,
                    (try? StatusResponseMessage(payload: answer.payload))?.status == .invalidSubscription
                {
                    _ = state.withLockedValue { $0.subscriptions.removeValue(forKey: subscriptionKey) }
                }
                do {
                    try await exchange.send(opcode: answer.opcode, payload: answer.payload, reliable: true)
                } catch {
                    return true
                }
                metrics.routed(.toDevice)
                guard chunk.moreChunkedMessages else {
                    try? await exchange.waitForAcknowledgement()
                    return true
                }
                do {
                    current = try await exchange.receive(timeout: configuration.responseTimeout)
                } catch {
                    return true
                }
            }
        }
    }
}

// MARK: - The relay's controller side

extension LocalHub: RelayControllerRouting {
    package var connectedCounts: (devices: Int, controllers: Int) {
        state.withLockedValue { s in (s.presence.values.filter { $0 == .present }.count, s.controllers.count) }
    }

    package func onlineDevices(homeID: String) -> Set<String> {
        guard homeID == credentials.homeID else { return [] }
        return state.withLockedValue { s in Set(s.presence.filter { $0.value == .present }.keys) }
    }

    package func makePeer(role: RelayRole, homeID: String, deviceID: String?) -> RelayPeer {
        let id = state.withLockedValue { s -> UInt32 in
            repeat { s.nextPeerID &+= 1 } while s.nextPeerID == 0 || s.controllers[s.nextPeerID] != nil
            return s.nextPeerID
        }
        return RelayPeer(id: id, role: role, homeID: homeID, deviceID: deviceID, queueCapacity: 1024)
    }

    package func attachController(_ peer: RelayPeer, hello: RelayHello, registered: [String]) {
        state.withLockedValue { s in
            s.controllers[peer.id] = peer
            _ = peer.send(.hello(hello))
            for deviceID in s.presence.keys.sorted() {
                _ = peer.send(.presence(RelayPresence(deviceID: deviceID, online: s.presence[deviceID] == .present)))
            }
        }
    }

    package func detachController(_ peer: RelayPeer) {
        let mailboxes = state.withLockedValue { s -> [Mailbox<IMEnvelope>] in
            s.controllers[peer.id] = nil
            // Its subscriptions' next reports are answered INVALID_SUBSCRIPTION, which ends them on the devices.
            s.subscriptions = s.subscriptions.filter { $0.value.session != peer.id }
            let mine = s.exchanges.filter { $0.key.session == peer.id }
            for key in mine.keys { s.exchanges[key] = nil }
            return Array(mine.values)
        }
        for mailbox in mailboxes { mailbox.close(.connectionLost) }
    }

    package func routeFromController(_ message: RelayMessage, from peer: RelayPeer) async {
        guard let deviceID = message.deviceID else { return }
        let key = ExchangeKey(
            session: peer.id, deviceID: deviceID, exchangeID: message.exchangeID, openedByController: message.fromInitiator)
        func fail(_ reason: RelayFailureReason, _ rejection: RelayRejection) {
            metrics.rejected(rejection)
            if message.fromInitiator {
                metrics.request(reason == .deviceOffline ? .deviceOffline : reason == .unknownDevice ? .unknownDevice : .overloaded)
            }
            _ = peer.send(
                .failure(
                    RelayFailure(deviceID: deviceID, exchangeID: message.exchangeID, fromInitiator: message.fromInitiator, reason: reason)))
        }
        guard let device = devices[deviceID], peer.homeID == credentials.homeID else {
            return fail(.unknownDevice, .unknownDevice)
        }
        let envelope = IMEnvelope(opcode: message.opcode, payload: message.payload)
        enum Action {
            case delivered(Mailbox<IMEnvelope>)
            case open(Mailbox<IMEnvelope>)
            case offline
            case overloaded
            case drop
        }
        let limit = configuration.maxExchangesPerController
        let action = state.withLockedValue { s -> Action in
            if let existing = s.exchanges[key] { return .delivered(existing) }
            // Only a request opens an exchange towards a device; anything else is late or stray.
            guard message.fromInitiator, Self.opensExchange(message.opcode) else { return .drop }
            // An absent device fails at once, as an offline one does at the cloud relay.
            if s.presence[deviceID] == .absent { return .offline }
            guard s.exchanges.keys.lazy.filter({ $0.session == peer.id }).count < limit else { return .overloaded }
            let mailbox = Mailbox<IMEnvelope>(capacity: 16)
            s.exchanges[key] = mailbox
            return .open(mailbox)
        }
        switch action {
        case .delivered(let mailbox):
            if mailbox.put(envelope) { metrics.routed(.toDevice) }
        case .open(let mailbox):
            mailbox.put(envelope)
            metrics.routed(.toDevice)
            let openedAt = configuration.clock.now
            jobSink.yield { await self.forward(key, mailbox: mailbox, device: device, peer: peer, openedAt: openedAt) }
        case .offline:
            fail(.deviceOffline, .deviceOffline)
        case .overloaded:
            fail(.overloaded, .overflow)
        case .drop:
            break
        }
    }

    static func opensExchange(_ opcode: UInt8) -> Bool {
        switch InteractionOpcode(rawValue: opcode) {
        case .readRequest, .subscribeRequest, .writeRequest, .invokeRequest, .timedRequest: true
        default: false
        }
    }
}

extension RelayServer {
    /// A local hub's server: the same controller protocol, answered by `localHub` over
    /// Matter. `store` authenticates the hub's home (see `RelayStore.mirror(_:)`).
    public convenience init(
        store: RelayStore, localHub: LocalHub, configuration: RelayServerConfiguration = .init(),
        logger: Logger = Logger(label: "matter.hub")
    ) {
        self.init(store: store, controllers: localHub, metrics: localHub.metrics, configuration: configuration, logger: logger)
    }
}
