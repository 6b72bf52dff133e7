import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import RelayProtocol
import ServiceLifecycle

/// Several relay instances over one PostgreSQL store, so a device and its controller may hold
/// their connections on different instances.
///
/// * Each instance records its live connections (`relay_connection`: instance, peer, role,
///   home, device) under its own row in `relay_instance`, whose heartbeat it renews every
///   `heartbeat`. An instance silent for `expiry` (SIGKILLed, cut off) counts as gone: its
///   devices stop showing online at once, and the next heartbeat of any live instance deletes
///   its rows (the connections cascade).
/// * Frames for a peer held by another instance travel by PostgreSQL `NOTIFY` on one channel,
///   addressed to that instance (`ClusterEnvelope`): no second transport, no instance
///   addresses to publish, and the database already reaches every instance. With
///   `RelayCrossInstance.forward` they go instead down a WebSocket straight to that instance,
///   found through its `relay_instance` row (`RelayClusterLinks`); docs/ARCHITECTURE.md has
///   both measured and why NOTIFY stays the default.
/// * Device presence is broadcast the same way, so every instance tells its controllers.
/// * Revocations need nothing here: every instance polls the shared revocation counter.
///
/// Its waits and the kept answers' ages are in real time, as the heartbeats are: PostgreSQL's
/// `now()`, the one clock every instance shares.
final class RelayCluster: Sendable {
    static let channel = "relay_cluster"
    let instanceID: String
    let store: RelayPostgresStore
    let heartbeat: Duration
    let expiry: Duration
    let logger: Logger
    /// Instance-to-instance links, when frames are forwarded rather than notified.
    let links: RelayClusterLinks?
    /// Connection records to write, applied in order in batches by `run`; the lock guards
    /// the queue, and `wake` tells the writer there is some.
    private let queued = NIOLockedValueBox<[LedgerChange]>([])
    private let wake: AsyncStream<Void>
    private let wakeSink: AsyncStream<Void>.Continuation
    /// Where a device of another instance is: the database's answer, then kept current by
    /// the presence broadcasts. A miss (`nil`) is kept `missTTL` only.
    // real time: external: when the database (or another instance) answered.
    private let located = NIOLockedValueBox<[RelayDeviceAddress: (instance: String?, at: ContinuousClock.Instant)]>([:])
    private static let missTTL = Duration.seconds(1)
    private static let locatedLimit = 100_000

    enum LedgerChange: Sendable {
        case opened(peer: UInt32, role: RelayRole, homeID: String, deviceID: String?)
        /// `wentOffline`: a device's slot was freed, not taken over by a newer connection.
        case closed(peer: UInt32, role: RelayRole, homeID: String, deviceID: String?, wentOffline: Bool)
    }
    /// Envelopes waiting for `notifyOutbox`, each with its sender (told whether it went, or nil:
    /// send it yourself); the lock guards them and whether the outbox runs.
    private typealias Waiting = (payload: String, done: CheckedContinuation<Bool?, Never>)
    private let outbox = NIOLockedValueBox<(running: Bool, waiting: [Waiting])>((false, []))
    private let outboxWake: AsyncStream<Void>
    private let outboxWakeSink: AsyncStream<Void>.Continuation
    private static let outboxBatch = 500
    /// Numbers this instance's presence envelopes: PostgreSQL folds identical notifications of
    /// one transaction into one, and online, offline, online again must all arrive.
    private let presenceSequence = NIOLockedValueBox<UInt64>(0)

    init(
        store: RelayPostgresStore, links: RelayClusterLinks? = nil, heartbeat: Duration = .seconds(1), expiry: Duration = .seconds(3),
        logger: Logger
    ) {
        instanceID = "i" + RelayCredentials.hex((0..<6).map { _ in UInt8.random(in: 0...255) })
        self.store = store
        self.links = links
        self.heartbeat = heartbeat
        self.expiry = expiry
        self.logger = logger
        (wake, wakeSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (outboxWake, outboxWakeSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    private var expirySeconds: Double { Double(expiry.components.seconds) + Double(expiry.components.attoseconds) / 1e18 }

    // MARK: Connections

    func opened(_ peer: RelayPeer) {
        record(.opened(peer: peer.id, role: peer.role, homeID: peer.homeID, deviceID: peer.deviceID))
    }

    /// `wentOffline`: the device's slot was freed (its presence goes out as offline).
    func closed(_ peer: RelayPeer, wentOffline: Bool = false) {
        record(.closed(peer: peer.id, role: peer.role, homeID: peer.homeID, deviceID: peer.deviceID, wentOffline: wentOffline))
    }

    private func record(_ change: LedgerChange) {
        queued.withLockedValue { $0.append(change) }
        wakeSink.yield()
    }

    /// Devices of a home connected to any live instance, this one included.
    func onlineDevices(homeID: String) async -> Set<String> {
        let rows = try? await store.query(
            """
            SELECT DISTINCT c.deviceID FROM relay_connection c JOIN relay_instance i ON i.id = c.instanceID
            WHERE c.homeID = \(homeID) AND c.role = 'device' AND i.heartbeatAt > now() - \(expirySeconds) * interval '1 second'
            """)
        return Set((rows ?? []).compactMap { try? $0.decode(String.self) })
    }

    /// The live instance other than this one holding the device's newest connection.
    func locate(_ device: RelayDeviceAddress) async -> String? {
        // real time: external: the age of the database's answer.
        let now = ContinuousClock.now
        if let kept = located.withLockedValue({ $0[device] }), kept.instance != nil || now - kept.at < Self.missTTL {
            return kept.instance
        }
        let rows = try? await store.query(
            """
            SELECT c.instanceID FROM relay_connection c JOIN relay_instance i ON i.id = c.instanceID
            WHERE c.homeID = \(device.homeID) AND c.deviceID = \(device.deviceID) AND c.role = 'device'
                AND c.instanceID <> \(instanceID) AND i.heartbeatAt > now() - \(expirySeconds) * interval '1 second'
            ORDER BY c.connectedAt DESC LIMIT 1
            """)
        let instance = rows?.first.flatMap { try? $0.decode(String.self) }
        remember(device, at: instance)
        return instance
    }

    private func remember(_ device: RelayDeviceAddress, at instance: String?) {
        // real time: external: when the database (or another instance) answered.
        located.withLockedValue { s in
            if s.count >= Self.locatedLimit { s.removeAll() }
            s[device] = (instance, ContinuousClock.now)
        }
    }

    /// Another instance said a device came or went.
    func presence(_ device: RelayDeviceAddress, online: Bool, at instance: String) {
        if online {
            remember(device, at: instance)
        } else {
            located.withLockedValue { s in if s[device]?.instance == instance { s[device] = nil } }
        }
    }

    // MARK: Envelopes

    /// Sends an envelope down the link to its instance when forwarding and the link is up, else
    /// to every instance's listener (each keeps those addressed to it); false when the database
    /// did not take it.
    @discardableResult
    func send(_ envelope: ClusterEnvelope) async -> Bool {
        if let links, let target = envelope.target, links.send(envelope.payload, to: target) { return true }
        let payload = envelope.payload
        // Queued for `notifyOutbox` while it runs; before or after, one query of its own.
        let queued: Bool? = await withCheckedContinuation { done in
            let taken = outbox.withLockedValue { o -> Bool in
                guard o.running else { return false }
                o.waiting.append((payload: payload, done: done))
                return true
            }
            if taken { outboxWakeSink.yield() } else { done.resume(returning: nil) }
        }
        if let queued { return queued }
        return await notify([payload])
    }

    /// One transaction sending `payloads` in order; false when the database did not take it.
    private func notify(_ payloads: [String]) async -> Bool {
        do {
            try await store.query(
                "SELECT pg_notify(\(Self.channel), e) FROM unnest(\(payloads)::TEXT[]) WITH ORDINALITY AS t(e, n) ORDER BY n")
            return true
        } catch {
            logger.debug("cluster notify failed: \(error)")
            return false
        }
    }

    /// Sends the queued envelopes, all that wait (up to `outboxBatch`) in one query each time:
    /// under load one transaction carries many frames instead of a round trip and a commit
    /// each (at 2,000 crossing frames a second that was a query each; issue #42). In order,
    /// which concurrent single queries were not. Identical payloads in one transaction arrive
    /// once: only a repeated frame, which Matter drops as a duplicate anyway.
    private func notifyOutbox() async {
        outbox.withLockedValue { $0.running = true }
        for await _ in outboxWake {
            while true {
                let batch = outbox.withLockedValue { o -> [Waiting] in
                    let taken = Array(o.waiting.prefix(Self.outboxBatch))
                    o.waiting.removeFirst(taken.count)
                    return taken
                }
                if batch.isEmpty { break }
                let sent = await notify(batch.map { $0.payload })
                for waiting in batch { waiting.done.resume(returning: sent) }
            }
        }
        // Stopped: whoever still waits sends its own.
        let left = outbox.withLockedValue { o -> [Waiting] in
            o.running = false
            defer { o.waiting.removeAll() }
            return o.waiting
        }
        for waiting in left { waiting.done.resume(returning: nil) }
    }

    // MARK: Running

    /// Registers this instance, then keeps its heartbeat, writes its connection records and
    /// hands `hub` the envelopes for it, until shutdown; then removes its records.
    func run(hub: RelayHub) async {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.keepHeartbeat(hub: hub) }
                group.addTask { await self.writeLedger() }
                group.addTask { await self.listen(hub: hub) }
                group.addTask { await self.notifyOutbox() }
                if let links = self.links { group.addTask { await links.run(cluster: self) } }
                await group.waitForAll()
            }
        }
        // Gone at once for the others, not after `expiry`.
        _ = try? await store.query("DELETE FROM relay_instance WHERE id = \(instanceID)")
    }

    private func register() async throws {
        try await store.query(
            """
            INSERT INTO relay_instance (id, heartbeatAt, address, linkSecret) VALUES (\(instanceID), now(), \(links?.address), \(links?.secret))
            ON CONFLICT (id) DO UPDATE SET heartbeatAt = now(), address = EXCLUDED.address, linkSecret = EXCLUDED.linkSecret
            """)
    }

    private func keepHeartbeat(hub: RelayHub) async {
        // real time: external: heartbeats are judged by PostgreSQL's now() on every instance.
        while !Task.isCancelled {
            do {
                // The link address too: the listener may have bound since the last beat.
                let renewed = try await store.query(
                    "UPDATE relay_instance SET heartbeatAt = now(), address = \(links?.address) WHERE id = \(instanceID) RETURNING id")
                if renewed.isEmpty {
                    // Expired by another instance (this one stalled): its records went; write them again.
                    logger.warning("relay instance \(instanceID) was expired; recording its connections again")
                    try await register()
                    for change in hub.liveConnections() { record(change) }
                }
                let gone = try await store.query(
                    "DELETE FROM relay_instance WHERE heartbeatAt < now() - \(expirySeconds) * interval '1 second' RETURNING id")
                for row in gone {
                    if let id = try? row.decode(String.self) {
                        logger.info("relay instance \(id) stopped answering; its connection records are removed")
                        hub.instanceGone(id)
                        links?.drop(id)
                        located.withLockedValue { s in s = s.filter { $0.value.instance != id } }
                    }
                }
            } catch {
                logger.debug("cluster heartbeat failed: \(error)")
            }
            try? await Task.sleep(for: heartbeat)
        }
    }

    /// Applies connection changes in order, as many as are waiting in one transaction, with the
    /// presence (and controller-gone) envelopes they mean: sent in order, at commit, after the
    /// records they describe are written.
    private func writeLedger() async {
        // real time: external: retrying the database server.
        while !Task.isCancelled {
            do {
                try await register()
                break
            } catch {
                logger.warning("cannot register relay instance: \(error)")
                try? await Task.sleep(for: heartbeat)
            }
        }
        for await _ in wake {
            while !Task.isCancelled {
                // What is queued now, in order, in one transaction (bounded, so it stays short).
                let batch = queued.withLockedValue { q -> [LedgerChange] in
                    let taken = Array(q.prefix(1000))
                    q.removeFirst(taken.count)
                    return taken
                }
                if batch.isEmpty { break }
                while !Task.isCancelled {
                    do {
                        try await apply(batch)
                        break
                    } catch {
                        logger.debug("cluster ledger write failed (retrying): \(error)")
                        try? await Task.sleep(for: .milliseconds(200))
                    }
                }
            }
        }
    }

    private func apply(_ batch: [LedgerChange]) async throws {
        var opened: [UInt32: LedgerChange] = [:]
        var closed: [Int64] = []
        var envelopes: [String] = []
        for change in batch {
            switch change {
            case .opened(let peer, let role, let homeID, let deviceID):
                opened[peer] = change
                if role == .device, let deviceID { envelopes.append(presence(homeID, deviceID, online: true)) }
            case .closed(let peer, let role, let homeID, let deviceID, let wentOffline):
                if opened.removeValue(forKey: peer) == nil { closed.append(Int64(peer)) }
                if role == .device, wentOffline, let deviceID { envelopes.append(presence(homeID, deviceID, online: false)) }
                if role == .controller { envelopes.append(ClusterEnvelope.controllerGone(from: instanceID, session: peer).payload) }
            }
        }
        var peers: [Int64] = [], roles: [String] = [], homes: [String] = [], devices: [String] = []
        for case .opened(let peer, let role, let homeID, let deviceID) in opened.values {
            peers.append(Int64(peer))
            roles.append(role.rawValue)
            homes.append(homeID)
            devices.append(deviceID ?? "")
        }
        let (instanceID, logger) = (instanceID, store.logger)
        try await store.transaction { connection in
            if !closed.isEmpty {
                try await connection.query(
                    "DELETE FROM relay_connection WHERE instanceID = \(instanceID) AND peer = ANY(\(closed))", logger: logger)
            }
            if !peers.isEmpty {
                try await connection.query(
                    """
                    INSERT INTO relay_connection (instanceID, peer, role, homeID, deviceID, connectedAt)
                    SELECT \(instanceID), p, r, h, NULLIF(d, ''), now()
                    FROM unnest(\(peers)::BIGINT[], \(roles)::TEXT[], \(homes)::TEXT[], \(devices)::TEXT[]) AS t(p, r, h, d)
                    ON CONFLICT (instanceID, peer) DO NOTHING
                    """, logger: logger)
            }
            if !envelopes.isEmpty {
                try await connection.query(
                    "SELECT pg_notify(\(Self.channel), e) FROM unnest(\(envelopes)::TEXT[]) WITH ORDINALITY AS t(e, n) ORDER BY n",
                    logger: logger)
            }
        }
    }

    private func presence(_ homeID: String, _ deviceID: String, online: Bool) -> String {
        let sequence = presenceSequence.withLockedValue { n -> UInt64 in
            n &+= 1
            return n
        }
        return ClusterEnvelope.presence(from: instanceID, homeID: homeID, deviceID: deviceID, online: online, sequence: sequence).payload
    }

    /// Hands `hub` every envelope addressed to this instance (and every broadcast from
    /// another), on one pooled connection held for it; again after a lost connection.
    private func listen(hub: RelayHub) async {
        // real time: external: listening again on the database server.
        while !Task.isCancelled {
            do {
                try await store.client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        for try await notification in notifications {
                            guard let envelope = ClusterEnvelope(payload: notification.payload) else {
                                hub.metrics.rejected(.malformed)
                                continue
                            }
                            if envelope.isFor(instanceID) { hub.deliver(envelope) }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("cluster listener lost its connection (listening again): \(error)")
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }
}

/// A device by home and ID.
struct RelayDeviceAddress: Hashable, Sendable {
    var homeID: String
    var deviceID: String
}

/// What instances tell each other over `NOTIFY`, as one line of text: a kind letter and
/// space-separated fields (identifiers have no spaces; frames are in base64). PostgreSQL
/// takes payloads below 8,000 bytes, enough for a Matter message (at most 1,280 bytes).
enum ClusterEnvelope: Sendable, Hashable {
    /// A controller's message for a device held by `target`; `session` is the controller's on `from`.
    case toDevice(target: String, from: String, homeID: String, deviceID: String, session: UInt32, frame: RelayFrame)
    /// A device's message or a failure for controller `session` held by `target`.
    case toController(target: String, homeID: String, session: UInt32, frame: RelayFrame)
    /// `sequence` tells one envelope from an identical earlier one (see `RelayCluster.presenceSequence`).
    case presence(from: String, homeID: String, deviceID: String, online: Bool, sequence: UInt64)
    /// A controller of `from` disconnected: instances holding a stand-in session for it drop it.
    case controllerGone(from: String, session: UInt32)

    /// Largest payload PostgreSQL's NOTIFY takes.
    static let payloadLimit = 7999

    /// The one instance a frame goes to; nil for broadcasts.
    var target: String? {
        switch self {
        case .toDevice(let target, _, _, _, _, _), .toController(let target, _, _, _): target
        case .presence, .controllerGone: nil
        }
    }

    func isFor(_ instance: String) -> Bool {
        switch self {
        case .toDevice(let target, _, _, _, _, _), .toController(let target, _, _, _): target == instance
        case .presence(let from, _, _, _, _), .controllerGone(let from, _): from != instance
        }
    }

    var payload: String {
        switch self {
        case .toDevice(let target, let from, let homeID, let deviceID, let session, let frame):
            "d \(target) \(from) \(homeID) \(deviceID) \(session) \(Data(frame.encoded()).base64EncodedString())"
        case .toController(let target, let homeID, let session, let frame):
            "c \(target) \(homeID) \(session) \(Data(frame.encoded()).base64EncodedString())"
        case .presence(let from, let homeID, let deviceID, let online, let sequence):
            "p \(from) \(homeID) \(deviceID) \(online ? 1 : 0) \(sequence)"
        case .controllerGone(let from, let session): "x \(from) \(session)"
        }
    }

    /// Nil for anything else: malformed payloads are dropped (and counted by the listener).
    init?(payload: String) {
        guard payload.utf8.count <= Self.payloadLimit else { return nil }
        let f = payload.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        func identifier(_ i: Int) -> String? { f.indices.contains(i) && RelayFrame.isValidIdentifier(f[i]) ? f[i] : nil }
        func frame(_ i: Int) -> RelayFrame? {
            guard f.indices.contains(i), let data = Data(base64Encoded: f[i]) else { return nil }
            return try? RelayFrame(decoding: Array(data))
        }
        switch f.first {
        case "d":
            guard f.count == 7, let target = identifier(1), let from = identifier(2), let home = identifier(3), let device = identifier(4),
                let session = UInt32(f[5]), let frame = frame(6)
            else { return nil }
            self = .toDevice(target: target, from: from, homeID: home, deviceID: device, session: session, frame: frame)
        case "c":
            guard f.count == 5, let target = identifier(1), let home = identifier(2), let session = UInt32(f[3]), let frame = frame(4)
            else { return nil }
            self = .toController(target: target, homeID: home, session: session, frame: frame)
        case "p":
            guard f.count == 6, let from = identifier(1), let home = identifier(2), let device = identifier(3), ["0", "1"].contains(f[4]),
                let sequence = UInt64(f[5])
            else { return nil }
            self = .presence(from: from, homeID: home, deviceID: device, online: f[4] == "1", sequence: sequence)
        case "x":
            guard f.count == 3, let from = identifier(1), let session = UInt32(f[2]) else { return nil }
            self = .controllerGone(from: from, session: session)
        default:
            return nil
        }
    }
}
