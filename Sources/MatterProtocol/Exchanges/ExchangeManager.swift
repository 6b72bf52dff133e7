import Logging
import MatterCrypto
import MatterModel
import NIOCore

/// The message layer of one node (Matter Core spec 4.4–4.13): decodes and
/// decrypts datagrams, detects duplicates, runs MRP (acks, retransmissions),
/// matches messages to exchanges and dispatches new exchanges to the protocol
/// handler registered for their protocol. Serves both roles: responder (device)
/// and initiator (controller).
///
/// Start it with `run()` (until cancelled or the transport closes):
///
///     let transport = try await UDPTransport.bind(.init(port: 5540))
///     let manager = ExchangeManager(transport: transport)
///     await manager.register(imServer, for: .interactionModel)
///     try await manager.run()
public actor ExchangeManager {
    public struct Configuration: Sendable {
        /// Our session parameters (MRP intervals announced to peers in PASE/CASE).
        public var localParameters: SessionParameters
        public var maxSecureSessions: Int
        public var maxUnsecuredSessions: Int
        /// Exchanges open at once; new unsolicited exchanges beyond this are dropped (and acked).
        /// Session establishment (PASE, CASE on an unsecured session) has `maxUnsecuredSessions`
        /// more, so a full table never locks a new controller out.
        public var maxExchanges: Int
        /// Exchanges one peer may have opened on one session at once: one session cannot take
        /// the whole table (140 pending TimedRequests would otherwise shut everyone out).
        public var maxExchangesPerSession: Int
        /// Messages queued on one exchange nobody is receiving on.
        public var exchangeInboxLimit: Int
        /// `Exchange.receive` timeout when none is given.
        public var defaultReceiveTimeout: Duration
        public var standaloneAckTimeout: Duration
        public var maxTransmissions: Int
        /// Source of MRP jitter in [0, 1); tests pin it.
        public var jitter: @Sendable () -> Double
        /// Logs each served request's service time (`matter-sim run --trace`).
        public var traceServiceTimes = false

        public init(
            localParameters: SessionParameters = .local, maxSecureSessions: Int = 32,
            maxUnsecuredSessions: Int = 16, maxExchanges: Int = 128, maxExchangesPerSession: Int = 16,
            exchangeInboxLimit: Int = 16,
            defaultReceiveTimeout: Duration = .seconds(30),
            standaloneAckTimeout: Duration = ReliableMessageProtocol.standaloneAckTimeout,
            maxTransmissions: Int = ReliableMessageProtocol.maxTransmissions,
            jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
        ) {
            self.localParameters = localParameters
            self.maxSecureSessions = maxSecureSessions
            self.maxUnsecuredSessions = maxUnsecuredSessions
            self.maxExchanges = maxExchanges
            self.maxExchangesPerSession = maxExchangesPerSession
            self.exchangeInboxLimit = exchangeInboxLimit
            self.defaultReceiveTimeout = defaultReceiveTimeout
            self.standaloneAckTimeout = standaloneAckTimeout
            self.maxTransmissions = maxTransmissions
            self.jitter = jitter
        }
    }

    /// An unsolicited message for a registered handler, to be run by `run()`.
    struct Dispatch: Sendable {
        let handler: any ProtocolHandler
        let exchange: Exchange
        let message: Message
    }

    public let configuration: Configuration
    public nonisolated let transport: any DatagramTransport
    public nonisolated let clock: any MatterClock
    let logger: Logger

    var sessions: SessionManager
    private var exchanges: [ExchangeKey: ExchangeState] = [:]
    private var handlers: [ProtocolID: any ProtocolHandler] = [:]
    private var counters = TransportMetrics() {
        didSet { countersChanged.publish(()) }
    }
    /// Requests served, by kind: datagram taken to response sent (`serviceTimes()`).
    private var served: [String: ServiceTimeHistogram] = [:]
    /// Operational group keys by group session ID, and the per-sender group counters.
    private var groupKeys: [UInt16: [GroupOperationalKey]] = [:]
    private var groupCounters: [GroupPeer: PeerMessageCounter] = [:]
    static let maxGroupPeers = 256
    private var groupCounterStore: (any GroupCounterStore)?
    private var unencryptedCounter = MessageCounter(allowsRollover: true)
    private var nextExchangeID: UInt16
    private var nextWaiterID: UInt64 = 0
    /// The one clock timer of the MRP, ack and receive deadlines, set at the earliest.
    private var timer: (deadline: Duration, handle: ClockTimer)?
    private nonisolated let events = EventBroadcaster<SessionEvent>()
    private nonisolated let countersChanged = EventBroadcaster<Void>()

    public init(
        transport: any DatagramTransport, configuration: Configuration = Configuration(),
        clock: any MatterClock = SystemClock(), logger: Logger = Logger(label: "matter.exchange")
    ) {
        self.transport = transport
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
        self.sessions = SessionManager(
            maxSecureSessions: configuration.maxSecureSessions,
            maxUnsecuredSessions: configuration.maxUnsecuredSessions)
        let r = SecureRandom.bytes(2)
        self.nextExchangeID = UInt16(r[0]) | UInt16(r[1]) << 8
    }

    // MARK: - Running

    /// Processes datagrams and timers until the transport's inbound stream ends or the
    /// task is cancelled. Protocol handlers run as child tasks of this call.
    public nonisolated func run() async {
        // The inbound stream has a single consumer: a second concurrent run() returns at once.
        guard await beginRunning() else { return }
        await withDiscardingTaskGroup { group in
            for await datagram in transport.inbound {
                if let dispatch = await self.ingest(datagram) {
                    group.addTask {
                        await dispatch.handler.handle(exchange: dispatch.exchange, first: dispatch.message)
                        await dispatch.exchange.close()
                    }
                }
            }
            // No datagram (no ack, no reply) arrives any more: end every exchange now, so
            // handlers waiting on one return instead of holding the group open.
            await self.failAllExchanges(.notRunning)
            group.cancelAll()
        }
        await failAllExchanges(.notRunning)
    }

    private var isRunning = false

    private func beginRunning() -> Bool {
        guard !isRunning else { return false }
        isRunning = true
        return true
    }

    /// Makes sure the timer fires by `deadline` (it may already be set earlier). The timer
    /// is a clock action, so a manual clock's `advance` runs retransmissions, standalone
    /// acks and receive timeouts to completion before it returns.
    private func armTimer(at deadline: Duration) {
        if let current = timer, current.deadline <= deadline { return }
        timer?.handle.cancel()
        let handle = clock.schedule(at: deadline) { [weak self] in await self?.timerFired() }
        timer = (deadline, handle)
    }

    private func timerFired() {
        timer = nil
        if let next = fireTimers() { armTimer(at: next) }
    }

    // MARK: - Registration and observation

    /// Routes unsolicited messages of `protocolID` to `handler` (replacing any earlier one).
    public func register(_ handler: any ProtocolHandler, for protocolID: ProtocolID) {
        handlers[protocolID] = handler
    }

    public func unregister(_ protocolID: ProtocolID) {
        handlers.removeValue(forKey: protocolID)
    }

    /// A new stream of session events (each call gets its own; events before the call are not replayed).
    public nonisolated func sessionEvents() -> AsyncStream<SessionEvent> {
        events.subscribe()
    }

    /// Publishes an event to every `sessionEvents()` stream (used by PASE/CASE).
    nonisolated func publish(_ event: SessionEvent) {
        events.publish(event)
    }

    /// A new stream that yields after `metrics()` moved (changes coalesced while unread), so a
    /// watcher waits for the next count instead of polling.
    public nonisolated func metricsChanges() -> AsyncStream<Void> {
        countersChanged.subscribe(bufferLimit: 1)
    }

    public func metrics() -> TransportMetrics {
        var m = counters
        m.inboundQueueOverflows = transport.inboundOverflowCount
        return m
    }

    /// How long each kind of request took to serve, from the message layer taking the
    /// datagram to the response leaving (`ServedRequest.kind`).
    public func serviceTimes() -> [String: ServiceTimeHistogram] {
        served
    }

    // MARK: - Sessions

    public func sessionInfo(_ handle: SessionHandle) -> SessionInfo? {
        sessions.info(handle)
    }

    /// All sessions, secure and unsecured.
    public func allSessions() -> [SessionInfo] {
        sessions.allInfos
    }

    /// Reserves a local session ID for a handshake; release it if the handshake fails.
    public func allocateSessionID() -> UInt16? {
        sessions.allocateSessionID()
    }

    public func releaseSessionID(_ id: UInt16) {
        sessions.releaseSessionID(id)
    }

    /// Installs a secure session after PASE/CASE, evicting least recently used ones if full.
    public func installSecureSession(_ parameters: SecureSessionParameters) throws(MatterCryptoError) -> SessionInfo {
        let (session, evicted) = try sessions.installSecure(parameters, now: clock.now)
        for victim in evicted {
            counters.sessionsEvicted += 1
            sessionRemoved(victim.handle, info: victim.info, reason: .evicted)
        }
        counters.sessionsEstablished += 1
        let info = session.info
        publish(.established(info))
        return info
    }

    /// Associates a PASE session with the fabric that AddNOC just added (spec 11.18.6.8).
    public func bindFabric(_ fabricIndex: FabricIndex, toSession handle: SessionHandle) {
        sessions.updateSecure(handle) { $0.fabricIndex = fabricIndex }
    }

    /// Updates the MRP parameters used toward a peer (e.g. from PBKDFParamRequest on the unsecured session).
    public func setPeerParameters(_ parameters: SessionParameters, forSession handle: SessionHandle) {
        sessions.updateSecure(handle) { $0.peerParameters = parameters }
        sessions.updateUnsecured(handle) { $0.peerParameters = parameters }
    }

    /// Closes one session. With `notifyPeer`, a CloseSession StatusReport is sent first (spec 4.11.1.4).
    public func closeSession(_ handle: SessionHandle, notifyPeer: Bool = true) {
        if notifyPeer, sessions.secureSession(handle) != nil {
            sendCloseSession(handle)
        }
        removeSession(handle, reason: .closedLocally)
    }

    /// Closes every secure session of a fabric (e.g. when it is removed) and forgets its resumption records.
    public func closeSessions(fabricIndex: FabricIndex, notifyPeer: Bool = false) {
        for handle in sessions.secureHandles(fabricIndex: fabricIndex) {
            closeSession(handle, notifyPeer: notifyPeer)
        }
        sessions.removeResumptions(fabricIndex: fabricIndex)
    }

    /// Creates an unsecured session toward `address` with a fresh ephemeral initiator node ID,
    /// for starting PASE or CASE as initiator.
    public func openUnsecuredSession(to address: SocketAddress) -> SessionHandle {
        var nodeID: UInt64 = 0
        while nodeID == 0 {
            nodeID = SecureRandom.bytes(8).reduce(0) { $0 << 8 | UInt64($1) }
        }
        let key = UnsecuredSession.Key(peerAddress: nil, ephemeralInitiatorNodeID: nodeID, role: .initiator)
        let handle = sessions.makeUnsecuredSession(key: key, address: address, now: clock.now)
        dropExchangesOfEvictedSessions()
        return handle
    }

    /// An unsecured session evicted for a new one takes its exchanges with it, retransmissions
    /// included: a flood of initiators that never answer would otherwise keep their replies
    /// retransmitting for MRP's whole course, fill the exchange table and shut a real
    /// commissioner out until they gave up.
    private func dropExchangesOfEvictedSessions() {
        for handle in sessions.takeEvictedUnsecured() {
            failExchanges(ofSession: handle, with: .sessionClosed)
        }
    }

    /// Protects an unsecured session from eviction (while a PASE handshake runs on it).
    public func pinUnsecuredSession(_ handle: SessionHandle, _ pinned: Bool) {
        sessions.setPinned(handle, pinned)
    }

    public func removeUnsecuredSession(_ handle: SessionHandle) {
        guard sessions.unsecured[handle] != nil else { return }
        removeSession(handle, reason: .closedLocally)
    }

    func resumptionRecord(id: [UInt8]) -> CASEResumptionRecord? {
        sessions.resumption(id: id)
    }

    func removeResumptionRecord(id: [UInt8]) {
        sessions.removeResumption(id: id)
    }

    private func removeSession(_ handle: SessionHandle, reason: SessionCloseReason) {
        if let s = sessions.removeSecure(handle) {
            sessionRemoved(handle, info: s.info, reason: reason)
        } else if sessions.removeUnsecured(handle) != nil {
            failExchanges(ofSession: handle, with: .sessionClosed)
        }
    }

    private func sessionRemoved(_ handle: SessionHandle, info: SessionInfo, reason: SessionCloseReason) {
        logger.info(
            "session closed",
            metadata: [
                "session": "\(info.localSessionID)", "kind": "\(info.kind)",
                "reason": "\(reason)",
            ])
        failExchanges(ofSession: handle, with: .sessionClosed)
        publish(.closed(info, reason))
    }

    private func sendCloseSession(_ handle: SessionHandle) {
        let exchangeID = allocateExchangeID(session: handle)
        let header = ProtocolHeader(
            isInitiator: true, opcode: SecureChannelOpcode.statusReport.rawValue,
            exchangeID: exchangeID, protocolID: .secureChannel)
        if let (bytes, _, address) = try? seal(
            session: handle, protocolHeader: header,
            payload: StatusReport.closeSession.encoded())
        {
            transmit(bytes, to: address)
            counters.closeSessionsSent += 1
        }
    }

    // MARK: - Exchanges (API used by Exchange)

    /// Opens an exchange in the initiator role on a session.
    public func openExchange(session handle: SessionHandle, protocolID: ProtocolID) throws(TransportError) -> Exchange {
        guard let info = sessions.info(handle) else { throw .sessionClosed }
        let key = ExchangeKey(session: handle, exchangeID: allocateExchangeID(session: handle), role: .initiator)
        exchanges[key] = ExchangeState(protocolID: protocolID)
        counters.exchangesOpened += 1
        return Exchange(key: key, protocolID: protocolID, session: info, manager: self)
    }

    private func allocateExchangeID(session: SessionHandle) -> UInt16 {
        for _ in 0..<Int(UInt16.max) {
            let id = nextExchangeID
            nextExchangeID &+= 1
            if exchanges[ExchangeKey(session: session, exchangeID: id, role: .initiator)] == nil { return id }
        }
        return nextExchangeID
    }

    /// Why an exchange is gone: its session closed, or the exchange itself.
    private func goneError(_ key: ExchangeKey) -> TransportError {
        sessions.info(key.session) == nil ? .sessionClosed : .exchangeClosed
    }

    func send(key: ExchangeKey, opcode: UInt8, payload: [UInt8], reliable: Bool) throws(TransportError) {
        guard let ex = exchanges[key] else { throw goneError(key) }
        if let error = ex.terminalError { throw error }
        guard !ex.isClosed else { throw .exchangeClosed }
        if reliable && ex.retransmission != nil { throw .reliableMessageInFlight }
        let header = ProtocolHeader(
            isInitiator: key.role == .initiator, needsAcknowledgement: reliable,
            acknowledgedMessageCounter: ex.peerAckCounter, opcode: opcode,
            exchangeID: key.exchangeID, protocolID: ex.protocolID)
        let (bytes, counter, address) = try seal(session: key.session, protocolHeader: header, payload: payload)
        ex.pendingAck = nil
        // Served once the response is handed to the socket: on a veth or loopback, the send
        // call itself also runs the peer's receive path (about 25 µs here), which a real link's
        // driver would not.
        if let serving = ex.serving {
            ex.serving = nil
            let took = clock.now - serving.since
            served[serving.kind, default: ServiceTimeHistogram()].record(took)
            if configuration.traceServiceTimes {
                logger.info("served \(serving.kind) in \(ServiceTimeHistogram.nanoseconds(took) / 1000) µs")
            }
        }
        transmit(bytes, to: address)
        if reliable {
            let now = clock.now
            let deadline = now + retransmissionDelay(session: key.session, retransmissions: 0, now: now)
            ex.retransmission = Retransmission(messageCounter: counter, datagram: bytes, transmissions: 1, deadline: deadline)
            armTimer(at: deadline)
        }
    }

    func receive(key: ExchangeKey, timeout: Duration?) async throws -> Message {
        guard let ex = exchanges[key] else { throw goneError(key) }
        if !ex.inbox.isEmpty { return ex.inbox.removeFirst() }
        if let error = ex.terminalError { throw error }
        guard !ex.isClosed else { throw TransportError.exchangeClosed }
        guard ex.waiter == nil else { throw TransportError.concurrentReceive }
        nextWaiterID += 1
        let waiterID = nextWaiterID
        let deadline = clock.now + (timeout ?? configuration.defaultReceiveTimeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Message, any Error>) in
                if Task.isCancelled {
                    c.resume(throwing: CancellationError())
                    return
                }
                ex.waiter = Waiter(id: waiterID, continuation: c, deadline: deadline)
                armTimer(at: deadline)
            }
        } onCancel: {
            Task { await self.cancelReceive(key: key, waiterID: waiterID) }
        }
    }

    private func cancelReceive(key: ExchangeKey, waiterID: UInt64) {
        guard let ex = exchanges[key], let w = ex.waiter, w.id == waiterID else { return }
        ex.waiter = nil
        w.continuation.resume(throwing: CancellationError())
    }

    func waitForAcknowledgement(key: ExchangeKey) async throws {
        guard let ex = exchanges[key] else { throw goneError(key) }
        if let error = ex.terminalError { throw error }
        guard ex.retransmission != nil else { return }
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            ex.ackWaiters.append(c)
        }
    }

    func closeExchange(key: ExchangeKey) {
        guard let ex = exchanges[key], !ex.isClosed else { return }
        ex.isClosed = true
        if let pending = ex.pendingAck {
            sendStandaloneAck(session: key.session, exchangeID: key.exchangeID, role: key.role, ackCounter: pending.counter)
            ex.pendingAck = nil
        }
        if let w = ex.waiter {
            ex.waiter = nil
            w.continuation.resume(throwing: TransportError.exchangeClosed)
        }
        if ex.retransmission == nil {
            removeExchange(key)
        }
    }

    private func removeExchange(_ key: ExchangeKey) {
        guard let ex = exchanges.removeValue(forKey: key) else { return }
        for w in ex.ackWaiters { w.resume(throwing: ex.terminalError ?? TransportError.exchangeClosed) }
        ex.ackWaiters = []
    }

    private func fail(_ ex: ExchangeState, with error: TransportError) {
        if ex.terminalError == nil { ex.terminalError = error }
        ex.retransmission = nil
        if let w = ex.waiter {
            ex.waiter = nil
            w.continuation.resume(throwing: error)
        }
        for w in ex.ackWaiters { w.resume(throwing: error) }
        ex.ackWaiters = []
    }

    private func failExchanges(ofSession handle: SessionHandle, with error: TransportError) {
        for (key, ex) in exchanges where key.session == handle {
            ex.pendingAck = nil
            fail(ex, with: error)
            ex.isClosed = true
            exchanges.removeValue(forKey: key)
        }
    }

    private func failAllExchanges(_ error: TransportError) {
        for (key, ex) in exchanges {
            fail(ex, with: error)
            exchanges.removeValue(forKey: key)
        }
    }

    // MARK: - Outbound

    /// Builds the datagram for a message on a session. Returns the bytes, the message
    /// counter used and the peer's address.
    func sealDatagram(
        session handle: SessionHandle, protocolHeader: ProtocolHeader,
        payload: [UInt8]
    ) throws(TransportError) -> ([UInt8], UInt32, SocketAddress) {
        try seal(session: handle, protocolHeader: protocolHeader, payload: payload)
    }

    private func seal(
        session handle: SessionHandle, protocolHeader: ProtocolHeader,
        payload: [UInt8]
    ) throws(TransportError) -> ([UInt8], UInt32, SocketAddress) {
        let protocolMessage: [UInt8]
        do { protocolMessage = try protocolHeader.encoded(payload: payload) } catch { throw .codec(error) }
        let now = clock.now
        if let s = sessions.secureSession(handle) {
            var session = s
            guard let counter = session.localCounter.take() else {
                removeSession(handle, reason: .counterExhausted)
                throw .counterExhausted
            }
            session.lastActivity = now
            let header = MessageHeader(sessionID: session.peerSessionID, messageCounter: counter)
            let bytes = try session.cipher.seal(header: header, protocolMessage: protocolMessage)
            sessions.updateSecure(handle) { $0 = session }
            return (bytes, counter, session.peerAddress)
        }
        guard let u = sessions.unsecured[handle], let counter = unencryptedCounter.take() else { throw .sessionClosed }
        var header = MessageHeader(sessionID: 0, messageCounter: counter)
        switch u.key.role {
        case .initiator: header.sourceNodeID = u.key.ephemeralInitiatorNodeID
        case .responder: header.destination = .node(u.key.ephemeralInitiatorNodeID)
        }
        sessions.updateUnsecured(handle) { $0.lastActivity = now }
        do {
            return (try header.encoded() + protocolMessage, counter, u.peerAddress)
        } catch {
            throw .codec(error)
        }
    }

    private func transmit(_ bytes: [UInt8], to address: SocketAddress) {
        counters.datagramsSent += 1
        transport.send(bytes, to: address)
    }

    private func sendStandaloneAck(session: SessionHandle, exchangeID: UInt16, role: ExchangeRole, ackCounter: UInt32) {
        let header = ProtocolHeader(
            isInitiator: role == .initiator, acknowledgedMessageCounter: ackCounter,
            opcode: SecureChannelOpcode.standaloneAck.rawValue, exchangeID: exchangeID,
            protocolID: .secureChannel)
        guard let (bytes, _, address) = try? seal(session: session, protocolHeader: header, payload: []) else { return }
        counters.standaloneAcksSent += 1
        transmit(bytes, to: address)
    }

    private func retransmissionDelay(session: SessionHandle, retransmissions: Int, now: Duration) -> Duration {
        let peer: SessionParameters
        let last: Duration?
        if let s = sessions.secureSession(session) {
            peer = s.peerParameters
            last = s.lastPeerActivity
        } else if let u = sessions.unsecured[session] {
            peer = u.peerParameters
            last = u.lastPeerActivity
        } else {
            peer = .default
            last = nil
        }
        let base = ReliableMessageProtocol.baseInterval(peer: peer, lastPeerActivity: last, now: now)
        return ReliableMessageProtocol.backoff(
            baseInterval: base, retransmissions: retransmissions,
            jitter: configuration.jitter())
    }

    // MARK: - Timers

    /// Fires due timers; returns the next deadline.
    private func fireTimers() -> Duration? {
        let now = clock.now
        var next: Duration? = nil
        func consider(_ d: Duration) { next = next.map { min($0, d) } ?? d }

        for (key, ex) in exchanges {
            if let pending = ex.pendingAck {
                if pending.deadline <= now {
                    ex.pendingAck = nil
                    sendStandaloneAck(
                        session: key.session, exchangeID: key.exchangeID, role: key.role,
                        ackCounter: pending.counter)
                } else {
                    consider(pending.deadline)
                }
            }
            if var r = ex.retransmission {
                if r.deadline <= now {
                    if r.transmissions >= configuration.maxTransmissions {
                        counters.deliveryFailures += 1
                        logger.debug("MRP gave up", metadata: ["exchange": "\(key.exchangeID)", "counter": "\(r.messageCounter)"])
                        fail(ex, with: .deliveryFailed)
                    } else {
                        let address = sessions.info(key.session)?.peerAddress
                        if let address {
                            counters.retransmissions += 1
                            transmit(r.datagram, to: address)
                        }
                        r.deadline = now + retransmissionDelay(session: key.session, retransmissions: r.transmissions, now: now)
                        r.transmissions += 1
                        ex.retransmission = r
                        consider(r.deadline)
                    }
                } else {
                    consider(r.deadline)
                }
            }
            if let w = ex.waiter {
                if w.deadline <= now {
                    ex.waiter = nil
                    counters.exchangeTimeouts += 1
                    w.continuation.resume(throwing: TransportError.timeout)
                } else {
                    consider(w.deadline)
                }
            }
            if ex.isClosed && ex.retransmission == nil && ex.pendingAck == nil {
                removeExchange(key)
            }
        }
        return next
    }

    // MARK: - Inbound

    /// Processes one datagram. Returns a dispatch when it opens a new exchange for a handler.
    func ingest(_ datagram: InboundDatagram) -> Dispatch? {
        counters.datagramsReceived += 1
        let bytes = datagram.bytes
        let now = clock.now
        let header: MessageHeader
        let headerLength: Int
        do { (header, headerLength) = try MessageHeader.decode(bytes) } catch {
            counters.droppedMalformed += 1
            return nil
        }
        guard !header.privacy else {
            counters.droppedUnsupported += 1
            return nil
        }
        if header.sessionType == .group {
            return ingestGroup(header: header, headerLength: headerLength, datagram: datagram)
        }
        let handle: SessionHandle
        let verdict: CounterVerdict
        let protocolHeader: ProtocolHeader
        let payload: [UInt8]

        if header.sessionID == 0 {
            do { (protocolHeader, payload) = try ProtocolHeader.decode(Array(bytes[headerLength...])) } catch {
                counters.droppedMalformed += 1
                return nil
            }
            let key: UnsecuredSession.Key
            if let source = header.sourceNodeID, header.destination == .none {
                key = UnsecuredSession.Key(peerAddress: datagram.source, ephemeralInitiatorNodeID: source, role: .responder)
            } else if header.sourceNodeID == nil, case .node(let destination) = header.destination {
                key = UnsecuredSession.Key(peerAddress: nil, ephemeralInitiatorNodeID: destination, role: .initiator)
            } else {
                counters.droppedUnsupported += 1
                return nil
            }
            // Only a peer's initiator message may create an unsecured session.
            guard
                let h = sessions.unsecuredSession(
                    key: key, address: datagram.source, now: now,
                    create: key.role == .responder && protocolHeader.isInitiator)
            else {
                counters.droppedUnknownSession += 1
                return nil
            }
            dropExchangesOfEvictedSessions()
            handle = h
            var v = CounterVerdict.duplicate
            sessions.updateUnsecured(h) {
                v = $0.peerCounter.acceptUnencrypted(header.messageCounter)
                $0.lastActivity = now
                $0.lastPeerActivity = now
                // A duplicate may be a capture replayed from elsewhere: it never moves the peer.
                if v != .duplicate { $0.peerAddress = datagram.source }
            }
            verdict = v
        } else {
            guard let session = sessions.secureSession(localSessionID: header.sessionID) else {
                counters.droppedUnknownSession += 1
                return nil
            }
            let plaintext: [UInt8]
            do { plaintext = try session.cipher.open(datagram: bytes, header: header, headerLength: headerLength) } catch {
                counters.droppedAuthenticationFailed += 1
                return nil
            }
            handle = session.handle
            var v = CounterVerdict.duplicate
            sessions.updateSecure(handle) {
                v = $0.peerCounter.acceptEncryptedUnicast(header.messageCounter)
                $0.lastActivity = now
                $0.lastPeerActivity = now
                // Only an authenticated (opened above), new message moves the peer: a replayed
                // capture sent from another address must not redirect reports and retransmissions.
                if v != .duplicate { $0.peerAddress = datagram.source }
            }
            verdict = v
            do { (protocolHeader, payload) = try ProtocolHeader.decode(plaintext) } catch {
                counters.droppedMalformed += 1
                return nil
            }
        }
        return process(
            header: header, protocolHeader: protocolHeader, payload: payload, session: handle,
            verdict: verdict, source: datagram.source, receivedAt: now)
    }

    // MARK: - Group messages (spec 4.16)

    /// Replaces the operational group keys group messages are accepted under (the node
    /// recomputes them whenever key sets, the GroupKeyMap or fabrics change).
    public func setGroupKeys(_ keys: [GroupOperationalKey]) {
        groupKeys = Dictionary(grouping: keys, by: \.sessionID)
        let fabrics = Set(keys.map(\.fabricIndex))
        let kept = groupCounters.filter { fabrics.contains($0.key.fabricIndex) }
        guard kept.count != groupCounters.count else { return }
        groupCounters = kept
        groupCounterStore?.groupCountersReplaced(groupCounterTable)
    }

    /// Keeps the group senders' counters in `store` from now on, starting from `restored` (what
    /// it held): a group message captured before a restart is a duplicate after it. Restored
    /// counters count every value up to them as received. Call before serving.
    public func keepGroupCounters(in store: any GroupCounterStore, restoring restored: [GroupPeerCounter]) {
        for counter in restored.prefix(Self.maxGroupPeers) {
            groupCounters[counter.peer] = PeerMessageCounter(restoredAt: counter.maxCounter)
        }
        groupCounterStore = store
    }

    /// The group senders' counters held now.
    public var groupCounterTable: [GroupPeerCounter] {
        groupCounters.compactMap { peer, counter in
            counter.maxCounter.map {
                GroupPeerCounter(
                    fabricIndex: peer.fabricIndex, sourceNodeID: peer.sourceNodeID, isControl: peer.isControl, maxCounter: $0)
            }
        }
    }

    /// A group message: opened with a key whose group session ID and group match, its
    /// counter checked per sender (trust-first: the first message from a sender sets it,
    /// spec 4.6.5.2), then handed to the protocol's handler on an exchange that never sends
    /// (group messages are neither acknowledged nor answered).
    private func ingestGroup(header: MessageHeader, headerLength: Int, datagram: InboundDatagram) -> Dispatch? {
        guard case .group(let groupID) = header.destination, let source = header.sourceNodeID else {
            counters.droppedMalformed += 1
            return nil
        }
        let candidates = (groupKeys[header.sessionID] ?? []).filter { $0.groupIDs.contains(groupID) }
        guard !candidates.isEmpty else {
            counters.droppedUnknownSession += 1
            return nil
        }
        var opened: (key: GroupOperationalKey, plaintext: [UInt8])?
        for key in candidates {
            if let plaintext = key.open(datagram: datagram.bytes, header: header, headerLength: headerLength) {
                opened = (key, plaintext)
                break
            }
        }
        guard let (key, plaintext) = opened else {
            counters.droppedAuthenticationFailed += 1
            return nil
        }
        let peer = GroupPeer(fabricIndex: key.fabricIndex, sourceNodeID: source, isControl: header.isControlMessage)
        let previousMax = groupCounters[peer]?.maxCounter
        if var counter = groupCounters[peer] {
            guard counter.acceptEncryptedUnicast(header.messageCounter) == .new else {
                counters.droppedDuplicate += 1
                return nil
            }
            groupCounters[peer] = counter
        } else {
            // Bounded: a flood of forged senders cannot grow the table (they fail the MIC
            // anyway; this bounds genuine ones too).
            if groupCounters.count >= Self.maxGroupPeers, let victim = groupCounters.keys.first {
                groupCounters.removeValue(forKey: victim)
            }
            groupCounters[peer] = PeerMessageCounter(synchronizedAt: header.messageCounter)
        }
        // Stored before the message acts: a restart right after it still knows the counter.
        if let store = groupCounterStore, let max = groupCounters[peer]?.maxCounter, max != previousMax {
            store.groupCounterAdvanced(
                GroupPeerCounter(fabricIndex: peer.fabricIndex, sourceNodeID: source, isControl: peer.isControl, maxCounter: max))
        }
        let ph: ProtocolHeader
        let payload: [UInt8]
        do { (ph, payload) = try ProtocolHeader.decode(plaintext) } catch {
            counters.droppedMalformed += 1
            return nil
        }
        guard ph.isInitiator, let handler = handlers[ph.protocolID], ph.protocolID == .interactionModel else {
            counters.droppedUnsolicited += 1
            return nil
        }
        let info = SessionInfo(
            handle: sessions.groupMessageHandle(), kind: .group, role: .responder, localSessionID: header.sessionID,
            peerSessionID: 0, localNodeID: 0, peerNodeID: source, fabricIndex: key.fabricIndex,
            caseAuthenticatedTags: [], attestationChallenge: [], peerAddress: datagram.source,
            peerParameters: SessionParameters(), groupID: groupID)
        counters.messagesAccepted += 1
        let message = Message(messageHeader: header, protocolHeader: ph, payload: payload, session: info, source: datagram.source)
        let exchange = Exchange(
            key: ExchangeKey(session: info.handle, exchangeID: ph.exchangeID, role: .responder),
            protocolID: ph.protocolID, session: info, manager: self)
        return Dispatch(handler: handler, exchange: exchange, message: message)
    }

    private func process(
        header: MessageHeader, protocolHeader ph: ProtocolHeader, payload: [UInt8],
        session handle: SessionHandle, verdict: CounterVerdict, source: SocketAddress, receivedAt: Duration
    ) -> Dispatch? {
        let ourRole: ExchangeRole = ph.isInitiator ? .responder : .initiator
        let key = ExchangeKey(session: handle, exchangeID: ph.exchangeID, role: ourRole)

        if let acked = ph.acknowledgedMessageCounter {
            handleAck(acked, session: handle, preferred: key)
        }
        if verdict == .duplicate {
            counters.droppedDuplicate += 1
            // The peer did not get our ack: re-ack at once (spec 4.12.5.2.2).
            if ph.needsAcknowledgement {
                sendStandaloneAck(session: handle, exchangeID: ph.exchangeID, role: ourRole, ackCounter: header.messageCounter)
            }
            return nil
        }
        let isSecureChannel = ph.protocolID == .secureChannel
        if isSecureChannel && ph.opcode == SecureChannelOpcode.standaloneAck.rawValue {
            counters.messagesAccepted += 1
            return nil
        }
        guard let info = sessions.info(handle) else {
            counters.droppedUnknownSession += 1
            return nil
        }
        let message = Message(messageHeader: header, protocolHeader: ph, payload: payload, session: info, source: source)

        if let ex = exchanges[key] {
            if ex.isClosed {
                counters.droppedUnsolicited += 1
                ackNow(ph, counter: header.messageCounter, session: handle, role: ourRole)
                return nil
            }
            if ph.needsAcknowledgement {
                // Only one ack can be piggybacked: flush an older one first.
                if let older = ex.pendingAck {
                    sendStandaloneAck(session: handle, exchangeID: ph.exchangeID, role: ourRole, ackCounter: older.counter)
                }
                let deadline = clock.now + configuration.standaloneAckTimeout
                ex.pendingAck = PendingAck(counter: header.messageCounter, deadline: deadline)
                ex.peerAckCounter = header.messageCounter
                armTimer(at: deadline)
            }
            if deliver(message, to: ex) {
                counters.messagesAccepted += 1
                if ph.isInitiator { ex.serving = (ServedRequest.kind(protocolID: ph.protocolID, opcode: ph.opcode), receivedAt) }
            }
            return nil
        }

        // Not part of an open exchange.
        guard ph.isInitiator else {
            counters.droppedUnsolicited += 1
            ackNow(ph, counter: header.messageCounter, session: handle, role: ourRole)
            return nil
        }
        if isSecureChannel && ph.opcode == SecureChannelOpcode.statusReport.rawValue && info.isSecure {
            ackNow(ph, counter: header.messageCounter, session: handle, role: ourRole)
            if let report = try? StatusReport.decode(payload), report.secureChannelCode == .closeSession {
                counters.messagesAccepted += 1
                removeSession(handle, reason: .closedByPeer)
            } else {
                counters.droppedUnsolicited += 1
            }
            return nil
        }
        // The unsecured session carries session establishment only (spec 4.13.2.1).
        guard info.isSecure || isSecureChannel, let handler = handlers[ph.protocolID] else {
            counters.droppedUnsolicited += 1
            ackNow(ph, counter: header.messageCounter, session: handle, role: ourRole)
            return nil
        }
        guard hasRoomForPeerExchange(on: handle, establishingSession: !info.isSecure) else {
            counters.droppedOverload += 1
            ackNow(ph, counter: header.messageCounter, session: handle, role: ourRole)
            return nil
        }
        let ex = ExchangeState(protocolID: ph.protocolID)
        ex.serving = (ServedRequest.kind(protocolID: ph.protocolID, opcode: ph.opcode), receivedAt)
        if ph.needsAcknowledgement {
            let deadline = clock.now + configuration.standaloneAckTimeout
            ex.pendingAck = PendingAck(counter: header.messageCounter, deadline: deadline)
            ex.peerAckCounter = header.messageCounter
            armTimer(at: deadline)
        }
        exchanges[key] = ex
        counters.exchangesOpened += 1
        counters.messagesAccepted += 1
        let exchange = Exchange(key: key, protocolID: ph.protocolID, session: info, manager: self)
        return Dispatch(handler: handler, exchange: exchange, message: message)
    }

    /// Whether a peer may open one more exchange on `session`: within its session's share
    /// and the table's size, session establishment with headroom of its own.
    private func hasRoomForPeerExchange(on session: SessionHandle, establishingSession: Bool) -> Bool {
        let limit = configuration.maxExchanges + (establishingSession ? configuration.maxUnsecuredSessions : 0)
        guard exchanges.count < limit else { return false }
        let opened = exchanges.keys.lazy.filter { $0.session == session && $0.role == .responder }.count
        return opened < configuration.maxExchangesPerSession
    }

    private func ackNow(_ ph: ProtocolHeader, counter: UInt32, session: SessionHandle, role: ExchangeRole) {
        guard ph.needsAcknowledgement else { return }
        sendStandaloneAck(session: session, exchangeID: ph.exchangeID, role: role, ackCounter: counter)
    }

    private func handleAck(_ counter: UInt32, session: SessionHandle, preferred: ExchangeKey) {
        var match: (ExchangeKey, ExchangeState)?
        if let ex = exchanges[preferred], ex.retransmission?.messageCounter == counter {
            match = (preferred, ex)
        } else {
            match = exchanges.first { $0.key.session == session && $0.value.retransmission?.messageCounter == counter }
                .map { ($0.key, $0.value) }
        }
        guard let (key, ex) = match else { return }
        ex.retransmission = nil
        for w in ex.ackWaiters { w.resume() }
        ex.ackWaiters = []
        if ex.isClosed && ex.pendingAck == nil {
            removeExchange(key)
        }
    }

    /// Hands a message to its exchange; false when the exchange's inbox is full (counted as overload).
    private func deliver(_ message: Message, to ex: ExchangeState) -> Bool {
        if let w = ex.waiter {
            ex.waiter = nil
            w.continuation.resume(returning: message)
        } else if ex.inbox.count < configuration.exchangeInboxLimit {
            ex.inbox.append(message)
        } else {
            counters.droppedOverload += 1
            return false
        }
        return true
    }
}

// MARK: - Exchange state

struct PendingAck {
    var counter: UInt32
    var deadline: Duration
}

struct Retransmission {
    var messageCounter: UInt32
    /// The datagram as first sent: retransmissions reuse its counter and bytes (spec 4.12.2.1).
    var datagram: [UInt8]
    /// Transmissions so far, the first included.
    var transmissions: Int
    var deadline: Duration
}

struct Waiter {
    let id: UInt64
    let continuation: CheckedContinuation<Message, any Error>
    let deadline: Duration
}

/// Mutable state of one exchange, owned by the ExchangeManager actor (never leaves it).
final class ExchangeState {
    let protocolID: ProtocolID
    var inbox: [Message] = []
    var waiter: Waiter?
    /// Ack we owe the peer.
    var pendingAck: PendingAck?
    /// The peer's newest message that asked for an ack. Every message we send on the exchange
    /// carries it, also after a standalone ack (which may have been lost): a reply slower than
    /// MRP_STANDALONE_ACK_TIMEOUT must still ack the request, or the peer, still waiting for its
    /// ack, cannot send its next message (CHIP drops such a reply).
    var peerAckCounter: UInt32?
    /// Our reliable message awaiting its ack.
    var retransmission: Retransmission?
    var ackWaiters: [CheckedContinuation<Void, any Error>] = []
    var isClosed = false
    var terminalError: TransportError?
    /// The peer's request being served and when the message layer took it: the next message
    /// sent on the exchange is its response.
    var serving: (kind: String, since: Duration)?

    init(protocolID: ProtocolID) {
        self.protocolID = protocolID
    }
}
