import MatterModel
@testable import MatterProtocol
import NIOCore
import Testing

@Suite("Exchange as the Interaction Model's IMExchange")
struct InteractionModelBindingTests {
    @Test func subjectAndNewExchangesFollowTheSession() async throws {
        let network = TestNetwork()
        let a = ExchangeManager(transport: network.makeTransport(port: 1), clock: MatterProtocol.ManualClock())
        let b = ExchangeManager(transport: network.makeTransport(port: 2), clock: MatterProtocol.ManualClock())
        let aAddress = try SocketAddressFixture.local(1)
        let bAddress = try SocketAddressFixture.local(2)
        let (pase, _) = try await installSessionPair(initiator: a, aAddress: aAddress, responder: b, bAddress: bAddress)
        let (caseSession, _) = try await installSessionPair(
            initiator: a, aAddress: aAddress, responder: b, bAddress: bAddress,
            kind: .case, initiatorNodeID: 0x1111, responderNodeID: 0x2222)
        await a.bindFabric(4, toSession: pase.handle)
        await a.bindFabric(5, toSession: caseSession.handle)

        let onPASE: any IMExchange = try await a.openExchange(session: pase.handle, protocolID: .interactionModel)
        #expect(onPASE.subject == SubjectDescriptor(authMode: .pase, fabricIndex: 4, subject: 0))
        let onCASE: any IMExchange = try await a.openExchange(session: caseSession.handle, protocolID: .interactionModel)
        #expect(onCASE.subject == SubjectDescriptor(authMode: .case, fabricIndex: 5, subject: 0x2222))

        // A follow-up exchange (subscription reports) is a new initiator exchange on the same session.
        let next = try #require(try await onCASE.openExchange() as? Exchange)
        let first = try #require(onCASE as? Exchange)
        #expect(next.session.handle == caseSession.handle)
        #expect(next.protocolID == .interactionModel && next.role == .initiator)
        #expect(next.id != first.id)
        await onCASE.close()
        await #expect(throws: TransportError.exchangeClosed) { try await onCASE.send(opcode: 1, payload: []) }
    }
}

enum SocketAddressFixture {
    static func local(_ port: Int) throws -> SocketAddress { try SocketAddress(ipAddress: "127.0.0.1", port: port) }
}
