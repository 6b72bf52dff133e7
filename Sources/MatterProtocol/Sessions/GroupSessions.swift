import MatterCrypto
import MatterModel

// Group messaging (Matter Core spec 4.16): a group message is secured with an operational
// group key that every member derives from an epoch key of the group's key set. Its header
// carries the group session ID (a 16-bit hash of that key), the sender's node ID and the
// destination group ID; there is no session to set up, no acknowledgement and no response.

/// An operational group key this node accepts group messages under (spec 4.16.3.1): one
/// epoch key of a key set, with the groups the fabric's GroupKeyMap maps to that key set.
public struct GroupOperationalKey: Sendable, Hashable {
    public let fabricIndex: FabricIndex
    public let keySetID: UInt16
    /// The fabric's groups mapped to the key set: a message to any other group is not ours.
    public let groupIDs: Set<UInt16>
    /// Operational group key = Crypto_KDF(epoch key, compressed fabric ID, "GroupKey v1.0").
    public let key: [UInt8]
    /// Group session ID = Crypto_KDF(operational key, [], "GroupKeyHash", 2 bytes).
    public let sessionID: UInt16

    public init(
        fabricIndex: FabricIndex, keySetID: UInt16, groupIDs: Set<UInt16>, epochKey: [UInt8],
        compressedFabricID: UInt64
    ) throws(MatterCryptoError) {
        let compressed = (0..<8).map { UInt8(truncatingIfNeeded: compressedFabricID >> (56 - 8 * $0)) }
        self.fabricIndex = fabricIndex
        self.keySetID = keySetID
        self.groupIDs = groupIDs
        key = try FabricKeys.operationalGroupKey(epochKey: epochKey, compressedFabricID: compressed)
        sessionID = try FabricKeys.groupSessionID(operationalGroupKey: key)
    }

    /// Seals a group message (the sender's side, for controllers and tests): the nonce is
    /// security flags, counter and source node ID (spec 4.8.1.1), the header is the AAD.
    public func seal(header: MessageHeader, protocolMessage: [UInt8]) throws -> [UInt8] {
        guard let source = header.sourceNodeID, case .group = header.destination, header.sessionType == .group else {
            throw MessageCodecError.invalidHeader("a group message needs a source node ID and a group destination")
        }
        let headerBytes = try header.encoded()
        let nonce = SessionCipher.nonce(
            securityFlags: header.securityFlags, messageCounter: header.messageCounter,
            sourceNodeID: source)
        return headerBytes + (try AES128CCM(key: key).seal(protocolMessage, nonce: nonce, aad: headerBytes))
    }

    /// Opens a group datagram whose header is `header` (`headerLength` bytes); nil when this
    /// key did not seal it.
    func open(datagram: [UInt8], header: MessageHeader, headerLength: Int) -> [UInt8]? {
        guard let source = header.sourceNodeID, let cipher = try? AES128CCM(key: key) else { return nil }
        let nonce = SessionCipher.nonce(
            securityFlags: header.securityFlags, messageCounter: header.messageCounter,
            sourceNodeID: source)
        return try? cipher.open(Array(datagram[headerLength...]), nonce: nonce, aad: Array(datagram[..<headerLength]))
    }
}

/// Where a group's messages go on IPv6 (spec 2.5.6.2, Matter's IPv6 multicast address):
/// FF35:0040:FD<Fabric ID, 64 bits>00:<Group ID>, a unicast-prefix-based address on port 5540.
public enum GroupMulticast {
    public static let port = 5540

    public static func address(fabricID: UInt64, groupID: UInt16) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0x35, 0x00, 0x40, 0xFD]
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: fabricID >> UInt64(shift))) }
        bytes.append(0x00)
        bytes.append(UInt8(groupID >> 8))
        bytes.append(UInt8(groupID & 0xFF))
        return bytes
    }

    /// The address in text form, e.g. "ff35:40:fd00:0:0:0:1:101".
    public static func addressString(fabricID: UInt64, groupID: UInt16) -> String {
        let bytes = address(fabricID: fabricID, groupID: groupID)
        return stride(from: 0, to: 16, by: 2)
            .map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            .joined(separator: ":")
    }
}

/// The receive counter of one group sender (spec 4.6.5.2): per fabric, source node and
/// counter kind (data or control).
struct GroupPeer: Hashable {
    let fabricIndex: FabricIndex
    let sourceNodeID: UInt64
    let isControl: Bool
}

/// The largest message counter accepted from one group sender, as a node keeps it across
/// restarts: group counters are trust-first (spec 4.6.5.2), so a node that forgot them would
/// take a captured group message as the sender's first and act on it again.
public struct GroupPeerCounter: Sendable, Hashable, Codable {
    public var fabricIndex: FabricIndex
    public var sourceNodeID: UInt64
    public var isControl: Bool
    public var maxCounter: UInt32

    public init(fabricIndex: FabricIndex, sourceNodeID: UInt64, isControl: Bool, maxCounter: UInt32) {
        self.fabricIndex = fabricIndex
        self.sourceNodeID = sourceNodeID
        self.isControl = isControl
        self.maxCounter = maxCounter
    }

    var peer: GroupPeer { GroupPeer(fabricIndex: fabricIndex, sourceNodeID: sourceNodeID, isControl: isControl) }
}

/// Where an exchange manager keeps its group senders' counters (the node's state directory).
/// Called on the manager's actor, before the message that moved a counter is handed on, so
/// keep it quick (an append).
public protocol GroupCounterStore: Sendable {
    /// A sender's counter moved (or a first message from it set it).
    func groupCounterAdvanced(_ counter: GroupPeerCounter)
    /// The table lost senders (their fabric has no group key any more): this is all of it.
    func groupCountersReplaced(_ counters: [GroupPeerCounter])
}
