// Message header (Matter Core spec 4.4.1): the part of every datagram that is
// never encrypted. For secure sessions its bytes are the AAD of the AES-CCM MIC.

/// Session type from the security flags (spec 4.4.1.4).
public enum SessionType: UInt8, Sendable, Hashable {
    case unicast = 0
    case group = 1
}

/// Destination field selected by DSIZ (spec 4.4.1.2).
public enum MessageDestination: Sendable, Hashable {
    case none
    case node(UInt64)
    case group(UInt16)
}

/// The unencrypted message header.
public struct MessageHeader: Sendable, Hashable {
    /// Message format version; 0 is the only defined one.
    public var version: UInt8 = 0
    /// 0 for unsecured sessions; otherwise the receiver's session ID.
    public var sessionID: UInt16
    /// P flag: the header after the session ID is privacy-obfuscated (spec 4.9.3).
    public var privacy: Bool = false
    /// C flag: a control message that uses the control counter (spec 4.4.1.4).
    public var isControlMessage: Bool = false
    public var sessionType: SessionType = .unicast
    public var messageCounter: UInt32
    public var sourceNodeID: UInt64?
    public var destination: MessageDestination = .none
    /// Raw message extensions (MX flag; spec 4.4.1.8). Version 1.x senders send none.
    public var messageExtensions: [UInt8]?

    public init(
        sessionID: UInt16, messageCounter: UInt32, sourceNodeID: UInt64? = nil,
        destination: MessageDestination = .none, sessionType: SessionType = .unicast,
        isControlMessage: Bool = false, privacy: Bool = false, messageExtensions: [UInt8]? = nil
    ) {
        self.sessionID = sessionID
        self.messageCounter = messageCounter
        self.sourceNodeID = sourceNodeID
        self.destination = destination
        self.sessionType = sessionType
        self.isControlMessage = isControlMessage
        self.privacy = privacy
        self.messageExtensions = messageExtensions
    }

    /// True for the unsecured session (session ID 0, unicast; spec 4.13.2.1).
    public var isUnsecured: Bool { sessionID == 0 && sessionType == .unicast }

    /// The security flags octet, as used in the header and in the AES-CCM nonce.
    public var securityFlags: UInt8 {
        var f = sessionType.rawValue
        if privacy { f |= 0x80 }
        if isControlMessage { f |= 0x40 }
        if messageExtensions != nil { f |= 0x20 }
        return f
    }

    /// The message flags octet (version, S, DSIZ).
    public var messageFlags: UInt8 {
        var f = (version & 0x0F) << 4
        if sourceNodeID != nil { f |= 0x04 }
        switch destination {
        case .none: break
        case .node: f |= 0x01
        case .group: f |= 0x02
        }
        return f
    }

    /// Appends the header's wire form to `out`.
    public func encode(into out: inout [UInt8]) throws(MessageCodecError) {
        out.append(messageFlags)
        out.appendLE(sessionID)
        out.append(securityFlags)
        out.appendLE(messageCounter)
        if let s = sourceNodeID { out.appendLE(s) }
        switch destination {
        case .none: break
        case .node(let n): out.appendLE(n)
        case .group(let g): out.appendLE(g)
        }
        if let ext = messageExtensions {
            guard ext.count <= Int(UInt16.max) else { throw .tooLarge("message extensions") }
            out.appendLE(UInt16(ext.count))
            out.append(contentsOf: ext)
        }
    }

    public func encoded() throws(MessageCodecError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        try encode(into: &out)
        return out
    }

    /// Decodes the header at the start of `datagram`. Returns the header and its
    /// length in bytes (the payload starts there).
    public static func decode(_ datagram: [UInt8]) throws(MessageCodecError) -> (header: MessageHeader, length: Int) {
        var c = ByteCursor(datagram)
        let flags = try c.readUInt8("message flags")
        let version = flags >> 4
        guard version == 0 else { throw .unsupportedVersion(version) }
        let hasSource = flags & 0x04 != 0
        let dsiz = flags & 0x03
        guard dsiz != 3 else { throw .reservedDestinationSize }
        let sessionID = try c.readUInt16("session ID")
        let security = try c.readUInt8("security flags")
        guard let sessionType = SessionType(rawValue: security & 0x03) else {
            throw .reservedSessionType(security & 0x03)
        }
        let counter = try c.readUInt32("message counter")
        var header = MessageHeader(
            sessionID: sessionID, messageCounter: counter, sessionType: sessionType,
            isControlMessage: security & 0x40 != 0, privacy: security & 0x80 != 0)
        if hasSource { header.sourceNodeID = try c.readUInt64("source node ID") }
        switch dsiz {
        case 1: header.destination = .node(try c.readUInt64("destination node ID"))
        case 2: header.destination = .group(try c.readUInt16("destination group ID"))
        default: break
        }
        if security & 0x20 != 0 {
            let length = try c.readUInt16("message extensions length")
            header.messageExtensions = try c.readBytes(Int(length), "message extensions")
        }
        // Field combinations the spec rules out (4.4.1.2, 4.15.1).
        if sessionType == .group {
            guard hasSource else { throw .invalidHeader("group message without a source node ID") }
            guard dsiz == 2 else { throw .invalidHeader("group message without a group destination") }
        } else if dsiz == 2 {
            throw .invalidHeader("unicast message addressed to a group")
        }
        return (header, c.offset)
    }
}
