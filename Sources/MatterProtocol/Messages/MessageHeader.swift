// Message header (Matter Core spec 4.4.1): the part of every datagram that is
// never encrypted. For secure sessions its bytes are the AAD of the AES-CCM MIC.

/// Session type from the security flags (spec 4.4.1.4).
public enum SessionType: UInt8, Sendable, Hashable {
    case unicast = 0
    case group = 1
}

/// The security flags octet (spec 4.4.1.4): the P, C and MX flags over the session type.
enum SecurityFlag {
    static let privacy: UInt8 = 0x80
    static let control: UInt8 = 0x40
    static let messageExtensions: UInt8 = 0x20
    static let sessionTypeMask: UInt8 = 0x03
}

/// The message flags octet (spec 4.4.1.2): the version in the high nibble, the S flag, DSIZ.
enum MessageFlag {
    static let sourceNodeID: UInt8 = 0x04
    static let destinationSizeMask: UInt8 = 0x03
    static let versionMask: UInt8 = 0x0F
}

/// DSIZ, the destination field's size (spec 4.4.1.2); 3 is reserved.
enum DestinationSize: UInt8 {
    case none = 0x00
    case node = 0x01
    case group = 0x02
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
        if privacy { f |= SecurityFlag.privacy }
        if isControlMessage { f |= SecurityFlag.control }
        if messageExtensions != nil { f |= SecurityFlag.messageExtensions }
        return f
    }

    /// The message flags octet (version, S, DSIZ).
    public var messageFlags: UInt8 {
        var f = (version & MessageFlag.versionMask) << 4
        if sourceNodeID != nil { f |= MessageFlag.sourceNodeID }
        let size: DestinationSize =
            switch destination {
            case .none: .none
            case .node: .node
            case .group: .group
            }
        return f | size.rawValue
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
        let hasSource = flags & MessageFlag.sourceNodeID != 0
        guard let dsiz = DestinationSize(rawValue: flags & MessageFlag.destinationSizeMask) else { throw .reservedDestinationSize }
        let sessionID = try c.readUInt16("session ID")
        let security = try c.readUInt8("security flags")
        guard let sessionType = SessionType(rawValue: security & SecurityFlag.sessionTypeMask) else {
            throw .reservedSessionType(security & SecurityFlag.sessionTypeMask)
        }
        let counter = try c.readUInt32("message counter")
        var header = MessageHeader(
            sessionID: sessionID, messageCounter: counter, sessionType: sessionType,
            isControlMessage: security & SecurityFlag.control != 0, privacy: security & SecurityFlag.privacy != 0)
        if hasSource { header.sourceNodeID = try c.readUInt64("source node ID") }
        switch dsiz {
        case .node: header.destination = .node(try c.readUInt64("destination node ID"))
        case .group: header.destination = .group(try c.readUInt16("destination group ID"))
        case .none: break
        }
        if security & SecurityFlag.messageExtensions != 0 {
            let length = try c.readUInt16("message extensions length")
            header.messageExtensions = try c.readBytes(Int(length), "message extensions")
        }
        // Field combinations the spec rules out (4.4.1.2, 4.15.1).
        if sessionType == .group {
            guard hasSource else { throw .invalidHeader("group message without a source node ID") }
            guard dsiz == .group else { throw .invalidHeader("group message without a group destination") }
        } else if dsiz == .group {
            throw .invalidHeader("unicast message addressed to a group")
        }
        return (header, c.offset)
    }
}
