import MatterModel

// Glue between the exchange layer and the Interaction Model server
// (InteractionModel/): an Exchange is the IM's IMExchange, and a ProtocolHandler
// routes unsolicited IM messages (protocol 0x0001) to the InteractionServer.

extension Exchange: IMExchange {
    /// The incoming subject descriptor (spec 6.6.2.1) of the exchange's session.
    public var subject: SubjectDescriptor {
        // A group message's subject is its group (spec 6.6.2.1: Group auth mode, subject = group ID).
        if session.kind == .group, let group = session.groupID {
            return SubjectDescriptor(authMode: .group, fabricIndex: session.fabricIndex, subject: UInt64(group))
        }
        return SubjectDescriptor(
            authMode: session.kind == .case ? .case : .pase,
            fabricIndex: session.fabricIndex,
            subject: session.kind == .case ? session.peerNodeID : 0,
            caseAuthenticatedTags: session.caseAuthenticatedTags)
    }

    public var sessionIdentity: InteractionSessionIdentity? {
        InteractionSessionIdentity(id: session.handle.serial, attestationChallenge: session.attestationChallenge)
    }

    public func send(opcode: UInt8, payload: [UInt8]) async throws {
        try await send(opcode: opcode, payload: payload, reliable: true)
    }

    public func receive() async throws -> (opcode: UInt8, payload: [UInt8]) {
        let message = try await receive(timeout: nil)
        return (message.opcode, message.payload)
    }

    public func openExchange() async throws -> any IMExchange {
        try await manager.openExchange(session: session.handle, protocolID: .interactionModel)
    }
}

/// Serves the Interaction Model protocol with an InteractionServer:
///
///     await exchangeManager.register(InteractionModelHandler(server: server), for: .interactionModel)
public struct InteractionModelHandler: ProtocolHandler {
    public let server: InteractionServer

    public init(server: InteractionServer) {
        self.server = server
    }

    public func handle(exchange: Exchange, first message: Message) async {
        // IM runs on secure sessions only; the exchange manager never dispatches it on an unsecured one.
        guard message.session.isSecure else { return }
        await server.handle(opcode: message.opcode, payload: message.payload, on: exchange)
    }
}
