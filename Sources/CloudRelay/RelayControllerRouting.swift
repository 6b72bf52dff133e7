import RelayProtocol

/// Where a relay server's controller connections lead. The cloud relay routes them to
/// devices' WebSockets (`RelayHub`); a local hub forwards them over Matter CASE sessions
/// on the home's LAN (`LocalHub`). Controllers speak the same protocol to both.
package protocol RelayControllerRouting: AnyObject, Sendable {
    var connectedCounts: (devices: Int, controllers: Int) { get }
    /// Devices of a home reachable now.
    func onlineDevices(homeID: String) -> Set<String>
    func makePeer(role: RelayRole, homeID: String, deviceID: String?) -> RelayPeer
    /// Registers a controller connection and queues its hello and every device's presence.
    func attachController(_ peer: RelayPeer, hello: RelayHello, registered: [String])
    /// The same, counting `onlineElsewhere` (devices held by other relay instances) online.
    func attachController(_ peer: RelayPeer, hello: RelayHello, registered: [String], onlineElsewhere: Set<String>)
    /// Devices of a home reachable now, through this instance or any other sharing its store.
    func onlineDevicesEverywhere(homeID: String) async -> Set<String>
    func detachController(_ peer: RelayPeer)
    /// A message from a controller to one of its home's devices.
    func routeFromController(_ message: RelayMessage, from controller: RelayPeer) async
    /// A device was registered or removed: what was known about it is stale.
    func registrationChanged(homeID: String, deviceID: String)
}

extension RelayControllerRouting {
    /// A routing that keeps no answers about registrations (a local hub reaches its devices
    /// over Matter) has nothing to forget.
    package func registrationChanged(homeID: String, deviceID: String) {}

    /// A routing of one process has no other instances.
    package func attachController(_ peer: RelayPeer, hello: RelayHello, registered: [String], onlineElsewhere: Set<String>) {
        attachController(peer, hello: hello, registered: registered)
    }

    package func onlineDevicesEverywhere(homeID: String) async -> Set<String> { onlineDevices(homeID: homeID) }
}

extension RelayHub: RelayControllerRouting {}
