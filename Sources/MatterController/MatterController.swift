import Logging
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
import NIOCore

/// Finds where an operational node listens (spec 4.3.2: `_matter._tcp` instance
/// `<compressed fabric ID>-<node ID>`).
public protocol OperationalResolver: Sendable {
    func resolve(compressedFabricID: UInt64, nodeID: NodeID) async throws -> SocketAddress
}

/// A Matter controller on one fabric: owns a UDP endpoint and its exchange manager,
/// keeps one CASE session per node (reused, resumed, re-established after failures),
/// and runs the Interaction Model client and the commissioner over them.
public actor MatterController {
    public struct Configuration: Sendable {
        /// Local UDP port (0: ephemeral) and binding.
        public var port: Int
        public var binding: UDPTransport.Binding
        /// How long to wait for each response of an interaction.
        public var responseTimeout: Duration
        /// How long each CASE/PASE step may take.
        public var handshakeStepTimeout: Duration
        /// Subscription intervals asked of publishers (seconds).
        public var subscriptionMinInterval: UInt16
        public var subscriptionMaxInterval: UInt16
        /// Longest pause between resubscription attempts.
        public var maxResubscribeDelay: Duration
        /// How long commissioning keeps retrying, with backoff, a node that answers PASE with
        /// BUSY (another commissioner holds its one slot); zero gives up at once.
        public var paseBusyRetryLimit: Duration = .seconds(60)
        /// MRP timing of our own sessions.
        public var exchange: ExchangeManager.Configuration
        /// The time source of MRP, handshake and response timeouts and subscription liveness.
        public var clock: any MatterClock = SystemClock()

        public init(
            port: Int = 0, binding: UDPTransport.Binding = .dualStack, responseTimeout: Duration = .seconds(8),
            handshakeStepTimeout: Duration = .seconds(8), subscriptionMinInterval: UInt16 = 0,
            subscriptionMaxInterval: UInt16 = 30, maxResubscribeDelay: Duration = .seconds(10),
            exchange: ExchangeManager.Configuration = .init(defaultReceiveTimeout: .seconds(10))
        ) {
            self.port = port
            self.binding = binding
            self.responseTimeout = responseTimeout
            self.handshakeStepTimeout = handshakeStepTimeout
            self.subscriptionMinInterval = subscriptionMinInterval
            self.subscriptionMaxInterval = subscriptionMaxInterval
            self.maxResubscribeDelay = maxResubscribeDelay
            self.exchange = exchange
        }
    }

    public nonisolated let configuration: Configuration
    nonisolated let manager: ExchangeManager
    /// The fabric's CA, when this controller is it; nil for a controller that only holds
    /// an operational identity (a hub), which cannot commission.
    public nonisolated let fabric: FabricAuthority?
    /// Who this controller is on the fabric.
    public nonisolated let identity: FabricIdentity
    nonisolated let router: SubscriptionRouter
    let transport: UDPTransport
    let logger: Logger
    private let operationalFabric: OperationalFabric
    private let runner: Task<Void, Never>
    private var sessionWatcher: Task<Void, Never>?
    private var addresses: [NodeID: SocketAddress] = [:]
    private var sessions: [NodeID: SessionInfo] = [:]
    private var resumptions: [NodeID: CASEInitiator.Resumption] = [:]
    private var pending: [NodeID: Task<SessionInfo, any Error>] = [:]
    private var resolver: (any OperationalResolver)?
    private var isShutDown = false

    /// Binds the UDP endpoint and starts the exchange manager.
    public static func start(
        fabric: FabricAuthority, configuration: Configuration = Configuration(),
        resolver: (any OperationalResolver)? = nil,
        logger: Logger = Logger(label: "matter.controller")
    ) async throws -> MatterController {
        try await start(
            fabric: fabric, identity: try fabric.fabricIdentity, configuration: configuration,
            resolver: resolver, logger: logger)
    }

    /// A controller with only an operational identity on the fabric (no CA): it reaches
    /// the fabric's nodes over CASE but cannot commission.
    public static func start(
        identity: FabricIdentity, configuration: Configuration = Configuration(),
        resolver: (any OperationalResolver)? = nil,
        logger: Logger = Logger(label: "matter.controller")
    ) async throws -> MatterController {
        try await start(fabric: nil, identity: identity, configuration: configuration, resolver: resolver, logger: logger)
    }

    private static func start(
        fabric: FabricAuthority?, identity: FabricIdentity, configuration: Configuration,
        resolver: (any OperationalResolver)?, logger: Logger
    ) async throws -> MatterController {
        let transport: UDPTransport
        do {
            transport = try await UDPTransport.bind(.init(port: configuration.port, binding: configuration.binding), logger: logger)
        } catch {
            throw ControllerError.invalidArgument("cannot bind UDP port \(configuration.port): \(error)")
        }
        let manager = ExchangeManager(
            transport: transport, configuration: configuration.exchange, clock: configuration.clock, logger: logger)
        let router = SubscriptionRouter(logger: logger)
        await manager.register(router, for: .interactionModel)
        let controller = try MatterController(
            fabric: fabric, identity: identity, configuration: configuration, transport: transport,
            manager: manager, router: router, resolver: resolver, logger: logger)
        await controller.watchSessions()
        return controller
    }

    private init(
        fabric: FabricAuthority?, identity: FabricIdentity, configuration: Configuration, transport: UDPTransport,
        manager: ExchangeManager, router: SubscriptionRouter, resolver: (any OperationalResolver)?, logger: Logger
    ) throws {
        self.fabric = fabric
        self.identity = identity
        self.configuration = configuration
        self.transport = transport
        self.manager = manager
        self.router = router
        self.resolver = resolver
        self.logger = logger
        self.operationalFabric = try identity.operationalFabric()
        self.runner = Task { await manager.run() }
    }

    private func watchSessions() {
        let events = manager.sessionEvents()
        sessionWatcher = Task { [weak self] in
            for await event in events {
                if case .closed(let info, _) = event { await self?.forget(info) }
            }
        }
    }

    private func forget(_ info: SessionInfo) {
        for (node, s) in sessions where s.handle == info.handle { sessions[node] = nil }
    }

    /// The local UDP port.
    public nonisolated var port: Int { transport.port }

    /// Stops the exchange manager and closes the socket; later calls fail with `.cancelled`.
    public func shutdown() async {
        guard !isShutDown else { return }
        isShutDown = true
        for task in pending.values { task.cancel() }
        // Every secure session the manager holds, not only the current one per node (one
        // replaced after a failure, or finished while shutting down): each device frees its
        // side and the subscriptions on it, instead of keeping them until evicted.
        for session in await manager.allSessions() where session.kind != .unsecured {
            await manager.closeSession(session.handle, notifyPeer: true)
        }
        sessions = [:]
        sessionWatcher?.cancel()
        runner.cancel()
        await transport.close()
    }

    /// The message layer's counters (sent, received, dropped, retransmitted).
    public func transportMetrics() async -> TransportMetrics { await manager.metrics() }

    /// Sessions the exchange manager holds now: secure (CASE/PASE) and unsecured.
    public func openSessions() async -> (secure: Int, unsecured: Int) {
        let all = await manager.allSessions()
        let unsecured = all.filter { $0.kind == .unsecured }.count
        return (all.count - unsecured, unsecured)
    }

    // MARK: Forwarding interactions (a hub)

    /// Decides whether an exchange a device opened towards this controller (the reports of a
    /// subscription made on another party's behalf) is the caller's; true when it took it.
    public typealias InteractionClaim = @Sendable (Exchange, Message) async -> Bool

    /// Lets `claim` see every Interaction Model exchange peers open towards this controller
    /// before the controller's own subscriptions do; nil gives them all back to the controller
    /// (and lets go of what `claim` holds). Exchanges on unsecured sessions reach neither.
    public func forwardIncomingInteractions(to claim: InteractionClaim?) async {
        guard let claim else {
            await manager.register(router, for: .interactionModel)
            return
        }
        await manager.register(ClaimingHandler(claim: claim, fallback: router), for: .interactionModel)
    }

    /// A new Interaction Model exchange with `node` over its CASE session (established if
    /// needed), for an interaction forwarded on another party's behalf: the caller sends and
    /// receives its messages as they come.
    public func openInteractionExchange(to node: NodeID) async throws -> Exchange {
        let session = try await session(for: node)
        return try await manager.openExchange(session: session.handle, protocolID: .interactionModel)
    }

    // MARK: Addresses and sessions

    /// Where `node` listens (learned when commissioning, or given by the caller).
    public func setAddress(_ address: SocketAddress, for node: NodeID) {
        if addresses[node] != address, let s = sessions[node], s.peerAddress != address {
            sessions[node] = nil
        }
        addresses[node] = address
    }

    public func address(of node: NodeID) -> SocketAddress? { addresses[node] }

    public func setResolver(_ resolver: (any OperationalResolver)?) { self.resolver = resolver }

    /// The CASE session with `node`: the live one when there is one, else a new one
    /// (resumed when possible). Concurrent callers share one handshake.
    public func session(for node: NodeID) async throws -> SessionInfo {
        guard !isShutDown else { throw ControllerError.cancelled }
        if let s = sessions[node], await manager.sessionInfo(s.handle) != nil { return s }
        sessions[node] = nil
        if let task = pending[node] { return try await task.value }
        let task = Task { try await self.establish(node) }
        pending[node] = task
        defer { pending[node] = nil }
        let info = try await task.value
        sessions[node] = info
        return info
    }

    /// Drops the session with `node` (after a failure), so the next call makes a new one. The
    /// node is told (CloseSession) in case only a message was lost: it frees its side then.
    public func invalidateSession(for node: NodeID) async {
        if let s = sessions.removeValue(forKey: node) {
            await manager.closeSession(s.handle, notifyPeer: true)
        }
    }

    private func establish(_ node: NodeID) async throws -> SessionInfo {
        let address: SocketAddress
        if let known = addresses[node] {
            address = known
        } else if let resolver {
            do {
                address = try await resolver.resolve(compressedFabricID: try identity.compressedFabricID(), nodeID: node)
            } catch {
                throw ControllerError.unreachable("node 0x\(String(node, radix: 16)) was not found on the network: \(error)")
            }
            addresses[node] = address
        } else {
            throw ControllerError.unreachable("no address known for node 0x\(String(node, radix: 16))")
        }
        let initiator = CASEInitiator(manager: manager, stepTimeout: configuration.handshakeStepTimeout)
        if let resumption = resumptions[node] {
            if let result = try? await initiator.establish(
                with: address, peerNodeID: node, fabric: operationalFabric,
                resumption: resumption)
            {
                resumptions[node] = result.resumption
                return result.session
            }
            resumptions[node] = nil
        }
        do {
            let result = try await initiator.establish(with: address, peerNodeID: node, fabric: operationalFabric)
            resumptions[node] = result.resumption
            return result.session
        } catch {
            // A node that restarted may listen elsewhere now: look it up again by its
            // operational instance name (_matter._tcp, spec 4.3.2) and try once there.
            if let moved = await relocated(node, from: address) {
                addresses[node] = moved
                do {
                    let result = try await initiator.establish(with: moved, peerNodeID: node, fabric: operationalFabric)
                    resumptions[node] = result.resumption
                    return result.session
                } catch {
                    throw ControllerError.transport(error, "CASE with node 0x\(String(node, radix: 16)) at \(moved)")
                }
            }
            throw ControllerError.transport(error, "CASE with node 0x\(String(node, radix: 16)) at \(address)")
        }
    }

    /// The node's operational address from DNS-SD when it differs from `address`.
    private func relocated(_ node: NodeID, from address: SocketAddress) async -> SocketAddress? {
        guard let resolver, let compressed = try? identity.compressedFabricID(),
            let found = try? await resolver.resolve(compressedFabricID: compressed, nodeID: node),
            found != address
        else { return nil }
        logger.info("node 0x\(String(node, radix: 16)) moved from \(address) to \(found)")
        return found
    }

    /// An Interaction Model client on the node's CASE session.
    public func client(for node: NodeID) async throws -> InteractionClient {
        let session = try await session(for: node)
        return InteractionClient(manager: manager, session: session.handle, timeout: configuration.responseTimeout)
    }

    /// Runs `body` with a client; when the session turns out to be dead, makes a new one
    /// and tries once more (reconnection).
    public func withClient<T: Sendable>(_ node: NodeID, _ body: @Sendable (InteractionClient) async throws -> T) async throws -> T {
        let first = try await client(for: node)
        do {
            return try await body(first)
        } catch let error as ControllerError where error.isConnectivityFailure {
            await invalidateSession(for: node)
            let second = try await client(for: node)
            return try await body(second)
        }
    }

    // MARK: Interaction Model

    public func read(_ node: NodeID, _ paths: [AttributePathIB]) async throws -> [AttributeReport] {
        try await withClient(node) { try await $0.read(paths) }
    }

    public func read(_ node: NodeID, _ path: AttributePath) async throws -> TLVValue {
        try await withClient(node) { try await $0.read(path) }
    }

    public func write(_ node: NodeID, _ path: AttributePath, value: TLVValue, timed: Duration? = nil) async throws {
        try await withClient(node) { try await $0.write(path, value: value, timed: timed) }
    }

    public func invoke(
        _ node: NodeID, _ path: ConcreteCommandPath, fields: TLVValue = .structure([]),
        timed: Duration? = nil
    ) async throws -> CommandResponse {
        // Commands are not idempotent (toggle): never resent here, since the first attempt
        // may have reached the node; the dead session is dropped so the next call reconnects.
        let client = try await client(for: node)
        do {
            return try await client.invoke(path, fields: fields, timed: timed)
        } catch let error as ControllerError where error.isConnectivityFailure {
            await invalidateSession(for: node)
            throw error
        }
    }

    // MARK: Subscriptions

    /// Subscribes to `paths` of `node` and keeps the subscription alive: when no report
    /// arrives within MaxInterval (plus a margin), or the session fails, it subscribes
    /// again with growing pauses. Ends when the consumer stops iterating. `events` are
    /// subscribed to as well; a resubscription does not deliver an event twice.
    public nonisolated func subscribe(
        _ node: NodeID, paths: [AttributePathIB], events: [EventPathIB] = []
    ) -> AsyncStream<SubscriptionEvent> {
        var keeper = SubscriptionKeeper(
            paths: paths, minInterval: configuration.subscriptionMinInterval,
            maxInterval: configuration.subscriptionMaxInterval, maxResubscribeDelay: configuration.maxResubscribeDelay,
            clock: configuration.clock)
        keeper.eventPaths = events
        keeper.publisher = "node 0x\(String(node, radix: 16))"
        return keeper.events(
            router: router, client: { try await self.client(for: node) },
            failed: { error in
                // A dead session is dropped so the next attempt makes a new one.
                if error.isConnectivityFailure { await self.invalidateSession(for: node) }
            })
    }

    /// The router of this controller's subscriptions, for subscriptions made with
    /// `client(for:)` directly.
    public nonisolated var subscriptionRouter: SubscriptionRouter { router }
}

/// The controller's IM handler while a forwarder is set: the forwarder first, then the
/// controller's own subscriptions.
private struct ClaimingHandler: ProtocolHandler {
    let claim: MatterController.InteractionClaim
    let fallback: SubscriptionRouter

    func handle(exchange: Exchange, first message: Message) async {
        guard message.session.isSecure else { return }
        if await claim(exchange, message) { return }
        await fallback.handle(exchange: exchange, first: message)
    }
}
