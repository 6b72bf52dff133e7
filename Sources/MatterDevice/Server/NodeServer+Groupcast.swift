import MatterProtocol

extension NodeServer {
    /// Brings the exchange manager's group keys and the multicast groups the socket listens
    /// on in line with the node's stored state (Core spec 4.16): after boot and after every
    /// committed change (a key set written, the GroupKeyMap, a group added or removed).
    func followGroupcast() async {
        let (keys, addresses) = await node.groupcast
        await exchangeManager.setGroupKeys(keys)
        guard addresses != transport.multicastGroups else { return }
        let failures = await transport.setMulticastGroups(addresses)
        for (address, reason) in failures.sorted(by: { $0.key < $1.key }) {
            logger.warning("cannot listen on group address \(address): \(reason)")
        }
        logger.info("group messages: \(keys.count) key(s), listening on \(transport.multicastGroups.sorted())")
    }
}
