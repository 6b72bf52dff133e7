import NIOCore

/// A received message, as delivered to an exchange.
public struct Message: Sendable {
    public let messageHeader: MessageHeader
    public let protocolHeader: ProtocolHeader
    /// The application payload after the protocol header (decrypted).
    public let payload: [UInt8]
    /// The session the message arrived on, as of its arrival.
    public let session: SessionInfo
    public let source: SocketAddress

    public var protocolID: ProtocolID { protocolHeader.protocolID }
    public var opcode: UInt8 { protocolHeader.opcode }
    public var exchangeID: UInt16 { protocolHeader.exchangeID }
    public var messageCounter: UInt32 { messageHeader.messageCounter }

    /// True if this is a Secure Channel StatusReport (the usual way a peer reports failure).
    public var isStatusReport: Bool {
        protocolID == .secureChannel && opcode == SecureChannelOpcode.statusReport.rawValue
    }

    public init(
        messageHeader: MessageHeader, protocolHeader: ProtocolHeader, payload: [UInt8], session: SessionInfo,
        source: SocketAddress
    ) {
        self.messageHeader = messageHeader
        self.protocolHeader = protocolHeader
        self.payload = payload
        self.session = session
        self.source = source
    }
}
