import Foundation
import MatterModel
import MatterProtocol
import MatterTLV

// The controller's side of group messaging (Core spec 4.16): setting a node up for a group
// (key set, GroupKeyMap, Groups membership, an ACL entry for the group) over its CASE
// session, and sending one Invoke that every member acts on, as an unanswered IPv6 multicast.

/// A group key set as GroupKeyManagement's KeySetWrite carries it (spec 11.2.6.4), with one
/// epoch key and the TrustFirst policy.
public struct GroupKeySet: Sendable, Hashable {
    public var keySetID: UInt16
    public var epochKey: [UInt8]
    /// Epoch start time, microseconds since the Matter epoch.
    public var epochStartTime: UInt64

    public init(keySetID: UInt16, epochKey: [UInt8], epochStartTime: UInt64) {
        self.keySetID = keySetID
        self.epochKey = epochKey
        self.epochStartTime = epochStartTime
    }
}

extension MatterController {
    static let groupKeyManagement = Clusters.GroupKeyManagement.id
    static let accessControl = Clusters.AccessControl.id

    /// Makes `endpoints` of `node` members of `groupID` under `keySet`, keeping what the node
    /// already has: KeySetWrite, the fabric's GroupKeyMap with this group's entry added,
    /// AddGroup on each endpoint, and an ACL entry granting the group Operate (group messages
    /// carry no CASE subject; spec 6.6.2.1.2). Idempotent.
    public func joinGroup(
        _ node: NodeID, groupID: UInt16, name: String, keySet: GroupKeySet,
        endpoints: [EndpointNumber]
    ) async throws {
        try await withClient(node) { client in
            let set = Clusters.GroupKeyManagement.GroupKeySetStruct(
                groupKeySetID: keySet.keySetID, groupKeySecurityPolicy: .trustFirst, epochKey0: Data(keySet.epochKey),
                epochStartTime0: keySet.epochStartTime, epochKey1: nil, epochStartTime1: nil, epochKey2: nil, epochStartTime2: nil)
            try await client.invoke(Clusters.GroupKeyManagement.Commands.KeySetWrite(groupKeySet: set))

            // GroupKeyMap (fabric-scoped list): a write replaces this fabric's entries.
            let mapPath = AttributePath(
                endpoint: 0, cluster: Self.groupKeyManagement, attribute: Clusters.GroupKeyManagement.Attribute.groupKeyMap)
            var map = ((try await client.read(mapPath)).members ?? []).compactMap { element -> (UInt16, UInt16)? in
                guard let group = element.value[context: 1]?.uintValue, let set = element.value[context: 2]?.uintValue else { return nil }
                return (UInt16(truncatingIfNeeded: group), UInt16(truncatingIfNeeded: set))
            }
            if !map.contains(where: { $0.0 == groupID && $0.1 == keySet.keySetID }) {
                map.removeAll { $0.0 == groupID }
                map.append((groupID, keySet.keySetID))
                try await client.write(
                    mapPath,
                    value: .array(
                        map.map { entry in
                            TLVElement(
                                .structure([
                                    TLVElement(tag: .context(1), .unsigned(UInt64(entry.0))),
                                    TLVElement(tag: .context(2), .unsigned(UInt64(entry.1))),
                                ]))
                        }))
            }

            for endpoint in endpoints {
                let addGroup = Clusters.Groups.Commands.AddGroup(groupID: groupID, groupName: Self.groupName(name))
                let status = try await client.invoke(addGroup, endpoint: endpoint).status
                guard status == 0 else {
                    throw ControllerError.invalidArgument(
                        "AddGroup 0x\(String(groupID, radix: 16)) on endpoint \(endpoint) of node "
                            + "0x\(String(node, radix: 16)): status 0x\(String(status, radix: 16))")
                }
            }

            // The ACL (fabric-scoped list, written whole): add Operate for the group once.
            let aclPath = AttributePath(endpoint: 0, cluster: Self.accessControl, attribute: Clusters.AccessControl.Attribute.acl)
            let entries = try await Self.accessControlList(client, aclPath, node: node)
            let granted = entries.contains { $0.authMode == .group && ($0.subjects ?? []).contains(UInt64(groupID)) }
            if !granted {
                let grant = AccessControlEntry(fabricIndex: 0, privilege: .operate, authMode: .group, subjects: [UInt64(groupID)])
                try await client.write(aclPath, value: .array((entries + [grant]).map { TLVElement($0.writtenTLV) }))
            }
        }
    }

    /// This fabric's ACL entries on `node`, decoded (the node fills in their fabric index).
    static func accessControlList(
        _ client: InteractionClient, _ path: AttributePath, node: NodeID
    ) async throws -> [AccessControlEntry] {
        try ((try await client.read(path)).members ?? []).map { element in
            guard let entry = AccessControlEntry(tlv: element.value, fabricIndex: 0) else {
                throw ControllerError.invalidArgument("node 0x\(String(node, radix: 16)): an ACL entry is not an AccessControlEntryStruct")
            }
            return entry
        }
    }

    /// GroupName holds at most 16 bytes of UTF-8 (spec 1.3.7.1): a longer name is cut at the
    /// last whole character that fits.
    static func groupName(_ name: String) -> String {
        var cut = ""
        for character in name {
            guard cut.utf8.count + String(character).utf8.count <= 16 else { break }
            cut.append(character)
        }
        return cut
    }

    /// Takes `endpoints` of `node` out of `groupID` (RemoveGroup) and drops the group's
    /// GroupKeyMap entry and ACL grant.
    public func leaveGroup(_ node: NodeID, groupID: UInt16, endpoints: [EndpointNumber]) async throws {
        try await withClient(node) { client in
            for endpoint in endpoints {
                _ = try await client.invoke(Clusters.Groups.Commands.RemoveGroup(groupID: groupID), endpoint: endpoint)
            }
            let mapPath = AttributePath(
                endpoint: 0, cluster: Self.groupKeyManagement, attribute: Clusters.GroupKeyManagement.Attribute.groupKeyMap)
            let map = (try await client.read(mapPath)).members ?? []
            let keptMap = map.filter { $0.value[context: 1]?.uintValue != UInt64(groupID) }
            if keptMap.count != map.count {
                try await client.write(
                    mapPath,
                    value: .array(
                        keptMap.map { element in
                            TLVElement(
                                .structure((element.value.members ?? []).filter { $0.tag != .context(FieldDefinition.fabricIndexTag) }))
                        }))
            }
            let aclPath = AttributePath(endpoint: 0, cluster: Self.accessControl, attribute: Clusters.AccessControl.Attribute.acl)
            let acl = try await Self.accessControlList(client, aclPath, node: node)
            let keptACL = acl.filter { !($0.authMode == .group && ($0.subjects ?? []).contains(UInt64(groupID))) }
            if keptACL.count != acl.count {
                try await client.write(aclPath, value: .array(keptACL.map { TLVElement($0.writtenTLV) }))
            }
        }
    }

    /// Sends `command` of `cluster` to every member of `groupID` as one group message:
    /// sealed with the group's operational key, to FF35:0040:FD<fabric>00:<group>, port 5540,
    /// on each interface this controller's binding allows. No member answers (spec 8.8.2:
    /// group Invokes suppress the response). Returns the interfaces it went out on; empty
    /// when none can carry multicast (e.g. a controller bound to loopback).
    public func sendGroupInvoke(
        groupID: UInt16, keySet: GroupKeySet, cluster: ClusterID, command: CommandID,
        fields: TLVValue, counter: UInt32
    ) async throws -> [String] {
        let key = try GroupOperationalKey(
            fabricIndex: 1, keySetID: keySet.keySetID, groupIDs: [groupID],
            epochKey: keySet.epochKey, compressedFabricID: try identity.compressedFabricID())
        let invoke = InvokeRequestMessage(
            suppressResponse: true,
            invokeRequests: [
                CommandDataIB(path: CommandPathIB(endpoint: nil, cluster: cluster, command: command), fields: fields)
            ])
        let protocolHeader = ProtocolHeader(
            isInitiator: true, opcode: InteractionOpcode.invokeRequest.rawValue,
            exchangeID: UInt16.random(in: 0 ... .max), protocolID: .interactionModel)
        let header = MessageHeader(
            sessionID: key.sessionID, messageCounter: counter, sourceNodeID: identity.nodeID,
            destination: .group(groupID), sessionType: .group)
        let datagram = try key.seal(header: header, protocolMessage: protocolHeader.encoded(payload: invoke.encoded()))
        return await transport.sendGroupMessage(datagram, to: GroupMulticast.addressString(fabricID: identity.fabricID, groupID: groupID))
    }
}
