import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore

/// `matter-sim home --dashboard`: the page (plain HTML, CSS and JS from this module's
/// resources), the home as JSON, pairing QR codes as SVG, the buttons' actions, and a
/// WebSocket that pushes every change (`DashboardFeed`).
///
/// Any web page the machine's browser opens can send requests here, so every request must
/// name this server in `Host` (a DNS-rebinding page names its own) and, when it has an
/// `Origin`, come from this server's own (`DashboardAccess`); and whatever changes state or
/// shows pairing codes needs the token (`Authorization: Bearer`, or `?token=`, which the page
/// uses for its WebSocket and QR image): the buttons cut power and networks. The page's own
/// files, `/api/figures` and `/metrics` (counts only) need no token. No cookie: a browser would send one
/// with another site's requests.
public struct DashboardServer: Sendable {
    public let host: String
    public let port: Int
    /// The one given, or a random one when none was: printed in the page's URL.
    public let token: String
    let access: DashboardAccess
    let limits: DashboardLimits
    let gate: DashboardConnectionGate
    let feed: DashboardFeed
    let perform: DashboardAction
    let logger: Logger

    /// `hostNames`: names the page is also opened by (a DNS name of the machine), beside the
    /// listen address and localhost.
    public init(
        host: String, port: Int, token: String?, hostNames: [String] = [], limits: DashboardLimits = DashboardLimits(),
        feed: DashboardFeed, perform: @escaping DashboardAction, logger: Logger
    ) {
        self.host = host
        self.port = port
        self.token = token ?? Self.newToken()
        self.access = DashboardAccess(listenHost: host, port: port, names: hostNames)
        self.limits = limits
        self.gate = DashboardConnectionGate(limits: limits)
        self.feed = feed
        self.perform = perform
        self.logger = logger
        let (refused, dashboardGate) = (feed.metrics.registry.total("matter_dashboard_connections_refused_total"), self.gate)
        feed.metrics.registry.beforeScrape { refused.set(Int64(dashboardGate.refused)) }
    }

    /// Connections refused so far: over a cap, or with descriptors running low.
    public var connectionsRefused: Int { gate.refused }

    /// 128 random bits, hex.
    public static func newToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// A loopback address: reachable from this machine only (yet from every web page its browser opens).
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Serves until the task is cancelled; `onListening` gets the bound port.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let router = Router(context: BasicWebSocketRequestContext.self)
        addRoutes(to: router)
        let webSocketResponder = router.buildResponder()
        let channelConfiguration = HTTP1WebSocketUpgradeChannel.Configuration(
            http1: .init(idleTimeout: TimeAmount(limits.idleTimeout)), ws: .init(maxFrameSize: 1 << 16))
        let gate = gate
        // The HTTP/WebSocket channel behind the gate: a cap per client address and in all,
        // descriptors kept for the nodes, and a deadline for the first request head.
        let server = HTTPServerBuilder { responder in
            DashboardChildChannel(
                base: HTTP1WebSocketUpgradeChannel(
                    responder: responder, webSocketResponder: webSocketResponder, configuration: channelConfiguration),
                gate: gate)
        }
        let access = access
        let app = Application(
            router: router, server: server,
            configuration: .init(address: .hostname(host, port: port), serverName: "matter-sim dashboard"),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? 0
                access.listening(on: bound)
                await onListening(bound)
            },
            logger: logger)
        try await app.run()
    }

    /// The page's files and the fleet's counts: no token (they hold no secret and change nothing).
    static let open: Set<String> = ["/", "/app.js", "/style.css", "/api/figures", "/metrics"]

    /// The token from `Authorization: Bearer` or `?token=` (the printed URL; the page's
    /// WebSocket and QR image).
    private func authorized(_ request: Request) -> Bool {
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            return Self.equal(String(header.dropFirst(7)), token)
        }
        if let given = request.uri.queryParameters.get("token") { return Self.equal(String(given), token) }
        return false
    }

    /// Compares without stopping at the first difference.
    static func equal(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private func addRoutes(to router: Router<BasicWebSocketRequestContext>) {
        let feed = feed, perform = perform
        router.add(middleware: AccessMiddleware(access: access, authorized: authorized, open: Self.open))
        for (path, file, type) in [
            ("/", "index.html", "text/html; charset=utf-8"), ("/app.js", "app.js", "text/javascript; charset=utf-8"),
            ("/style.css", "style.css", "text/css; charset=utf-8"),
        ] {
            router.get(RouterPath(path)) { _, _ -> Response in
                guard let body = Self.resource(file) else { throw HTTPError(.notFound, message: "\(file) is missing from the build") }
                return Response(
                    status: .ok, headers: [.contentType: type, .cacheControl: "no-store"], body: .init(byteBuffer: ByteBuffer(string: body))
                )
            }
        }
        router.get("/api/home") { _, _ -> Response in
            Self.jsonResponse(await feed.homeMessage())
        }
        router.get("/api/figures") { _, _ -> Response in
            guard let json = feed.figuresJSON() else { return Self.jsonResponse("{}", status: .serviceUnavailable) }
            return Self.jsonResponse(json)
        }
        // Prometheus text, on the exporter the relay and the hub use (`HomeMetrics`).
        router.get("/metrics") { _, _ -> Response in await feed.metrics.registry.response() }
        router.get("/api/devices/:serial/qr.svg") { _, context -> Response in
            let serial = try context.parameters.require("serial")
            guard let device = feed.device(serial) else { throw HTTPError(.notFound, message: "no device \(serial)") }
            guard let svg = QRCodeSVG.svg(device.qrPayload) else {
                throw HTTPError(.internalServerError, message: "libqrencode refused the payload")
            }
            return Response(status: .ok, headers: [.contentType: "image/svg+xml"], body: .init(byteBuffer: ByteBuffer(string: svg)))
        }
        // A button: POST /api/devices/SERIAL/ACTION[?value=V], by the control socket's names.
        router.post("/api/devices/:serial/:action") { request, context -> Response in
            let serial = try context.parameters.require("serial")
            let action = try context.parameters.require("action")
            guard feed.device(serial) != nil else { throw HTTPError(.notFound, message: "no device \(serial)") }
            let value = request.uri.queryParameters.get("value")
            let error = await perform(serial, action, value)
            await feed.pushNode(serial)
            struct Answer: Encodable { var ok: Bool; var error: String? }
            return Self.jsonResponse(DashboardFeed.json(Answer(ok: error == nil, error: error)), status: error == nil ? .ok : .badRequest)
        }
        router.ws("/live") { inbound, outbound, _ in
            // Subscribed before the snapshot is read, so no change falls between them.
            let updates = feed.subscribe()
            try await outbound.write(.text(await feed.homeMessage()))
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await message in updates { try await outbound.write(.text(message)) }
                }
                group.addTask {
                    // The page sends nothing; this ends when it goes away.
                    for try await _ in inbound.messages(maxSize: 1 << 16) {}
                }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    static func jsonResponse(_ json: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: json)))
    }

    static func resource(_ name: String) -> String? {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources") else { return nil }
        return try? String(contentsOf: url, encoding: .utf8)
    }
}

/// Refuses a request that names another host or comes from another origin, and one
/// without the token where it is needed; the WebSocket's upgrade request passes here too.
struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let access: DashboardAccess
    let authorized: @Sendable (Request) -> Bool
    let open: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if let refusal = access.refusal(host: request.head.authority, origin: request.headers[.origin]) {
            throw HTTPError(.forbidden, message: refusal)
        }
        guard open.contains(request.uri.path) || authorized(request) else {
            throw HTTPError(.unauthorized, message: "this dashboard needs its token: open the URL matter-sim printed (…/?token=…)")
        }
        return try await next(request, context)
    }
}
