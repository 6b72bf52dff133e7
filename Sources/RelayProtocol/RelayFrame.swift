import MatterTLV

/// One binary WebSocket message between the relay and a device or controller:
/// an anonymous TLV structure (Matter Core spec Appendix A encoding) whose first
/// member, context tag 0, says which kind of frame it is.
///
/// Interaction Model messages ride inside `.message` frames unchanged: the opcode
/// and the payload are exactly what an exchange on a secure session would carry
/// (protocol 0x0001), so both ends run the same IM codecs and engine as over UDP.
///
/// Addressing of a `.message`:
/// * controller → relay: `deviceID` names the target device, `session` is absent;
/// * relay → device: `session` names the controller connection, `deviceID` is absent;
/// * device → relay: `session` names the controller connection to reach;
/// * relay → controller: `deviceID` names the device that sent it.
///
/// An exchange is identified, as in Matter (spec 4.10), by its ID together with
/// who initiated it: `fromInitiator` is set on messages the exchange's initiator
/// sends, like the I flag of a Matter exchange header.
public enum RelayFrame: Sendable, Hashable {
    /// Relay → client, once the connection is registered: only then can traffic flow.
    case hello(RelayHello)
    /// An Interaction Model message on an exchange.
    case message(RelayMessage)
    /// Relay → client: a message the client sent could not be delivered.
    case failure(RelayFailure)
    /// Relay → controller: a device of the home came online or went offline.
    case presence(RelayPresence)
}

/// What the relay tells a client about itself once it is registered.
public struct RelayHello: Sendable, Hashable {
    public var homeID: String
    /// The device's own ID on a device connection; nil on a controller connection.
    public var deviceID: String?
    /// The session ID the relay gave a controller connection (devices address it).
    public var session: UInt32?

    public init(homeID: String, deviceID: String? = nil, session: UInt32? = nil) {
        self.homeID = homeID
        self.deviceID = deviceID
        self.session = session
    }
}

/// One Interaction Model message on an exchange, with its relay addressing.
public struct RelayMessage: Sendable, Hashable {
    public var deviceID: String?
    public var session: UInt32?
    public var exchangeID: UInt32
    /// Sent by the exchange's initiator (the I flag of Matter's exchange header).
    public var fromInitiator: Bool
    /// The Interaction Model opcode (`InteractionOpcode`).
    public var opcode: UInt8
    /// The IM message payload (a TLV structure), as sent on a Matter exchange.
    public var payload: [UInt8]

    public init(deviceID: String? = nil, session: UInt32? = nil, exchangeID: UInt32, fromInitiator: Bool, opcode: UInt8, payload: [UInt8]) {
        self.deviceID = deviceID
        self.session = session
        self.exchangeID = exchangeID
        self.fromInitiator = fromInitiator
        self.opcode = opcode
        self.payload = payload
    }
}

/// Why the relay could not deliver a message.
public enum RelayFailureReason: UInt16, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// No such device in the sender's home (another home's devices are unknown too).
    case unknownDevice = 404
    /// The controller connection the device answered is gone.
    case sessionGone = 410
    /// The receiver's outbound queue is full.
    case overloaded = 429
    /// The device is registered but holds no connection to the relay.
    case deviceOffline = 503

    public var description: String {
        switch self {
        case .unknownDevice: "unknown device"
        case .sessionGone: "controller session gone"
        case .overloaded: "receiver overloaded"
        case .deviceOffline: "device offline"
        }
    }
}

/// A message the relay could not deliver, addressed like that message was
/// (device ID or session, exchange ID and its initiator flag), so its sender
/// can find the exchange to fail.
public struct RelayFailure: Sendable, Hashable {
    public var deviceID: String?
    public var session: UInt32?
    public var exchangeID: UInt32
    /// The undelivered message's own initiator flag.
    public var fromInitiator: Bool
    public var reason: RelayFailureReason

    public init(deviceID: String? = nil, session: UInt32? = nil, exchangeID: UInt32, fromInitiator: Bool, reason: RelayFailureReason) {
        self.deviceID = deviceID
        self.session = session
        self.exchangeID = exchangeID
        self.fromInitiator = fromInitiator
        self.reason = reason
    }
}

/// A device's reachability through the relay.
public struct RelayPresence: Sendable, Hashable {
    public var deviceID: String
    public var online: Bool

    public init(deviceID: String, online: Bool) {
        self.deviceID = deviceID
        self.online = online
    }
}

/// Why bytes are not a relay frame.
public enum RelayFrameError: Error, Sendable, Hashable, CustomStringConvertible {
    case notTLV(TLVError)
    case notAStructure
    case unknownKind(UInt64)
    case missingField(String)
    case invalidField(String)

    public var description: String {
        switch self {
        case .notTLV(let e): "not TLV: \(e)"
        case .notAStructure: "not a TLV structure"
        case .unknownKind(let k): "unknown frame kind \(k)"
        case .missingField(let f): "missing \(f)"
        case .invalidField(let f): "invalid \(f)"
        }
    }
}

extension RelayFrame {
    /// Context tags of the envelope's members.
    enum Tag {
        static let kind: UInt8 = 0
        static let deviceID: UInt8 = 1
        static let session: UInt8 = 2
        static let exchangeID: UInt8 = 3
        static let fromInitiator: UInt8 = 4
        static let opcode: UInt8 = 5
        static let payload: UInt8 = 6
        static let reason: UInt8 = 7
        static let online: UInt8 = 8
        static let homeID: UInt8 = 9
    }

    enum Kind: UInt8 {
        case hello = 0
        case message = 1
        case failure = 2
        case presence = 3
    }

    /// Longest device or home ID a frame may carry.
    public static let maxIdentifierLength = 64

    /// The frame as TLV bytes.
    public func encoded() -> [UInt8] {
        var members: [TLVElement] = []
        func add(_ tag: UInt8, _ value: TLVValue?) {
            if let value { members.append(.context(tag, value)) }
        }
        switch self {
        case .hello(let h):
            add(Tag.kind, .unsigned(UInt64(Kind.hello.rawValue)))
            add(Tag.deviceID, h.deviceID.map { .utf8($0) })
            add(Tag.session, h.session.map { .unsigned(UInt64($0)) })
            add(Tag.homeID, .utf8(h.homeID))
        case .message(let m):
            add(Tag.kind, .unsigned(UInt64(Kind.message.rawValue)))
            add(Tag.deviceID, m.deviceID.map { .utf8($0) })
            add(Tag.session, m.session.map { .unsigned(UInt64($0)) })
            add(Tag.exchangeID, .unsigned(UInt64(m.exchangeID)))
            add(Tag.fromInitiator, .bool(m.fromInitiator))
            add(Tag.opcode, .unsigned(UInt64(m.opcode)))
            add(Tag.payload, .bytes(m.payload))
        case .failure(let f):
            add(Tag.kind, .unsigned(UInt64(Kind.failure.rawValue)))
            add(Tag.deviceID, f.deviceID.map { .utf8($0) })
            add(Tag.session, f.session.map { .unsigned(UInt64($0)) })
            add(Tag.exchangeID, .unsigned(UInt64(f.exchangeID)))
            add(Tag.fromInitiator, .bool(f.fromInitiator))
            add(Tag.reason, .unsigned(UInt64(f.reason.rawValue)))
        case .presence(let p):
            add(Tag.kind, .unsigned(UInt64(Kind.presence.rawValue)))
            add(Tag.deviceID, .utf8(p.deviceID))
            add(Tag.online, .bool(p.online))
        }
        return TLVElement(.structure(members)).encoded()
    }

    /// Decodes a frame; any deviation from the layout is a typed error, never a trap.
    public init(decoding bytes: some Collection<UInt8>) throws(RelayFrameError) {
        let element: TLVElement
        do throws(TLVError) {
            // Frames are flat: a shallow depth limit keeps hostile nesting cheap.
            element = try TLVElement.decode(bytes, maxDepth: 4)
        } catch {
            throw .notTLV(error)
        }
        guard case .structure = element.value else { throw .notAStructure }
        let fields = Fields(element.value)
        let kindValue = try fields.uint(Tag.kind, "kind", max: UInt64(UInt8.max))
        guard let kindRaw = kindValue, let kind = Kind(rawValue: UInt8(kindRaw)) else {
            throw kindValue.map { .unknownKind($0) } ?? .missingField("kind")
        }
        switch kind {
        case .hello:
            guard let homeID = try fields.identifier(Tag.homeID, "homeID") else { throw .missingField("homeID") }
            self = .hello(
                RelayHello(
                    homeID: homeID, deviceID: try fields.identifier(Tag.deviceID, "deviceID"),
                    session: try fields.uint(Tag.session, "session", max: UInt64(UInt32.max)).map { UInt32($0) }))
        case .message:
            guard let exchange = try fields.uint(Tag.exchangeID, "exchangeID", max: UInt64(UInt32.max)) else {
                throw .missingField("exchangeID")
            }
            guard let fromInitiator = try fields.bool(Tag.fromInitiator, "fromInitiator") else { throw .missingField("fromInitiator") }
            guard let opcode = try fields.uint(Tag.opcode, "opcode", max: UInt64(UInt8.max)) else { throw .missingField("opcode") }
            guard let payloadValue = fields[Tag.payload] else { throw .missingField("payload") }
            guard case .bytes(let payload) = payloadValue else { throw .invalidField("payload") }
            self = .message(
                RelayMessage(
                    deviceID: try fields.identifier(Tag.deviceID, "deviceID"),
                    session: try fields.uint(Tag.session, "session", max: UInt64(UInt32.max)).map { UInt32($0) },
                    exchangeID: UInt32(exchange), fromInitiator: fromInitiator, opcode: UInt8(opcode), payload: payload))
        case .failure:
            guard let exchange = try fields.uint(Tag.exchangeID, "exchangeID", max: UInt64(UInt32.max)) else {
                throw .missingField("exchangeID")
            }
            guard let fromInitiator = try fields.bool(Tag.fromInitiator, "fromInitiator") else { throw .missingField("fromInitiator") }
            guard let reasonRaw = try fields.uint(Tag.reason, "reason", max: UInt64(UInt16.max)) else { throw .missingField("reason") }
            guard let reason = RelayFailureReason(rawValue: UInt16(reasonRaw)) else { throw .invalidField("reason") }
            self = .failure(
                RelayFailure(
                    deviceID: try fields.identifier(Tag.deviceID, "deviceID"),
                    session: try fields.uint(Tag.session, "session", max: UInt64(UInt32.max)).map { UInt32($0) },
                    exchangeID: UInt32(exchange), fromInitiator: fromInitiator, reason: reason))
        case .presence:
            guard let deviceID = try fields.identifier(Tag.deviceID, "deviceID") else { throw .missingField("deviceID") }
            guard let online = try fields.bool(Tag.online, "online") else { throw .missingField("online") }
            self = .presence(RelayPresence(deviceID: deviceID, online: online))
        }
    }

    /// Whether a string may name a home or a device: 1...64 characters of
    /// letters, digits, '.', '_' and '-'.
    public static func isValidIdentifier(_ s: String) -> Bool {
        guard !s.isEmpty, s.utf8.count <= maxIdentifierLength else { return false }
        return s.utf8.allSatisfy(identifierBytes.contains)
    }

    private static let identifierBytes = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-".utf8)
}

/// Typed access to the envelope's context-tagged members.
private struct Fields {
    let value: TLVValue

    init(_ value: TLVValue) { self.value = value }

    subscript(tag: UInt8) -> TLVValue? { value[context: tag] }

    func uint(_ tag: UInt8, _ name: String, max: UInt64) throws(RelayFrameError) -> UInt64? {
        guard let v = self[tag] else { return nil }
        guard case .unsigned(let n) = v, n <= max else { throw .invalidField(name) }
        return n
    }

    func bool(_ tag: UInt8, _ name: String) throws(RelayFrameError) -> Bool? {
        guard let v = self[tag] else { return nil }
        guard case .bool(let b) = v else { throw .invalidField(name) }
        return b
    }

    func identifier(_ tag: UInt8, _ name: String) throws(RelayFrameError) -> String? {
        guard let v = self[tag] else { return nil }
        guard case .utf8(let s) = v, RelayFrame.isValidIdentifier(s) else { throw .invalidField(name) }
        return s
    }
}
