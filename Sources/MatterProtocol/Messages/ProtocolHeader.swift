// Protocol header (Matter Core spec 4.4.3): the first bytes of the (decrypted)
// payload, naming the exchange, protocol and opcode and carrying MRP's flags.

/// Exchange flags (spec 4.4.3.1).
public struct ExchangeFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// I: sent by the exchange's initiator.
    public static let initiator = ExchangeFlags(rawValue: 0x01)
    /// A: the Acknowledged Message Counter field is present.
    public static let acknowledgement = ExchangeFlags(rawValue: 0x02)
    /// R: the sender wants an acknowledgement (MRP).
    public static let reliability = ExchangeFlags(rawValue: 0x04)
    /// SX: secured extensions present.
    public static let securedExtensions = ExchangeFlags(rawValue: 0x08)
    /// V: the Protocol Vendor ID field is present.
    public static let vendor = ExchangeFlags(rawValue: 0x10)
}

/// The protocol (payload) header.
public struct ProtocolHeader: Sendable, Hashable {
    public var isInitiator: Bool
    public var needsAcknowledgement: Bool
    /// Message counter this message acknowledges (A flag).
    public var acknowledgedMessageCounter: UInt32?
    public var opcode: UInt8
    public var exchangeID: UInt16
    public var protocolID: ProtocolID
    public var securedExtensions: [UInt8]?

    public init(
        isInitiator: Bool, needsAcknowledgement: Bool = false, acknowledgedMessageCounter: UInt32? = nil,
        opcode: UInt8, exchangeID: UInt16, protocolID: ProtocolID, securedExtensions: [UInt8]? = nil
    ) {
        self.isInitiator = isInitiator
        self.needsAcknowledgement = needsAcknowledgement
        self.acknowledgedMessageCounter = acknowledgedMessageCounter
        self.opcode = opcode
        self.exchangeID = exchangeID
        self.protocolID = protocolID
        self.securedExtensions = securedExtensions
    }

    public var exchangeFlags: ExchangeFlags {
        var f: ExchangeFlags = []
        if isInitiator { f.insert(.initiator) }
        if acknowledgedMessageCounter != nil { f.insert(.acknowledgement) }
        if needsAcknowledgement { f.insert(.reliability) }
        if securedExtensions != nil { f.insert(.securedExtensions) }
        if protocolID.vendorID != 0 { f.insert(.vendor) }
        return f
    }

    public func encode(into out: inout [UInt8]) throws(MessageCodecError) {
        out.append(exchangeFlags.rawValue)
        out.append(opcode)
        out.appendLE(exchangeID)
        if protocolID.vendorID != 0 { out.appendLE(protocolID.vendorID) }
        out.appendLE(protocolID.protocolNumber)
        if let ack = acknowledgedMessageCounter { out.appendLE(ack) }
        if let ext = securedExtensions {
            guard ext.count <= Int(UInt16.max) else { throw .tooLarge("secured extensions") }
            out.appendLE(UInt16(ext.count))
            out.append(contentsOf: ext)
        }
    }

    /// Header followed by `payload`.
    public func encoded(payload: [UInt8] = []) throws(MessageCodecError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(12 + payload.count)
        try encode(into: &out)
        out.append(contentsOf: payload)
        return out
    }

    /// Decodes the protocol header at the start of `bytes`; returns it and the
    /// application payload that follows.
    public static func decode(_ bytes: [UInt8]) throws(MessageCodecError) -> (header: ProtocolHeader, payload: [UInt8]) {
        var c = ByteCursor(bytes)
        let flags = ExchangeFlags(rawValue: try c.readUInt8("exchange flags"))
        let opcode = try c.readUInt8("protocol opcode")
        let exchangeID = try c.readUInt16("exchange ID")
        let vendor: UInt16 = flags.contains(.vendor) ? try c.readUInt16("protocol vendor ID") : 0
        let protocolNumber = try c.readUInt16("protocol ID")
        let ack: UInt32? = flags.contains(.acknowledgement) ? try c.readUInt32("acknowledged message counter") : nil
        var ext: [UInt8]? = nil
        if flags.contains(.securedExtensions) {
            let length = try c.readUInt16("secured extensions length")
            ext = try c.readBytes(Int(length), "secured extensions")
        }
        let header = ProtocolHeader(
            isInitiator: flags.contains(.initiator), needsAcknowledgement: flags.contains(.reliability),
            acknowledgedMessageCounter: ack, opcode: opcode, exchangeID: exchangeID,
            protocolID: ProtocolID(vendorID: vendor, protocolNumber), securedExtensions: ext)
        return (header, c.readRest())
    }
}
