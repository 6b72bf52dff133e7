import Foundation
import Logging
import MatterController
import MatterCrypto
import MatterProtocol
import NIOCore
import OpenCombine

/// How a `Home` runs.
public struct HomeConfiguration: Sendable {
    /// Local UDP port of the controller (0: any free port).
    public var controllerPort: Int = 0
    public var controllerBinding: UDPTransport.Binding = .dualStack
    /// Longest time any device operation may take before failing with `deadlineExceeded`.
    public var commandTimeout: Duration = .seconds(10)
    /// How long to wait for each response of a device.
    public var responseTimeout: Duration = .seconds(5)
    /// Subscription MaxInterval asked of devices (seconds): how fast a silent device is noticed.
    public var subscriptionMaxInterval: UInt16 = 20
    public var maxResubscribeDelay: Duration = .seconds(10)
    /// CASE sessions the controller keeps at once: one per device it talks to (the least
    /// recently used is evicted past this, taking its subscription along).
    public var maxSessions: Int = 256
    /// Directory of trusted PAA certificates for device attestation.
    public var paaTrustStore: URL?
    /// Commission devices whose attestation is not trusted (explicit opt-in).
    public var allowUntrustedAttestation: Bool = false
    /// Subscribe to every device's state while the Home is open.
    public var connectDevices: Bool = true
    /// Look up devices with DNS-SD (`_matter._tcp`) when their stored address fails.
    public var useDNSSD: Bool = false
    /// How often to look for changes other Home instances made to the same database.
    public var changePollInterval: Duration = .milliseconds(250)
    /// The cloud relay: reaches devices when the LAN cannot, and serves cloud-only traits.
    public var relay: RelayEndpoint?
    /// A hub on the LAN that reaches devices over Matter (the relay protocol, locality `localPeer`).
    public var hub: RelayEndpoint?
    /// Makes the links to `relay` and `hub` (HomeRelayLink's `HomeRelayLinks.webSocket`); a
    /// relay or hub without it fails `Home.open`.
    public var relayLinks: RelayLinkMaker?
    /// The routing policy a Home starts with (see `Home.routingPolicy`).
    public var routingPolicy: RoutingPolicy = .preferLocal
    /// How often a device's LAN session is checked when nothing was heard from it, and how
    /// long the check may take: together, how fast a dead LAN path is noticed.
    public var routeProbeInterval: Duration = .milliseconds(500)
    public var routeProbeTimeout: Duration = .seconds(1)
    /// How long a command may try one route before falling over to the next.
    public var routeAttemptTimeout: Duration = .seconds(2)
    /// Longest pause between reconnection attempts to the relay or hub.
    public var relayMaxReconnectDelay: Duration = .seconds(2)
    /// Reach devices over this Home's own LAN sessions. Off: only through the hub or relay
    /// (a hub running a home's automations shares its file, not its controller identity).
    public var directRoute: Bool = true
    /// How long `structure.candidates()` returns the same snapshot.
    public var candidateCacheLifetime: Duration = .seconds(60)
    /// The one time source of the home: its controller (MRP, timeouts, subscription
    /// liveness), routes (probes, failover deadlines, resubscription pauses), relay and hub
    /// reconnection, change polling and automation polling. A `ManualClock` drives them all.
    public var clock: any MatterClock = SystemClock()

    public init() {}
}

/// The home graph and the devices in it (the Google Home APIs' `Home`): structures,
/// rooms and devices as live queries, persisted in a SQLite file. Several `Home`s (in
/// one process or several) may share a file and see each other's changes.
public final class Home: Sendable {
    let engine: HomeEngine

    private init(engine: HomeEngine) {
        self.engine = engine
    }

    /// Opens (creating if needed) the home stored at `url`.
    public static func open(
        at url: URL, configuration: HomeConfiguration = HomeConfiguration(),
        logger: Logger = Logger(label: "home")
    ) async throws(HomeError) -> Home {
        try await homeCall {
            do {
                try SecretFiles.createDirectory(url.deletingLastPathComponent())
            } catch {
                throw HomeError.unavailable("cannot create \(url.deletingLastPathComponent().path): \(error.localizedDescription)")
            }
            if (configuration.relay != nil || configuration.hub != nil) && configuration.relayLinks == nil {
                throw HomeError.invalidArgument(
                    "a relay or hub is configured without relayLinks to reach it (HomeRelayLink's HomeRelayLinks.webSocket)")
            }
            let store = try HomeStore(path: url.path)
            let engine = HomeEngine(store: store, configuration: configuration, logger: logger)
            do { try await engine.start() } catch { throw HomeError.from(error, "opening the home") }
            return Home(engine: engine)
        }
    }

    /// Which paths this Home uses to reach devices (`.preferLocal` unless configured).
    /// Setting it re-routes every trait at once.
    public var routingPolicy: RoutingPolicy {
        get { engine.routingPolicy }
        set { engine.setRoutingPolicy(newValue) }
    }

    /// Sets the routing policy and waits until every route follows it.
    public func setRoutingPolicy(_ policy: RoutingPolicy) async {
        engine.setRoutingPolicy(policy)
        await engine.applyRoutingPolicy()
    }

    /// What this home's controller holds now, for soak tests and health pages (not part of
    /// the Google Home APIs): sessions, subscriptions per route, devices by connectivity.
    public func diagnostics() async -> HomeDiagnostics {
        await engine.diagnostics()
    }

    /// Homes alive in this process: open, or closed and still held (by a task finishing, or
    /// by a leak). Not part of the Google Home APIs; `homectl soak` checks that the homes it
    /// closed are freed.
    public static var alive: Int { HomeEngine.alive.load(ordering: .relaxed) }

    /// Stops talking to devices; queries emit no more.
    public func close() async {
        await engine.services.stopRunners()
        await engine.close()
    }

    // MARK: Graph

    public func structures() -> Query<Structure> {
        engine.query { Set($0.structures.values) }
    }

    public func rooms() -> Query<Room> {
        engine.query { Set($0.rooms.values) }
    }

    public func devices() -> Query<HomeDevice> {
        engine.query { Set($0.devices.values) }
    }

    public func structure(id: String) async throws(HomeError) -> Structure {
        try await homeCall {
            try await engine.reloadIfNeeded()
            guard let s = engine.snapshot.structures[id] else { throw HomeError.notFound("no structure with ID \(id)") }
            return s
        }
    }

    public func room(id: String) async throws(HomeError) -> Room {
        try await homeCall {
            try await engine.reloadIfNeeded()
            guard let r = engine.snapshot.rooms[id] else { throw HomeError.notFound("no room with ID \(id)") }
            return r
        }
    }

    public func device(id: String) async throws(HomeError) -> HomeDevice {
        try await homeCall {
            try await engine.reloadIfNeeded()
            guard let d = engine.snapshot.devices[id] else { throw HomeError.notFound("no device with ID \(id)") }
            return d
        }
    }

    /// Creates a structure (names over 60 code points are cut to 60).
    public func createStructure(name: String) async throws(HomeError) -> Structure {
        try await homeCall { try await engine.createStructure(name: name) }
    }

    // MARK: Devices

    /// Commissions a Matter device from its manual pairing code or QR payload onto this
    /// home's fabric and adds it to the graph. Without `address`, the device is found with
    /// DNS-SD (`_matterc._udp`) by its discriminator.
    public func commissionDevice(
        setupCode: String, address: SocketAddress? = nil, structureID: String? = nil,
        roomID: String? = nil, name: String? = nil
    ) async throws(HomeError) -> HomeDevice {
        try await homeCall {
            let payload: OnboardingPayload
            do { payload = try OnboardingPayload.parse(setupCode) } catch {
                throw HomeError.invalidArgument("setup code: \(error)")
            }
            return try await engine.commission(payload: payload, address: address, structureID: structureID, roomID: roomID, name: name)
        }
    }

    /// Removes a device from the home (and, when it answers, from the fabric).
    public func removeDevice(id: String) async throws(HomeError) {
        try await homeCall { try await engine.removeDevice(id) }
    }

    /// Waits, at most `timeout`, until every route of every device works (and the clusters
    /// a device serves only through the relay are known), so a listing right after opening
    /// shows what works rather than what is still connecting. Returns false when some route
    /// was still down or untried at the deadline; its traits then say so.
    public func waitUntilAllRoutesUp(timeout: Duration) async -> Bool {
        let clock = engine.configuration.clock
        let deadline = clock.now + timeout
        while true {
            if await engine.allRoutesUp { return true }
            guard clock.now < deadline else { return false }
            try? await clock.sleep(until: min(clock.now + .milliseconds(50), deadline))
        }
    }

    /// Reads every attribute a device serves (a wildcard read, not filtered by fabric), each
    /// with its value or the status it was refused with. Not part of the Google Home APIs:
    /// `homectl dump` writes it as Home Assistant's node JSON.
    public func readAllAttributes(deviceID: String) async throws(HomeError) -> [AttributeReport] {
        let d = try await device(id: deviceID)
        return try await homeCall("reading every attribute of \(d.name)") { try await engine.readAllAttributes(nodeID: d.nodeID) }
    }

    /// Reads a device's state now rather than waiting for its next report.
    public func refresh(deviceID: String) async throws(HomeError) {
        try await homeCall {
            let d = try await device(id: deviceID)
            try await engine.refresh(nodeID: d.nodeID)
        }
    }
}
