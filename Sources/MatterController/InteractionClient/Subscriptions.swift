import Logging
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers

/// What a subscription delivers to its consumer.
public enum SubscriptionEvent: Sendable, Hashable {
    /// The subscription is (re-)established; the priming reports precede this event.
    case established(subscriptionID: UInt32, maxInterval: UInt16)
    /// Attribute reports, from priming or from a later report.
    case reports([AttributeReport])
    /// The subscription was lost (no report within MaxInterval, session gone, node
    /// unreachable); a new one is being tried.
    case lost(ControllerError)
}

/// Routes the ReportData messages a publisher sends on exchanges it opens (spec 8.5:
/// reports after priming) to the subscription they belong to, acknowledging each with
/// a StatusResponse. Unknown subscription IDs are answered INVALID_SUBSCRIPTION, which
/// ends the publisher's side (spec 8.5.2).
public final class SubscriptionRouter: ProtocolHandler {
    struct Route {
        let session: SessionHandle
        let sink: @Sendable ([AttributeReport]) -> Void
    }

    // Guards the routing table; sinks are called outside the lock.
    private let routes = NIOLockedValueBox<[UInt32: Route]>([:])
    let logger: Logger

    public init(logger: Logger = Logger(label: "matter.controller.subscriptions")) {
        self.logger = logger
    }

    func register(_ id: UInt32, session: SessionHandle, sink: @escaping @Sendable ([AttributeReport]) -> Void) {
        routes.withLockedValue { $0[id] = Route(session: session, sink: sink) }
    }

    func unregister(_ id: UInt32) {
        _ = routes.withLockedValue { $0.removeValue(forKey: id) }
    }

    public func handle(exchange: Exchange, first message: Message) async {
        guard message.session.isSecure else { return }
        var current = message
        while true {
            guard current.opcode == InteractionOpcode.reportData.rawValue,
                let report = try? ReportDataMessage(payload: current.payload)
            else {
                await reply(.invalidAction, on: exchange)
                return
            }
            let route = report.subscriptionID.flatMap { id in routes.withLockedValue { $0[id] } }
            guard let route, route.session == current.session.handle else {
                logger.debug("report for unknown subscription \(report.subscriptionID.map(String.init) ?? "-")")
                await reply(.invalidSubscription, on: exchange)
                return
            }
            var reports: [AttributeReport] = []
            AttributeReport.collect(report.attributeReports, into: &reports)
            // An empty report is the publisher's keep-alive; it still proves liveness.
            route.sink(reports)
            if report.suppressResponse { return }
            await reply(.success, on: exchange)
            guard report.moreChunkedMessages else { return }
            do {
                current = try await exchange.receive(timeout: .seconds(10))
            } catch {
                return
            }
        }
    }

    private func reply(_ status: StatusCode, on exchange: Exchange) async {
        try? await exchange.send(
            opcode: InteractionOpcode.statusResponse.rawValue,
            payload: StatusResponseMessage(status: status).encoded(), reliable: true)
    }
}

extension InteractionClient {
    /// Establishes one subscription (spec 8.5): priming reports, each acknowledged, then
    /// SubscribeResponse. The ID is routed from the first priming report on, so no later
    /// report can slip past. Returns the ID and the publisher's MaxInterval.
    func subscribe(
        _ paths: [AttributePathIB], minInterval: UInt16, maxInterval: UInt16, router: SubscriptionRouter,
        keepSubscriptions: Bool = true,
        sink: @escaping @Sendable ([AttributeReport]) -> Void
    ) async throws -> (UInt32, UInt16) {
        let request = SubscribeRequestMessage(
            keepSubscriptions: keepSubscriptions, minIntervalFloor: minInterval,
            maxIntervalCeiling: maxInterval, attributeRequests: paths)
        return try await withExchange("Subscribe") { exchange in
            try await send(request, on: exchange, "Subscribe")
            var registered: UInt32?
            do {
                while true {
                    let message: Message
                    do {
                        message = try await exchange.receive(timeout: timeout)
                    } catch {
                        throw ControllerError.transport(error, "Subscribe")
                    }
                    switch InteractionOpcode(rawValue: message.opcode) {
                    case .reportData:
                        let report: ReportDataMessage
                        do { report = try ReportDataMessage(payload: message.payload) } catch {
                            throw ControllerError.invalidResponse("Subscribe: \(error)")
                        }
                        if registered == nil, let id = report.subscriptionID {
                            router.register(id, session: session, sink: sink)
                            registered = id
                        }
                        var reports: [AttributeReport] = []
                        AttributeReport.collect(report.attributeReports, into: &reports)
                        sink(reports)
                        try await send(StatusResponseMessage(status: .success), on: exchange, "Subscribe")
                    case .subscribeResponse:
                        let response: SubscribeResponseMessage
                        do { response = try SubscribeResponseMessage(payload: message.payload) } catch {
                            throw ControllerError.invalidResponse("Subscribe: \(error)")
                        }
                        if registered != response.subscriptionID {
                            if let r = registered { router.unregister(r) }
                            router.register(response.subscriptionID, session: session, sink: sink)
                        }
                        return (response.subscriptionID, response.maxInterval)
                    case .statusResponse:
                        let status = (try? StatusResponseMessage(payload: message.payload))?.status ?? .failure
                        throw ControllerError.status(InteractionStatus(status), "Subscribe")
                    default:
                        throw ControllerError.invalidResponse("Subscribe: unexpected opcode \(message.opcode)")
                    }
                }
            } catch {
                if let r = registered { router.unregister(r) }
                throw error
            }
        }
    }
}
