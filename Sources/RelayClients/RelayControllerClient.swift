import Foundation
import Logging
import MatterModel
import MatterProtocol
import NIOConcurrencyHelpers
import RelayProtocol
import ServiceLifecycle

/// A controller's connection to the relay (or a local hub) with its home's token: it
/// carries Interaction Model exchanges with the home's devices, by device ID. The
/// interactions themselves are MatterController's `InteractionClient` over
/// `channel(to:)`; the exchanges devices open towards the controller (subscription
/// reports) go to the handler set with `setIncomingInteractions(_:)`.
///
/// Run it (once) as a `Service` or with `run()` in a task; opening an exchange waits for
/// the connection within `operationTimeout` and fails with a `RelayError`.
public final class RelayControllerClient: Service, Sendable {
    public struct Configuration: Sendable {
        public var settings = RelayClientSettings()
        /// How long opening an exchange waits for the connection to the relay.
        public var operationTimeout: Duration = .seconds(10)

        public init() {}
    }

    public let configuration: Configuration
    /// Names this connection in the peers of its channels (`relay#1`, …).
    public let route: String
    private let relayURL: String
    private let homeToken: String
    private let connector: RelayConnector
    private let logger: Logger
    private let linkSlot = AwaitableSlot<ControllerLink>()
    private let stateBox = NIOLockedValueBox<RelayConnectionState>(.offline)
    private let stateWatchers: StateBroadcaster
    private let presenceBox = NIOLockedValueBox<[String: Bool]>([:])
    private let presenceWatchers = NIOLockedValueBox<[UInt64: AsyncStream<RelayPresence>.Continuation]>([:])
    private let nextWatcherID = NIOLockedValueBox<UInt64>(0)
    private let jobs: AsyncStream<RelayConnector.Job>
    private let jobSink: AsyncStream<RelayConnector.Job>.Continuation
    private let incoming = NIOLockedValueBox<(any IncomingInteractionHandler)?>(nil)
    private static let instances = NIOLockedValueBox<UInt64>(0)

    /// - Parameters:
    ///   - relayURL: the relay's base URL, e.g. `ws://127.0.0.1:8080`.
    ///   - homeToken: the home's token.
    public init(
        relayURL: String, homeToken: String, configuration: Configuration = .init(),
        logger: Logger = Logger(label: "matter.relay.controller")
    ) {
        self.relayURL = relayURL
        self.homeToken = homeToken
        self.configuration = configuration
        self.logger = logger
        stateWatchers = StateBroadcaster(clock: configuration.settings.clock)
        route =
            "relay#"
            + String(
                Self.instances.withLockedValue { n -> UInt64 in
                    n += 1
                    return n
                })
        connector = RelayConnector(
            url: RelayDeviceClient.endpoint(relayURL, "/v1/controller"), token: homeToken, settings: configuration.settings,
            logger: logger)
        (jobs, jobSink) = AsyncStream.makeStream()
    }

    // MARK: State

    public var state: RelayConnectionState { stateBox.withLockedValue { $0 } }

    /// The home the token belongs to, once connected.
    public var homeID: String? { linkSlot.value?.link.hello.homeID }

    public func waitUntilConnected(timeout: Duration = .seconds(10)) async throws {
        try await stateWatchers.wait(for: { $0 == .connected }, current: { self.state }, timeout: timeout)
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

    /// Which of the home's devices are connected to the relay, as last reported.
    public var presence: [String: Bool] { presenceBox.withLockedValue { $0 } }

    /// Presence changes from now on (a device coming online or going offline).
    public func presenceUpdates() -> AsyncStream<RelayPresence> {
        let id = nextWatcherID.withLockedValue { n -> UInt64 in
            n += 1
            return n
        }
        let (stream, continuation) = AsyncStream.makeStream(of: RelayPresence.self, bufferingPolicy: .bufferingNewest(256))
        continuation.onTermination = { [weak self] _ in
            _ = self?.presenceWatchers.withLockedValue { $0.removeValue(forKey: id) }
        }
        presenceWatchers.withLockedValue { $0[id] = continuation }
        return stream
    }

    // MARK: Running

    public func run() async throws {
        await RelayConnector.runClient(connections: { await self.connectionLoop() }, jobs: jobs, jobSink: jobSink)
        setState(.offline)
    }

    private func connectionLoop() async {
        await connector.reconnect(
            state: { self.setState($0) },
            onOpen: { link in self.opened(link) },
            onFrame: { frame, link in self.received(frame, on: link) },
            onClose: { link in self.closed(link) })
    }

    private func opened(_ link: RelayLink) {
        let incoming = incoming, jobSink = jobSink
        linkSlot.set(
            ControllerLink(
                link: link, route: route, clock: configuration.settings.clock, logger: logger,
                incoming: { incoming.withLockedValue { $0 } },
                spawn: { jobSink.yield($0) }))
        setState(.connected)
    }

    private func closed(_ link: RelayLink) {
        guard let controllerLink = linkSlot.value, controllerLink.link === link else { return }
        linkSlot.clear { $0 === controllerLink }
        controllerLink.closeAll(.connectionLost)
    }

    private func received(_ frame: RelayFrame, on link: RelayLink) {
        guard let controllerLink = linkSlot.value, controllerLink.link === link else { return }
        switch frame {
        case .message(let message):
            controllerLink.deliver(message)
        case .failure(let failure):
            controllerLink.fail(failure)
        case .presence(let presence):
            let wasOnline = presenceBox.withLockedValue { $0.updateValue(presence.online, forKey: presence.deviceID) } == true
            if wasOnline && !presence.online {
                // Its connection dropped: nothing more will come from it for what was sent to it.
                // An offline notice for a device never seen online (the snapshot a new connection
                // starts with) ends nothing: an exchange sent since reaches the device if it has
                // come up, or the relay answers it with a failure.
                controllerLink.deviceWentOffline(presence.deviceID)
            }
            for watcher in presenceWatchers.withLockedValue({ Array($0.values) }) { watcher.yield(presence) }
        case .hello:
            break
        }
    }

    // MARK: Interaction Model

    /// Sets who gets the exchanges devices open towards this controller (a subscription's
    /// later reports) and learns when a device's connection drops; nil answers them
    /// INVALID_SUBSCRIPTION.
    public func setIncomingInteractions(_ handler: (any IncomingInteractionHandler)?) {
        incoming.withLockedValue { $0 = handler }
    }

    /// The channel to one of the home's devices, for an `InteractionClient`. Opening an
    /// exchange waits for the connection at most `connectionWait` (default `operationTimeout`).
    public func channel(to deviceID: String, connectionWait: Duration? = nil) -> RelayChannel {
        RelayChannel(client: self, deviceID: deviceID, connectionWait: connectionWait)
    }

    /// A fresh exchange with the device, once connected (within `wait`, else `notConnected`).
    /// While the relay is known unreachable (the last connection attempt failed) it fails at
    /// once: a route through it is down, not unknown, until a connection comes up.
    func openExchange(_ deviceID: String, wait: Duration? = nil) async throws(RelayError) -> ControllerExchange {
        guard RelayFrame.isValidIdentifier(deviceID) else { throw .invalidArgument("device ID '\(deviceID)'") }
        if let link = linkSlot.value { return try link.open(deviceID: deviceID) }
        do {
            try await stateWatchers.wait(
                for: { state in
                    if case .disconnected = state { return true }
                    return state == .connected
                }, current: { self.state }, timeout: wait ?? configuration.operationTimeout)
        } catch {
            // The whole wait passed without a connection (or was cancelled).
            throw .notConnected
        }
        guard let link = linkSlot.value else { throw .notConnected }
        return try link.open(deviceID: deviceID)
    }

    // MARK: Registration over HTTP

    private var httpBase: String {
        var base = relayURL
        if base.hasPrefix("ws://") { base = "http://" + base.dropFirst(5) }
        while base.hasSuffix("/") { base.removeLast() }
        return base
    }

    private func requireHomeID() async throws -> String {
        if let id = homeID { return id }
        try await waitUntilConnected(timeout: configuration.operationTimeout)
        guard let id = homeID else { throw RelayError.notConnected }
        return id
    }

    /// The home's registered devices with their connection state.
    public func devices() async throws -> [RelayDeviceStatus] {
        let homeID = try await requireHomeID()
        let response = try await RelayHTTP.request("GET", "\(httpBase)/v1/homes/\(homeID)/devices", bearer: homeToken)
        try Self.check(response)
        struct List: Decodable { var devices: [RelayDeviceStatus] }
        return try JSONDecoder().decode(List.self, from: Data(response.body)).devices
    }

    /// Registers a device in the home and returns its credential (a new one if it existed).
    public func registerDevice(_ deviceID: String, label: String? = nil) async throws -> RelayDeviceCredential {
        let homeID = try await requireHomeID()
        struct Body: Encodable {
            var deviceID: String
            var label: String?
        }
        let body = try JSONEncoder().encode(Body(deviceID: deviceID, label: label))
        let response = try await RelayHTTP.request(
            "POST", "\(httpBase)/v1/homes/\(homeID)/devices", bearer: homeToken, json: Array(body))
        try Self.check(response)
        return try JSONDecoder().decode(RelayDeviceCredential.self, from: Data(response.body))
    }

    static func check(_ response: RelayHTTP.Response) throws {
        switch response.status {
        case 200..<300: return
        case 401: throw RelayError.unauthorized
        case 403: throw RelayError.forbidden
        default: throw RelayError.http(status: response.status, body: response.text)
        }
    }
}

/// The exchanges of one controller connection, both those the controller opened and
/// those devices opened towards it.
final class ControllerLink: Sendable {
    struct Key: Hashable {
        var deviceID: String
        var exchangeID: UInt32
        var initiatedLocally: Bool
    }

    private struct State {
        var exchanges: [Key: ControllerExchange] = [:]
        var incomingCount = 0
        var nextExchangeID = UInt32.random(in: 1...0x7FFF_FFFF)
        var closed = false
    }

    /// Exchanges devices may have open towards this controller at once; past it a new
    /// one is answered BUSY.
    private static let incomingLimit = 1024

    let link: RelayLink
    let route: String
    let clock: any MatterClock
    let logger: Logger
    private let incoming: @Sendable () -> (any IncomingInteractionHandler)?
    private let spawn: @Sendable (@escaping RelayConnector.Job) -> Void
    // The lock guards the table; mailboxes are fed outside it.
    private let state = NIOLockedValueBox(State())
    /// When the answers its exchanges wait for are due.
    let deadlines: RelayExchangeDeadlines

    init(
        link: RelayLink, route: String, clock: any MatterClock, logger: Logger,
        incoming: @escaping @Sendable () -> (any IncomingInteractionHandler)?,
        spawn: @escaping @Sendable (@escaping RelayConnector.Job) -> Void
    ) {
        self.link = link
        self.route = route
        self.clock = clock
        self.logger = logger
        self.incoming = incoming
        self.spawn = spawn
        deadlines = RelayExchangeDeadlines(clock: clock, spawn: spawn)
    }

    func peer(_ deviceID: String) -> InteractionPeer { InteractionPeer(route: route, node: deviceID) }

    func open(deviceID: String) throws(RelayError) -> ControllerExchange {
        let exchange = state.withLockedValue { s -> ControllerExchange? in
            guard !s.closed else { return nil }
            var key: Key
            repeat {
                s.nextExchangeID = s.nextExchangeID == UInt32.max ? 1 : s.nextExchangeID + 1
                key = Key(deviceID: deviceID, exchangeID: s.nextExchangeID, initiatedLocally: true)
            } while s.exchanges[key] != nil
            let exchange = ControllerExchange(owner: self, key: key)
            s.exchanges[key] = exchange
            return exchange
        }
        guard let exchange else { throw .connectionLost }
        return exchange
    }

    func remove(_ key: Key) {
        state.withLockedValue { s in
            if s.exchanges.removeValue(forKey: key) != nil && !key.initiatedLocally { s.incomingCount -= 1 }
        }
    }

    func send(_ message: RelayMessage) throws(RelayError) {
        try link.send(.message(message))
    }

    /// A message from a device: to the exchange it belongs to; the first message of an
    /// exchange the device opens (a subscription report) starts a new one for the
    /// incoming handler.
    func deliver(_ message: RelayMessage) {
        guard let deviceID = message.deviceID else { return }
        let key = Key(deviceID: deviceID, exchangeID: message.exchangeID, initiatedLocally: !message.fromInitiator)
        let envelope = IMEnvelope(opcode: message.opcode, payload: message.payload)
        enum Outcome {
            case existing(ControllerExchange)
            case new(ControllerExchange)
            case busy
            case dropped
        }
        let outcome = state.withLockedValue { s -> Outcome in
            if let exchange = s.exchanges[key] { return .existing(exchange) }
            // A message for an exchange of ours that is gone: nobody waits for it.
            guard message.fromInitiator, !s.closed else { return .dropped }
            guard s.incomingCount < Self.incomingLimit else { return .busy }
            let exchange = ControllerExchange(owner: self, key: key)
            s.exchanges[key] = exchange
            s.incomingCount += 1
            return .new(exchange)
        }
        switch outcome {
        case .existing(let exchange):
            _ = exchange.mailbox.put(envelope)
        case .dropped:
            break
        case .busy:
            reply(.busy, to: key)
        case .new(let exchange):
            guard let handler = incoming() else {
                exchange.close()
                reply(.invalidSubscription, to: key)
                return
            }
            let peer = peer(deviceID)
            spawn {
                await handler.handle(exchange: exchange, opcode: envelope.opcode, payload: envelope.payload, from: peer)
                exchange.close()
            }
        }
    }

    private func reply(_ status: StatusCode, to key: Key) {
        try? send(
            RelayMessage(
                deviceID: key.deviceID, exchangeID: key.exchangeID, fromInitiator: key.initiatedLocally,
                opcode: InteractionOpcode.statusResponse.rawValue, payload: StatusResponseMessage(status: status).encoded()))
    }

    func fail(_ failure: RelayFailure) {
        guard let deviceID = failure.deviceID else { return }
        let key = Key(deviceID: deviceID, exchangeID: failure.exchangeID, initiatedLocally: failure.fromInitiator)
        let exchange = state.withLockedValue { $0.exchanges[key] }
        exchange?.mailbox.close(RelayError.from(failure.reason, deviceID: deviceID))
        exchange?.close()
    }

    /// The device's connection to the relay dropped: its exchanges and subscriptions end now.
    func deviceWentOffline(_ deviceID: String) {
        let exchanges = state.withLockedValue { s in s.exchanges.filter { $0.key.deviceID == deviceID }.values }
        for exchange in exchanges {
            exchange.mailbox.close(.deviceOffline(deviceID))
            exchange.close()
        }
        incoming()?.peerLost(peer(deviceID), reason: RelayError.deviceOffline(deviceID).description)
    }

    /// The connection dropped: every exchange and subscription through it ends now.
    func closeAll(_ error: RelayError) {
        let exchanges = state.withLockedValue { s -> [ControllerExchange] in
            s.closed = true
            return Array(s.exchanges.values)
        }
        deadlines.close()
        for exchange in exchanges {
            exchange.mailbox.close(error)
            exchange.close()
        }
        incoming()?.routeLost(route, reason: error.description)
    }
}

/// One exchange with a device through the relay, either side's.
final class ControllerExchange: InteractionExchange {
    let owner: ControllerLink
    let key: ControllerLink.Key
    let mailbox = Mailbox<IMEnvelope>()

    init(owner: ControllerLink, key: ControllerLink.Key) {
        self.owner = owner
        self.key = key
    }

    func send(opcode: UInt8, payload: [UInt8]) async throws {
        try owner.send(
            RelayMessage(
                deviceID: key.deviceID, exchangeID: key.exchangeID, fromInitiator: key.initiatedLocally, opcode: opcode,
                payload: payload))
    }

    /// A missed deadline closes the exchange (`RelayExchangeDeadlines`): nothing more is taken from it.
    func receive(within timeout: Duration) async throws -> (opcode: UInt8, payload: [UInt8]) {
        owner.deadlines.expect(key, in: mailbox, by: owner.clock.now + timeout)
        defer { owner.deadlines.met(key) }
        let envelope = try await mailbox.next()
        return (envelope.opcode, envelope.payload)
    }

    func close() {
        owner.remove(key)
        mailbox.close(.connectionLost)
    }
}

/// Interaction Model exchanges with one device through a relay or hub connection.
public struct RelayChannel: InteractionChannel {
    public let client: RelayControllerClient
    public let deviceID: String
    /// How long opening an exchange waits for the connection (nil: `operationTimeout`).
    public var connectionWait: Duration?

    public var peer: InteractionPeer { InteractionPeer(route: client.route, node: deviceID) }

    public func openExchange() async throws -> any InteractionExchange {
        try await client.openExchange(deviceID, wait: connectionWait)
    }
}

/// The relay's own failures reach callers of the Interaction Model client as they are.
extension RelayError: InteractionChannelError {}
