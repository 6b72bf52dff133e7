@testable import HomeHub
import MatterModel
import MatterProtocol
import Testing

/// When the hub ends a forwarded exchange: exactly when the Interaction Model says the
/// interaction is over, for each kind of interaction.
@Suite struct HubInteractionProgressTests {
    typealias Op = InteractionOpcode

    static func report(subscription: UInt32? = nil, more: Bool = false, suppress: Bool = false) -> [UInt8] {
        ReportDataMessage(subscriptionID: subscription, moreChunkedMessages: more, suppressResponse: suppress).encoded()
    }

    static let success = StatusResponseMessage(status: .success).encoded()

    @Test func aChunkedReadEndsWithTheLastSuppressedChunk() {
        var p = HubInteractionProgress()
        p.controllerSent(opcode: Op.readRequest.rawValue, payload: ReadRequestMessage(attributeRequests: []).encoded())
        p.deviceSent(opcode: Op.reportData.rawValue, payload: Self.report(more: true))
        #expect(!p.finished)
        p.controllerSent(opcode: Op.statusResponse.rawValue, payload: Self.success)
        #expect(!p.finished)
        p.deviceSent(opcode: Op.reportData.rawValue, payload: Self.report(suppress: true))
        #expect(p.finished)
    }

    @Test func aReadWhoseLastReportWantsAnAnswerEndsWithTheControllersStatus() {
        var p = HubInteractionProgress()
        p.controllerSent(opcode: Op.readRequest.rawValue, payload: ReadRequestMessage(attributeRequests: []).encoded())
        p.deviceSent(opcode: Op.reportData.rawValue, payload: Self.report())
        #expect(!p.finished)
        p.controllerSent(opcode: Op.statusResponse.rawValue, payload: Self.success)
        #expect(p.finished)
    }

    @Test func aSubscribeEndsWithSubscribeResponseNotWithPriming() {
        var p = HubInteractionProgress()
        let request = SubscribeRequestMessage(minIntervalFloor: 0, maxIntervalCeiling: 5)
        p.controllerSent(opcode: Op.subscribeRequest.rawValue, payload: request.encoded())
        p.deviceSent(opcode: Op.reportData.rawValue, payload: Self.report(subscription: 7, suppress: false))
        p.controllerSent(opcode: Op.statusResponse.rawValue, payload: Self.success)
        #expect(!p.finished)
        p.deviceSent(opcode: Op.subscribeResponse.rawValue, payload: SubscribeResponseMessage(subscriptionID: 7, maxInterval: 5).encoded())
        #expect(p.finished)
    }

    @Test func aTimedInvokeContinuesAfterTheWindowOpensAndEndsWithItsResponse() {
        var p = HubInteractionProgress()
        p.controllerSent(opcode: Op.timedRequest.rawValue, payload: TimedRequestMessage(timeout: 500).encoded())
        p.deviceSent(opcode: Op.statusResponse.rawValue, payload: Self.success)
        #expect(!p.finished)
        p.controllerSent(opcode: Op.invokeRequest.rawValue, payload: InvokeRequestMessage(timedRequest: true, invokeRequests: []).encoded())
        p.deviceSent(
            opcode: Op.invokeResponse.rawValue, payload: InvokeResponseMessage(invokeResponses: [], moreChunkedMessages: true).encoded())
        #expect(!p.finished)
        p.controllerSent(opcode: Op.statusResponse.rawValue, payload: Self.success)
        p.deviceSent(opcode: Op.invokeResponse.rawValue, payload: InvokeResponseMessage(invokeResponses: []).encoded())
        #expect(p.finished)
    }

    @Test func aRefusalOrAnUnansweredInvokeEndsAtOnce() {
        var refused = HubInteractionProgress()
        refused.controllerSent(opcode: Op.writeRequest.rawValue, payload: WriteRequestMessage(writeRequests: []).encoded())
        refused.deviceSent(opcode: Op.statusResponse.rawValue, payload: StatusResponseMessage(status: .unsupportedAccess).encoded())
        #expect(refused.finished)

        var silent = HubInteractionProgress()
        silent.controllerSent(
            opcode: Op.invokeRequest.rawValue,
            payload: InvokeRequestMessage(suppressResponse: true, invokeRequests: []).encoded())
        #expect(silent.finished)
    }
}
