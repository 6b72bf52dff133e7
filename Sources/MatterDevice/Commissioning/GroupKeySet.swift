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
    var readResponse: Clusters.GroupKeyManagement.GroupKeySetStruct {
        let starts = (0..<3).map { slot in slot < epochKeys.count ? epochKeys[slot].startTime : nil }
        return Clusters.GroupKeyManagement.GroupKeySetStruct(
            groupKeySetID: id, groupKeySecurityPolicy: policy == .cacheAndSync ? .cacheAndSync : .trustFirst,
            epochKey0: nil, epochStartTime0: starts[0], epochKey1: nil, epochStartTime1: starts[1], epochKey2: nil,
            epochStartTime2: starts[2])
    }

    /// A KeySetWrite GroupKeySetStruct, with the checks of 11.2.7.1. The error is the status
    /// the command fails with.
    init(
        written value: Clusters.GroupKeyManagement.GroupKeySetStruct, fabricIndex: FabricIndex, cacheAndSyncSupported: Bool
    ) throws(InteractionStatus) {
        // The IPK is only set through AddNOC.
        guard value.groupKeySetID != Self.identityProtectionKeySetID else { throw InteractionStatus(.invalidCommand) }
        let policy: GroupKeySecurityPolicy = value.groupKeySecurityPolicy == .cacheAndSync ? .cacheAndSync : .trustFirst
        if policy == .cacheAndSync && !cacheAndSyncSupported { throw InteractionStatus(.constraintError) }

        let slots = [
            (value.epochKey0, value.epochStartTime0), (value.epochKey1, value.epochStartTime1), (value.epochKey2, value.epochStartTime2),
        ]
        var keys: [EpochKey] = []
        var previousStart: UInt64?
        for (slot, (key, start)) in slots.enumerated() {
            if key == nil && start == nil {
                // Key 0 is mandatory; a later key may not follow a missing one.
                if slot == 0 { throw InteractionStatus(.invalidCommand) }
                if slots[(slot + 1)...].contains(where: { $0.0 != nil }) { throw InteractionStatus(.invalidCommand) }
                break
            }
            guard let key, let start else { throw InteractionStatus(.invalidCommand) }
            guard key.count == Self.epochKeyLength else { throw InteractionStatus(.constraintError) }
            // Key 0 must start after the epoch; later keys strictly after their predecessor.
            if slot == 0 && start == 0 { throw InteractionStatus(.invalidCommand) }
            if let previousStart, start <= previousStart { throw InteractionStatus(.invalidCommand) }
            previousStart = start
            keys.append(EpochKey(key: key, startTime: start))
        }
        self.init(fabricIndex: fabricIndex, id: value.groupKeySetID, policy: policy, epochKeys: keys)
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
