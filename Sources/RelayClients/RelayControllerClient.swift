import Foundation
import Logging
import MatterModel
import MatterProtocol
import NIOConcurrencyHelpers
import RelayProtocol
import ServiceLifecycle

/// A controller's connection to the relay with its home's token: Interaction
/// Model reads, writes, invokes and subscriptions to the home's devices, by
/// device ID, with every wait bounded by a timeout that ends in a `RelayError`.
///
/// Run it (once) as a `Service` or with `run()` in a task; operations wait for
/// the connection within their timeout.
public final class RelayControllerClient: Service, Sendable {
    public struct Configuration: Sendable {
        public var settings = RelayClientSettings()
        /// Default bound on one whole operation, connection wait included.
        public var operationTimeout: Duration = .seconds(10)
        /// Extra time past MaxInterval before a silent subscription counts as lost.
        public var subscriptionGrace: Duration = .seconds(10)

        public init() {}
    }

    public let configuration: Configuration
    private let relayURL: String
    private let homeToken: String
    private let connector: RelayConnector
    private let logger: Logger
    private let linkSlot = AwaitableSlot<ControllerLink>()
    private let stateBox = NIOLockedValueBox<RelayConnectionState>(.offline)
    private let stateWatchers = StateBroadcaster()
    private let presenceBox = NIOLockedValueBox<[String: Bool]>([:])
    private let presenceWatchers = NIOLockedValueBox<[UInt64: AsyncStream<RelayPresence>.Continuation]>([:])
    private let nextWatcherID = NIOLockedValueBox<UInt64>(0)
    private let jobs: AsyncStream<RelayConnector.Job>
    private let jobSink: AsyncStream<RelayConnector.Job>.Continuation

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
        linkSlot.set(ControllerLink(link: link, logger: logger))
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

    /// Reads attributes and events; chunked reports come back merged into one message
    /// (list chunks keep their ListIndex-append items, in order).
    public func read(_ deviceID: String, _ request: ReadRequestMessage, timeout: Duration? = nil) async throws -> ReportDataMessage {
        try await withExchange(deviceID, "read", timeout) { exchange in
            try exchange.send(request)
            var merged = ReportDataMessage()
            while true {
                let report: ReportDataMessage = try await exchange.expect()
                merged.attributeReports += report.attributeReports
                merged.eventReports += report.eventReports
                if report.moreChunkedMessages {
                    try exchange.send(StatusResponseMessage(status: .success))
                    continue
                }
                if !report.suppressResponse { try exchange.send(StatusResponseMessage(status: .success)) }
                return merged
            }
        }
    }

    /// Reads attributes at these paths (wildcards allowed).
    public func read(_ deviceID: String, paths: [AttributePathIB], timeout: Duration? = nil) async throws -> ReportDataMessage {
        try await read(deviceID, ReadRequestMessage(attributeRequests: paths), timeout: timeout)
    }

    /// Writes attributes; with `timedTimeout` (ms), a Timed Request opens the window first.
    public func write(
        _ deviceID: String, _ request: WriteRequestMessage, timedTimeout: UInt16? = nil, timeout: Duration? = nil
    ) async throws -> WriteResponseMessage {
        try await withExchange(deviceID, "write", timeout) { exchange in
            var request = request
            if let timedTimeout {
                try await exchange.openTimedWindow(timedTimeout)
                request.timedRequest = true
            }
            try exchange.send(request)
            return try await exchange.expect()
        }
    }

    /// Invokes commands; chunked responses come back merged. With `suppressResponse`
    /// set in the request, returns an empty response once the request is sent.
    public func invoke(
        _ deviceID: String, _ request: InvokeRequestMessage, timedTimeout: UInt16? = nil, timeout: Duration? = nil
    ) async throws -> InvokeResponseMessage {
        try await withExchange(deviceID, "invoke", timeout) { exchange in
            var request = request
            if let timedTimeout {
                try await exchange.openTimedWindow(timedTimeout)
                request.timedRequest = true
            }
            try exchange.send(request)
            if request.suppressResponse { return InvokeResponseMessage(invokeResponses: []) }
            var merged = InvokeResponseMessage(invokeResponses: [])
            while true {
                let response: InvokeResponseMessage = try await exchange.expect()
                merged.invokeResponses += response.invokeResponses
                guard response.moreChunkedMessages else { return merged }
                try exchange.send(StatusResponseMessage(status: .success))
            }
        }
    }

    /// Subscribes; returns once the device confirmed, with the priming data.
    /// Later reports arrive on `RelaySubscription.reports`.
    public func subscribe(
        _ deviceID: String, _ request: SubscribeRequestMessage, timeout: Duration? = nil
    ) async throws -> RelaySubscription {
        let grace = configuration.subscriptionGrace
        let subscription = try await withExchange(deviceID, "subscribe", timeout) { exchange -> RelaySubscription in
            try exchange.send(request)
            var priming = ReportDataMessage()
            var registered: RelaySubscription? = nil
            do {
                while true {
                    let envelope = try await exchange.receiveEnvelope()
                    switch InteractionOpcode(rawValue: envelope.opcode) {
                    case .reportData:
                        let report = try ReportDataMessage.decode(envelope.payload)
                        guard let id = report.subscriptionID else {
                            throw RelayError.invalidResponse("priming report without a subscription ID")
                        }
                        if registered == nil {
                            // Registered before acknowledging: the device reports only after our ack.
                            let subscription = RelaySubscription(deviceID: deviceID, subscriptionID: id, grace: grace)
                            try exchange.owner.register(subscription)
                            registered = subscription
                        }
                        priming.subscriptionID = id
                        priming.attributeReports += report.attributeReports
                        priming.eventReports += report.eventReports
                        try exchange.send(StatusResponseMessage(status: .success))
                    case .subscribeResponse:
                        let response = try SubscribeResponseMessage.decode(envelope.payload)
                        guard let subscription = registered, subscription.subscriptionID == response.subscriptionID else {
                            throw RelayError.invalidResponse("SubscribeResponse for an unknown subscription")
                        }
                        subscription.established(maxInterval: response.maxInterval, priming: priming)
                        return subscription
                    case .statusResponse:
                        throw RelayError.status(try StatusResponseMessage.decode(envelope.payload).status)
                    default:
                        throw RelayError.invalidResponse("unexpected opcode \(envelope.opcode) in a subscribe")
                    }
                }
            } catch {
                registered?.end(error as? RelayError ?? .connectionLost)
                throw error
            }
        }
        jobSink.yield { await subscription.watch() }
        return subscription
    }

    /// Runs `body` on a fresh exchange with the device, within the timeout.
    private func withExchange<T: Sendable>(
        _ deviceID: String, _ what: String, _ timeout: Duration?, _ body: @escaping @Sendable (ControllerExchange) async throws -> T
    ) async throws -> T {
        guard RelayFrame.isValidIdentifier(deviceID) else { throw RelayError.invalidArgument("device ID '\(deviceID)'") }
        let linkSlot = linkSlot
        let deadline = ContinuousClock.now + (timeout ?? configuration.operationTimeout)
        do {
            let link: ControllerLink
            if let current = linkSlot.value {
                link = current
            } else {
                do {
                    link = try await withRelayTimeout(deadline - .now, "relay connection") { try await linkSlot.wait() }
                } catch RelayError.timeout {
                    // The whole budget passed without a connection.
                    throw RelayError.notConnected
                }
            }
            return try await withRelayTimeout(deadline - .now, "\(what) on \(deviceID)") {
                let exchange = try link.open(deviceID: deviceID)
                defer { exchange.close() }
                return try await body(exchange)
            }
        } catch let error as RelayError {
            throw error
        } catch let error as IMDecodingError {
            throw RelayError.invalidResponse("\(error)")
        }
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

/// A subscription held through the relay.
public final class RelaySubscription: Sendable {
    public let deviceID: String
    public let subscriptionID: UInt32
    /// Later reports, chunks merged, until the subscription ends.
    public let reports: AsyncStream<ReportDataMessage>
    private let sink: AsyncStream<ReportDataMessage>.Continuation
    private let grace: Duration

    private struct State {
        var maxInterval: UInt16 = 0
        var priming = ReportDataMessage()
        var lastHeard = ContinuousClock.now
        var endReason: RelayError? = nil
        var ended = false
        var onEnd: (@Sendable () -> Void)? = nil
    }

    // The lock guards the subscription's bookkeeping; the stream is fed outside it.
    private let state = NIOLockedValueBox(State())

    init(deviceID: String, subscriptionID: UInt32, grace: Duration) {
        self.deviceID = deviceID
        self.subscriptionID = subscriptionID
        self.grace = grace
        (reports, sink) = AsyncStream.makeStream(of: ReportDataMessage.self, bufferingPolicy: .bufferingNewest(256))
    }

    /// Seconds: the device reports at least this often.
    public var maxInterval: UInt16 { state.withLockedValue { $0.maxInterval } }
    /// The priming reports, merged.
    public var priming: ReportDataMessage { state.withLockedValue { $0.priming } }
    /// Why the subscription ended (nil while active, or when cancelled).
    public var endReason: RelayError? { state.withLockedValue { $0.endReason } }
    public var isActive: Bool { !state.withLockedValue { $0.ended } }

    /// Stops listening; the device learns it at its next report (INVALID_SUBSCRIPTION).
    public func cancel() { finish(nil) }

    func established(maxInterval: UInt16, priming: ReportDataMessage) {
        state.withLockedValue {
            $0.maxInterval = maxInterval
            $0.priming = priming
            $0.lastHeard = .now
        }
    }

    func setOnEnd(_ onEnd: @escaping @Sendable () -> Void) {
        state.withLockedValue { $0.onEnd = onEnd }
    }

    func deliver(_ report: ReportDataMessage) {
        state.withLockedValue { $0.lastHeard = .now }
        sink.yield(report)
    }

    func end(_ reason: RelayError) { finish(reason) }

    private func finish(_ reason: RelayError?) {
        let onEnd = state.withLockedValue { s -> (@Sendable () -> Void)? in
            guard !s.ended else { return nil }
            s.ended = true
            s.endReason = reason
            defer { s.onEnd = nil }
            return s.onEnd
        }
        onEnd?()
        sink.finish()
    }

    /// Ends the subscription when no report arrives within MaxInterval plus the grace.
    func watch() async {
        while true {
            let (deadline, ended) = state.withLockedValue { s in
                (s.lastHeard + .seconds(Int64(s.maxInterval)) + grace, s.ended)
            }
            if ended { return }
            if ContinuousClock.now >= deadline {
                end(.timeout("no report from \(deviceID) within MaxInterval"))
                return
            }
            do {
                // Wake at the deadline, and at least every second to notice an end.
                try await ContinuousClock().sleep(until: min(deadline, .now + .seconds(1)))
            } catch {
                end(.connectionLost)
                return
            }
        }
    }
}

/// The exchanges and subscriptions of one controller connection.
final class ControllerLink: Sendable {
    struct Key: Hashable {
        var deviceID: String
        var exchangeID: UInt32
        var initiatedLocally: Bool
    }

    struct SubscriptionKey: Hashable {
        var deviceID: String
        var subscriptionID: UInt32
    }

    /// A report transaction the device opened, being reassembled.
    private struct Incoming {
        var report: ReportDataMessage
    }

    private struct State {
        var exchanges: [Key: ControllerExchange] = [:]
        var subscriptions: [SubscriptionKey: RelaySubscription] = [:]
        var incoming: [Key: Incoming] = [:]
        var nextExchangeID = UInt32.random(in: 1...0x7FFF_FFFF)
        var closed = false
    }

    /// Report transactions reassembled at once before the oldest are dropped.
    private static let incomingLimit = 1024

    let link: RelayLink
    let logger: Logger
    // The lock guards the tables; mailboxes and streams are fed outside it.
    private let state = NIOLockedValueBox(State())

    init(link: RelayLink, logger: Logger) {
        self.link = link
        self.logger = logger
    }

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
        state.withLockedValue { _ = $0.exchanges.removeValue(forKey: key) }
    }

    func register(_ subscription: RelaySubscription) throws(RelayError) {
        let key = SubscriptionKey(deviceID: subscription.deviceID, subscriptionID: subscription.subscriptionID)
        let accepted = state.withLockedValue { s -> Bool in
            guard !s.closed else { return false }
            s.subscriptions[key] = subscription
            return true
        }
        guard accepted else { throw .connectionLost }
        subscription.setOnEnd { [weak self] in
            _ = self?.state.withLockedValue { $0.subscriptions.removeValue(forKey: key) }
        }
    }

    func send(_ message: RelayMessage) throws(RelayError) {
        try link.send(.message(message))
    }

    /// A message from a device: to the exchange it belongs to, or, when the device
    /// opens an exchange, a subscription report to its subscription.
    func deliver(_ message: RelayMessage) {
        guard let deviceID = message.deviceID else { return }
        let key = Key(deviceID: deviceID, exchangeID: message.exchangeID, initiatedLocally: !message.fromInitiator)
        if !message.fromInitiator {
            let exchange = state.withLockedValue { $0.exchanges[key] }
            exchange?.mailbox.put(IMEnvelope(opcode: message.opcode, payload: message.payload))
            return
        }
        receiveReport(message, key: key)
    }

    /// A report the device sent on an exchange it opened (spec chapter 8: reports after
    /// priming), acknowledged per chunk; an unknown subscription is answered
    /// INVALID_SUBSCRIPTION, which ends it on the device.
    private func receiveReport(_ message: RelayMessage, key: Key) {
        func reply(_ status: StatusCode) {
            let payload = StatusResponseMessage(status: status).encoded()
            try? send(
                RelayMessage(
                    deviceID: key.deviceID, exchangeID: key.exchangeID, fromInitiator: false,
                    opcode: InteractionOpcode.statusResponse.rawValue, payload: payload))
        }
        guard message.opcode == InteractionOpcode.reportData.rawValue,
            let report = try? ReportDataMessage(payload: message.payload)
        else {
            state.withLockedValue { _ = $0.incoming.removeValue(forKey: key) }
            return reply(.invalidAction)
        }
        enum Outcome {
            case unknown
            case more
            case complete(RelaySubscription, ReportDataMessage)
        }
        let outcome = state.withLockedValue { s -> Outcome in
            var merged = s.incoming.removeValue(forKey: key)?.report ?? ReportDataMessage(subscriptionID: report.subscriptionID)
            guard let id = report.subscriptionID ?? merged.subscriptionID,
                let subscription = s.subscriptions[SubscriptionKey(deviceID: key.deviceID, subscriptionID: id)]
            else { return .unknown }
            merged.attributeReports += report.attributeReports
            merged.eventReports += report.eventReports
            if report.moreChunkedMessages {
                if s.incoming.count >= Self.incomingLimit { s.incoming.removeAll() }
                s.incoming[key] = Incoming(report: merged)
                return .more
            }
            return .complete(subscription, merged)
        }
        switch outcome {
        case .unknown:
            reply(.invalidSubscription)
        case .more:
            reply(.success)
        case .complete(let subscription, let merged):
            subscription.deliver(merged)
            if !report.suppressResponse { reply(.success) }
        }
    }

    func fail(_ failure: RelayFailure) {
        guard let deviceID = failure.deviceID else { return }
        let key = Key(deviceID: deviceID, exchangeID: failure.exchangeID, initiatedLocally: failure.fromInitiator)
        let exchange = state.withLockedValue { $0.exchanges.removeValue(forKey: key) }
        exchange?.mailbox.close(RelayError.from(failure.reason, deviceID: deviceID))
    }

    func deviceWentOffline(_ deviceID: String) {
        let (exchanges, subscriptions) = state.withLockedValue { s -> ([ControllerExchange], [RelaySubscription]) in
            let exchanges = s.exchanges.filter { $0.key.deviceID == deviceID }
            for key in exchanges.keys { s.exchanges[key] = nil }
            let subscriptions = s.subscriptions.filter { $0.key.deviceID == deviceID }
            for key in subscriptions.keys { s.subscriptions[key] = nil }
            s.incoming = s.incoming.filter { $0.key.deviceID != deviceID }
            return (Array(exchanges.values), Array(subscriptions.values))
        }
        for exchange in exchanges { exchange.mailbox.close(.deviceOffline(deviceID)) }
        for subscription in subscriptions { subscription.end(.deviceOffline(deviceID)) }
    }

    func closeAll(_ error: RelayError) {
        let (exchanges, subscriptions) = state.withLockedValue { s -> ([ControllerExchange], [RelaySubscription]) in
            s.closed = true
            defer {
                s.exchanges = [:]
                s.subscriptions = [:]
                s.incoming = [:]
            }
            return (Array(s.exchanges.values), Array(s.subscriptions.values))
        }
        for exchange in exchanges { exchange.mailbox.close(error) }
        for subscription in subscriptions { subscription.end(error) }
    }
}

/// An exchange the controller opened with a device through the relay.
final class ControllerExchange: Sendable {
    let owner: ControllerLink
    let key: ControllerLink.Key
    let mailbox = Mailbox<IMEnvelope>()

    init(owner: ControllerLink, key: ControllerLink.Key) {
        self.owner = owner
        self.key = key
    }

    func send<M: InteractionMessage>(_ message: M) throws(RelayError) {
        try owner.send(
            RelayMessage(
                deviceID: key.deviceID, exchangeID: key.exchangeID, fromInitiator: true, opcode: M.opcode.rawValue,
                payload: message.encoded()))
    }

    func receiveEnvelope() async throws -> IMEnvelope {
        try await mailbox.next()
    }

    /// The next message, which must be an `M`; a StatusResponse instead throws its status.
    func expect<M: InteractionMessage>() async throws -> M {
        let envelope = try await receiveEnvelope()
        if envelope.opcode == M.opcode.rawValue { return try M.decode(envelope.payload) }
        if envelope.opcode == InteractionOpcode.statusResponse.rawValue {
            throw RelayError.status(try StatusResponseMessage.decode(envelope.payload).status)
        }
        throw RelayError.invalidResponse("expected \(M.opcode), got opcode \(envelope.opcode)")
    }

    /// A Timed Request, which the device must accept with SUCCESS (spec chapter 8, Timed Interaction).
    func openTimedWindow(_ milliseconds: UInt16) async throws {
        try send(TimedRequestMessage(timeout: milliseconds))
        let status: StatusResponseMessage = try await expect()
        guard status.status == .success else { throw RelayError.status(status.status) }
    }

    func close() {
        owner.remove(key)
        mailbox.close(.connectionLost)
    }
}

extension InteractionMessage {
    /// Decodes a payload, failing with a `RelayError`.
    static func decode(_ payload: [UInt8]) throws(RelayError) -> Self {
        do {
            return try Self(payload: payload)
        } catch {
            throw .invalidResponse("\(error)")
        }
    }
}
