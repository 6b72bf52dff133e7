@testable import CloudRelay
import Foundation
import HummingbirdWSClient
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore
import NIOWebSocket
@testable import RelayClients
@testable import RelayProtocol
import ServiceLifecycle
import RelayTestClient
import TestWaiting
import Testing

/// Credentials, home isolation and hostile input.
@Suite struct RelayIsolationTests {
    @Test func missingOrWrongCredentialsAre401() async throws {
        try await withRelay { relay in
            let (home, token, _) = try await relay.home("Home", device: "plug")
            for path in ["/v1/device", "/v1/controller"] {
                let missing = try await RelayHTTP.request("GET", relay.httpURL + path)
                #expect(missing.status == 401, "\(path) without a token")
                let wrong = try await RelayHTTP.request("GET", relay.httpURL + path, bearer: "mrd_not-a-real-credential")
                #expect(wrong.status == 401, "\(path) with a wrong token")
            }
            // A home token is not a device credential, and the reverse.
            #expect(try await RelayHTTP.request("GET", relay.httpURL + "/v1/device", bearer: token).status == 401)
            #expect(try await RelayHTTP.request("GET", relay.httpURL + "/v1/homes/\(home.id)/devices").status == 401)
            #expect(try await RelayHTTP.request("GET", relay.httpURL + "/v1/admin/homes", bearer: token).status == 401)

            // Real WebSocket clients with a bad credential are refused and say why.
            let device = RelayDeviceClient(
                relayURL: relay.baseURL, credential: "mrd_wrong", handler: SilentHandler(), configuration: deviceConfiguration(),
                logger: testLogger)
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: "mrh_wrong", configuration: controllerConfiguration(), logger: testLogger)
            try await withServices([{ try await device.run() }, { try await controller.run() }]) {
                #expect(await until(device.stateUpdates()) { device.state == .disconnected(.unauthorized) })
                #expect(await until(controller.stateUpdates()) { controller.state == .disconnected(.unauthorized) })
                await #expect(throws: RelayError.notConnected) {
                    _ = try await controller.invoke("plug", OnOff.command(OnOff.on), timeout: .milliseconds(300))
                }
            }
            #expect(relay.server.metrics.snapshot.connectionsAccepted[.device] == nil)
            #expect((relay.server.metrics.snapshot.rejected[.unauthorized] ?? 0) >= 7)
        }
    }

    @Test func anotherHomesTokenNeverReachesItsDevices() async throws {
        try await withRelay { relay in
            let a = try await relay.home("Home A", device: "a-light")
            let b = try await relay.home("Home B", device: "b-light")
            // HTTP: B's token on A's home is 403, and lists nothing of A.
            let forbidden = try await RelayHTTP.request("GET", relay.httpURL + "/v1/homes/\(a.home.id)/devices", bearer: b.token)
            #expect(forbidden.status == 403)
            #expect(!forbidden.text.contains("a-light"))
            let register = try await RelayHTTP.request(
                "POST", relay.httpURL + "/v1/homes/\(a.home.id)/devices", bearer: b.token, json: Array(#"{"deviceID":"intruder"}"#.utf8))
            #expect(register.status == 403)
            #expect(try await relay.store.device(homeID: a.home.id, deviceID: "intruder") == nil)
            let own = try await RelayHTTP.request("GET", relay.httpURL + "/v1/homes/\(b.home.id)/devices", bearer: b.token)
            #expect(own.status == 200)
            #expect(own.text.contains("b-light") && !own.text.contains("a-light"))

            // WebSocket: B's controller cannot reach A's device, which never sees a request.
            let deviceA = RelayTestDevice(relayURL: relay.baseURL, credential: a.credential, configuration: deviceConfiguration())
            let controllerB = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: b.token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(deviceA.services + [{ try await controllerB.run() }]) {
                try await deviceA.client.waitUntilConnected()
                try await controllerB.waitUntilConnected()
                await #expect(throws: RelayError.unknownDevice("a-light")) {
                    _ = try await controllerB.invoke("a-light", OnOff.command(OnOff.on))
                }
                await #expect(throws: RelayError.unknownDevice("a-light")) {
                    _ = try await controllerB.read("a-light", paths: [AttributePathIB(OnOff.onOffPath)])
                }
                #expect(await deviceA.node.invocations.isEmpty)
                #expect(await !deviceA.node.isOn)
                // B's presence lists only B's device.
                #expect(controllerB.presence.keys.sorted() == ["b-light"])
                #expect(try await controllerB.devices().map(\.deviceID) == ["b-light"])
            }
        }
    }

    @Test func aDeviceCannotReachAnotherHomesControllers() async throws {
        try await withRelay { relay in
            let a = try await relay.home("Home A", device: "a-device")
            let b = try await relay.home("Home B", device: "b-light")
            let deviceB = RelayTestDevice(relayURL: relay.baseURL, credential: b.credential, configuration: deviceConfiguration())
            let controllerB = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: b.token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(deviceB.services + [{ try await controllerB.run() }]) {
                try await deviceB.client.waitUntilConnected()
                try await controllerB.waitUntilConnected()
                let before = relay.server.metrics.snapshot
                // A's device addresses every session the relay could have handed out so far.
                let report = ReportDataMessage(
                    subscriptionID: 1,
                    attributeReports: [
                        .data(AttributeDataIB(dataVersion: 1, path: AttributePathIB(OnOff.onOffPath), data: .bool(true)))
                    ])
                let sessions = 1...64
                _ = try await WebSocketClient.connect(
                    url: relay.baseURL + "/v1/device",
                    configuration: .init(additionalHeaders: [.authorization: "Bearer \(a.credential)"]), logger: testLogger
                ) { inbound, outbound, _ in
                    var failures = 0
                    for session in sessions {
                        let frame = RelayFrame.message(
                            RelayMessage(session: UInt32(session), exchangeID: 7, fromInitiator: true, opcode: 5, payload: report.encoded())
                        )
                        try await outbound.write(.binary(ByteBuffer(bytes: frame.encoded())))
                    }
                    for try await message in inbound.messages(maxSize: 1 << 16) {
                        guard case .binary(let buffer) = message, let frame = try? RelayFrame(decoding: buffer.readableBytesView) else {
                            continue
                        }
                        if case .failure(let failure) = frame {
                            #expect(failure.reason == .sessionGone)
                            failures += 1
                            if failures == sessions.count { break }
                        }
                    }
                    #expect(failures == sessions.count)
                }
                let after = relay.server.metrics.snapshot
                // Nothing reached any controller; every attempt was refused as a gone session.
                #expect(after.routed[.toController] == before.routed[.toController])
                #expect((after.rejected[.sessionGone] ?? 0) - (before.rejected[.sessionGone] ?? 0) == sessions.count)
                #expect(controllerB.state == .connected)
            }
        }
    }

    @Test func garbageClosesOnlyTheSenderWhileOthersKeepWorking() async throws {
        try await withRelay { relay in
            let (home, token, credential) = try await relay.home("Home", device: "light")
            let garbageCredential = try await relay.store.registerDevice(homeID: home.id, deviceID: "garbage-device")
            let device = RelayTestDevice(relayURL: relay.baseURL, credential: credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()

                func sendRaw(
                    _ path: String, _ bearer: String, _ message: WebSocketOutboundWriter.OutboundFrame
                ) async throws
                    -> WebSocketCloseFrame?
                {
                    try await WebSocketClient.connect(
                        url: relay.baseURL + path,
                        configuration: .init(maxFrameSize: 1 << 20, additionalHeaders: [.authorization: "Bearer \(bearer)"]),
                        logger: testLogger
                    ) { inbound, outbound, _ in
                        try await outbound.write(message)
                        // Read until the relay closes us (bounded by the relay's own close).
                        for try await _ in inbound.messages(maxSize: 1 << 20) {}
                    }
                }

                var garbage: [UInt8] = [0x15, 0x24, 0x00]  // a structure cut short
                garbage += (0..<64).map { _ in UInt8.random(in: 0...255) }
                let cases: [(String, String, WebSocketOutboundWriter.OutboundFrame, WebSocketErrorCode)] = [
                    ("/v1/controller", token, .binary(ByteBuffer(bytes: garbage)), .policyViolation),
                    ("/v1/controller", token, .binary(ByteBuffer(repeating: 0x18, count: 100 * 1024)), .messageTooLarge),
                    ("/v1/controller", token, .text("hello"), .unacceptableData),
                    // Well-formed, but a controller may not send hellos.
                    (
                        "/v1/controller", token, .binary(ByteBuffer(bytes: RelayFrame.hello(RelayHello(homeID: "x")).encoded())),
                        .policyViolation
                    ),
                    ("/v1/device", garbageCredential, .binary(ByteBuffer(bytes: garbage)), .policyViolation),
                    // A device message without a session it answers.
                    (
                        "/v1/device", garbageCredential,
                        .binary(
                            ByteBuffer(
                                bytes: RelayFrame.message(RelayMessage(exchangeID: 1, fromInitiator: true, opcode: 8, payload: []))
                                    .encoded())),
                        .policyViolation
                    ),
                ]
                for (path, bearer, message, expected) in cases {
                    let close = try await sendRaw(path, bearer, message)
                    #expect(close?.closeCode == expected, "\(path) \(message)")
                    // Every other client is still served.
                    let response = try await controller.invoke("light", OnOff.command(OnOff.toggle))
                    #expect(response.statuses == [.success])
                    #expect(device.client.state == .connected)
                    #expect(controller.state == .connected)
                }
                let metrics = relay.server.metrics.snapshot
                #expect(metrics.rejected[.malformed] == 5)
                #expect(metrics.connections[.device] == 1)
                #expect(metrics.connections[.controller] == 1)
                let health = try await RelayHTTP.request("GET", relay.httpURL + "/health")
                #expect(health.status == 200)
                #expect(health.text.contains(#""devices":1"#))
            }
        }
    }

    @Test func registrationsSurviveARestart() async throws {
        let path = try temporaryDatabasePath()
        let (homeID, token, credential) = try await withRelay(databasePath: path) { relay in
            let (home, token, credential) = try await relay.home("Persistent", device: "porch-light")
            return (home.id, token, credential)
        }
        // A new server process state over the same file: the same credentials work.
        try await withRelay(databasePath: path) { relay in
            #expect(try await relay.store.homes().map(\.id) == [homeID])
            let device = RelayTestDevice(relayURL: relay.baseURL, credential: credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                #expect(controller.homeID == homeID)
                let response = try await controller.invoke("porch-light", OnOff.command(OnOff.on))
                #expect(response.statuses == [.success])
                #expect(try await controller.devices() == [RelayDeviceStatus(deviceID: "porch-light", online: true)])
            }
        }
    }

    /// Issue #17 item 5: the database holds token and credential digests, never the secrets,
    /// and only the relay's user can read it: a new file is made 0600, an older 0644 one narrowed.
    @Test func theDatabaseIsTheOwnersOnlyAndHoldsNoSecret() async throws {
        let path = try temporaryDatabasePath()
        let store = try RelayStore(path: path)
        let (home, token) = try await store.addHome(name: "Private")
        let credential = try await store.registerDevice(homeID: home.id, deviceID: "lamp")
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(file)")
        }
        // Neither secret appears in any of the database's files, in any form a reader could use.
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(bytes.range(of: Data(token.utf8)) == nil)
            #expect(bytes.range(of: Data(credential.utf8)) == nil)
        }
        chmod(path, 0o644)
        _ = try RelayStore(path: path)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
    }

    /// Issue #22 item 9: revoking a credential, from this process or from the CLI in
    /// another (a second store on the same file), closes the connections it opened: after
    /// `device remove` the device is offline and unreachable; after `home rotate-token` the
    /// controller holding the old token is cut off and cannot come back.
    @Test func revocationClosesTheConnectionsItRevoked() async throws {
        let path = try temporaryDatabasePath()
        try await withRelay(databasePath: path) { relay in
            let home = try await relay.home("Revoked", device: "porch-light")
            let device = RelayTestDevice(relayURL: relay.baseURL, credential: home.credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: home.token, configuration: controllerConfiguration(timeout: .seconds(3)),
                logger: testLogger)
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                #expect(try await controller.invoke("porch-light", OnOff.command(OnOff.on)).statuses == [.success])

                // The CLI, as another process would: its own store on the same file.
                let cli = try RelayStore(path: path)
                try await cli.removeDevice(homeID: home.home.id, deviceID: "porch-light")
                #expect(await until(controller.presenceUpdates(), within: .seconds(5)) { controller.presence["porch-light"] != true })
                #expect(await until(device.client.stateUpdates(), within: .seconds(5)) { device.client.state != .connected })
                await #expect(throws: (any Error).self) {
                    _ = try await controller.invoke("porch-light", OnOff.command(OnOff.off))
                }
                #expect(await device.node.isOn, "the removed device got the command")

                _ = try await cli.rotateHomeToken(homeID: home.home.id)
                #expect(await until(controller.stateUpdates(), within: .seconds(5)) { controller.state != .connected })
                // The old token is refused on reconnect: it stays cut off.
                #expect(await until(controller.stateUpdates()) { controller.state == .disconnected(.unauthorized) })
            }
        }
    }

    /// Issue #22 item 7: one address holding idle sockets cannot take the relay: past its
    /// share new connections are closed at once, sockets that never send a request head are
    /// closed after the timeout, and `/health` keeps answering other addresses throughout.
    @Test func idleSocketsFromOneAddressAreCappedAndTimedOut() async throws {
        var configuration = RelayServerConfiguration()
        configuration.maxConnectionsPerAddress = 8
        // Longer than the wait for the refused connection below, so that one is the cap's doing.
        configuration.requestHeadTimeout = .seconds(10)
        try await withRelay(configuration: configuration) { relay in
            // Nine connections: exactly one is refused at once. Which one depends on the order
            // in which the server's event loops set them up, not on the order they connected.
            let sockets = try (0..<9).map { _ in try RawConnection(port: relay.port) }
            #expect(
                await poll(within: .seconds(8)) {
                    relay.server.connections.open(from: "127.0.0.1") == 8 && sockets.filter(\.isClosedNow).count == 1
                }, "\(sockets.filter(\.isClosedNow).count) of 9 connections from one address closed before the head timeout")

            let other = try RawConnection(port: relay.port, source: "127.0.0.2")
            other.send("GET /health HTTP/1.1\r\nHost: relay\r\n\r\n")
            #expect(await other.receive(within: 5)?.hasPrefix("HTTP/1.1 200") == true, "/health from another address")

            // Silent sockets are closed after the request-head timeout; their slots come back.
            #expect(
                await poll(within: .seconds(15)) {
                    sockets.allSatisfy(\.isClosedNow) && relay.server.connections.open(from: "127.0.0.1") == 0
                })
            let again = try RawConnection(port: relay.port)
            again.send("GET /health HTTP/1.1\r\nHost: relay\r\n\r\n")
            #expect(await again.receive(within: 5)?.hasPrefix("HTTP/1.1 200") == true)
        }
    }

    /// Issue #22 item 8: a frame is refused from its header when it announces more than
    /// the frame limit; the relay no longer reads (and buffers) up to 1 MiB of it first.
    @Test func anOversizedFrameIsRefusedFromItsHeader() async throws {
        try await withRelay { relay in
            let home = try await relay.home("Big", device: "light")
            let (socket, early) = try await RawConnection.controllerWebSocket(port: relay.port, token: home.token)
            // A masked binary frame announcing 1 MiB, of which only 16 bytes follow.
            var header: [UInt8] = [0x82, 0x80 | 127]
            header += withUnsafeBytes(of: UInt64(1 << 20).bigEndian, Array.init)
            header += [1, 2, 3, 4] + [UInt8](repeating: 0x18, count: 16)
            socket.sendBytes(header)
            // The relay answers with a close (1009) at once, without waiting for the payload.
            #expect(await socket.closeCode(within: 5, after: early) == 1009)
        }
    }

    /// Issue #22 item 12: RFC 6455 5.1: a server closes the connection on a frame the client
    /// did not mask. A masked one on the same kind of connection is served.
    @Test func anUnmaskedClientFrameClosesTheConnection() async throws {
        try await withRelay { relay in
            let home = try await relay.home("Masks", device: "light")
            func upgraded() async throws -> (RawConnection, [UInt8]) {
                try await RawConnection.controllerWebSocket(port: relay.port, token: home.token)
            }
            // A ping, unmasked: refused with 1002.
            let (bare, early) = try await upgraded()
            bare.sendBytes([0x89, 0x02, 0x68, 0x69])
            #expect(await bare.closeCode(within: 5, after: early) == 1002)
            // The same ping masked: answered with a pong, the connection stays.
            let (masked, _) = try await upgraded()
            masked.sendBytes([0x89, 0x82, 1, 2, 3, 4, 0x68 ^ 1, 0x69 ^ 2])
            #expect(await masked.closeCode(within: 2) == nil, "a masked frame closed the connection")
            #expect(relay.server.metrics.snapshot.connections[.controller] == 1)
        }
    }

    /// Issue #22 item 8: a home's token registers at most `maxDevicesPerHome` devices (the
    /// admin API is not limited), so one token cannot fill the relay's database.
    @Test func aHomeTokenRegistersAtMostItsShareOfDevices() async throws {
        var configuration = RelayServerConfiguration()
        configuration.maxDevicesPerHome = 2
        try await withRelay(configuration: configuration) { relay in
            let home = try await relay.home("Small", device: "first")
            func register(_ id: String, bearer: String, admin: Bool = false) async throws -> Int {
                let path = admin ? "/v1/admin/homes/\(home.home.id)/devices" : "/v1/homes/\(home.home.id)/devices"
                return try await RelayHTTP.request(
                    "POST", relay.httpURL + path, bearer: bearer,
                    json: Array(#"{"deviceID":"\#(id)"}"#.utf8)
                ).status
            }
            #expect(try await register("second", bearer: home.token) == 201)
            #expect(try await register("third", bearer: home.token) == 403)
            #expect(try await register("second", bearer: home.token) == 201, "re-issuing a credential is not a new device")
            #expect(try await register("third", bearer: adminToken, admin: true) == 201)
            #expect(try await relay.store.devices(homeID: home.home.id).count == 3)
        }
    }

    /// Issue #22 item 8: frames queued for connections that do not read are bounded in
    /// bytes, per connection and for the relay together, and given back as they are written.
    @Test func queuedBytesAreBoundedPerConnectionAndInAll() async throws {
        let budget = QueueBudget(perConnection: 1000, total: 1500)
        let frame = RelayFrame.message(
            RelayMessage(exchangeID: 1, fromInitiator: true, opcode: 8, payload: [UInt8](repeating: 1, count: 380)))
        let size = frame.encoded().count
        #expect(size > 380 && size < 500)
        let stalled = RelayPeer(id: 1, role: .device, homeID: "h", deviceID: "a", queueCapacity: 1024, budget: budget)
        let other = RelayPeer(id: 2, role: .device, homeID: "h", deviceID: "b", queueCapacity: 1024, budget: budget)
        #expect(stalled.send(frame) && stalled.send(frame))
        #expect(!stalled.send(frame), "past the connection's share")
        #expect(other.send(frame))
        #expect(!other.send(frame), "past the relay's total")
        #expect(budget.inUse == 3 * size)
        // The writer takes a frame: its bytes come back.
        let taken = try #require(await other.outgoing.next())
        #expect(taken.count == 1)
        other.dequeued(taken[0].readableBytes)
        #expect(budget.inUse == 2 * size)
        // A closed connection gives back what it still held.
        stalled.close()
        #expect(budget.inUse == 0)
    }

    /// A controller that reads late gets every answer to a burst of requests, as many as a
    /// connection may send at once; the relay's memory stays bounded by the queued bytes.
    @Test func aConnectionQueueHoldsTheAnswersToAWholeBurst() async throws {
        let configuration = RelayServerConfiguration()
        #expect(configuration.queueCapacity >= configuration.frameBurst)
        let budget = QueueBudget(configuration)
        let controller = RelayPeer(
            id: 1, role: .controller, homeID: "h", deviceID: nil, queueCapacity: configuration.queueCapacity, budget: budget)
        let answer = RelayFrame.message(
            RelayMessage(exchangeID: 1, fromInitiator: false, opcode: 9, payload: [UInt8](repeating: 1, count: 60)))
        let accepted = (0..<configuration.frameBurst).filter { _ in controller.send(answer) }.count
        #expect(accepted == configuration.frameBurst)
        #expect(budget.inUse == configuration.frameBurst * answer.encoded().count)
        // Past the connection's bytes, newer frames are dropped.
        let large = RelayFrame.message(
            RelayMessage(exchangeID: 2, fromInitiator: false, opcode: 9, payload: [UInt8](repeating: 1, count: 60_000)))
        var more = 0
        while controller.send(large) { more += 1 }
        #expect(budget.inUse <= configuration.maxQueuedBytesPerConnection)
        #expect(more < configuration.maxQueuedBytesPerConnection / 60_000 + 1)
        controller.close()
        #expect(budget.inUse == 0)
    }

    @Test func adminAPICreatesHomesAndDevices() async throws {
        try await withRelay { relay in
            let denied = try await RelayHTTP.request("POST", relay.httpURL + "/v1/admin/homes", json: Array(#"{"name":"X"}"#.utf8))
            #expect(denied.status == 401)
            let created = try await RelayHTTP.request(
                "POST", relay.httpURL + "/v1/admin/homes", bearer: adminToken, json: Array(#"{"name":"Beach house"}"#.utf8))
            #expect(created.status == 201)
            let home = try JSONDecoder().decode(RelayHomeCredential.self, from: Data(created.body))
            #expect(home.name == "Beach house")
            let duplicate = try await RelayHTTP.request(
                "POST", relay.httpURL + "/v1/admin/homes", bearer: adminToken, json: Array(#"{"name":"Beach house"}"#.utf8))
            #expect(duplicate.status == 409)

            // The home token registers a device over the controller client, whose credential then connects.
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: home.token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices([{ try await controller.run() }]) {
                let issued = try await controller.registerDevice("deck-light", label: "Deck")
                #expect(issued.homeID == home.id)
                let device = RelayTestDevice(relayURL: relay.baseURL, credential: issued.credential, configuration: deviceConfiguration())
                try await withServices(device.services) {
                    try await device.client.waitUntilConnected()
                    #expect(await until(controller.presenceUpdates()) { controller.presence["deck-light"] == true })
                    #expect(try await controller.devices() == [RelayDeviceStatus(deviceID: "deck-light", label: "Deck", online: true)])
                }
                await #expect(throws: RelayError.self) { _ = try await controller.registerDevice("bad id with spaces") }
            }

            let metrics = try await RelayHTTP.request("GET", relay.httpURL + "/metrics")
            #expect(metrics.status == 200)
            #expect(metrics.text.contains("relay_connections_accepted_total{role=\"device\"} 1"))
            #expect(metrics.text.contains("relay_exchange_round_trip_seconds_bucket{le=\"+Inf\"}"))
            #expect(metrics.text.contains("relay_rejected_total{reason=\"unauthorized\"} 1"))
        }
    }
}

@Suite struct RelayLifecycleTests {
    /// SIGTERM's path: graceful shutdown closes every WebSocket and the server returns,
    /// while clients see the connection go and start reconnecting.
    @Test func gracefulShutdownClosesConnectionsAndReturns() async throws {
        let store = try RelayStore(path: try temporaryDatabasePath())
        let (home, token) = try await store.addHome(name: "Home")
        let credential = try await store.registerDevice(homeID: home.id, deviceID: "light")
        let server = RelayServer(store: store, configuration: RelayServerConfiguration(port: 0), logger: testLogger)
        let portSlot = AwaitableSlot<Int>()
        let group = ServiceGroup(
            configuration: .init(services: [server.application { portSlot.set($0) }], logger: testLogger))
        let stopped = AwaitableSlot<Bool>()
        try await withServices([
            {
                try await group.run()
                stopped.set(true)
            }
        ]) {
            let port = try await withRelayTimeout(.seconds(20), "relay start") { try await portSlot.wait() }
            let device = RelayTestDevice(relayURL: "ws://127.0.0.1:\(port)", credential: credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: "ws://127.0.0.1:\(port)", homeToken: token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                #expect(server.metrics.snapshot.connections[.device] == 1)
                await group.triggerGracefulShutdown()
                // Within 10 s, or the wait throws.
                _ = try await withRelayTimeout(.seconds(10), "graceful shutdown") { try await stopped.wait() }
                #expect(server.metrics.snapshot.connections[.device] == 0)
                #expect(server.metrics.snapshot.connections[.controller] == 0)
                try await device.client.waitUntilDisconnected()
                #expect(await until(controller.stateUpdates()) { controller.state != .connected })
                await #expect(throws: RelayError.self) {
                    _ = try await controller.invoke("light", OnOff.command(OnOff.on), timeout: .milliseconds(300))
                }
            }
        }
    }
}
