import ChildProcess
import CloudRelay
import Foundation
import HomeAPI
import HomeHub
import Logging
import MatterController
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore
import OperatorMetrics
import RelayClients
import RelayProtocol
import RelayTestClient
import TestDevices
import TestWaiting
import Testing

/// The local hub with real parts: a device served by MatterDevice's NodeServer on
/// loopback UDP, commissioned by a Home, whose fabric CA issues the hub its credentials;
/// the hub (in process, or the matter-relay binary) holds a CASE session to the device,
/// and a RelayControllerClient with the home token reads, writes, invokes and
/// subscribes through it over a real WebSocket.
@Suite("Local hub", .serialized)
struct HubTests {
    static let onOff = AttributePath(endpoint: 1, cluster: Fixture.onOff, attribute: AttributeID(0))
    static let nodeLabel = AttributePath(endpoint: 0, cluster: Fixture.basicInformation, attribute: AttributeID(0x0005))
    static let token = "hub-test-token"

    /// A commissioned device and the credentials the home issued the hub.
    struct Setup {
        var node: MatterNode
        var deviceTask: Task<Void, Never>
        var home: Home
        var directory: URL
        var credentialsFile: URL
        var issue: HubCredentialsIssue
        var serial: String
        var server: NodeServer

        func tearDown() async {
            deviceTask.cancel()
            await deviceTask.value
            await home.close()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    static func quietLogger(_ label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = .critical
        return logger
    }

    static func setUp(serial: String, access: HubAccess = .administer) async throws -> Setup {
        let attestation = try DeviceAttestationProvisioning.loadOrMint(
            store: nil, vendorID: 0xFFF1, productID: 0x8001, deviceTypeID: 0x0100, authority: testAuthority)
        let logger = quietLogger("test.hub.device")
        let node = try MatterNode(
            description: Fixture.onOffLight(serial: serial), logger: logger,
            commissioning: CommissioningConfiguration(stateStore: nil, attestation: attestation))
        let server = try await NodeServer(
            node: node,
            configuration: NodeServerConfiguration(
                port: 0, binding: .addresses(["127.0.0.1"]), passcode: 20202021, discriminator: 3840), logger: logger)
        let deviceTask = Task { await server.run() }
        let directory = try temporaryDirectory()
        let home = try await openHome(directory)
        let code = try MatterProtocolCode.manual(passcode: 20202021, discriminator: 3840)
        _ = try await home.commissionDevice(setupCode: code, address: try SocketAddress(ipAddress: "127.0.0.1", port: server.port))
        let file = directory.appendingPathComponent("hub.json")
        let issue = try await home.issueHubCredentials(homeID: "home-1", homeToken: token, access: access, to: file)
        return Setup(
            node: node, deviceTask: deviceTask, home: home, directory: directory, credentialsFile: file, issue: issue,
            serial: serial, server: server)
    }

    /// The hub, in process: its Matter side and its WebSocket server on a free port.
    final class RunningHub: Sendable {
        let hub: LocalHub
        let port: Int
        let task: Task<Void, any Error>

        init(hub: LocalHub, port: Int, task: Task<Void, any Error>) {
            self.hub = hub
            self.port = port
            self.task = task
        }

        var url: String { "ws://127.0.0.1:\(port)" }

        func stop() async {
            task.cancel()
            _ = try? await task.value
        }
    }

    static func startHub(_ setup: Setup) async throws -> RunningHub {
        let credentials = try HubCredentials.read(from: setup.credentialsFile)
        var configuration = LocalHub.Configuration()
        configuration.controllerBinding = .addresses(["127.0.0.1"])
        configuration.useDNSSD = false
        configuration.presenceMaxInterval = 2
        configuration.presenceRetryDelay = .seconds(1)
        configuration.responseTimeout = .seconds(2)
        let logger = quietLogger("test.hub")
        let hub = try await LocalHub.start(credentials: credentials, configuration: configuration, logger: logger)
        let store = try RelayStore(path: setup.directory.appendingPathComponent("hub.sqlite").path)
        try await store.mirror(homeID: credentials.homeID, token: credentials.homeToken, deviceIDs: credentials.devices.map(\.deviceID))
        let server = RelayServer(
            store: store, localHub: hub,
            configuration: RelayServerConfiguration(host: "127.0.0.1", port: 0), logger: logger)
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let app = server.application { port in portSink.yield(port) }
        let task = Task {
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { try await app.run() }
                group.addTask { try await hub.run() }
            }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw RelayError.notConnected }
        return RunningHub(hub: hub, port: port, task: task)
    }

    static func client(_ url: String, token: String = token) -> (RelayControllerClient, Task<Void, any Error>) {
        var configuration = RelayControllerClient.Configuration()
        configuration.operationTimeout = .seconds(8)
        configuration.settings.minimumBackoff = .milliseconds(100)
        configuration.settings.maximumBackoff = .milliseconds(500)
        let client = RelayControllerClient(
            relayURL: url, homeToken: token, configuration: configuration,
            logger: quietLogger("test.hub.client"))
        return (client, Task { try await client.run() })
    }

    static func onOffValue(_ report: ReportDataMessage) -> TLVValue? {
        report.attributeReports.compactMap { item -> TLVValue? in
            guard case .data(let data) = item, data.path.cluster == Fixture.onOff, data.path.attribute == AttributeID(0) else { return nil }
            return data.data
        }.last
    }

    static func onOffValue(_ reports: [AttributeReport]) -> TLVValue? {
        reports.last { $0.path.cluster == Fixture.onOff && $0.path.attribute == AttributeID(0) }?.value
    }

    // MARK: Credentials

    @Test func credentialsCarryTheFabricIdentityAndDeviceTableAndTheDeviceLetsTheHubIn() async throws {
        let setup = try await Self.setUp(serial: "HUB-CRED-1")
        defer { PendingCleanups.run { await setup.tearDown() } }
        #expect(setup.issue.granted == ["HUB-CRED-1"])
        #expect(setup.issue.failed.isEmpty)
        let credentials = try HubCredentials.read(from: setup.credentialsFile)
        #expect(credentials.homeID == "home-1")
        #expect(credentials.homeToken == Self.token)
        #expect(credentials.devices.map(\.deviceID) == ["HUB-CRED-1"])
        #expect(credentials.devices.first?.host == "127.0.0.1")
        let identity = try credentials.identity
        #expect(identity.nodeID == setup.issue.credentials.nodeID)
        // Owner-only: the file holds a private key and a token.
        let attributes = try FileManager.default.attributesOfItem(atPath: setup.credentialsFile.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        // The device's ACL (all fabrics, as the node holds it) names the hub's node, next to the controller's entry.
        let acl = try await setup.node.read(AttributePath(endpoint: 0, cluster: ClusterID(0x001F), attribute: AttributeID(0))).get().value
        let entries = (acl.members ?? []).map(\.value)
        #expect(entries.count == 2)
        #expect(entries.contains { ($0[context: 3]?.members ?? []).contains { $0.value.uintValue == identity.nodeID } })

        // Issuing again for the same hub node adds no second entry.
        let again = try await setup.home.issueHubCredentials(
            hubNodeID: identity.nodeID, homeID: "home-1", homeToken: Self.token,
            to: setup.credentialsFile)
        #expect(again.granted == ["HUB-CRED-1"])
        let after = try await setup.node.read(AttributePath(endpoint: 0, cluster: ClusterID(0x001F), attribute: AttributeID(0))).get().value
        #expect((after.members ?? []).count == 2)
    }

    @Test func aBrokenCredentialsFileIsRefusedNamingTheField() throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("hub.json")
        try Data(#"{"version": 1, "fabricID": 1}"#.utf8).write(to: file)
        #expect {
            try HubCredentials.read(from: file)
        } throws: { error in
            "\(error)".contains(file.path) && "\(error)".contains("nodeID")
        }
    }

    @Test func aControllerWithOnlyAnOperationalIdentityCannotCommission() async throws {
        let fabric = try FabricAuthority.create()
        let identity = try fabric.issueIdentity(nodeID: 0x0000_0001_0000_0042)
        let controller = try await MatterController.start(identity: identity, configuration: .init(binding: .addresses(["127.0.0.1"])))
        defer { PendingCleanups.run { await controller.shutdown() } }
        #expect(controller.fabric == nil)
        #expect(controller.identity.nodeID == 0x0000_0001_0000_0042)
        await #expect(throws: ControllerError.self) {
            _ = try await controller.commission(
                address: try SocketAddress(ipAddress: "127.0.0.1", port: 9), passcode: 20202021,
                nodeID: 0x55)
        }
    }

    // MARK: Through the hub

    @Test func readWriteInvokeAndSubscribeThroughTheHub() async throws {
        let setup = try await Self.setUp(serial: "HUB-LIGHT-1")
        defer { PendingCleanups.run { await setup.tearDown() } }
        let hub = try await Self.startHub(setup)
        defer { PendingCleanups.run { await hub.stop() } }
        let (client, clientTask) = Self.client(hub.url)
        defer { clientTask.cancel() }
        try await client.waitUntilConnected()
        #expect(client.homeID == "home-1")
        // Present once the hub's own subscription to the device is up.
        #expect(await until(client.presenceUpdates(), within: .seconds(10)) { client.presence["HUB-LIGHT-1"] == true })
        let before = try await RelayHTTP.request("GET", "http://127.0.0.1:\(hub.port)/metrics").text

        // Read.
        let read = try await client.read("HUB-LIGHT-1", paths: [AttributePathIB(Self.onOff)])
        #expect(Self.onOffValue(read) == .bool(false))

        // Subscribe, then invoke On: the device turns on and the subscription reports it.
        let subscription = try await client.subscribe(
            "HUB-LIGHT-1",
            SubscribeRequestMessage(
                keepSubscriptions: false, minIntervalFloor: 0, maxIntervalCeiling: 5,
                attributeRequests: [AttributePathIB(Self.onOff)]))
        #expect(Self.onOffValue(subscription.priming) == .bool(false))
        let reports = EventLog(subscription.reports)
        let on = InvokeRequestMessage(invokeRequests: [
            CommandDataIB(
                path: CommandPathIB(ConcreteCommandPath(endpoint: 1, cluster: Fixture.onOff, command: CommandID(1))),
                fields: .structure([]))
        ])
        let response = try await client.invoke("HUB-LIGHT-1", on)
        #expect(response.invokeResponses.count == 1)
        #expect(try await setup.node.read(Self.onOff).get().value == .bool(true))
        #expect(await reports.waitFor(within: .seconds(10)) { Self.onOffValue($0) == .bool(true) } != nil)

        // The hub's own presence subscription survived the controller's keepSubscriptions=false:
        // the device still holds both of the hub's subscriptions, its own and the one it forwards.
        let hubNode = setup.issue.credentials.nodeID
        let hubSubscriptions = await setup.server.interactionServer.activeSubscriptions().filter { $0.subject.subject == hubNode }
        #expect(hubSubscriptions.count == 2)
        #expect(client.presence["HUB-LIGHT-1"] == true)
        #expect(subscription.isActive)

        // Write (NodeLabel needs Manage: the hub's Administer entry covers it).
        let write = try await client.write(
            "HUB-LIGHT-1", WriteRequestMessage(writeRequests: [AttributeDataIB(path: AttributePathIB(Self.nodeLabel), data: .utf8("hall"))])
        )
        #expect(write.writeResponses.allSatisfy { $0.status.status.status == .success })
        #expect(try await setup.node.read(Self.nodeLabel).get().value == .utf8("hall"))

        // The hub's own view.
        #expect(hub.hub.presence["HUB-LIGHT-1"] == .some(true))
        let health = try await RelayHTTP.request("GET", "http://127.0.0.1:\(hub.port)/health")
        #expect(health.status == 200)
        let healthJSON = try JSONSerialization.jsonObject(with: Data(health.text.utf8)) as? [String: Any]
        #expect(healthJSON?["devices"] as? Int == 1)
        #expect(healthJSON?["controllers"] as? Int == 1)
        // Issue #42: its /metrics, scraped over HTTP, moved with the traffic: requests answered
        // by outcome and their round trips, the controller's connection, the device's presence.
        let metrics = try await RelayHTTP.request("GET", "http://127.0.0.1:\(hub.port)/metrics")
        #expect(metrics.status == 200)
        func moved(_ series: String, by least: Double) -> Bool {
            let (was, now) = (MetricsRegistry.value(series, in: before) ?? -1, MetricsRegistry.value(series, in: metrics.text) ?? -1)
            return was >= 0 && now - was >= least
        }
        #expect(moved(#"relay_requests_total{outcome="answered"}"#, by: 4), "read, subscribe, invoke, write")
        #expect(moved("relay_exchange_round_trip_seconds_count", by: 4))
        #expect(moved(#"relay_frames_routed_total{direction="to_device"}"#, by: 4))
        #expect(moved(#"relay_frames_routed_total{direction="to_controller"}"#, by: 4))
        #expect(MetricsRegistry.value(#"relay_connections{role="controller"}"#, in: metrics.text) == 1)
        #expect(MetricsRegistry.value(#"hub_devices{presence="present"}"#, in: metrics.text) == 1)
        subscription.cancel()
        reports.stop()
    }

    @Test func wrongOrMissingTokenIs401AndUnknownDeviceFailsFast() async throws {
        let setup = try await Self.setUp(serial: "HUB-LIGHT-2")
        defer { PendingCleanups.run { await setup.tearDown() } }
        let hub = try await Self.startHub(setup)
        defer { PendingCleanups.run { await hub.stop() } }
        let http = "http://127.0.0.1:\(hub.port)"
        let missing = try await RelayHTTP.request("GET", "\(http)/v1/controller")
        #expect(missing.status == 401)
        let wrong = try await RelayHTTP.request("GET", "\(http)/v1/controller", bearer: "not-the-token")
        #expect(wrong.status == 401)
        let list = try await RelayHTTP.request("GET", "\(http)/v1/homes/home-1/devices", bearer: Self.token)
        #expect(list.status == 200)
        #expect(list.text.contains("HUB-LIGHT-2"))
        // A hub serves no device WebSockets.
        let device = try await RelayHTTP.request("GET", "\(http)/v1/device", bearer: "anything")
        #expect(device.status == 404)

        let (wrongClient, wrongTask) = Self.client(hub.url, token: "not-the-token")
        defer { wrongTask.cancel() }
        await #expect(throws: RelayError.self) { try await wrongClient.waitUntilConnected(timeout: .seconds(2)) }

        let (client, clientTask) = Self.client(hub.url)
        defer { clientTask.cancel() }
        try await client.waitUntilConnected()
        // Answered by the hub: the client's own 8 s timeout would throw .timeout instead.
        await #expect {
            _ = try await client.read("NO-SUCH-DEVICE", paths: [AttributePathIB(Self.onOff)])
        } throws: { error in
            (error as? RelayError) == .unknownDevice("NO-SUCH-DEVICE")
        }
        let metrics = try await RelayHTTP.request("GET", "\(http)/metrics").text
        #expect(MetricsRegistry.value(#"relay_requests_total{outcome="unknown_device"}"#, in: metrics) == 1)
    }

    @Test func theDevicesACLEntryBoundsWhatTheHubMayDo() async throws {
        // Operate lets the hub control the device but not write a Manage attribute.
        let setup = try await Self.setUp(serial: "HUB-LIGHT-5", access: .operate)
        defer { PendingCleanups.run { await setup.tearDown() } }
        let hub = try await Self.startHub(setup)
        defer { PendingCleanups.run { await hub.stop() } }
        let (client, clientTask) = Self.client(hub.url)
        defer { clientTask.cancel() }
        try await client.waitUntilConnected()
        #expect(await until(client.presenceUpdates(), within: .seconds(10)) { client.presence["HUB-LIGHT-5"] == true })
        let on = InvokeRequestMessage(invokeRequests: [
            CommandDataIB(
                path: CommandPathIB(ConcreteCommandPath(endpoint: 1, cluster: Fixture.onOff, command: CommandID(1))),
                fields: .structure([]))
        ])
        _ = try await client.invoke("HUB-LIGHT-5", on)
        #expect(try await setup.node.read(Self.onOff).get().value == .bool(true))
        let write = try await client.write(
            "HUB-LIGHT-5", WriteRequestMessage(writeRequests: [AttributeDataIB(path: AttributePathIB(Self.nodeLabel), data: .utf8("x"))]))
        #expect(write.writeResponses.map { $0.status.status.status } == [.unsupportedAccess])
        #expect(try await setup.node.read(Self.nodeLabel).get().value == .utf8(""))
    }

    @Test func aDeviceThatGoesAwayIsAbsentAndRequestsFailWithoutHanging() async throws {
        let setup = try await Self.setUp(serial: "HUB-LIGHT-3")
        defer { PendingCleanups.run { await setup.tearDown() } }
        let hub = try await Self.startHub(setup)
        defer { PendingCleanups.run { await hub.stop() } }
        let (client, clientTask) = Self.client(hub.url)
        defer { clientTask.cancel() }
        try await client.waitUntilConnected()
        #expect(await until(client.presenceUpdates(), within: .seconds(10)) { client.presence["HUB-LIGHT-3"] == true })
        _ = try await client.read("HUB-LIGHT-3", paths: [AttributePathIB(Self.onOff)])

        // Power the device off.
        setup.deviceTask.cancel()
        await setup.deviceTask.value
        #expect(await until(client.presenceUpdates(), within: .seconds(15)) { client.presence["HUB-LIGHT-3"] == false })
        await #expect {
            _ = try await client.read("HUB-LIGHT-3", paths: [AttributePathIB(Self.onOff)])
        } throws: { error in
            (error as? RelayError) == .deviceOffline("HUB-LIGHT-3")
        }
    }

    /// A raw TCP connection to the hub (POSIX sockets): bytes out, whatever comes back.
    static func rawExchange(port: Int, _ chunks: [[UInt8]]) throws -> [UInt8] {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RelayError.notConnected }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 3, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw RelayError.notConnected }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        for chunk in chunks {
            _ = chunk.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
            usleep(200_000)
        }
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            received += buffer[0..<n]
        }
        return received
    }

    /// A masked client WebSocket frame (RFC 6455 5.2) with a short payload.
    static func webSocketFrame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let mask: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        return [0x80 | opcode, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    @Test func garbageFromOneClientDoesNotStopTheHub() async throws {
        let setup = try await Self.setUp(serial: "HUB-LIGHT-6")
        defer { PendingCleanups.run { await setup.tearDown() } }
        let hub = try await Self.startHub(setup)
        defer { PendingCleanups.run { await hub.stop() } }
        let (client, clientTask) = Self.client(hub.url)
        defer { clientTask.cancel() }
        try await client.waitUntilConnected()
        #expect(await until(client.presenceUpdates(), within: .seconds(10)) { client.presence["HUB-LIGHT-6"] == true })

        // Not HTTP at all.
        _ = try Self.rawExchange(port: hub.port, [[0x00, 0xFF, 0x13, 0x37] + Array("\r\n\r\nGET GET GET\r\n\r\n".utf8)])
        // An authenticated WebSocket that sends a frame that is no relay frame, and one that is text.
        let upgrade = Array(
            ("GET /v1/controller HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Bearer \(Self.token)\r\n\r\n").utf8)
        let malformed = try Self.rawExchange(port: hub.port, [upgrade, Self.webSocketFrame(opcode: 0x2, [0xDE, 0xAD, 0xBE, 0xEF])])
        #expect(String(decoding: malformed.prefix(12), as: UTF8.self) == "HTTP/1.1 101")
        // The hub closed that connection (a close frame, opcode 0x8, after its hello and presence frames).
        #expect(malformed.contains(0x88))
        _ = try Self.rawExchange(port: hub.port, [upgrade, Self.webSocketFrame(opcode: 0x1, Array("hello".utf8))])

        // The well-behaved controller is still served.
        let read = try await client.read("HUB-LIGHT-6", paths: [AttributePathIB(Self.onOff)])
        #expect(Self.onOffValue(read) == .bool(false))
        let metrics = try await RelayHTTP.request("GET", "http://127.0.0.1:\(hub.port)/metrics")
        #expect(metrics.text.contains("relay_rejected_total{reason=\"malformed\"} 2"))
    }

    @Test func aDeviceThatComesBackIsPresentAgainAndServedThroughTheHub() async throws {
        // A device that keeps its fabric on disk, restarted on the same port.
        let stateDirectory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: stateDirectory) }
        let attestation = try DeviceAttestationProvisioning.loadOrMint(
            store: nil, vendorID: 0xFFF1, productID: 0x8001, deviceTypeID: 0x0100, authority: testAuthority)
        let logger = Self.quietLogger("test.hub.device")
        func boot(port: Int) async throws -> (MatterNode, NodeServer, Task<Void, Never>) {
            let node = try MatterNode(
                description: Fixture.onOffLight(serial: "HUB-LIGHT-7"), logger: logger,
                commissioning: CommissioningConfiguration(
                    stateStore: try NodeStateStore(directory: stateDirectory),
                    attestation: attestation))
            let server = try await NodeServer(
                node: node,
                configuration: NodeServerConfiguration(
                    port: port, binding: .addresses(["127.0.0.1"]), passcode: 20202021, discriminator: 3840), logger: logger)
            return (node, server, Task { await server.run() })
        }
        let (firstNode, firstServer, firstRun) = try await boot(port: 0)
        let directory = try temporaryDirectory()
        let home = try await openHome(directory)
        _ = try await home.commissionDevice(
            setupCode: try MatterProtocolCode.manual(passcode: 20202021, discriminator: 3840),
            address: try SocketAddress(ipAddress: "127.0.0.1", port: firstServer.port))
        let file = directory.appendingPathComponent("hub.json")
        let issue = try await home.issueHubCredentials(homeID: "home-1", homeToken: Self.token, to: file)
        let setup = Setup(
            node: firstNode, deviceTask: firstRun, home: home, directory: directory, credentialsFile: file, issue: issue,
            serial: "HUB-LIGHT-7", server: firstServer)
        defer { PendingCleanups.run { await setup.tearDown() } }
        let hub = try await Self.startHub(setup)
        defer { PendingCleanups.run { await hub.stop() } }
        let (client, clientTask) = Self.client(hub.url)
        defer { clientTask.cancel() }
        try await client.waitUntilConnected()
        #expect(await until(client.presenceUpdates(), within: .seconds(10)) { client.presence["HUB-LIGHT-7"] == true })

        firstRun.cancel()
        await firstRun.value
        #expect(await until(client.presenceUpdates(), within: .seconds(15)) { client.presence["HUB-LIGHT-7"] == false })

        let (node, _, secondRun) = try await boot(port: firstServer.port)
        defer { secondRun.cancel() }
        #expect(await until(client.presenceUpdates(), within: .seconds(20)) { client.presence["HUB-LIGHT-7"] == true })
        let on = InvokeRequestMessage(invokeRequests: [
            CommandDataIB(
                path: CommandPathIB(ConcreteCommandPath(endpoint: 1, cluster: Fixture.onOff, command: CommandID(1))),
                fields: .structure([]))
        ])
        _ = try await client.invoke("HUB-LIGHT-7", on)
        #expect(try await node.read(Self.onOff).get().value == .bool(true))
        secondRun.cancel()
        await secondRun.value
    }

    // MARK: The matter-relay binary

    static var relayBinary: URL {
        URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent().appendingPathComponent("matter-relay")
    }

    @Test func matterRelayServeModeHubForwardsToTheDevice() async throws {
        #expect(
            FileManager.default.isExecutableFile(atPath: Self.relayBinary.path), "matter-relay is not built at \(Self.relayBinary.path)")
        let setup = try await Self.setUp(serial: "HUB-LIGHT-4")
        defer { PendingCleanups.run { await setup.tearDown() } }
        // homectl, a separate process on the same home file, issues the credentials the hub runs with.
        let file = setup.directory.appendingPathComponent("hub-cli.json")
        let issued = try HomeCtlTests.homectl(
            [
                "hub", "credentials", "--out", file.path, "--home-id", "cli-home", "--home-token", "cli-token",
                "--node-id", "0x1234", "--json",
            ], home: setup.directory.appendingPathComponent("home.sqlite"))
        #expect(issued.status == 0, "\(issued.error)")
        #expect(issued.output.contains("\"granted\" : [\n    \"HUB-LIGHT-4\"\n  ]"), "\(issued.output)")
        #expect(try HubCredentials.read(from: file).nodeID == 0x1234)
        let process = try Subprocess([
            Self.relayBinary.path, "serve", "--mode", "hub", "--credentials", file.path, "--port", "0",
            "--database", setup.directory.appendingPathComponent("hub-cli.sqlite").path, "--no-dnssd", "--log-level", "error",
        ])
        defer { _ = process.wait(timeout: 0) }
        let output = PipeCollector(process.output)
        let errors = PipeCollector(process.errors)
        var port: Int?
        // real time: external: the hub's CLI process prints its port.
        let deadline = Date().addingTimeInterval(30)
        while port == nil, Date() < deadline, process.isRunning {
            if let line = output.text.split(separator: "\n").first(where: { $0.contains("hub listening on 127.0.0.1:") }),
                let range = line.range(of: "127.0.0.1:")
            {
                port = Int(line[range.upperBound...].prefix { $0.isNumber })
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let hubPort = try #require(port, "no listening line; stderr: \(errors.text)")
        let (client, clientTask) = Self.client("ws://127.0.0.1:\(hubPort)", token: "cli-token")
        defer { clientTask.cancel() }
        try await client.waitUntilConnected()
        #expect(await until(client.presenceUpdates(), within: .seconds(15)) { client.presence["HUB-LIGHT-4"] == true })
        let on = InvokeRequestMessage(invokeRequests: [
            CommandDataIB(
                path: CommandPathIB(ConcreteCommandPath(endpoint: 1, cluster: Fixture.onOff, command: CommandID(1))),
                fields: .structure([]))
        ])
        _ = try await client.invoke("HUB-LIGHT-4", on)
        #expect(try await setup.node.read(Self.onOff).get().value == .bool(true))
        let unauthorized = try await RelayHTTP.request("GET", "http://127.0.0.1:\(hubPort)/v1/controller", bearer: "wrong")
        #expect(unauthorized.status == 401)

        // SIGTERM: a graceful stop with its summary line.
        kill(process.pid, SIGTERM)
        #expect(process.wait(timeout: 10) == 0)
        #expect(output.finish().contains("matter-relay stopped"))
    }
}
