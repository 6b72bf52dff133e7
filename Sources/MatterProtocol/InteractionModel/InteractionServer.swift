import Logging
import MatterModel
import MatterTLV
import Synchronization

/// Limits and choices of the Interaction Model server.
public struct InteractionServerConfiguration: Sendable {
    /// Bytes one IM payload may take. An IPv6 minimum-MTU UDP datagram carries
    /// 1232 bytes of Matter message (1280 - 40 IPv6 - 8 UDP); a message header
    /// with both node IDs (24), a payload header with an acknowledgement (12)
    /// and the MIC (16) leave 1180 for the payload.
    public var maxPayloadSize: Int = 1180
    /// Commands one InvokeRequest may carry (the node's MaxPathsPerInvoke,
    /// in Basic Information; connectedhomeip's default is 1).
    public var maxPathsPerInvoke: Int = 1
    /// Attribute plus event paths one ReadRequest or SubscribeRequest may name; more are
    /// answered PATHS_EXHAUSTED. The spec guarantees at least 9 per read (chapter 8, Read
    /// Interaction limits); every path is expanded on its own and sent before the next, so
    /// the cap, not the node's size, bounds what a request can make the node hold.
    public var maxPathsPerRequest: Int = 64
    /// The largest MaxInterval, in seconds, the publisher picks on its own:
    /// SUBSCRIPTION_MAX_INTERVAL_PUBLISHER_LIMIT, 60 minutes (spec chapter 8, Subscribe Interaction).
    public var subscriptionMaxIntervalCeiling: UInt16 = 3600
    /// Revision stamped on every message sent.
    public var interactionModelRevision: UInt8 = currentInteractionModelRevision

    public init() {}
}

/// Told of each request a peer sends to an InteractionServer (`observeRequests`).
public protocol InteractionRequestObserver: AnyObject, Sendable {
    func requestSeen(_ request: InteractionRequest)
}

/// The server side of the Interaction Model (Matter Core spec chapter 8):
/// Read, Subscribe, Write, Invoke and Timed interactions over `IMExchange`s,
/// against an `InteractionDataProvider`.
///
/// The transport calls `handle(opcode:payload:on:)` for the first IM message
/// of every exchange a peer opens. Subscriptions keep reporting from `run()`,
/// which must be running (e.g. as a service) for them to be served.
public final class InteractionServer: Sendable {
    public let configuration: InteractionServerConfiguration
    let provider: any InteractionDataProvider
    let clock: any MatterClock
    let logger: Logger
    let registry = SubscriptionRegistry()
    let groupCounts = Mutex(GroupInvokeCounts())
    let groupCountsChanged = EventBroadcaster<Void>()
    let reportsAcknowledged = EventBroadcaster<AcknowledgedReport>()
    /// Group messages handled so far (`handleGroup`).
    public var groupInvokes: GroupInvokeCounts { groupCounts.withLock { $0 } }
    /// Yields after `groupInvokes` moved (coalesced while unread).
    public func groupInvokesChanges() -> AsyncStream<Void> { groupCountsChanged.subscribe(bufferLimit: 1) }
    private struct WeakObserver { weak var observer: (any InteractionRequestObserver)? }
    private let requestObserver = Mutex(WeakObserver())
    /// Tells `observer` (held weakly) of every request a peer sends, as it arrives (a Timed
    /// Request's write or invoke with `timed` set): what a traffic log shows. It is told on the
    /// interaction's own task, before the request is served, so it must not wait.
    public func observeRequests(_ observer: (any InteractionRequestObserver)?) {
        requestObserver.withLock { $0.observer = observer }
    }

    private func seen(_ request: InteractionRequest) {
        requestObserver.withLock { $0.observer }?.requestSeen(request)
    }
    private let established: AsyncStream<Subscription>
    private let establishedSink: AsyncStream<Subscription>.Continuation

    public init(
        provider: any InteractionDataProvider,
        clock: any MatterClock = SystemClock(),
        configuration: InteractionServerConfiguration = InteractionServerConfiguration(),
        logger: Logger = Logger(label: "matter.interaction-model")
    ) {
        self.provider = provider
        self.clock = clock
        self.configuration = configuration
        self.logger = logger
        (established, establishedSink) = AsyncStream.makeStream(of: Subscription.self)
    }

    /// Handles an exchange the peer opened with this message, to the end of
    /// the interaction (a subscription carries on in `run()`).
    public func handle(opcode: UInt8, payload: [UInt8], on exchange: any IMExchange) async {
        // A group message opens no exchange that could carry an answer.
        if exchange.subject.authMode == .group {
            return await handleGroup(opcode: opcode, payload: payload, subject: exchange.subject)
        }
        if let known = InteractionOpcode(rawValue: opcode), known != .statusResponse {
            seen(InteractionRequest(opcode: known, payload: payload, subject: exchange.subject, timed: false))
        }
        do {
            switch InteractionOpcode(rawValue: opcode) {
            case .readRequest: try await handleRead(payload, on: exchange)
            case .subscribeRequest: try await handleSubscribe(payload, on: exchange)
            case .writeRequest: try await handleWrite(payload, on: exchange, timed: false)
            case .invokeRequest: try await handleInvoke(payload, on: exchange, timed: false)
            case .timedRequest: try await handleTimed(payload, on: exchange)
            case .statusResponse:
                // An unsolicited status answers nothing we sent; there is nothing to reply.
                logger.debug("ignoring unsolicited StatusResponse")
            default:
                logger.debug("unexpected IM opcode \(opcode) opening an exchange")
                try await reply(.invalidAction, on: exchange)
            }
        } catch {
            logger.debug("interaction ended: \(error)")
        }
        await exchange.close()
    }

    /// Serves established subscriptions until cancelled. Call once: after it
    /// returns, new subscriptions are refused.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for await subscription in established {
                group.addTask { await self.serve(subscription) }
            }
        }
    }

    /// Subscriptions being served or about to be.
    public func activeSubscriptions() async -> [SubscriptionSummary] {
        await registry.summaries()
    }

    /// Yields after each subscription established or ended (coalesced while unread).
    public func subscriptionChanges() -> AsyncStream<Void> { registry.changed.subscribe(bufferLimit: 1) }

    /// The subscription reports acknowledged from now on (not the priming reports): a
    /// caller learns what each subscriber has been told, without polling.
    public func acknowledgedReports() -> AsyncStream<AcknowledgedReport> { reportsAcknowledged.subscribe() }

    /// Returns once exactly `count` subscriptions are active (for tests and tools that
    /// wait for a subscriber; bound it from outside).
    public func untilActiveSubscriptions(_ count: Int) async {
        await registry.untilCount(count)
    }

    /// Ends every subscription of a fabric (e.g. when the fabric is removed).
    public func endSubscriptions(fabricIndex: FabricIndex) async {
        await registry.end { $0.subject.fabricIndex == fabricIndex }
    }

    /// Ends every subscription (a node that lost power keeps none).
    public func endAllSubscriptions() async {
        await registry.end { _ in true }
    }

    // MARK: - Shared pieces

    /// Hands an established subscription to `run()`; false once `run()` has ended.
    func enqueue(_ subscription: Subscription) -> Bool {
        if case .terminated = establishedSink.yield(subscription) { return false }
        return true
    }

    func reply(_ status: StatusCode, on exchange: any IMExchange) async throws {
        try await exchange.send(StatusResponseMessage(status: status, interactionModelRevision: configuration.interactionModelRevision))
    }

    /// Waits for the StatusResponse that acknowledges a chunk or report; any
    /// other message counts as a rejection.
    func awaitStatusResponse(on exchange: any IMExchange) async throws -> StatusCode {
        let (opcode, payload) = try await exchange.receive()
        guard opcode == InteractionOpcode.statusResponse.rawValue,
            let response = try? StatusResponseMessage(payload: payload)
        else { return .invalidAction }
        return response.status
    }

    /// A Timed Request opens a window; the Write or Invoke that follows on the
    /// same exchange must arrive inside it (spec chapter 8, Timed Write / Timed Invoke).
    func handleTimed(_ payload: [UInt8], on exchange: any IMExchange) async throws {
        let request: TimedRequestMessage
        do {
            request = try TimedRequestMessage(payload: payload)
        } catch {
            logger.debug("malformed TimedRequest: \(error)")
            return try await reply(.invalidAction, on: exchange)
        }
        let deadline = clock.now + .milliseconds(Int64(request.timeout))
        try await reply(.success, on: exchange)
        let (opcode, next) = try await exchange.receive()
        guard clock.now <= deadline else {
            // Too late: the spec asks for UNSUPPORTED_ACCESS, as connectedhomeip sends.
            logger.debug("timed action arrived after its \(request.timeout) ms window")
            return try await reply(.unsupportedAccess, on: exchange)
        }
        if let known = InteractionOpcode(rawValue: opcode) {
            seen(InteractionRequest(opcode: known, payload: next, subject: exchange.subject, timed: true))
        }
        switch InteractionOpcode(rawValue: opcode) {
        case .writeRequest: try await handleWrite(next, on: exchange, timed: true)
        case .invokeRequest: try await handleInvoke(next, on: exchange, timed: true)
        default: try await reply(.invalidAction, on: exchange)
        }
    }
}

/// A request as it reached the server, before it is acted on.
public struct InteractionRequest: Sendable {
    public var opcode: InteractionOpcode
    public var payload: [UInt8]
    public var subject: SubjectDescriptor
    /// The write or invoke of a Timed Request.
    public var timed: Bool
}
