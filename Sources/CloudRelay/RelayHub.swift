import Logging
import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore
import RelayProtocol

/// One authenticated WebSocket connection, as the hub sees it: who it is and
/// a bounded queue of frames for its writer.
package final class RelayPeer: Sendable {
    package let id: UInt32
    package let role: RelayRole
    package let homeID: String
    /// Set on device connections.
    package let deviceID: String?
    /// The frames for its writer.
    package let outgoing: RelayFrameQueue
    private let budget: QueueBudget?
    /// Bytes queued and not yet taken by the writer; the lock guards it.
    private let queued = NIOLockedValueBox(0)

    package init(id: UInt32, role: RelayRole, homeID: String, deviceID: String?, queueCapacity: Int, budget: QueueBudget? = nil) {
        self.id = id
        self.role = role
        self.homeID = homeID
        self.deviceID = deviceID
        self.budget = budget
        // Newest frames are dropped when the peer does not keep up: a slow reader
        // loses its own traffic instead of holding the relay's memory.
        outgoing = RelayFrameQueue(capacity: queueCapacity)
    }

    /// Queues a frame; false when the queue (in frames or bytes, this peer's or the relay's)
    /// is full, or the peer is closed.
    package func send(_ frame: RelayFrame) -> Bool {
        let bytes = frame.encoded()
        if let budget {
            let fits = queued.withLockedValue { value -> Bool in
                guard value + bytes.count <= budget.perConnection, budget.reserve(bytes.count) else { return false }
                value += bytes.count
                return true
            }
            guard fits else { return false }
        }
        if outgoing.push(ByteBuffer(bytes: bytes)) { return true }
        dequeued(bytes.count)
        return false
    }

    /// The writer took a frame of `count` bytes off the queue.
    package func dequeued(_ count: Int) {
        guard let budget else { return }
        let released = queued.withLockedValue { value -> Int in
            let n = min(count, value)
            value -= n
            return n
        }
        budget.release(released)
    }

    /// Ends the writer; the connection closes once queued frames are out. Their bytes are
    /// given back now: the frames left in a closed queue are the writer's to drop.
    package func close() {
        outgoing.finish()
        let left = queued.withLockedValue { value -> Int in
            defer { value = 0 }
            return value
        }
        budget?.release(left)
    }
}

/// Bytes queued for all of a relay's connections together, and the share one may take:
/// stalled readers cannot grow the relay without bound (8 once held 250 MiB).
package final class QueueBudget: Sendable {
    let perConnection: Int
    let total: Int
    // The lock guards the bytes in use.
    private let used = NIOLockedValueBox(0)

    init(perConnection: Int, total: Int) {
        self.perConnection = perConnection
        self.total = total
    }

    convenience init(_ configuration: RelayServerConfiguration) {
        self.init(perConnection: configuration.maxQueuedBytesPerConnection, total: configuration.maxQueuedBytes)
    }

    var inUse: Int { used.withLockedValue { $0 } }

    func reserve(_ count: Int) -> Bool {
        used.withLockedValue { value in
            guard value + count <= total else { return false }
            value += count
            return true
        }
    }

    func release(_ count: Int) {
        guard count > 0 else { return }
        used.withLockedValue { $0 = max(0, $0 - count) }
    }
}

/// The routing table: which devices and controllers are connected, per home.
/// Routes controller requests to devices and device answers and reports back,
/// never across homes.
final class RelayHub: Sendable {
    private struct DeviceKey: Hashable {
        var homeID: String
        var deviceID: String
    }

    /// A controller request in flight, timed until its device answers.
    private struct PendingKey: Hashable {
        var session: UInt32
        var deviceID: String
        var exchangeID: UInt32
    }

    /// A controller session of another instance, as a device here sees it.
    private struct RemoteSession: Hashable {
        var instance: String
        var session: UInt32
    }

    private struct State {
        var devices: [DeviceKey: RelayPeer] = [:]
        var controllers: [UInt32: RelayPeer] = [:]
        /// Stand-in session IDs (from the same space as the controllers') for controllers of
        /// other instances, both ways.
        var remoteSessions: [UInt32: (remote: RemoteSession, homeID: String)] = [:]
        var standIns: [RemoteSession: UInt32] = [:]
        var pending: [PendingKey: Duration] = [:]
        /// Whether a device not connected is registered, and when the store said so.
        var registrations: [DeviceKey: (registered: Bool, at: Duration)] = [:]
        var nextID: UInt32 = 0
    }

    /// Requests remembered for the latency histogram before old ones are swept.
    private static let pendingLimit = 20_000
    /// How long the store's answer for a device not connected is used: a controller sending
    /// frame after frame to an unknown device costs one lookup a second, not one a frame. The
    /// answer only picks the failure's reason (offline or unknown), so a second-old one is fine.
    private static let registrationTTL = Duration.seconds(1)
    private static let registrationLimit = 10_000
    /// Stand-in sessions kept before all are dropped (their controllers' instances say when
    /// each goes; this bounds what a lost message leaves behind).
    private static let standInLimit = 50_000

    // The lock guards the routing table; frames are queued to peers outside it.
    private let state = NIOLockedValueBox(State())
    let metrics: RelayMetrics
    let clock: any MatterClock
    let store: RelayStore
    let queueCapacity: Int
    let queueBudget: QueueBudget?
    let logger: Logger
    /// The other instances sharing a PostgreSQL store, if any.
    let cluster: RelayCluster?

    init(
        store: RelayStore, metrics: RelayMetrics, queueCapacity: Int, queueBudget: QueueBudget? = nil, clock: any MatterClock,
        cluster: RelayCluster? = nil, logger: Logger
    ) {
        self.cluster = cluster
        self.clock = clock
        self.store = store
        self.metrics = metrics
        self.queueCapacity = queueCapacity
        self.queueBudget = queueBudget
        self.logger = logger
    }

    func makePeer(role: RelayRole, homeID: String, deviceID: String?) -> RelayPeer {
        let id = state.withLockedValue { s -> UInt32 in
            Self.nextFreeID(&s)
        }
        return RelayPeer(id: id, role: role, homeID: homeID, deviceID: deviceID, queueCapacity: queueCapacity, budget: queueBudget)
    }

    /// A peer or stand-in ID no controller session or stand-in holds.
    private static func nextFreeID(_ s: inout State) -> UInt32 {
        repeat { s.nextID &+= 1 } while s.nextID == 0 || s.controllers[s.nextID] != nil || s.remoteSessions[s.nextID] != nil
        return s.nextID
    }

    var connectedCounts: (devices: Int, controllers: Int) {
        state.withLockedValue { ($0.devices.count, $0.controllers.count) }
    }

    /// Devices of a home that hold a connection now.
    func onlineDevices(homeID: String) -> Set<String> {
        state.withLockedValue { s in
            Set(s.devices.keys.filter { $0.homeID == homeID }.map(\.deviceID))
        }
    }

    // MARK: Attach and detach

    /// Registers a device connection, replacing (and closing) an older one of the same device.
    /// Presence is queued to the home's controllers under the lock (queuing never blocks),
    /// so racing attach/detach of one device reach every controller in the order they happened.
    func attachDevice(_ peer: RelayPeer) {
        guard let deviceID = peer.deviceID else { return }
        let key = DeviceKey(homeID: peer.homeID, deviceID: deviceID)
        let replaced = state.withLockedValue { s -> RelayPeer? in
            let old = s.devices.updateValue(peer, forKey: key)
            for controller in s.controllers.values where controller.homeID == peer.homeID {
                // A replaced connection took its exchanges and subscriptions with it: say so first.
                if old != nil { _ = controller.send(.presence(RelayPresence(deviceID: deviceID, online: false))) }
                _ = controller.send(.presence(RelayPresence(deviceID: deviceID, online: true)))
            }
            return old
        }
        if let replaced {
            logger.info("device reconnected; closing its previous connection", metadata: ["device": "\(deviceID)"])
            replaced.close()
        }
        // Recorded for the other instances, which then hear it is online.
        cluster?.opened(peer)
    }

    func detachDevice(_ peer: RelayPeer) {
        guard let deviceID = peer.deviceID else { return }
        let key = DeviceKey(homeID: peer.homeID, deviceID: deviceID)
        let freed = state.withLockedValue { s -> Bool in
            // A newer connection of the same device may already have taken the slot.
            guard s.devices[key] === peer else { return false }
            s.devices[key] = nil
            for controller in s.controllers.values where controller.homeID == peer.homeID {
                _ = controller.send(.presence(RelayPresence(deviceID: deviceID, online: false)))
            }
            return true
        }
        cluster?.closed(peer, wentOffline: freed)
    }

    /// Registers a controller connection and queues its hello and the presence of
    /// every device of the home (the registered ones and any online). Done under the
    /// lock, so a presence change racing with it is queued after this snapshot, never before.
    func attachController(_ peer: RelayPeer, hello: RelayHello, registered: [String]) {
        attachController(peer, hello: hello, registered: registered, onlineElsewhere: [])
    }

    /// The same, with the devices online through other instances counted online too.
    func attachController(_ peer: RelayPeer, hello: RelayHello, registered: [String], onlineElsewhere: Set<String>) {
        cluster?.opened(peer)
        state.withLockedValue { s in
            s.controllers[peer.id] = peer
            let online = Set(s.devices.keys.filter { $0.homeID == peer.homeID }.map(\.deviceID)).union(onlineElsewhere)
            _ = peer.send(.hello(hello))
            for deviceID in Set(registered).union(online).sorted() {
                _ = peer.send(.presence(RelayPresence(deviceID: deviceID, online: online.contains(deviceID))))
            }
        }
    }

    func detachController(_ peer: RelayPeer) {
        state.withLockedValue { s in
            s.controllers[peer.id] = nil
            s.pending = s.pending.filter { $0.key.session != peer.id }
        }
        // The other instances drop their stand-ins for it.
        cluster?.closed(peer)
    }

    // MARK: Routing

    /// A message from a controller: to the named device of the controller's own home.
    func routeFromController(_ message: RelayMessage, from controller: RelayPeer) async {
        guard let deviceID = message.deviceID else { return }
        let key = DeviceKey(homeID: controller.homeID, deviceID: deviceID)
        let now = clock.now
        let device = state.withLockedValue { s -> RelayPeer? in
            guard let device = s.devices[key] else { return nil }
            if message.fromInitiator {
                let pendingKey = PendingKey(session: controller.id, deviceID: deviceID, exchangeID: message.exchangeID)
                if s.pending[pendingKey] == nil {
                    if s.pending.count >= Self.pendingLimit { Self.sweep(&s.pending, now: now) }
                    s.pending[pendingKey] = now
                }
            }
            return device
        }
        func fail(_ reason: RelayFailureReason, _ rejection: RelayRejection) {
            metrics.rejected(rejection)
            if message.fromInitiator {
                metrics.request(reason == .deviceOffline ? .deviceOffline : reason == .unknownDevice ? .unknownDevice : .overloaded)
            }
            _ = controller.send(
                .failure(
                    RelayFailure(deviceID: deviceID, exchangeID: message.exchangeID, fromInitiator: message.fromInitiator, reason: reason)))
        }
        guard let device else {
            if let cluster, let instance = await cluster.locate(RelayDeviceAddress(homeID: key.homeID, deviceID: deviceID)) {
                // Held by another instance: there, by the database.
                if message.fromInitiator {
                    let pendingKey = PendingKey(session: controller.id, deviceID: deviceID, exchangeID: message.exchangeID)
                    state.withLockedValue { s in
                        if s.pending.count >= Self.pendingLimit { Self.sweep(&s.pending, now: now) }
                        s.pending[pendingKey] = now
                    }
                }
                let envelope = ClusterEnvelope.toDevice(
                    target: instance, from: cluster.instanceID, homeID: key.homeID, deviceID: deviceID, session: controller.id,
                    frame: .message(message))
                if await cluster.send(envelope) { metrics.clusterEnvelope(.sent) } else { fail(.overloaded, .overflow) }
                return
            }
            // Whether it exists is answered only within the controller's own home.
            return await isRegistered(key, now: now) ? fail(.deviceOffline, .deviceOffline) : fail(.unknownDevice, .unknownDevice)
        }
        var forwarded = message
        forwarded.deviceID = nil
        forwarded.session = controller.id
        if device.send(.message(forwarded)) {
            metrics.routed(.toDevice)
        } else {
            fail(.overloaded, .overflow)
        }
    }

    /// Whether a device not connected is registered: the store's answer, kept `registrationTTL`.
    private func isRegistered(_ key: DeviceKey, now: Duration) async -> Bool {
        let kept = state.withLockedValue { s in s.registrations[key].flatMap { now - $0.at < Self.registrationTTL ? $0.registered : nil } }
        if let kept { return kept }
        let registered = (try? await store.device(homeID: key.homeID, deviceID: key.deviceID)) != nil
        state.withLockedValue { s in
            if s.registrations.count >= Self.registrationLimit { s.registrations.removeAll() }
            s.registrations[key] = (registered, now)
        }
        return registered
    }

    /// Tells a controller these devices of its home are online (through other instances).
    func tellOnline(_ peer: RelayPeer, _ deviceIDs: Set<String>) {
        guard !deviceIDs.isEmpty else { return }
        state.withLockedValue { s in
            guard s.controllers[peer.id] === peer else { return }
            for deviceID in deviceIDs.sorted() { _ = peer.send(.presence(RelayPresence(deviceID: deviceID, online: true))) }
        }
    }

    /// Devices of a home connected here or through another live instance.
    func onlineDevicesEverywhere(homeID: String) async -> Set<String> {
        guard let cluster else { return onlineDevices(homeID: homeID) }
        return await cluster.onlineDevices(homeID: homeID).union(onlineDevices(homeID: homeID))
    }

    /// A device was registered or removed through this relay: its kept answer goes.
    func registrationChanged(homeID: String, deviceID: String) {
        _ = state.withLockedValue { s in s.registrations.removeValue(forKey: DeviceKey(homeID: homeID, deviceID: deviceID)) }
    }

    /// A message from a device: to the controller session it names, if that
    /// session is a live controller connection of the device's home.
    func routeFromDevice(_ message: RelayMessage, from device: RelayPeer) async {
        guard let session = message.session, let deviceID = device.deviceID else { return }
        let now = clock.now
        // The device's message goes nowhere: it hears why.
        func fail(_ reason: RelayFailureReason) {
            _ = device.send(
                .failure(RelayFailure(session: session, exchangeID: message.exchangeID, fromInitiator: message.fromInitiator, reason: reason)))
        }
        if let cluster, let remote = state.withLockedValue({ s in s.remoteSessions[session] }), remote.homeID == device.homeID {
            // A controller of another instance: its answer goes back there.
            var forwarded = message
            forwarded.session = nil
            forwarded.deviceID = deviceID
            let envelope = ClusterEnvelope.toController(
                target: remote.remote.instance, homeID: device.homeID, session: remote.remote.session, frame: .message(forwarded))
            if await cluster.send(envelope) {
                metrics.clusterEnvelope(.sent)
            } else {
                metrics.rejected(.overflow)
                fail(.overloaded)
            }
            return
        }
        let (controller, started) = state.withLockedValue { s -> (RelayPeer?, Duration?) in
            guard let controller = s.controllers[session], controller.homeID == device.homeID else { return (nil, nil) }
            var started: Duration? = nil
            if !message.fromInitiator {
                started = s.pending.removeValue(
                    forKey: PendingKey(session: session, deviceID: deviceID, exchangeID: message.exchangeID))
            }
            return (controller, started)
        }
        guard let controller else {
            metrics.rejected(.sessionGone)
            fail(.sessionGone)
            return
        }
        if let started { metrics.observeRoundTrip(now - started) }
        var forwarded = message
        forwarded.session = nil
        forwarded.deviceID = deviceID
        if controller.send(.message(forwarded)) {
            metrics.routed(.toController)
        } else {
            metrics.rejected(.overflow)
            fail(.overloaded)
        }
    }

    // MARK: Other instances

    /// An envelope another instance addressed to this one, or a broadcast of another.
    func deliver(_ envelope: ClusterEnvelope) {
        guard let cluster else { return }
        metrics.clusterEnvelope(.received)
        switch envelope {
        case .toDevice(_, let from, let homeID, let deviceID, let session, .message(var message)):
            let remote = RemoteSession(instance: from, session: session)
            let (device, standIn) = state.withLockedValue { s -> (RelayPeer?, UInt32) in
                guard let device = s.devices[DeviceKey(homeID: homeID, deviceID: deviceID)] else { return (nil, 0) }
                if let id = s.standIns[remote] { return (device, id) }
                if s.standIns.count >= Self.standInLimit {
                    s.standIns.removeAll()
                    s.remoteSessions.removeAll()
                }
                let id = Self.nextFreeID(&s)
                s.standIns[remote] = id
                s.remoteSessions[id] = (remote, homeID)
                return (device, id)
            }
            func fail(_ reason: RelayFailureReason) {
                let failure = RelayFailure(
                    deviceID: deviceID, exchangeID: message.exchangeID, fromInitiator: message.fromInitiator, reason: reason)
                let back = ClusterEnvelope.toController(target: from, homeID: homeID, session: session, frame: .failure(failure))
                Task { await cluster.send(back) }
            }
            guard let device else { return fail(.deviceOffline) }
            message.deviceID = nil
            message.session = standIn
            if device.send(.message(message)) { metrics.routed(.toDevice) } else { fail(.overloaded) }
        case .toController(_, let homeID, let session, let frame):
            guard let controller = state.withLockedValue({ s in s.controllers[session] }), controller.homeID == homeID else {
                metrics.rejected(.sessionGone)
                return
            }
            if case .message(let message) = frame, let deviceID = message.deviceID, !message.fromInitiator {
                let started = state.withLockedValue { s in
                    s.pending.removeValue(forKey: PendingKey(session: session, deviceID: deviceID, exchangeID: message.exchangeID))
                }
                if let started { metrics.observeRoundTrip(clock.now - started) }
            }
            if controller.send(frame) { metrics.routed(.toController) } else { metrics.rejected(.overflow) }
        case .presence(let from, let homeID, let deviceID, let online, _):
            cluster.presence(RelayDeviceAddress(homeID: homeID, deviceID: deviceID), online: online, at: from)
            let replaced = state.withLockedValue { s -> RelayPeer? in
                for controller in s.controllers.values where controller.homeID == homeID {
                    _ = controller.send(.presence(RelayPresence(deviceID: deviceID, online: online)))
                }
                // The device connected again through another instance: this older connection goes,
                // its slot freed now so that its close tells no one the device went offline.
                let key = DeviceKey(homeID: homeID, deviceID: deviceID)
                guard online, let old = s.devices[key] else { return nil }
                s.devices[key] = nil
                return old
            }
            replaced?.close()
        case .controllerGone(let from, let session):
            state.withLockedValue { s in
                if let id = s.standIns.removeValue(forKey: RemoteSession(instance: from, session: session)) { s.remoteSessions[id] = nil }
            }
        case .toDevice:
            metrics.rejected(.malformed)  // only messages go to devices
        }
    }

    /// Another instance stopped answering: the stand-ins for its controllers go.
    func instanceGone(_ instance: String) {
        state.withLockedValue { s in
            for (remote, id) in s.standIns where remote.instance == instance {
                s.standIns[remote] = nil
                s.remoteSessions[id] = nil
            }
        }
    }

    /// Every connection held now, as records for the cluster's ledger.
    func liveConnections() -> [RelayCluster.LedgerChange] {
        state.withLockedValue { s in
            s.devices.values.map { RelayCluster.LedgerChange.opened(peer: $0.id, role: .device, homeID: $0.homeID, deviceID: $0.deviceID) }
                + s.controllers.values.map { .opened(peer: $0.id, role: .controller, homeID: $0.homeID, deviceID: nil) }
        }
    }

    /// Forgets requests older than ten seconds; all of them if that is not enough.
    private static func sweep(_ pending: inout [PendingKey: Duration], now: Duration) {
        pending = pending.filter { now - $0.value < .seconds(10) }
        if pending.count >= pendingLimit { pending.removeAll() }
    }
}
