import MatterController

/// A count of what a `Home` holds at one moment: what a soak test watches for growth.
public struct HomeDiagnostics: Sendable, Hashable, Codable {
    /// CASE sessions of the home's controller (0 before it started).
    public var secureSessions: Int
    /// Unsecured sessions (handshakes in progress).
    public var unsecuredSessions: Int
    /// Subscriptions the home keeps, one per node and route (LAN, hub, relay).
    public var subscriptions: Int
    public var devices: Int
    /// Devices by `ConnectivityState` name (online, offline, partiallyOnline, unknown).
    public var connectivity: [String: Int]
    /// Datagrams the controller's message layer retransmitted and gave up on.
    public var retransmissions: UInt64
    public var deliveryFailures: UInt64
    /// Homes alive in this process (open, or closed and still held): more than the open
    /// ones means a closed home was not freed.
    public var homesAlive: Int
}

extension HomeEngine {
    func diagnostics() async -> HomeDiagnostics {
        var sessions = (secure: 0, unsecured: 0)
        var metrics = TransportMetricsSnapshot()
        if let controller = await runningController() {
            sessions = await controller.openSessions()
            let m = await controller.transportMetrics()
            metrics = TransportMetricsSnapshot(retransmissions: m.retransmissions, deliveryFailures: m.deliveryFailures)
        }
        var connectivity: [String: Int] = [:]
        for device in snapshot.devices.values {
            connectivity[device.sourceConnectivity.connectivityState.rawValue, default: 0] += 1
        }
        return HomeDiagnostics(
            secureSessions: sessions.secure, unsecuredSessions: sessions.unsecured,
            subscriptions: routeTasks.keys.filter { $0.role == .subscription }.count,
            devices: snapshot.devices.count, connectivity: connectivity,
            retransmissions: metrics.retransmissions, deliveryFailures: metrics.deliveryFailures,
            homesAlive: Home.alive)
    }

    private struct TransportMetricsSnapshot {
        var retransmissions: UInt64 = 0
        var deliveryFailures: UInt64 = 0
    }
}
