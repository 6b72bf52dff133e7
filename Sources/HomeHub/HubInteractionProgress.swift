import MatterProtocol

/// Where one forwarded Interaction Model exchange stands (Matter Core spec chapter 8), so
/// the hub closes its Matter exchange when the interaction is over instead of when it idles.
/// Fed every message in both directions, in order.
struct HubInteractionProgress: Sendable {
    /// The exchange's request (Read, Subscribe, Write, Invoke), once sent.
    private(set) var request: InteractionOpcode?
    /// The interaction ended; nothing more travels on this exchange.
    private(set) var finished = false
    /// A TimedRequest awaits the device's StatusResponse, after which the action follows.
    private var timedPending = false
    /// The last WriteRequest announced more chunks: its WriteResponse does not end the exchange.
    private var writeHasMoreChunks = false
    /// The last report of a Read went out without SuppressResponse: the controller's
    /// StatusResponse ends the exchange.
    private var awaitingFinalStatus = false

    /// A message from the controller, about to go to the device.
    mutating func controllerSent(opcode: UInt8, payload: [UInt8]) {
        switch InteractionOpcode(rawValue: opcode) {
        case .timedRequest:
            timedPending = true
        case .readRequest, .subscribeRequest:
            if request == nil { request = InteractionOpcode(rawValue: opcode) }
        case .writeRequest:
            if request == nil { request = .writeRequest }
            let write = try? WriteRequestMessage(payload: payload)
            writeHasMoreChunks = write?.moreChunkedMessages ?? false
            if write?.suppressResponse == true && !writeHasMoreChunks { finished = true }
        case .invokeRequest:
            if request == nil { request = .invokeRequest }
            if (try? InvokeRequestMessage(payload: payload))?.suppressResponse == true { finished = true }
        case .statusResponse:
            if awaitingFinalStatus { finished = true }
        default:
            break
        }
    }

    /// A message from the device, about to go to the controller.
    mutating func deviceSent(opcode: UInt8, payload: [UInt8]) {
        switch InteractionOpcode(rawValue: opcode) {
        case .statusResponse:
            // SUCCESS after a TimedRequest opens the window; any other status ends the action.
            if timedPending, (try? StatusResponseMessage(payload: payload))?.status == .success {
                timedPending = false
                return
            }
            finished = true
        case .reportData:
            guard let report = try? ReportDataMessage(payload: payload) else {
                finished = true
                return
            }
            // More chunks follow the controller's ack; a subscription's priming ends with SubscribeResponse.
            if report.moreChunkedMessages || request == .subscribeRequest { return }
            if report.suppressResponse { finished = true } else { awaitingFinalStatus = true }
        case .subscribeResponse:
            finished = true
        case .writeResponse:
            if !writeHasMoreChunks { finished = true }
        case .invokeResponse:
            if (try? InvokeResponseMessage(payload: payload))?.moreChunkedMessages != true { finished = true }
        default:
            finished = true
        }
    }
}
