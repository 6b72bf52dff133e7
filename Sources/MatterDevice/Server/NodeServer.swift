import Logging
import MatterCrypto
import MatterDNSSD
import MatterModel
import MatterProtocol
import Synchronization

/// Runs one MatterNode as a Matter device on the network: a UDP transport, the exchange
/// manager, the Secure Channel responder (PASE while a commissioning window is open,
/// CASE for the node's fabrics) and the Interaction Model server over the node, plus
/// DNS-SD advertising through Avahi.
///
///     let server = try await NodeServer(node: node, configuration: configuration)
///     print("listening on \(server.port)")
///     await server.run()          // until the task is cancelled; then shuts down cleanly
///
/// The node asks for what it needs through its commissioning events (open or close the
/// PASE window, bind a PASE session to a new fabric, close sessions, advertise fabrics);
/// the transport reports session life cycles back to the node.
public final class NodeServer: Sendable {
    public let node: MatterNode
    public let configuration: NodeServerConfiguration
    public let exchangeManager: ExchangeManager
    /// Serves the node over UDP: its cloud-only clusters do not exist here.
    public let interactionServer: InteractionServer
    /// Serves the whole node, cloud-only clusters included: hand it to the cloud relay's
    /// device client (`RelayDeviceClient`). `run()` keeps its subscriptions going.
    public let cloudInteractionServer: InteractionServer
    public let secureChannel: SecureChannelServer
    /// The bound UDP port (the ephemeral one when the configuration asked for 0).
    public let port: Int

    let transport: UDPTransport
    /// The node's cable to the LAN: every datagram passes it (see `setLAN(up:)`).
    let lan: NodeLANLink
    let advertiser: NodeAdvertiser
    let faults = Mutex(FaultState())
    let activity = SessionActivity()
    let logger: Logger
    let trace: CommissioningTrace?
    /// What peers did with the node lately (the dashboard's live log).
    public let traffic: NodeTrafficLog
    private let sessionEvents: AsyncStream<SessionEvent>
    private let commissioningEvents: AsyncStream<CommissioningEvent>
    /// run() serves once; the streams above have a single consumer.
    private let hasRun = Mutex(false)
    /// Opened once the secure channel has handled boot's commissioning window.
    private let bootWindowHandled = Latch()
    private let commissioningHandled = EventBroadcaster<Void>()

    /// Binds the UDP port and wires the protocol stack to the node; nothing is served
    /// until `run()`. `publisher`: an Avahi connection shared with other nodes of the
    /// process (a fleet); by default the node opens its own.
    public init(
        node: MatterNode, configuration: NodeServerConfiguration,
        logger: Logger = Logger(label: "matter.node-server"), publisher: DNSSDPublisher? = nil
    ) async throws {
        // Read before the socket is bound: a damaged record stops the node here.
        let groupCounters = try node.stateStore.map { try GroupCounterRecord(store: $0, logger: logger) }
        let transport = try await UDPTransport.bind(
            UDPTransport.Configuration(port: configuration.port, binding: configuration.binding),
            logger: logger)
        let lan = NodeLANLink(transport, clock: node.clock)
        // One clock for the node: its clusters, MRP and the Interaction Model's intervals.
        let manager = ExchangeManager(transport: lan, configuration: configuration.exchange, clock: node.clock, logger: logger)
        if let groupCounters { await manager.keepGroupCounters(in: groupCounters, restoring: groupCounters.restored) }
        let secureChannel = SecureChannelServer(
            manager: manager, fabrics: NodeFabricProvider(node: node, logger: logger),
            configuration: configuration.secureChannel, logger: logger)
        let advertiser = NodeAdvertiser(
            enabled: configuration.advertisement != nil, shared: publisher,
            // real time: external: the Avahi daemon's packets (AnnouncementPacing).
            firstPublication: ContinuousClock.now + configuration.advertisementSlot, slots: configuration.announcementSlots,
            logger: logger)
        let trace = configuration.traceCommissioning ? CommissioningTrace(clock: node.clock, logger: logger) : nil
        let interactionServer = InteractionServer(
            provider: NodeDataProvider(node: node, withholding: configuration.cloudOnlyClusters, trace: trace) { index in
                guard let fabric = await node.fabrics.first(where: { $0.index == index }) else { return }
                await Self.advertiseOperational(
                    fabric, advertiser: advertiser, configuration: configuration, transport: transport, logger: logger)
                // Bounded: a slow daemon delays the response a little, never fails it.
                await advertiser.waitUntilPublished(.operational(index), limit: .milliseconds(250))
                if configuration.advertisement != nil { trace?.mark("operational record of fabric \(index) on the daemon") }
            },
            clock: node.clock, configuration: configuration.interactionModel, logger: logger)
        let cloudInteractionServer = InteractionServer(
            provider: NodeDataProvider(node: node), clock: node.clock, configuration: configuration.interactionModel,
            logger: logger)
        self.node = node
        self.configuration = configuration
        self.transport = transport
        self.lan = lan
        self.cloudInteractionServer = cloudInteractionServer
        self.exchangeManager = manager
        self.secureChannel = secureChannel
        self.interactionServer = interactionServer
        // Every Interaction Model request goes into the traffic log as it arrives.
        traffic = NodeTrafficLog(model: node.model)
        interactionServer.observeRequests(traffic)
        self.port = transport.port
        self.logger = logger
        self.advertiser = advertiser
        self.trace = trace
        // Subscribed before anything can happen, so no event is missed.
        self.sessionEvents = manager.sessionEvents()
        self.commissioningEvents = node.commissioningEvents
        await manager.register(ObservedSecureChannel(inner: secureChannel, trace: trace, traffic: traffic), for: .secureChannel)
        await manager.register(NodeInteractionHandler(server: interactionServer, activity: activity), for: .interactionModel)
    }

    /// Serves until the calling task is cancelled (or the transport closes), then shuts
    /// down: withdraws every advertisement, closes every session (telling the peers),
    /// closes the socket and stops the node, which saves its state.
    public func run() async {
        let first = hasRun.withLock { ran in
            defer { ran = true }
            return !ran
        }
        guard first else { return }
        logger.notice("serving on UDP port \(port)")
        // What boot asks of the server waits in the event streams for the loops below.
        await boot()
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                // A PBKDFParamRequest taken in before the boot window is open is acked and
                // dropped, and its retransmissions are then duplicates: let it wait in the
                // transport's queue.
                await self.waitForBootWindow()
                await self.exchangeManager.run()
                self.logger.debug("exchange manager stopped")
            }
            group.addTask {
                await self.interactionServer.run()
                self.logger.debug("interaction model server stopped")
            }
            group.addTask {
                await self.cloudInteractionServer.run()
                self.logger.debug("cloud interaction model server stopped")
            }
            group.addTask {
                await self.followSessionEvents()
                self.logger.debug("session events ended")
            }
            group.addTask {
                await self.followCommissioningEvents()
                self.logger.debug("commissioning events ended")
            }
            group.addTask { await self.sendBoundCommands() }
            // Cancellation ends them all; the socket closing ends the exchange manager
            // alone, and then the rest with it.
            await group.next()
            group.cancelAll()
        }
        await shutdown()
    }

    /// A node on no fabric opens its basic commissioning window (Core spec 5.4.2.3); one
    /// already commissioned advertises itself on each of its fabrics.
    func boot() async {
        let fabrics = await node.fabrics
        if fabrics.isEmpty {
            await node.openCommissioningWindow(timeout: configuration.bootWindowTimeout)
        } else {
            for fabric in fabrics { await advertiseOperational(fabric) }
        }
        await followGroupcast()
    }

    /// Until the secure channel has handled the commissioning window boot opened (a node
    /// already on a fabric does not wait; bounded by a second on the node's clock).
    private func waitForBootWindow() async {
        guard await node.fabrics.isEmpty else { return }
        let latch = bootWindowHandled
        _ = try? await withTimeLimit(.seconds(1), on: exchangeManager.clock, orThrow: { CancellationError() }) {
            await latch.wait()
        }
    }

    private func shutdown() async {
        logger.notice("shutting down")
        await advertiser.shutdown()
        for session in await exchangeManager.allSessions() where session.isSecure {
            await exchangeManager.closeSession(session.handle, notifyPeer: true)
        }
        await transport.close()
        await node.stop()
    }

    // MARK: Session events

    private func followSessionEvents() async {
        for await event in sessionEvents {
            switch event {
            case .established(let info):
                trace?.mark("\(info.kind == .pase ? "PASE" : "CASE") session established")
                traffic.record(
                    info.kind == .pase ? .commissioning : .session, peer: TrafficWording.peer(info.peerAddress),
                    TrafficWording.session(info) + " established")
                if info.kind == .pase, let session = SessionContext(info) {
                    await node.paseSessionEstablished(session)
                }
            case .closed(let info, let reason):
                logger.debug("session \(info.handle) (\(info.kind)) closed: \(reason)")
                if info.isSecure, info.kind != .group {
                    traffic.record(
                        .session, peer: TrafficWording.peer(info.peerAddress), TrafficWording.session(info) + " closed (\(reason))")
                }
                await activity.forget(info.handle.serial)
                await node.sessionClosed(SessionID(info.handle))
            case .establishmentFailed(let failure):
                logger.info("\(failure.kind) establishment from \(failure.peerAddress) failed: \(failure.reason)")
                traffic.record(
                    failure.kind == .pase ? .commissioning : .session, peer: TrafficWording.peer(failure.peerAddress),
                    "\(failure.kind == .pase ? "PASE" : "CASE") failed: \(failure.reason)")
            case .commissioningWindowClosedAfterFailures(let failures):
                // Core spec 5.4.2.5: too many wrong passcodes close the window.
                logger.warning("commissioning window closed after \(failures) failed PASE attempts")
                await node.closeCommissioningWindow()
            }
        }
    }

    /// A light switch's presses, sent to the lights its Binding names (NodeBindingSender), one
    /// after another; each outcome goes to the traffic log.
    private func sendBoundCommands() async {
        let sender = NodeBindingSender(
            manager: exchangeManager, fabrics: NodeFabricProvider(node: node, logger: logger), lookup: configuration.boundNodeAddresses,
            logger: logger)
        for await command in node.boundCommands {
            switch await sender.send(command) {
            case .success(let status):
                traffic.record(.invoke, peer: "node 0x\(String(command.node, radix: 16))", "bound \(command.path): \(status)")
            case .failure(let error):
                logger.warning("bound command not delivered: \(error)")
                traffic.record(.invoke, peer: "node 0x\(String(command.node, radix: 16))", "bound \(command.path) failed: \(error)")
            }
        }
    }


    // MARK: Commissioning events

    private func followCommissioningEvents() async {
        for await event in commissioningEvents {
            await handle(event)
            commissioningHandled.publish(())
        }
    }

    /// Yields after the server has acted on each commissioning event (a window opened or
    /// closed on the secure channel, advertisements, sessions), coalesced while unread:
    /// a caller waits for the node to be commissionable without polling.
    public func commissioningChanges() -> AsyncStream<Void> { commissioningHandled.subscribe(bufferLimit: 1) }

    private func handle(_ event: CommissioningEvent) async {
        switch event {
        case .commissioningWindowOpened(let window):
            do {
                await secureChannel.openCommissioningWindow(try verifierParameters(for: window.kind))
            } catch {
                logger.error("cannot open the commissioning window: \(error)")
            }
            bootWindowHandled.open()
            guard await secureChannel.isCommissioningWindowOpen else { return }
            await advertiseCommissionable(window)
        case .commissioningWindowClosed:
            await secureChannel.closeCommissioningWindow()
            await advertiser.withdraw(.commissionable)
        case .paseSessionAdoptedFabric(let session, let fabricIndex):
            if let info = await exchangeManager.allSessions().first(where: { $0.handle.serial == session.rawValue }) {
                await exchangeManager.bindFabric(fabricIndex, toSession: info.handle)
            }
        case .fabricAdded(let index), .fabricUpdated(let index):
            if let fabric = await node.fabrics.first(where: { $0.index == index }) {
                await advertiseOperational(fabric)
            }
        case .fabricRemoved(let index):
            await advertiser.withdraw(.operational(index))
            await interactionServer.endSubscriptions(fabricIndex: index)
            await cloudInteractionServer.endSubscriptions(fabricIndex: index)
            // A node left on no fabric becomes commissionable again, as at first boot.
            if await node.fabrics.isEmpty, await node.commissioningWindow == nil {
                logger.notice("last fabric removed; opening the commissioning window")
                await node.openCommissioningWindow(timeout: configuration.bootWindowTimeout)
            }
        case .closePASESessions:
            // Evicted without a CloseSession, as connectedhomeip's commissionee does: the
            // commissioner drops its PASE session itself once commissioning is complete, and a
            // CloseSession arriving after that is logged there as data on an unknown session.
            await closeSessions(notifyPeer: false) { $0.kind == .pase }
        case .closeSessions(let fabricIndex, let except):
            await closeSessions { $0.fabricIndex == fabricIndex && $0.handle.serial != except?.rawValue }
        case .fabricCommitted(let index):
            logger.info("fabric \(index) committed")
        case .commissioningComplete(let fabricIndex, let nodeID):
            logger.notice("commissioned on fabric \(fabricIndex) as node 0x\(String(nodeID, radix: 16, uppercase: true))")
        case .failSafeExpired:
            logger.notice("fail-safe expired; commissioning changes rolled back")
        case .committedStateSaved:
            await followGroupcast()
        }
    }

    /// The PASE verifier of a window: for the basic window, derived from the onboarding
    /// passcode with a fresh random salt (spec 5.1.1.6: 16 to 32 bytes).
    private func verifierParameters(for kind: CommissioningWindowKind) throws -> PASEVerifierParameters {
        switch kind {
        case .basic:
            return try PASEVerifierParameters(
                passcode: configuration.passcode, iterations: configuration.pbkdfIterations,
                salt: SecureRandom.bytes(32))
        case .enhanced(let verifier, _, let iterations, let salt):
            return PASEVerifierParameters(verifier: verifier, iterations: iterations, salt: salt)
        }
    }

    /// Closes the matching secure sessions, each once no interaction is running on it
    /// (the response that asked for it goes out first).
    private func closeSessions(notifyPeer: Bool = true, where matches: (SessionInfo) -> Bool) async {
        for info in await exchangeManager.allSessions() where info.isSecure && matches(info) {
            if await activity.requestClose(info.handle.serial, notifyPeer: notifyPeer) {
                await exchangeManager.closeSession(info.handle, notifyPeer: notifyPeer)
            }
        }
    }
}

/// A gate that opens once and stays open; waiters resume when it opens.
final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }
    private let state = Mutex(State())

    func open() {
        let waiters = state.withLock { s -> [CheckedContinuation<Void, Never>] in
            s.isOpen = true
            defer { s.waiters = [] }
            return s.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { s -> Bool in
                if s.isOpen { return true }
                s.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
