import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import MatterProtocol
import NIOCore
import NIOWebSocket
import RelayProtocol
import ServiceLifecycle

/// How a relay server listens and what it tolerates.
public struct RelayServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port (see `RelayServer.application(onServerRunning:)`).
    public var port: Int
    /// Guards `/v1/admin/...`; those endpoints answer 401 when nil.
    public var adminToken: String?
    /// Largest relay frame accepted; a larger message closes that connection.
    public var maxFrameSize: Int
    /// Frames queued for one connection before newer ones are dropped. More than a connection
    /// may send at once (`frameBurst`): a controller's requests come back as answers on its own
    /// queue, and a controller busy for 170 ms at 5,000 commands a second lost answers to the
    /// 1,024 this was (`relay-bench.sh --split`). The bytes below bound the memory.
    public var queueCapacity: Int
    /// WebSocket pings keep idle connections (and NATs on the way) alive.
    public var pingInterval: Duration
    /// How long a closing connection may take to answer the close.
    public var closeTimeout: Duration
    /// How often the store is checked for revoked credentials (also revoked by the CLI in
    /// another process); the connections they authenticated are then closed.
    public var revocationCheckInterval: Duration = .seconds(1)
    /// TCP connections one client address may hold; more are closed at once.
    public var maxConnectionsPerAddress: Int = 1024
    /// A connection must send a whole HTTP request head (the WebSocket upgrade or a request)
    /// this soon after it opens, and an HTTP connection idle this long between requests is
    /// closed; upgraded WebSockets are kept alive, or ended, by their pings.
    public var requestHeadTimeout: Duration = .seconds(10)
    public var idleTimeout: Duration = .seconds(60)
    /// Devices a home's token may register for itself (the admin API is not limited).
    public var maxDevicesPerHome: Int = 5000
    /// Bytes queued for one connection that does not read, and for all together; frames
    /// beyond either are dropped (the sender is told the receiver is overloaded).
    public var maxQueuedBytesPerConnection: Int = 1 << 20
    public var maxQueuedBytes: Int = 64 << 20
    /// Frames one connection (device or controller) may send per second, sustained, and at
    /// once; frames past them are dropped (`rate_limited`), and a connection sending ten
    /// times its rate for five seconds is closed (1008). Far above a home's own traffic: a
    /// controller opening a home of 1,000 devices subscribes to and reads each (2,000 frames
    /// at once), a device's reports are a few a second.
    public var maxFramesPerSecond: Int = 1000
    public var frameBurst: Int = 4000
    /// Frames all of one home's connections together, and all of one client address's, may
    /// send per second and at once; past them frames are dropped where they arrive
    /// (`home_rate_limited`, `address_rate_limited`), so a home's many connections cannot
    /// take the relay from other homes (issue #37 item 7). Two of a home's busiest
    /// connections (a home of 1,000 devices reporting twice a second), and more for an
    /// address (homes behind one NAT). At 10,000 a debug relay spent its two cores routing
    /// one flooding home's frames; nothing was left over to shed.
    public var maxFramesPerSecondPerHome: Int = 2_000
    public var homeFrameBurst: Int = 8_000
    public var maxFramesPerSecondPerAddress: Int = 5_000
    public var addressFrameBurst: Int = 20_000
    /// Bytes all of one home's connections, and all of one address's, may send per second
    /// and at once, counted as they are read, before any decoding. Past them the relay stops
    /// reading those connections until the debt is paid (`relay_reads_held_total`), so TCP
    /// pushes back on the senders; a connection held back again and again for
    /// `overLimitCloseAfter` is closed (1008).
    public var maxBytesPerSecondPerHome: Int = 2 << 20
    public var homeByteBurst: Int = 8 << 20
    public var maxBytesPerSecondPerAddress: Int = 4 << 20
    public var addressByteBurst: Int = 16 << 20
    public var overLimitCloseAfter: Duration = .seconds(5)
    /// With several instances on PostgreSQL, each tells the others this often how many frames
    /// each busy home and address offered it, and holds them to its share of the one budget.
    public var limitShareInterval: Duration = .milliseconds(250)
    /// Connections closed by `requestHeadTimeout` are counted each and logged as one
    /// summary line per this interval at most.
    public var requestHeadTimeoutLogInterval: Duration = .seconds(10)
    /// The time source of the revocation checks, the frame-rate limits and the round-trip
    /// figures (the sockets' own timeouts above run on NIO's real time).
    public var clock: any MatterClock = SystemClock()
    /// On PostgreSQL: how frames reach a peer held by another instance (`RelayCrossInstance`).
    /// Forwarding listens for the other instances' links on `host`:`linkPort` (0: any free
    /// port) and tells them to reach it at `linkHost` (nil: `host`).
    public var crossInstance: RelayCrossInstance = .notify
    public var linkPort: Int = 0
    public var linkHost: String?

    public init(
        host: String = "127.0.0.1", port: Int = 8080, adminToken: String? = nil, maxFrameSize: Int = 64 * 1024,
        queueCapacity: Int = 8192, pingInterval: Duration = .seconds(30), closeTimeout: Duration = .seconds(2)
    ) {
        self.host = host
        self.port = port
        self.adminToken = adminToken
        self.maxFrameSize = maxFrameSize
        self.queueCapacity = queueCapacity
        self.pingInterval = pingInterval
        self.closeTimeout = closeTimeout
    }
}

extension RelayServerConfiguration {
    /// Characters an admin token needs at least: about 190 bits of randomness in base64.
    public static let minimumAdminTokenLength = 32

    /// Why `token` is too weak to guard the admin API (it lists homes and re-registers any
    /// device, cutting the real one off), or nil for a usable one.
    public static func adminTokenWeakness(_ token: String) -> String? {
        if token.isEmpty { return "the admin token is empty" }
        let lowered = token.lowercased()
        for placeholder in ["change-me", "changeme", "change_me", "password", "secret", "admin"] where lowered.contains(placeholder) {
            return "the admin token contains the placeholder '\(placeholder)'"
        }
        if token.count < minimumAdminTokenLength {
            return "the admin token has \(token.count) characters, fewer than \(minimumAdminTokenLength)"
        }
        if Set(token).count < 8 { return "the admin token repeats too few characters (\(Set(token).count) different)" }
        return nil
    }
}

extension RelayDeviceCredential: ResponseEncodable {}
extension RelayHomeCredential: ResponseEncodable {}
extension RelayOnboardingList: ResponseEncodable {}

/// The cloud relay: devices hold an outbound WebSocket to `/v1/device`, controllers
/// connect to `/v1/controller` with their home's token, and Interaction Model
/// messages travel between them in `RelayFrame`s, within one home only.
///
/// HTTP endpoints:
/// * `GET /health`, `GET /metrics` (Prometheus text);
/// * `GET /v1/homes/{home}/devices`, `POST /v1/homes/{home}/devices` `{"deviceID": ...}`
///   with the home's token (another home's token: 403);
/// * `POST /v1/admin/homes` `{"name": ...}`, `GET /v1/admin/homes`,
///   `POST /v1/admin/homes/{home}/devices`, `DELETE /v1/admin/homes/{home}/devices/{device}`
///   with the admin token;
/// * `PUT /v1/onboarding/{source}` `{"nodes": [...]}` with a device credential or the home's
///   token, `GET /v1/onboarding` with the home's token: nodes waiting to be commissioned
///   (`RelayStore.reportOnboarding`).
public final class RelayServer: Sendable {
    public let store: RelayStore
    public let metrics: RelayMetrics
    public let configuration: RelayServerConfiguration
    let hub: RelayHub
    /// Where controllers' requests go: `hub` (device WebSockets) or a local hub's Matter sessions.
    let controllers: any RelayControllerRouting
    /// Hub mode: devices are reached over Matter by `controllers`, `/v1/device` is not served.
    public let servesDevices: Bool
    let logger: Logger
    /// Fires when the store's revocation counter moves; each connection then checks its credential.
    let revocations = RevocationSignal()
    /// Open connections per client address.
    let connections: ConnectionLimiter
    /// Frames counted where they arrive, per connection, address and home.
    let traffic: RelayTraffic
    /// The instances sharing this one's store (PostgreSQL only): `RelayCluster`.
    let cluster: RelayCluster?
    /// The home and address frame budgets held as one across those instances.
    let limitSharing: RelayLimitSharing?

    /// This instance's ID among those sharing its PostgreSQL store; nil on SQLite.
    public var instanceID: String? { cluster?.instanceID }

    public init(store: RelayStore, configuration: RelayServerConfiguration = .init(), logger: Logger = Logger(label: "matter.relay")) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        connections = ConnectionLimiter(maxPerAddress: configuration.maxConnectionsPerAddress)
        metrics = RelayMetrics()
        // On PostgreSQL other instances may share the store: this one joins them.
        let links =
            configuration.crossInstance == .forward
            ? RelayClusterLinks(
                host: configuration.host, port: configuration.linkPort, advertisedHost: configuration.linkHost, metrics: metrics,
                logger: logger) : nil
        cluster = (store.engine as? RelayPostgresStore).map { RelayCluster(store: $0, links: links, logger: logger) }
        let traffic = RelayTraffic(configuration, metrics: metrics, logger: logger, sharedAcrossInstances: cluster != nil)
        self.traffic = traffic
        limitSharing = cluster.map {
            RelayLimitSharing(
                store: $0.store, instanceID: $0.instanceID, traffic: traffic, interval: configuration.limitShareInterval, logger: logger)
        }
        if let postgres = store.engine as? RelayPostgresStore { metrics.watchPool { postgres.poolUse } }
        hub = RelayHub(
            store: store, metrics: metrics, queueCapacity: configuration.queueCapacity,
            queueBudget: QueueBudget(configuration), clock: configuration.clock, cluster: cluster, logger: logger)
        controllers = hub
        servesDevices = true
    }

    /// A server whose controllers' requests go to `controllers` rather than to device
    /// WebSockets: a local hub (HomeHub's `RelayServer(store:localHub:)`).
    package init(
        store: RelayStore, controllers: any RelayControllerRouting, metrics: RelayMetrics,
        configuration: RelayServerConfiguration, logger: Logger
    ) {
        self.store = store
        self.configuration = configuration
        self.logger = logger
        connections = ConnectionLimiter(maxPerAddress: configuration.maxConnectionsPerAddress)
        self.metrics = metrics
        traffic = RelayTraffic(configuration, metrics: metrics, logger: logger)
        hub = RelayHub(
            store: store, metrics: metrics, queueCapacity: configuration.queueCapacity,
            queueBudget: QueueBudget(configuration), clock: configuration.clock, logger: logger)
        self.controllers = controllers
        servesDevices = false
        cluster = nil
        limitSharing = nil
    }

    /// The Hummingbird application serving the relay. Run it with `runService()`
    /// (graceful shutdown on SIGINT/SIGTERM) or inside a `ServiceGroup`.
    /// `onServerRunning` gets the bound port.
    public func application(onServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let router = Router()
        addHTTPRoutes(to: router)
        let webSocketRouter = Router(context: RelayWebSocketContext.self)
        addWebSocketRoutes(to: webSocketRouter)
        let webSocketResponder = webSocketRouter.buildResponder()
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: TimeAmount(configuration.idleTimeout)),
            ws: .init(
                // The relay frame limit, enforced while reading: a larger frame is refused from
                // its header before it is buffered (a looser limit let 200 connections hold 230 MiB).
                maxFrameSize: configuration.maxFrameSize, autoPing: .enabled(timePeriod: configuration.pingInterval),
                closeTimeout: configuration.closeTimeout))
        let (limiter, traffic) = (connections, traffic)
        let headTimeout = configuration.requestHeadTimeout
        // The HTTP/WebSocket channel, behind a guard that caps connections per client address
        // and closes those that never finish a request head.
        let server = HTTPServerBuilder { responder in
            GuardedChildChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder,
                    configuration: channelConfiguration),
                limiter: limiter, traffic: traffic, headTimeout: headTimeout)
        }
        var services: [any Service] = [
            RevocationWatch(
                store: store, signal: revocations,
                // Another instance's revocation must close this one's connections within a second.
                interval: cluster == nil
                    ? configuration.revocationCheckInterval : min(configuration.revocationCheckInterval, .milliseconds(250)),
                clock: configuration.clock, logger: logger)
        ]
        if let cluster { services.append(ClusterService(cluster: cluster, hub: hub)) }
        if let limitSharing { services.append(limitSharing) }
        if let cluster, let links = cluster.links { services.append(links.application(instanceID: cluster.instanceID, hub: hub)) }
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "matter-relay"),
            services: services,
            onServerRunning: { channel in await onServerRunning(channel.localAddress?.port ?? 0) },
            logger: logger)
    }

    // MARK: - Authentication

    private func device(from headers: HTTPFields) async throws -> RelayDeviceRegistration? {
        guard let credential = RelayCredentials.bearer(headers[.authorization]) else { return nil }
        return try await store.authenticateDevice(credential: credential)
    }

    /// Whether a connection's credential still holds after a revocation somewhere. A store
    /// that cannot answer at once (busy, a database connection being replaced) is asked
    /// again a few times within a second, so a moment's error does not close every live
    /// connection; one that still cannot confirm the credential then closes it (fail closed).
    private func stillValid(what: String, _ check: @Sendable () async throws -> Bool) async -> Bool {
        for pause in [Duration.milliseconds(100), .milliseconds(300), .milliseconds(600), nil] {
            do {
                return try await check()
            } catch {
                guard let pause, !Task.isCancelled else {
                    logger.warning("cannot check a \(what) after a revocation (\(error)); closing its connection")
                    return false
                }
                // real time: external: the store's recovery, whatever clock the relay's limits run on.
                try? await Task.sleep(for: pause)
            }
        }
        return false
    }

    private func home(from headers: HTTPFields) async throws -> RelayHome? {
        guard let token = RelayCredentials.bearer(headers[.authorization]) else { return nil }
        return try await store.authenticateHome(token: token)
    }

    private func unauthorized(_ message: String) -> HTTPError {
        metrics.rejected(.unauthorized)
        return HTTPError(.unauthorized, headers: [.wwwAuthenticate: "Bearer"], message: message)
    }

    /// The caller's home, which must be `homeID`: 401 without a valid token, 403
    /// for another home's token (whether `homeID` exists or not, so nothing leaks).
    private func requireHome(_ request: Request, homeID: String) async throws -> RelayHome {
        guard let home = try await home(from: request.headers) else { throw unauthorized("home token required") }
        guard home.id == homeID else {
            metrics.rejected(.forbidden)
            throw HTTPError(.forbidden, message: "token not valid for this home")
        }
        return home
    }

    private func requireAdmin(_ request: Request) throws {
        guard let admin = configuration.adminToken, let token = RelayCredentials.bearer(request.headers[.authorization]),
            RelayCredentials.constantTimeEquals(token, admin)
        else { throw unauthorized("admin token required") }
    }

    // MARK: - HTTP

    private struct HealthResponse: ResponseEncodable {
        var status: String
        var devices: Int
        var controllers: Int
        /// Set when instances share a PostgreSQL store: which one answered.
        var instance: String?
    }

    private struct DeviceList: ResponseEncodable {
        var homeID: String
        var devices: [RelayDeviceStatus]
    }

    private struct HomeList: ResponseEncodable {
        var homes: [RelayHome]
    }

    private struct NewHome: Decodable {
        var name: String
    }

    private struct NewDevice: Decodable {
        var deviceID: String
        var label: String?
    }

    private struct OnboardingBody: Decodable {
        var nodes: [RelayOnboardingNode]
    }

    private func addHTTPRoutes(to router: Router<BasicRequestContext>) {
        router.get("/health") { _, _ in
            let counts = self.controllers.connectedCounts
            return HealthResponse(status: "ok", devices: counts.devices, controllers: counts.controllers, instance: self.instanceID)
        }
        router.get("/metrics") { _, _ in await self.metrics.registry.response() }

        // Reached only when the WebSocket upgrade was refused: say why.
        if servesDevices {
            router.get("/v1/device") { request, _ -> Response in
                guard try await self.device(from: request.headers) != nil else { throw self.unauthorized("device credential required") }
                throw HTTPError(.upgradeRequired, headers: [.upgrade: "websocket"], message: "WebSocket upgrade required")
            }
        }
        router.get("/v1/controller") { request, _ -> Response in
            guard try await self.home(from: request.headers) != nil else { throw self.unauthorized("home token required") }
            throw HTTPError(.upgradeRequired, headers: [.upgrade: "websocket"], message: "WebSocket upgrade required")
        }

        router.get("/v1/homes/:home/devices") { request, context in
            let home = try await self.requireHome(request, homeID: try context.parameters.require("home"))
            return DeviceList(homeID: home.id, devices: try await self.deviceStatuses(homeID: home.id))
        }
        router.post("/v1/homes/:home/devices") { request, context in
            let home = try await self.requireHome(request, homeID: try context.parameters.require("home"))
            let body = try await request.decode(as: NewDevice.self, context: context)
            return EditedResponse(
                status: .created,
                response: try await self.register(
                    homeID: home.id, body,
                    limit: self.configuration.maxDevicesPerHome))
        }

        // A fleet replica reports its nodes with its device credential (the home's token may
        // too); only the home's token reads them back: each payload holds a passcode.
        router.put("/v1/onboarding/:source") { request, context -> HTTPResponse.Status in
            let source = try context.parameters.require("source")
            let reporter: (homeID: String, deviceID: String?)
            if let device = try await self.device(from: request.headers) {
                reporter = (device.homeID, device.deviceID)
            } else if let home = try await self.home(from: request.headers) {
                reporter = (home.id, nil)
            } else {
                throw self.unauthorized("device credential or home token required")
            }
            let body = try await request.decode(as: OnboardingBody.self, context: context)
            do {
                try await self.store.reportOnboarding(homeID: reporter.homeID, source: source, reporter: reporter.deviceID, nodes: body.nodes)
            } catch let error as RelayStoreError {
                if case .onboardingSourceTaken = error {
                    self.metrics.rejected(.forbidden)
                    throw HTTPError(.forbidden, message: error.description)
                }
                throw HTTPError(.badRequest, message: error.description)
            }
            return .noContent
        }
        router.get("/v1/onboarding") { request, _ in
            guard let home = try await self.home(from: request.headers) else { throw self.unauthorized("home token required") }
            return RelayOnboardingList(homeID: home.id, reports: try await self.store.onboarding(homeID: home.id))
        }

        router.get("/v1/admin/homes") { request, _ in
            try self.requireAdmin(request)
            return HomeList(homes: try await self.store.homes())
        }
        router.post("/v1/admin/homes") { request, context in
            try self.requireAdmin(request)
            let body = try await request.decode(as: NewHome.self, context: context)
            do {
                let (home, token) = try await self.store.addHome(name: body.name)
                return EditedResponse(status: .created, response: RelayHomeCredential(id: home.id, name: home.name, token: token))
            } catch let error as RelayStoreError {
                throw HTTPError(.conflict, message: error.description)
            }
        }
        router.post("/v1/admin/homes/:home/devices") { request, context in
            try self.requireAdmin(request)
            let homeID = try context.parameters.require("home")
            guard let home = try await self.store.home(homeID) else { throw HTTPError(.notFound, message: "no such home") }
            let body = try await request.decode(as: NewDevice.self, context: context)
            return EditedResponse(status: .created, response: try await self.register(homeID: home.id, body))
        }
        router.delete("/v1/admin/homes/:home/devices/:device") { request, context -> HTTPResponse.Status in
            try self.requireAdmin(request)
            do {
                let homeID = try context.parameters.require("home"), deviceID = try context.parameters.require("device")
                try await self.store.removeDevice(homeID: homeID, deviceID: deviceID)
                self.controllers.registrationChanged(homeID: homeID, deviceID: deviceID)
            } catch let error as RelayStoreError {
                throw HTTPError(.notFound, message: error.description)
            }
            return .noContent
        }
    }

    private func register(homeID: String, _ body: NewDevice, limit: Int? = nil) async throws -> RelayDeviceCredential {
        if !servesDevices {
            throw HTTPError(.methodNotAllowed, message: "a hub reaches devices over Matter: issue new hub credentials to add devices")
        }
        do {
            let credential = try await store.registerDevice(homeID: homeID, deviceID: body.deviceID, label: body.label, limit: limit)
            controllers.registrationChanged(homeID: homeID, deviceID: body.deviceID)
            return RelayDeviceCredential(homeID: homeID, deviceID: body.deviceID, credential: credential)
        } catch let error as RelayStoreError {
            if case .tooManyDevices = error { throw HTTPError(.forbidden, message: error.description) }
            throw HTTPError(.badRequest, message: error.description)
        }
    }

    private func deviceStatuses(homeID: String) async throws -> [RelayDeviceStatus] {
        let online = await controllers.onlineDevicesEverywhere(homeID: homeID)
        return try await store.devices(homeID: homeID).map {
            RelayDeviceStatus(deviceID: $0.deviceID, label: $0.label, online: online.contains($0.deviceID))
        }
    }

    // MARK: - WebSockets

    private func addWebSocketRoutes(to router: Router<RelayWebSocketContext>) {
        // A refused upgrade falls through to the HTTP router, which answers 401. A granted one
        // tells the connection's guard its home, whose frame limit its frames then count against.
        if servesDevices {
            router.ws("/v1/device") { request, context in
                guard let device = try await self.device(from: request.headers) else { return .dontUpgrade }
                self.traffic.assign(context.channel, home: device.homeID)
                return .upgrade([:])
            } onUpgrade: { inbound, outbound, context in
                try await self.serveDevice(
                    inbound: inbound, outbound: outbound, channel: context.requestContext.channel, headers: context.request.headers)
            }
        }
        router.ws("/v1/controller") { request, context in
            guard let home = try await self.home(from: request.headers) else { return .dontUpgrade }
            self.traffic.assign(context.channel, home: home.id)
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            try await self.serveController(
                inbound: inbound, outbound: outbound, channel: context.requestContext.channel, headers: context.request.headers)
        }
    }

    func serveDevice(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel, headers: HTTPFields) async throws {
        // Checked again: the credential may have been revoked since the upgrade was granted.
        guard let registration = try await device(from: headers) else {
            return try await outbound.close(.policyViolation, reason: "unauthorized")
        }
        let peer = hub.makePeer(role: .device, homeID: registration.homeID, deviceID: registration.deviceID)
        metrics.connectionOpened(.device)
        hub.attachDevice(peer)
        _ = peer.send(.hello(RelayHello(homeID: registration.homeID, deviceID: registration.deviceID)))
        logger.debug("device connected", metadata: ["home": "\(registration.homeID)", "device": "\(registration.deviceID)"])
        let revalidate: @Sendable () async -> Bool = {
            await self.stillValid(what: "device credential") {
                try await self.device(from: headers).map { $0.homeID == registration.homeID && $0.deviceID == registration.deviceID } ?? false
            }
        }
        await pump(peer: peer, inbound: inbound, outbound: outbound, channel: channel, stillAuthorized: revalidate) { frame in
            // Devices answer and report to a controller session; nothing else.
            guard case .message(let message) = frame, message.session != nil, message.deviceID == nil else { return false }
            await self.hub.routeFromDevice(message, from: peer)
            return true
        }
        hub.detachDevice(peer)
        metrics.connectionClosed(.device)
        logger.debug("device disconnected", metadata: ["home": "\(registration.homeID)", "device": "\(registration.deviceID)"])
    }

    func serveController(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel, headers: HTTPFields
    ) async throws {
        guard let home = try await home(from: headers) else {
            return try await outbound.close(.policyViolation, reason: "unauthorized")
        }
        let controllers = controllers
        let peer = controllers.makePeer(role: .controller, homeID: home.id, deviceID: nil)
        metrics.connectionOpened(.controller)
        // Everyone registered in the home, online or not, so the controller starts with a full picture.
        let registered = ((try? await store.devices(homeID: home.id)) ?? []).map(\.deviceID)
        let elsewhere = cluster == nil ? [] : await controllers.onlineDevicesEverywhere(homeID: home.id)
        controllers.attachController(
            peer, hello: RelayHello(homeID: home.id, session: peer.id), registered: registered, onlineElsewhere: elsewhere)
        if cluster != nil {
            // Asked again now that it is attached: a device that came online elsewhere between the
            // first answer and the attach was broadcast before this controller could hear it.
            let now = await hub.onlineDevicesEverywhere(homeID: home.id)
            hub.tellOnline(peer, now.subtracting(elsewhere))
        }
        let revalidate: @Sendable () async -> Bool = {
            await self.stillValid(what: "home token") { try await self.home(from: headers)?.id == home.id }
        }
        await pump(peer: peer, inbound: inbound, outbound: outbound, channel: channel, stillAuthorized: revalidate) { frame in
            // Controllers address a device of their home and carry no session.
            guard case .message(let message) = frame, message.deviceID != nil, message.session == nil else { return false }
            await controllers.routeFromController(message, from: peer)
            return true
        }
        controllers.detachController(peer)
        metrics.connectionClosed(.controller)
    }

    /// Moves frames both ways until either side ends. A message that is not a
    /// well-formed frame this peer may send closes this connection only.
    private func pump(
        peer: RelayPeer, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, channel: any Channel,
        stillAuthorized: @escaping @Sendable () async -> Bool,
        handle: @escaping @Sendable (RelayFrame) async -> Bool
    ) async {
        let revocations = revocations.stream()
        let maxFrameSize = configuration.maxFrameSize
        let metrics = metrics
        let logger = logger
        let closing: (WebSocketErrorCode, String)? = await withTaskGroup(of: (WebSocketErrorCode, String)?.self) { group in
            group.addTask {
                // What queued while the last batch went out goes in one write: under load one
                // flush carries many frames (issue #42).
                while let batch = await peer.outgoing.next() {
                    peer.dequeued(batch.reduce(0) { $0 + $1.readableBytes })
                    do {
                        try await Self.write(batch, to: channel)
                        metrics.wrote(frames: batch.count)
                    } catch {
                        break
                    }
                }
                return nil
            }
            group.addTask {
                do {
                    // Frames past the rate limits never get here: the connection's guard cut them
                    // out as they arrived (`ConnectionGuardHandler`).
                    for try await message in inbound.messages(maxSize: maxFrameSize) {
                        guard case .binary(let buffer) = message else {
                            metrics.rejected(.malformed)
                            return (.unacceptableData, "binary relay frames only")
                        }
                        let frame: RelayFrame
                        do {
                            frame = try RelayFrame(decoding: buffer.readableBytesView)
                            metrics.received(peer.role)
                        } catch {
                            metrics.rejected(.malformed)
                            logger.debug("malformed frame: \(error)", metadata: ["peer": "\(peer.id)"])
                            return (.policyViolation, "malformed frame")
                        }
                        guard await handle(frame) else {
                            metrics.rejected(.malformed)
                            return (.policyViolation, "frame not allowed on this connection")
                        }
                    }
                } catch is CancellationError {
                } catch {
                    // The WebSocket layer refused the framing itself (or the socket failed).
                    metrics.rejected(.protocolError)
                    logger.debug("connection failed: \(error)", metadata: ["peer": "\(peer.id)"])
                }
                return nil
            }
            group.addTask {
                // A revoked credential ends the connection it opened (issue #22 item 9).
                for await _ in revocations where await !stillAuthorized() {
                    metrics.rejected(.unauthorized)
                    logger.info("credential revoked; closing its connection", metadata: ["peer": "\(peer.id)"])
                    return (.policyViolation, "credential revoked")
                }
                return nil
            }
            let first = await group.next() ?? nil
            peer.close()
            group.cancelAll()
            return first
        }
        if let (code, reason) = closing {
            try? await outbound.close(code, reason: reason)
        }
    }
}

extension RelayServer {
    /// Writes frames as binary WebSocket messages, flushed once, on the channel's event loop; done
    /// when the socket has taken them. The frames go down the same pipeline as Hummingbird's own
    /// writer's (its frame encoder), whose `write` flushes each frame: a whole batch, one flush.
    static func write(_ batch: [ByteBuffer], to channel: any Channel) async throws {
        let written = channel.eventLoop.makePromise(of: Void.self)
        channel.eventLoop.execute {
            for (index, buffer) in batch.enumerated() {
                let frame = NIOWebSocket.WebSocketFrame(fin: true, opcode: .binary, data: buffer)
                channel.write(frame, promise: index == batch.count - 1 ? written : nil)
            }
            channel.flush()
        }
        try await written.futureResult.get()
    }
}

/// Runs this instance's part in a cluster of instances beside the server.
struct ClusterService: Service {
    let cluster: RelayCluster
    let hub: RelayHub

    func run() async throws { await cluster.run(hub: hub) }
}

/// The WebSocket routes' request context: Hummingbird's, plus the connection's channel, by
/// which a granted upgrade tells the connection's guard its home.
struct RelayWebSocketContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}
