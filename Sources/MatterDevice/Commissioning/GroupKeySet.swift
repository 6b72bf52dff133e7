import Foundation
import MatterModel
import MatterTLV

// Group keys of the Group Key Management cluster (Core spec 11.2): key sets with up to three
// epoch keys, and the map from group IDs to key sets. Key set 0 of every fabric is the
// Identity Protection Key AddNOC installs (11.18.6.8).

/// GroupKeySecurityPolicyEnum (11.2.5.2).
public enum GroupKeySecurityPolicy: UInt8, Sendable, Hashable, Codable {
    case trustFirst = 0
    case cacheAndSync = 1
}

/// One epoch key: 16 bytes, in force from `startTime` (microseconds since the Matter epoch).
public struct EpochKey: Sendable, Hashable, Codable {
    public var key: Data
    public var startTime: UInt64

    public init(key: Data, startTime: UInt64) {
        self.key = key
        self.startTime = startTime
    }
}

/// One fabric's GroupKeySetStruct (11.2.5.5).
public struct GroupKeySet: Sendable, Hashable, Codable {
    public static let identityProtectionKeySetID: UInt16 = 0
    public static let epochKeyLength = 16

    public var fabricIndex: FabricIndex
    public var id: UInt16
    public var policy: GroupKeySecurityPolicy
    /// One to three keys, ascending start times.
    public var epochKeys: [EpochKey]

    public init(fabricIndex: FabricIndex, id: UInt16, policy: GroupKeySecurityPolicy, epochKeys: [EpochKey]) {
        self.fabricIndex = fabricIndex
        self.id = id
        self.policy = policy
        self.epochKeys = epochKeys
    }

    /// The IPK key set: TrustFirst, one epoch key from time 0.
    static func identityProtection(fabricIndex: FabricIndex, epochKey: Data) -> GroupKeySet {
        GroupKeySet(
            fabricIndex: fabricIndex, id: identityProtectionKeySetID, policy: .trustFirst,
            epochKeys: [EpochKey(key: epochKey, startTime: 0)])
    }

    /// The struct as KeySetRead returns it: start times, never the keys (11.2.7.2).
    var readResponseTLV: TLVValue {
        var members: [TLVElement] = [
            .context(0, .uint(id)),
            .context(1, .uint(policy.rawValue)),
        ]
        for slot in 0..<3 {
            members.append(.context(UInt8(2 + 2 * slot), .null))
            let start: TLVValue = slot < epochKeys.count ? .unsigned(epochKeys[slot].startTime) : .null
            members.append(.context(UInt8(3 + 2 * slot), start))
        }
        return .structure(members)
    }

    /// Decodes a KeySetWrite GroupKeySetStruct, with the checks of 11.2.7.1. The
    /// error is the status the command fails with.
    init(written value: TLVValue, fabricIndex: FabricIndex, cacheAndSyncSupported: Bool) throws(InteractionStatus) {
        guard case .structure = value, let id = value[context: 0]?.unsignedValue, let rawID = UInt16(exactly: id),
            let rawPolicy = value[context: 1]?.unsignedValue,
            let policy = GroupKeySecurityPolicy(rawValue: UInt8(clamping: rawPolicy))
        else {
            throw InteractionStatus(.invalidCommand)
        }
        // The IPK is only set through AddNOC.
        guard rawID != Self.identityProtectionKeySetID else { throw InteractionStatus(.invalidCommand) }
        if policy == .cacheAndSync && !cacheAndSyncSupported { throw InteractionStatus(.constraintError) }

        var keys: [EpochKey] = []
        var previousStart: UInt64?
        for slot in 0..<3 {
            let keyValue = value[context: UInt8(2 + 2 * slot)] ?? .null
            let startValue = value[context: UInt8(3 + 2 * slot)] ?? .null
            if keyValue.isNull && startValue.isNull {
                // Key 0 is mandatory; a later key may not follow a missing one.
                if slot == 0 { throw InteractionStatus(.invalidCommand) }
                for later in (slot + 1)..<3 where !(value[context: UInt8(2 + 2 * later)] ?? .null).isNull {
                    throw InteractionStatus(.invalidCommand)
                }
                break
            }
            guard case .bytes(let key) = keyValue, let start = startValue.unsignedValue else {
                throw InteractionStatus(.invalidCommand)
            }
            guard key.count == Self.epochKeyLength else { throw InteractionStatus(.constraintError) }
            // Key 0 must start after the epoch; later keys strictly after their predecessor.
            if slot == 0 && start == 0 { throw InteractionStatus(.invalidCommand) }
            if let previousStart, start <= previousStart { throw InteractionStatus(.invalidCommand) }
            previousStart = start
            keys.append(EpochKey(key: Data(key), startTime: start))
        }
        self.init(fabricIndex: fabricIndex, id: rawID, policy: policy, epochKeys: keys)
    }
}

/// One GroupKeyMapStruct entry (11.2.5.3).
public struct GroupKeyMapEntry: Sendable, Hashable, Codable {
    public var fabricIndex: FabricIndex
    public var groupID: UInt16
    public var keySetID: UInt16

    public init(fabricIndex: FabricIndex, groupID: UInt16, keySetID: UInt16) {
        self.fabricIndex = fabricIndex
        self.groupID = groupID
        self.keySetID = keySetID
    }

    var tlv: TLVValue {
        .structure([
            .context(1, .uint(groupID)), .context(2, .uint(keySetID)), .context(FieldDefinition.fabricIndexTag, .uint(fabricIndex)),
        ])
    }

    init?(tlv: TLVValue, fabricIndex: FabricIndex) {
        guard let group = tlv[context: 1]?.unsignedValue, let groupID = UInt16(exactly: group),
            let set = tlv[context: 2]?.unsignedValue, let keySetID = UInt16(exactly: set)
        else { return nil }
        self.init(fabricIndex: fabricIndex, groupID: groupID, keySetID: keySetID)
    }
}
