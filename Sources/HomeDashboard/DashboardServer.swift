import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// `matter-sim home --dashboard`: the page (plain HTML, CSS and JS from this module's
/// resources), the home as JSON, pairing QR codes as SVG, the buttons' actions, and a
/// WebSocket that pushes every change (`DashboardFeed`). With a token every request must
/// carry it (`?token=` or `Authorization: Bearer`): the buttons cut power and networks.
public struct DashboardServer: Sendable {
    public let host: String
    public let port: Int
    public let token: String?
    let feed: DashboardFeed
    let perform: DashboardAction
    let logger: Logger

    public init(host: String, port: Int, token: String?, feed: DashboardFeed, perform: @escaping DashboardAction, logger: Logger) {
        self.host = host
        self.port = port
        self.token = token
        self.feed = feed
        self.perform = perform
        self.logger = logger
    }

    /// Loopback only needs no token; any wider address does.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Serves until the task is cancelled; `onListening` gets the bound port.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let router = Router(context: BasicWebSocketRequestContext.self)
        addRoutes(to: router)
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(maxFrameSize: 1 << 16)),
            configuration: .init(address: .hostname(host, port: port), serverName: "matter-sim dashboard"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger)
        try await app.run()
    }

    static let cookieName = "matter-sim-dashboard"

    /// The token from `?token=` (the printed URL), `Authorization: Bearer`, or the cookie the
    /// first page load set (so the page's scripts, styles and WebSocket need not carry it).
    private func authorized(_ request: Request) -> Bool {
        guard let token else { return true }
        if let given = request.uri.queryParameters.get("token") { return Self.equal(String(given), token) }
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") {
            return Self.equal(String(header.dropFirst(7)), token)
        }
        if let cookies = request.headers[.cookie] {
            for pair in cookies.split(separator: ";") {
                let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
                if parts.count == 2, parts[0] == Self.cookieName { return Self.equal(String(parts[1]), token) }
            }
        }
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
        router.add(
            middleware: TokenMiddleware(
                check: authorized, cookie: token.map { "\(Self.cookieName)=\($0); Path=/; HttpOnly; SameSite=Strict" }))
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

/// Refuses a request without the dashboard's token (when it has one).
struct TokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let check: @Sendable (Request) -> Bool
    /// Set on the page a `?token=` opened.
    let cookie: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard check(request) else {
            throw HTTPError(.unauthorized, message: "this dashboard needs its token: open the URL matter-sim printed (…?token=…)")
        }
        var response = try await next(request, context)
        if let cookie, request.uri.path == "/", request.uri.queryParameters.get("token") != nil {
            response.headers[.setCookie] = cookie
        }
        return response
    }
}
