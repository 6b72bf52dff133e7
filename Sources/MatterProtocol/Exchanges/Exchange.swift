/// Our role in an exchange (spec 4.10.1).
public enum ExchangeRole: Sendable, Hashable {
    case initiator
    case responder
}

struct ExchangeKey: Hashable, Sendable {
    var session: SessionHandle
    var exchangeID: UInt16
    var role: ExchangeRole
}

/// One exchange (Matter Core spec 4.10): a request/response conversation over a
/// session, identified by exchange ID and role. Messages sent on it carry the
/// exchange's protocol; acknowledgements of received messages are piggybacked on
/// the next message sent, or sent standalone after MRP_STANDALONE_ACK_TIMEOUT.
public final class Exchange: Sendable {
    public let id: UInt16
    public let role: ExchangeRole
    public let protocolID: ProtocolID
    /// The session as of the exchange's creation.
    public let session: SessionInfo
    public let manager: ExchangeManager
    let key: ExchangeKey

    init(key: ExchangeKey, protocolID: ProtocolID, session: SessionInfo, manager: ExchangeManager) {
        self.id = key.exchangeID
        self.role = key.role
        self.protocolID = protocolID
        self.session = session
        self.manager = manager
        self.key = key
    }

    /// Sends a message of this exchange's protocol. With `reliable`, MRP retransmits it
    /// until acknowledged; a failure shows up as `TransportError.deliveryFailed` from
    /// the next `receive`. Only one reliable message may await its ack at a time.
    public func send(opcode: UInt8, payload: [UInt8], reliable: Bool = true) async throws(TransportError) {
        try await manager.send(key: key, opcode: opcode, payload: payload, reliable: reliable)
    }

    /// The next message on this exchange. Throws `TransportError.timeout` after `timeout`
    /// (the manager's default when nil), `.deliveryFailed` when our last reliable message
    /// was never acknowledged, `.exchangeClosed`/`.sessionClosed` when it ends.
    public func receive(timeout: Duration? = nil) async throws -> Message {
        try await manager.receive(key: key, timeout: timeout)
    }

    /// Sends and waits for the reply.
    public func request(opcode: UInt8, payload: [UInt8], timeout: Duration? = nil) async throws -> Message {
        try await send(opcode: opcode, payload: payload, reliable: true)
        return try await receive(timeout: timeout)
    }

    /// Waits until our last reliable message is acknowledged (returns at once if none is pending).
    public func waitForAcknowledgement() async throws {
        try await manager.waitForAcknowledgement(key: key)
    }

    /// Closes the exchange: flushes a pending ack and stops accepting messages. A reliable
    /// message still in flight keeps being retransmitted until acknowledged or given up.
    public func close() async {
        await manager.closeExchange(key: key)
    }
}
