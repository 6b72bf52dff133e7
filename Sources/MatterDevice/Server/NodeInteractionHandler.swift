import MatterProtocol

/// Serves Interaction Model exchanges (protocol 0x0001) with the node's InteractionServer,
/// and closes a session the node asked to close once the interaction on it is over.
struct NodeInteractionHandler: ProtocolHandler {
    let server: InteractionServer
    let activity: SessionActivity

    func handle(exchange: Exchange, first message: Message) async {
        // The IM runs on secure sessions only (Core spec 4.13.2.1).
        guard message.session.isSecure else { return }
        // A group message: acted on, never answered, no session to keep open (Core spec 4.16).
        if message.session.kind == .group {
            return await server.handle(opcode: message.opcode, payload: message.payload, on: exchange)
        }
        let session = exchange.session.handle
        await activity.begin(session.serial)
        await server.handle(opcode: message.opcode, payload: message.payload, on: exchange)
        // The response is sent; wait until it is acknowledged (bounded by MRP) before a
        // pending close may tear the session down under it.
        try? await exchange.waitForAcknowledgement()
        if let notifyPeer = await activity.end(session.serial) {
            await exchange.manager.closeSession(session, notifyPeer: notifyPeer)
        }
    }
}
