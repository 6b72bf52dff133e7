import Foundation
@testable import HomeDashboard
import HummingbirdWSClient
import Logging
import MatterDevice
import MatterModel
import MatterProtocol
import NIOCore
import OperatorMetrics
import TestWaiting
import Testing
@testable import matter_sim

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The dashboard over a real node on loopback: the page's JSON, its token, its buttons
/// through the control socket's queue, and the WebSocket's pushes as a commissioner works.
/// (scripts/dashboard-check.sh drives the same page in chromium.)
@Suite("Dashboard", .serialized)
struct DashboardTests {
    /// A node, its control socket and the dashboard on an ephemeral port; `body` gets the
    /// dashboard's token (the one given, or the one it made up).
    static func withDashboard(
        token: String?, limits: DashboardLimits = DashboardLimits(),
        _ body: (ProfileNode, _ base: String, _ token: String, DashboardServer) async throws -> Void
    ) async throws {
        let directory = try FaultControlTests.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try await ProfileNode.start(
            profile: "devices/dimmable-light.yaml", stateDirectory: directory.appendingPathComponent("state"))
        let control = try await NodeControlServer.bind(
            path: directory.appendingPathComponent("control.sock").path, nodes: [node.simulated], logger: quietLogger)
        let launched = LaunchedNode(name: node.launch.device.name, launch: node.launch, server: node.server, structure: "Home", room: "Den")
        let (feed, server) = Simulator.dashboard(
            DashboardPlan(host: "127.0.0.1", port: 0, token: token, homeName: "Test Home", limits: limits), nodes: [launched],
            simulated: [node.simulated], control: control, logger: quietLogger)
        let port = Watched(0)
        let tasks = Task {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await control.run() }
                group.addTask { await feed.run() }
                group.addTask { try? await server.run { bound in port.update { $0 = bound } } }
            }
        }
        defer { tasks.cancel() }
        #expect(await port.until { $0 != 0 })
        try await body(node, "http://127.0.0.1:\(port.value)", server.token, server)
        tasks.cancel()
        await node.stop()
    }

    static func get(_ url: String) async throws -> (Int, Data) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    static func post(_ url: String, token: String?, origin: String? = nil) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let origin { request.setValue(origin, forHTTPHeaderField: "Origin") }
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    @Test func theHomeAsJSONNeedsTheTokenAndShowsTheNode() async throws {
        try await Self.withDashboard(token: "s3cret") { node, base, _, _ in
            #expect(try await Self.get(base + "/api/home").0 == 401)
            #expect(try await Self.get(base + "/api/home?token=wrong!").0 == 401)
            let (status, data) = try await Self.get(base + "/api/home?token=s3cret")
            #expect(status == 200)
            let home = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            #expect(home["home"] as? String == "Test Home")
            let device = try #require((home["devices"] as? [[String: Any]])?.first)
            #expect(device["serial"] as? String == node.serialNumber)
            #expect(device["room"] as? String == "Den")
            #expect(device["acts"] as? [String] == ["button", "dim"])
            let state = try #require(device["state"] as? [String: Any])
            #expect(state["1/OnOff.OnOff"] != nil && state["1/LevelControl.CurrentLevel"] != nil)
            #expect((device["qrPayload"] as? String)?.hasPrefix("MT:") == true)
            // The page itself (its files need no token), and the QR code as SVG (it does).
            #expect(try await Self.get(base + "/?token=s3cret").0 == 200)
            #expect(try await Self.get(base + "/app.js").0 == 200)
            #expect(try await Self.get(base + "/api/devices/\(node.serialNumber)/qr.svg").0 == 401)
            let (svgStatus, svg) = try await Self.get(base + "/api/devices/\(node.serialNumber)/qr.svg?token=s3cret")
            #expect(svgStatus == 200 && String(decoding: svg, as: UTF8.self).hasPrefix("<svg"))
            #expect(try await Self.get(base + "/api/devices/NO-SUCH/qr.svg?token=s3cret").0 == 404)
        }
    }

    @Test func buttonsActThroughTheControlQueueAndTheSocketPushesWhatChanges() async throws {
        try await Self.withDashboard(token: nil) { node, base, token, _ in
            let onOff = AttributePath(endpoint: 1, cluster: ClusterID(0x0006), attribute: AttributeID(0))
            // Each pushed message, as JSON text.
            let messages = Watched<[String]>([])
            let ws = Task {
                try await WebSocketClient.connect(url: base.replacingOccurrences(of: "http", with: "ws") + "/live?token=\(token)", logger: quietLogger) {
                    inbound, _, _ in
                    for try await message in inbound.messages(maxSize: 1 << 22) {
                        guard case .text(let text) = message else { continue }
                        messages.update { $0.append(text) }
                    }
                }
            }
            defer { ws.cancel() }
            func seen(_ match: @escaping ([String: Any]) -> Bool) async -> Bool {
                await messages.until { texts in
                    texts.contains { text in
                        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]).map(match) ?? false
                    }
                }
            }
            #expect(await seen { $0["type"] as? String == "home" })

            // The page's button: the light toggles, and the socket says so.
            let before = try #require(await node.server.node.read(onOff).get().value.boolValue)
            let (status, answer) = try await Self.post(base + "/api/devices/\(node.serialNumber)/button", token: token)
            #expect(status == 200 && answer["ok"] as? Bool == true)
            #expect(try await node.server.node.read(onOff).get().value.boolValue == !before)
            #expect(
                await seen {
                    $0["type"] as? String == "attribute" && $0["key"] as? String == "1/OnOff.OnOff" && $0["value"] as? Bool == !before
                })

            // A fault: the node's route message shows the LAN down.
            #expect(try await Self.post(base + "/api/devices/\(node.serialNumber)/lan-down", token: token).0 == 200)
            #expect(!node.server.isLANUp)
            #expect(await seen { ($0["type"] as? String == "node") && (($0["route"] as? [String: Any])?["lan"] as? Bool == false) })
            #expect(try await Self.post(base + "/api/devices/\(node.serialNumber)/lan-up", token: token).0 == 200)

            // Bad input: a clear error, nothing applied.
            let (badStatus, bad) = try await Self.post(base + "/api/devices/\(node.serialNumber)/dim?value=140", token: token)
            #expect(badStatus == 400)
            #expect((bad["error"] as? String)?.contains("0 to 100") == true)
            #expect(try await Self.post(base + "/api/devices/NO-SUCH/button", token: token).0 == 404)

            // A commissioner: the socket pushes the fabric and the traffic log its steps.
            let commissioner = try await LoopbackCommissioner.start()
            _ = try await commissioner.commission(try node.address, passcode: node.passcode)
            #expect(await seen { ($0["type"] as? String == "node") && (($0["fabrics"] as? [Any])?.count == 1) })
            #expect(await seen { (($0["entry"] as? [String: Any])?["summary"] as? String)?.hasPrefix("PBKDFParamRequest") == true })
            #expect(
                await seen {
                    (($0["entry"] as? [String: Any])?["summary"] as? String) == "invoke 0/GeneralCommissioning.CommissioningComplete"
                })
            await commissioner.stop()
        }
    }

    /// Issue #42: the home's /metrics in Prometheus text, without the token (counts only), on
    /// the relay's exporter; a commissioner's traffic moves the node's messages, sessions,
    /// requests served and service-time series.
    @Test func theHomesMetricsAreScrapedOverHTTPAndMoveWithTheTraffic() async throws {
        try await Self.withDashboard(token: "s3cret") { node, base, _, _ in
            func scrape() async throws -> String {
                let (status, data) = try await Self.get(base + "/metrics")
                #expect(status == 200)
                return String(decoding: data, as: UTF8.self)
            }
            let before = try await scrape()
            #expect(MetricsRegistry.value(#"matter_nodes{state="running"}"#, in: before) == 1)
            #expect(MetricsRegistry.value(#"matter_nodes{state="commissioned"}"#, in: before) == 0)
            #expect(MetricsRegistry.value(#"matter_node_messages_total{direction="received"}"#, in: before) == 0)
            #expect(before.contains("# TYPE matter_node_messages_total counter"))

            let commissioner = try await LoopbackCommissioner.start()
            _ = try await commissioner.commission(try node.address, passcode: node.passcode)
            let after = try await scrape()
            await commissioner.stop()
            #expect(MetricsRegistry.value(#"matter_nodes{state="commissioned"}"#, in: after) == 1)
            #expect(MetricsRegistry.value(#"matter_node_messages_total{direction="received"}"#, in: after) ?? 0 > 5)
            #expect(MetricsRegistry.value(#"matter_node_messages_total{direction="sent"}"#, in: after) ?? 0 > 5)
            #expect(MetricsRegistry.value(#"matter_node_requests_total{kind="invoke",outcome="answered"}"#, in: after) ?? 0 >= 1)
            #expect(MetricsRegistry.value(#"matter_node_service_time_seconds_count{kind="invoke"}"#, in: after) ?? 0 >= 1)
            #expect(MetricsRegistry.value(#"matter_node_service_time_seconds{kind="invoke",quantile="0.99"}"#, in: after) ?? 0 > 0)
            #expect(MetricsRegistry.value(#"matter_dashboard_connections_refused_total"#, in: after) == 0)
        }
    }

    /// Another web page open in the same browser: its requests carry its own Origin, and a
    /// DNS-rebinding one names its own host. Neither may act, read the home or open the socket,
    /// even on loopback and with no token given (one is made up and printed).
    @Test func anotherOriginOrHostIsRefusedAndATokenIsAlwaysNeeded() async throws {
        try await Self.withDashboard(token: nil) { node, base, token, _ in
            let port = try #require(Int(base.split(separator: ":").last ?? ""))
            #expect(token.count == 32)
            let lanDown = base + "/api/devices/\(node.serialNumber)/lan-down"
            // No token: refused, nothing done.
            #expect(try await Self.post(lanDown, token: nil).0 == 401)
            #expect(try await Self.get(base + "/api/home").0 == 401)
            // A foreign Origin, even with the token (a page that learnt it cannot use it).
            #expect(try await Self.post(lanDown, token: token, origin: "http://evil.example").0 == 403)
            #expect(try await Self.post(lanDown, token: token, origin: "http://127.0.0.1:\(port + 1)").0 == 403)
            #expect(try await Self.post(lanDown, token: token, origin: "null").0 == 403)
            #expect(node.server.isLANUp)
            // A foreign Host (DNS rebinding), with the token, and without one on the page's files.
            #expect(try await RawHTTPClient.status(port: port, "GET /api/home?token=\(token) HTTP/1.1\r\nHost: evil.example:\(port)\r\n") == 403)
            #expect(try await RawHTTPClient.status(port: port, "GET / HTTP/1.1\r\nHost: evil.example:\(port)\r\n") == 403)
            #expect(try await RawHTTPClient.status(port: port, "GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port + 1)\r\n") == 403)
            #expect(try await RawHTTPClient.status(port: port, "GET / HTTP/1.0\r\n") == 403)
            // The WebSocket: a foreign Origin, or no token, gets no upgrade (and no pairing codes):
            // Hummingbird answers a refused upgrade 400 and closes.
            let upgrade = { (origin: String, query: String) in
                "GET /live\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: \(origin)\r\n"
            }
            #expect(try await RawHTTPClient.status(port: port, upgrade("http://evil.example", "?token=\(token)")) == 400)
            #expect(try await RawHTTPClient.status(port: port, upgrade("ws://evil.example", "?token=\(token)")) == 400)
            #expect(try await RawHTTPClient.status(port: port, upgrade("http://127.0.0.1:\(port)", "")) == 400)
            #expect(try await RawHTTPClient.status(port: port, upgrade("http://127.0.0.1:\(port)", "?token=\(token)")) == 101)
            #expect(try await RawHTTPClient.status(port: port, upgrade("http://localhost:\(port)", "?token=\(token)")) == 101)
            // Its own origin, by any of its names, with the token: applied.
            #expect(try await Self.post(lanDown, token: token, origin: "http://localhost:\(port)").0 == 200)
            #expect(!node.server.isLANUp)
            #expect(try await RawHTTPClient.status(port: port, "GET / HTTP/1.1\r\nHost: [::1]:\(port)\r\n") == 200)
        }
    }

    /// Silent connections by the hundred from one address: past its share they are closed at
    /// once, the rest when no request head came in time, and the token holder, elsewhere, is
    /// answered all along.
    @Test func aConnectionFloodIsCappedAndTimedOutAndTheTokenHolderIsAnswered() async throws {
        var limits = DashboardLimits()
        limits.connectionsPerAddress = 8
        limits.requestHeadTimeout = .seconds(3)
        try await Self.withDashboard(token: nil, limits: limits) { _, base, token, server in
            let port = try #require(Int(base.split(separator: ":").last ?? ""))
            // 200 connections from 127.0.0.2, sending nothing (bounded: 200, each closed by us
            // after 30 s at the latest).
            let closed = Watched(0)
            var flood: [any Channel] = []
            for _ in 0..<200 {
                flood.append(try await RawHTTPClient.connect(port: port, from: "127.0.0.2", closed: closed, limit: .seconds(30)))
            }
            #expect(try await Self.get(base + "/api/home?token=\(token)").0 == 200)
            #expect(try await Self.post(base + "/api/devices/NO-SUCH/button", token: token).0 == 404)
            // Every one of them is closed by the server (before our 30 s): refused at once, or
            // timed out without a request head.
            #expect(await closed.until(within: .seconds(20)) { $0 == flood.count })
            // (Most at once: a slot freed by the timeout may take a later one of them.)
            #expect(server.connectionsRefused >= flood.count / 2)
            // The address has its share back.
            #expect(try await RawHTTPClient.status(port: port, "GET /api/figures HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n") != 0)
        }
    }

    /// Descriptors running low: no new connection takes one the nodes' state files need.
    @Test func newConnectionsLeaveTheNodesTheirDescriptors() {
        var limits = DashboardLimits()
        limits.descriptorReserve = 100
        let low = DashboardConnectionGate(limits: limits) { (open: 930, limit: 1024) }
        #expect(low.admit("127.0.0.1")?.contains("930 of 1024 descriptors") == true)
        #expect(low.refused == 1)
        let plenty = DashboardConnectionGate(limits: limits) { (open: 900, limit: 1024) }
        #expect(plenty.admit("127.0.0.1") == nil)
        #expect(plenty.refused == 0)
    }
}
