import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import RelayProtocol

/// A minimal HTTP/1.1 client for the relay's own endpoints (health, metrics,
/// device registration), and for telling why a WebSocket upgrade was refused.
public enum RelayHTTP {
    public struct Response: Sendable, Hashable {
        public var status: Int
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// Largest response body read.
    static let maxBody = 4 * 1024 * 1024

    /// Sends one request (`Connection: close`) and reads the whole response.
    /// `url` is `http://host:port/path` (ws:// is taken as http://).
    public static func request(
        _ method: String, _ url: String, bearer: String? = nil, json body: [UInt8]? = nil, timeout: Duration = .seconds(10)
    ) async throws -> Response {
        guard let target = Target(url) else { throw RelayError.invalidArgument("not an http URL: \(url)") }
        return try await withRelayTimeout(timeout, "\(method) \(target.path)") {
            try await perform(method, target, bearer: bearer, body: body)
        }
    }

    struct Target {
        var host: String
        var port: Int
        var path: String

        init?(_ url: String) {
            guard var components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return nil }
            switch components.scheme {
            case "http", "ws": break
            default: return nil
            }
            self.host = host
            port = components.port ?? 80
            if components.path.isEmpty { components.path = "/" }
            path = components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
        }
    }

    private static func perform(_ method: String, _ target: Target, bearer: String?, body: [UInt8]?) async throws -> Response {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(5))
            .connect(host: target.host, port: target.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    return try NIOAsyncChannel<HTTPClientResponsePart, HTTPClientRequestPart>(wrappingChannelSynchronously: channel)
                }
            }
        return try await channel.executeThenClose { inbound, outbound in
            var head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: method), uri: target.path)
            head.headers.add(name: "Host", value: "\(target.host):\(target.port)")
            head.headers.add(name: "Connection", value: "close")
            if let bearer { head.headers.add(name: "Authorization", value: "Bearer \(bearer)") }
            if let body {
                head.headers.add(name: "Content-Type", value: "application/json")
                head.headers.add(name: "Content-Length", value: "\(body.count)")
            } else if method != "GET" && method != "HEAD" {
                head.headers.add(name: "Content-Length", value: "0")
            }
            // One write: the server may answer a GET once it has the head, and close
            // (`Connection: close`); a separate write of the end after that fails with
            // "I/O on closed channel" although the response is there to read.
            var parts: [HTTPClientRequestPart] = [.head(head)]
            if let body { parts.append(.body(.byteBuffer(ByteBuffer(bytes: body)))) }
            parts.append(.end(nil))
            try await outbound.write(contentsOf: parts)

            var status = 0
            var received: [UInt8] = []
            for try await part in inbound {
                switch part {
                case .head(let responseHead): status = Int(responseHead.status.code)
                case .body(let buffer):
                    guard received.count + buffer.readableBytes <= maxBody else {
                        throw RelayError.invalidResponse("response body above \(maxBody) bytes")
                    }
                    received.append(contentsOf: buffer.readableBytesView)
                case .end: return Response(status: status, body: received)
                }
            }
            guard status != 0 else { throw RelayError.invalidResponse("connection closed before a response") }
            return Response(status: status, body: received)
        }
    }
}
