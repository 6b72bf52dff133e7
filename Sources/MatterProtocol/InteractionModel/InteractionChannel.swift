import MatterModel

// The client side's seam to whatever carries its interactions with one node: an
// exchange on a CASE (or PASE) session, or a relay or hub WebSocket connection. The
// Interaction Model client is written once over these, so every route speaks the
// same Read, Write, Invoke and Subscribe.

/// One exchange a controller opened (or a publisher opened towards it) for one interaction.
public protocol InteractionExchange: Sendable {
    /// Sends one IM message on this exchange (reliably, where the transport has MRP).
    func send(opcode: UInt8, payload: [UInt8]) async throws
    /// The next IM message from the peer; throws when none arrives within `timeout` or
    /// the exchange ends.
    func receive(within timeout: Duration) async throws -> (opcode: UInt8, payload: [UInt8])
    /// Ends this exchange (a no-op when already closed).
    func close() async
}

extension InteractionExchange {
    public func send<M: InteractionMessage>(_ message: M) async throws {
        try await send(opcode: M.opcode.rawValue, payload: message.encoded())
    }
}

/// Who is at the other end of a channel, as subscriptions key their reports: a
/// publisher's report exchanges arrive from a peer, and only that peer's reports
/// reach its subscriptions.
public struct InteractionPeer: Hashable, Sendable, CustomStringConvertible {
    /// The carrier, e.g. "case" or "relay#3".
    public var route: String
    /// The node on that carrier: a session serial, a relay device ID.
    public var node: String

    public init(route: String, node: String) {
        self.route = route
        self.node = node
    }

    /// The peer at the end of a secure session.
    public static func session(_ handle: SessionHandle) -> InteractionPeer {
        InteractionPeer(route: "session", node: String(handle.serial))
    }

    public var description: String { "\(route):\(node)" }
}

/// Opens Interaction Model exchanges with one node.
public protocol InteractionChannel: Sendable {
    var peer: InteractionPeer { get }
    /// A new exchange with the node, as initiator.
    func openExchange() async throws -> any InteractionExchange
}

/// Receives the exchanges peers open towards a controller (a subscription's later
/// reports, spec 8.5) and learns when a peer is gone for good (its relay connection
/// dropped), which ends that peer's subscriptions at once rather than at MaxInterval.
public protocol IncomingInteractionHandler: Sendable {
    func handle(exchange: any InteractionExchange, opcode: UInt8, payload: [UInt8], from peer: InteractionPeer) async
    func peerLost(_ peer: InteractionPeer, reason: String)
    /// Every peer carried by `route` is gone (the whole connection dropped).
    func routeLost(_ route: String, reason: String)
}

/// A failure of a channel's own carrier (a relay's, a hub's): the Interaction Model
/// client passes it on as it is, so callers can tell, say, an offline device from a
/// node's own answer.
public protocol InteractionChannelError: Error, CustomStringConvertible {}

/// Interaction Model exchanges on one secure session of an exchange manager.
public struct SessionChannel: InteractionChannel {
    public let manager: ExchangeManager
    public let session: SessionHandle

    public init(manager: ExchangeManager, session: SessionHandle) {
        self.manager = manager
        self.session = session
    }

    public var peer: InteractionPeer { .session(session) }

    public func openExchange() async throws -> any InteractionExchange {
        try await manager.openExchange(session: session, protocolID: .interactionModel)
    }
}

extension Exchange: InteractionExchange {
    public func receive(within timeout: Duration) async throws -> (opcode: UInt8, payload: [UInt8]) {
        let message = try await receive(timeout: timeout)
        guard message.protocolID == .interactionModel else {
            throw IMDecodingError(.invalidCombination("a message of protocol \(message.protocolID)"), field: "exchange")
        }
        return (message.opcode, message.payload)
    }
}
