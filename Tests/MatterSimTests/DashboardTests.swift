import Foundation
import HomeDashboard
import HummingbirdWSClient
import Logging
import MatterDevice
import MatterModel
import MatterProtocol
import NIOCore
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
    /// A node, its control socket and the dashboard on an ephemeral port.
    static func withDashboard(token: String?, _ body: (ProfileNode, _ base: String) async throws -> Void) async throws {
        let directory = try FaultControlTests.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try await ProfileNode.start(
            profile: "devices/dimmable-light.yaml", stateDirectory: directory.appendingPathComponent("state"))
        let control = try await NodeControlServer.bind(
            path: directory.appendingPathComponent("control.sock").path, nodes: [node.simulated], logger: quietLogger)
        let launched = LaunchedNode(name: node.launch.device.name, launch: node.launch, server: node.server, structure: "Home", room: "Den")
        let (feed, server) = Simulator.dashboard(
            DashboardPlan(host: "127.0.0.1", port: 0, token: token, homeName: "Test Home"), nodes: [launched],
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
        try await body(node, "http://127.0.0.1:\(port.value)")
        tasks.cancel()
        await node.stop()
    }

    static func get(_ url: String) async throws -> (Int, Data) {
        let (data, response) = try await URLSession.shared.data(from: URL(string: url)!)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, data)
    }

    static func post(_ url: String) async throws -> (Int, [String: Any]) {
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = "POST"
        let (data, response) = try await URLSession.shared.data(for: request)
        return ((response as? HTTPURLResponse)?.statusCode ?? 0, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    @Test func theHomeAsJSONNeedsTheTokenAndShowsTheNode() async throws {
        try await Self.withDashboard(token: "s3cret") { node, base in
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
            // The page itself, and the QR code as SVG.
            #expect(try await Self.get(base + "/?token=s3cret").0 == 200)
            let (svgStatus, svg) = try await Self.get(base + "/api/devices/\(node.serialNumber)/qr.svg?token=s3cret")
            #expect(svgStatus == 200 && String(decoding: svg, as: UTF8.self).hasPrefix("<svg"))
            #expect(try await Self.get(base + "/api/devices/NO-SUCH/qr.svg?token=s3cret").0 == 404)
        }
    }

    @Test func buttonsActThroughTheControlQueueAndTheSocketPushesWhatChanges() async throws {
        try await Self.withDashboard(token: nil) { node, base in
            let onOff = AttributePath(endpoint: 1, cluster: ClusterID(0x0006), attribute: AttributeID(0))
            // Each pushed message, as JSON text.
            let messages = Watched<[String]>([])
            let ws = Task {
                try await WebSocketClient.connect(url: base.replacingOccurrences(of: "http", with: "ws") + "/live", logger: quietLogger) {
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
            let (status, answer) = try await Self.post(base + "/api/devices/\(node.serialNumber)/button")
            #expect(status == 200 && answer["ok"] as? Bool == true)
            #expect(try await node.server.node.read(onOff).get().value.boolValue == !before)
            #expect(
                await seen {
                    $0["type"] as? String == "attribute" && $0["key"] as? String == "1/OnOff.OnOff" && $0["value"] as? Bool == !before
                })

            // A fault: the node's route message shows the LAN down.
            #expect(try await Self.post(base + "/api/devices/\(node.serialNumber)/lan-down").0 == 200)
            #expect(!node.server.isLANUp)
            #expect(await seen { ($0["type"] as? String == "node") && (($0["route"] as? [String: Any])?["lan"] as? Bool == false) })
            #expect(try await Self.post(base + "/api/devices/\(node.serialNumber)/lan-up").0 == 200)

            // Bad input: a clear error, nothing applied.
            let (badStatus, bad) = try await Self.post(base + "/api/devices/\(node.serialNumber)/dim?value=140")
            #expect(badStatus == 400)
            #expect((bad["error"] as? String)?.contains("0 to 100") == true)
            #expect(try await Self.post(base + "/api/devices/NO-SUCH/button").0 == 404)

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
}
