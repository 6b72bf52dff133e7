import MatterModel
import MatterProtocol

extension MatterNode {
    /// Group messaging as the node's state has it now (Core spec 4.16): an operational key
    /// per epoch key of every key set the GroupKeyMap uses, with the groups mapped to it, and
    /// the IPv6 multicast address of every group an endpoint is a member of.
    public var groupcast: (keys: [GroupOperationalKey], multicastAddresses: Set<String>) {
        let commissioning = runtime.commissioning
        var keys: [GroupOperationalKey] = []
        var addresses: Set<String> = []
        for fabric in commissioning.fabrics.fabrics {
            let mapped = commissioning.groupKeyMap.filter { $0.fabricIndex == fabric.index }
            for (keySetID, entries) in Dictionary(grouping: mapped, by: { (entry: GroupKeyMapEntry) in entry.keySetID }) {
                guard let set = commissioning.keySet(keySetID, fabric: fabric.index) else { continue }
                let groups = Set(entries.map { $0.groupID })
                for epoch in set.epochKeys {
                    if let key = try? GroupOperationalKey(
                        fabricIndex: fabric.index, keySetID: keySetID, groupIDs: groups,
                        epochKey: [UInt8](epoch.key), compressedFabricID: fabric.compressedFabricID)
                    {
                        keys.append(key)
                    }
                }
            }
            for entry in commissioning.groupTable where entry.fabricIndex == fabric.index {
                addresses.insert(GroupMulticast.addressString(fabricID: fabric.fabricID, groupID: entry.groupID))
            }
        }
        return (keys, addresses)
    }
}
