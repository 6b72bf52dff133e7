import Logging
import MatterModel
import MatterProtocol
import NIOConcurrencyHelpers
import RelayProtocol
import ServiceLifecycle

/// Serves the Interaction Model exchanges a controller opens through the relay.
/// `InteractionServer` is one: a relay-connected device serves reads, writes,
/// invokes and subscriptions with the same engine as over UDP.
public protocol RelayInteractionHandler: Sendable {
    /// Handles an exchange the peer opened with this message, to the end of the interaction.
    func handle(opcode: UInt8, payload: [UInt8], on exchange: any IMExchange) async
}

extension InteractionServer: RelayInteractionHandler {}

/// A client's view of its relay connection.
public enum RelayConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// Told to stay offline (`goOffline()`), or not started.
    case offline
    case connecting
    case connected
    /// Lost or refused; a reconnect follows after a backoff.
    case disconnected(RelayError?)

    public var description: String {
        switch self {
        case .offline: "offline"
        case .connecting: "connecting"
        case .connected: "connected"
        case .disconnected(let error): "disconnected" + (error.map { " (\($0))" } ?? "")
        }
    }
}

/// A device's outbound connection to the relay. Requests a controller sends
/// through the relay arrive as exchanges handed to the `RelayInteractionHandler`;
/// the handler's subscriptions report back on exchanges opened on the same relay
/// session. Reconnects with exponential backoff; `goOffline()`/`goOnline()`
/// drop and restore the connection for fault injection.
///
/// Run it (once) as a `Service` or with `run()` in a task; it ends when cancelled
/// or on graceful shutdown.
public final class RelayDeviceClient: Service, Sendable {
    public struct Configuration: Sendable {
        public var settings = RelayClientSettings()
        /// Who a relay interaction acts as, for the device's access control, asked afresh
        /// for every exchange a controller opens (so a changed ACL counts at once). The
        /// relay authenticated the controller by its home token; this subject stands for
        /// it. A Matter node answers with the Administer subject of its first fabric
        /// (`NodeServer.cloudSubject()`); nil refuses the interaction with
        /// UNSUPPORTED_ACCESS (say, a node on no fabric yet). The default suits handlers
        /// without access control: a CASE subject on fabric index 1, node 112233.
        public var subject: @Sendable () async -> SubjectDescriptor? = { Configuration.defaultSubject }

        /// A CASE session on fabric index 1 from node 112233 (0x1B669, connectedhomeip's
        /// default controller node ID).
        public static let defaultSubject = SubjectDescriptor(authMode: .case, fabricIndex: 1, subject: 0x0000_0000_0001_B669)
        /// How long an exchange waits for the controller's next message.
        public var responseTimeout: Duration = .seconds(10)

        public init() {}
    }

    public let configuration: Configuration
    private let connector: RelayConnector
    private let handler: any RelayInteractionHandler
    private let logger: Logger
    private let online = AwaitableSlot<Bool>()
    private let currentLink = NIOLockedValueBox<DeviceLink?>(nil)
    private let stateBox = NIOLockedValueBox<RelayConnectionState>(.offline)
    private let stateWatchers: StateBroadcaster
    private let jobs: AsyncStream<RelayConnector.Job>
    private let jobSink: AsyncStream<RelayConnector.Job>.Continuation

    /// - Parameters:
    ///   - relayURL: the relay's base URL, e.g. `ws://127.0.0.1:8080`.
    ///   - credential: the device credential the relay issued.
    public init(
        relayURL: String, credential: String, handler: any RelayInteractionHandler, configuration: Configuration = .init(),
        logger: Logger = Logger(label: "matter.relay.device")
    ) {
        self.configuration = configuration
        self.handler = handler
        self.logger = logger
        stateWatchers = StateBroadcaster(clock: configuration.settings.clock)
        connector = RelayConnector(
            url: Self.endpoint(relayURL, "/v1/device"), token: credential, settings: configuration.settings, logger: logger)
        (jobs, jobSink) = AsyncStream.makeStream()
        online.set(true)
    }

    static func endpoint(_ base: String, _ path: String) -> String {
        var trimmed = base
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        return trimmed + path
    }

    // MARK: State

    public var state: RelayConnectionState { stateBox.withLockedValue { $0 } }

    /// Waits until the relay has registered this device (its hello arrived).
    public func waitUntilConnected(timeout: Duration = .seconds(10)) async throws {
        try await stateWatchers.wait(for: { $0 == .connected }, current: { self.state }, timeout: timeout)
    }

    /// Waits until the connection is down (offline or disconnected).
    public func waitUntilDisconnected(timeout: Duration = .seconds(10)) async throws {
        try await stateWatchers.wait(for: { $0 != .connected && $0 != .connecting }, current: { self.state }, timeout: timeout)
    }

    /// The connection state now and after each change (repeats possible), until the
    /// iterating task ends.
    public func stateUpdates() -> AsyncStream<RelayConnectionState> {
        stateWatchers.updates { self.state }
    }

    private func setState(_ new: RelayConnectionState) {
        stateBox.withLockedValue { $0 = new }
        stateWatchers.changed()
    }

    // MARK: Fault injection

    /// Drops the connection and stays away until `goOnline()`.
    public func goOffline() {
        online.set(nil)
        currentLink.withLockedValue { $0 }?.link.close()
    }

    /// Reconnects (at once) after `goOffline()`.
    public func goOnline() {
        online.set(true)
    }

    // MARK: Running

    public func run() async throws {
        await RelayConnector.runClient(connections: { await self.connectionLoop() }, jobs: jobs, jobSink: jobSink)
        setState(.offline)
    }

    private func connectionLoop() async {
        await connector.reconnect(
            online: online, state: { self.setState($0) },
            onOpen: { link in self.opened(link) },
            onFrame: { frame, link in self.received(frame, on: link) },
            onClose: { link in self.closed(link) })
    }

    private func opened(_ link: RelayLink) {
        let deviceLink = DeviceLink(link: link, responseTimeout: configuration.responseTimeout, clock: configuration.settings.clock)
        currentLink.withLockedValue { $0 = deviceLink }
        // Told to go offline while the connection was coming up: drop it now.
        if online.value == nil { link.close() }
        setState(.connected)
        logger.debug("connected to the relay", metadata: ["device": "\(link.hello.deviceID ?? "?")"])
    }

    private func closed(_ link: RelayLink) {
        let deviceLink = currentLink.withLockedValue { current -> DeviceLink? in
            guard let c = current, c.link === link else { return nil }
            current = nil
            return c
        }
        deviceLink?.closeAll(.connectionLost)
    }

    private func received(_ frame: RelayFrame, on link: RelayLink) {
        guard let deviceLink = currentLink.withLockedValue({ $0 }), deviceLink.link === link else { return }
        switch frame {
        case .message(let message):
            guard let exchange = deviceLink.deliver(message) else { return }
            let handler = handler
            let subject = configuration.subject
            jobSink.yield {
                guard let who = await subject() else {
                    try? await exchange.send(
                        opcode: InteractionOpcode.statusResponse.rawValue,
                        payload: StatusResponseMessage(status: .unsupportedAccess).encoded())
                    await exchange.close()
                    return
                }
                exchange.setSubject(who)
                await handler.handle(opcode: message.opcode, payload: message.payload, on: exchange)
                await exchange.close()
            }
        case .failure(let failure):
            deviceLink.fail(failure)
        case .hello, .presence:
            break
        }
    }
}

/// The exchanges of one device connection, keyed as Matter keys them: by
/// session (the controller connection), exchange ID and who initiated it.
final class DeviceLink: Sendable {
    struct Key: Hashable {
        var session: UInt32
        var exchangeID: UInt32
        var initiatedLocally: Bool
    }

    private struct State {
        var exchanges: [Key: RelayDeviceExchange] = [:]
        var nextExchangeID = UInt32.random(in: 1...0x7FFF_FFFF)
        var closed = false
    }

    /// Exchanges open at once on one connection; more are dropped (the controller times out).
    static let maxExchanges = 512

    let link: RelayLink
    let responseTimeout: Duration
    let clock: any MatterClock
    /// Distinguishes this connection's sessions from a later connection's.
    let epoch = UInt64.random(in: 1...UInt64(UInt32.max)) << 32
    // The lock guards the exchange table.
    private let state = NIOLockedValueBox(State())

    init(link: RelayLink, responseTimeout: Duration, clock: any MatterClock) {
        self.link = link
        self.responseTimeout = responseTimeout
        self.clock = clock
    }

    /// Hands a message to its exchange; returns a new exchange when the
    /// message opens one (the handler must then serve it).
    func deliver(_ message: RelayMessage) -> RelayDeviceExchange? {
        guard let session = message.session else { return nil }
        let key = Key(session: session, exchangeID: message.exchangeID, initiatedLocally: !message.fromInitiator)
        let envelope = IMEnvelope(opcode: message.opcode, payload: message.payload)
        let (existing, created) = state.withLockedValue { s -> (RelayDeviceExchange?, RelayDeviceExchange?) in
            if let existing = s.exchanges[key] { return (existing, nil) }
            // Only the controller opens exchanges towards the device; a stray answer is dropped,
            // and so is a flood of new exchanges beyond what a device serves at once.
            guard message.fromInitiator, !s.closed, s.exchanges.count < Self.maxExchanges else { return (nil, nil) }
            let exchange = RelayDeviceExchange(owner: self, key: key)
            s.exchanges[key] = exchange
            return (nil, exchange)
        }
        if let existing { existing.mailbox.put(envelope) }
        return created
    }

    /// Opens an exchange towards the controller of `session`.
    func open(session: UInt32) throws(RelayError) -> RelayDeviceExchange {
        let exchange = state.withLockedValue { s -> RelayDeviceExchange? in
            guard !s.closed else { return nil }
            var key: Key
            repeat {
                s.nextExchangeID = s.nextExchangeID == UInt32.max ? 1 : s.nextExchangeID + 1
                key = Key(session: session, exchangeID: s.nextExchangeID, initiatedLocally: true)
            } while s.exchanges[key] != nil
            let exchange = RelayDeviceExchange(owner: self, key: key)
            s.exchanges[key] = exchange
            return exchange
        }
        guard let exchange, link.isOpen else { throw .connectionLost }
        return exchange
    }

    func remove(_ key: Key) {
        state.withLockedValue { _ = $0.exchanges.removeValue(forKey: key) }
    }

    func fail(_ failure: RelayFailure) {
        guard let session = failure.session else { return }
        let key = Key(session: session, exchangeID: failure.exchangeID, initiatedLocally: failure.fromInitiator)
        let exchange = state.withLockedValue { $0.exchanges.removeValue(forKey: key) }
        exchange?.mailbox.close(.undeliverable(failure.reason))
    }

    func closeAll(_ error: RelayError) {
        let exchanges = state.withLockedValue { s -> [RelayDeviceExchange] in
            s.closed = true
            defer { s.exchanges = [:] }
            return Array(s.exchanges.values)
        }
        for exchange in exchanges { exchange.mailbox.close(error) }
    }
}

/// An exchange between the device and one controller session, carried by the relay.
final class RelayDeviceExchange: IMExchange, Sendable {
    let owner: DeviceLink
    let key: DeviceLink.Key
    let mailbox = Mailbox<IMEnvelope>()
    /// Set before the handler sees the exchange; exchanges the device opens inherit it.
    private let subjectBox = NIOLockedValueBox(RelayDeviceClient.Configuration.defaultSubject)

    init(owner: DeviceLink, key: DeviceLink.Key) {
        self.owner = owner
        self.key = key
    }

    var subject: SubjectDescriptor { subjectBox.withLockedValue { $0 } }

    func setSubject(_ subject: SubjectDescriptor) {
        subjectBox.withLockedValue { $0 = subject }
    }

    var sessionIdentity: InteractionSessionIdentity? {
        // Relay sessions carry no attestation challenge: they cannot commission.
        InteractionSessionIdentity(id: owner.epoch | UInt64(key.session), attestationChallenge: [])
    }

    func send(opcode: UInt8, payload: [UInt8]) async throws {
        try owner.link.send(
            .message(
                RelayMessage(
                    session: key.session, exchangeID: key.exchangeID, fromInitiator: key.initiatedLocally, opcode: opcode, payload: payload)
            ))
    }

    func receive() async throws -> (opcode: UInt8, payload: [UInt8]) {
        let mailbox = mailbox
        let envelope = try await withRelayTimeout(owner.responseTimeout, "controller response", clock: owner.clock) {
            try await mailbox.next()
        }
        return (envelope.opcode, envelope.payload)
    }

    func openExchange() async throws -> any IMExchange {
        let exchange = try owner.open(session: key.session)
        exchange.setSubject(subject)
        return exchange
    }

    func close() async {
        owner.remove(key)
        mailbox.close(.connectionLost)
    }
}

/// Wakes tasks waiting for a client's state to satisfy a condition.
final class StateBroadcaster: Sendable {
    let clock: any MatterClock

    init(clock: any MatterClock) { self.clock = clock }

    private let waiters = NIOLockedValueBox<[UInt64: AsyncStream<Void>.Continuation]>([:])
    private let nextID = NIOLockedValueBox<UInt64>(0)

    func changed() {
        for continuation in waiters.withLockedValue({ Array($0.values) }) { continuation.yield() }
    }

    /// A signal per change (coalesced while unread) and how to stop it.
    func signals() -> (AsyncStream<Void>, stop: @Sendable () -> Void) {
        let id = nextID.withLockedValue { n -> UInt64 in
            n += 1
            return n
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        waiters.withLockedValue { $0[id] = continuation }
        return (
            stream,
            { [waiters] in
                continuation.finish()
                _ = waiters.withLockedValue { $0.removeValue(forKey: id) }
            }
        )
    }

    /// `current()` now and after each change (repeats possible), until the iterating task ends.
    func updates<S: Sendable>(_ current: @escaping @Sendable () -> S) -> AsyncStream<S> {
        let (signals, stop) = signals()
        return AsyncStream { continuation in
            let task = Task {
                continuation.yield(current())
                for await _ in signals { continuation.yield(current()) }
                continuation.finish()
            }
            continuation.onTermination = { _ in
                task.cancel()
                stop()
            }
        }
    }

    func wait<S: Sendable>(
        for condition: @escaping @Sendable (S) -> Bool, current: @escaping @Sendable () -> S, timeout: Duration
    ) async throws {
        let (stream, stop) = signals()
        defer { stop() }
        // The state is read after registering, so a change in between is not missed.
        try await withRelayTimeout(timeout, "waiting for the relay connection state", clock: clock) {
            if condition(current()) { return }
            for await _ in stream where condition(current()) { return }
            throw CancellationError()
        }
    }
}
