@testable import CloudRelay
import Foundation
import PostgresNIO
@testable import RelayClients
import RelayProtocol
import TestWaiting
import Testing

/// Two relay instances over one real PostgreSQL (issue #42): a device and its controller on
/// different instances, a revocation on one reaching the other, a dead instance's records.
@Suite(.enabled(if: TestPostgres.available, TestPostgres.missing))
struct RelayClusterTests {
    /// Two instances, each with its own store on the server (as two processes would have).
    func withTwoInstances(
        configuration: RelayServerConfiguration = .init(), _ body: @escaping @Sendable (RelayHarness, RelayHarness) async throws -> Void
    ) async throws {
        try await withPostgres { server in
            let (a, b) = (try await RelayStore.open(server.url, logger: testLogger), try await RelayStore.open(server.url, logger: testLogger))
            do {
                try await withRelay(store: a, configuration: configuration) { relayA in
                    try await withRelay(store: b, configuration: configuration) { relayB in try await body(relayA, relayB) }
                }
            } catch {
                await a.close()
                await b.close()
                throw error
            }
            await a.close()
            await b.close()
        }
    }

    @Test func aDeviceOnOneInstanceAnswersAControllerOnTheOther() async throws {
        try await withTwoInstances { relayA, relayB in
            #expect(relayA.server.instanceID != nil && relayA.server.instanceID != relayB.server.instanceID)
            let home = try await relayA.home("Split", device: "porch-light")
            let device = RelayTestDevice(relayURL: relayB.baseURL, credential: home.credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relayA.baseURL, homeToken: home.token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                // Online through B, seen from A: by B's broadcast, or A's look at B's records.
                #expect(await until(controller.presenceUpdates(), within: .seconds(10)) { controller.presence["porch-light"] == true })
                #expect(try await controller.invoke("porch-light", OnOff.command(OnOff.on)).statuses == [.success])
                #expect(await device.node.isOn)
                #expect(try await controller.devices() == [RelayDeviceStatus(deviceID: "porch-light", online: true)])
                // A controller arriving at A after the device connected to B starts with it online.
                let late = RelayControllerClient(
                    relayURL: relayA.baseURL, homeToken: home.token, configuration: controllerConfiguration(), logger: testLogger)
                try await withServices([{ try await late.run() }]) {
                    try await late.waitUntilConnected()
                    #expect(await until(late.presenceUpdates(), within: .seconds(10)) { late.presence["porch-light"] == true })
                    #expect(try await late.invoke("porch-light", OnOff.command(OnOff.off)).statuses == [.success])
                }
                #expect(await !device.node.isOn)
                #expect(relayB.server.metrics.snapshot.routed[.toDevice] ?? 0 >= 2)
            }
        }
    }

    /// Issue #42: a command and its answer cross between instances both ways the relay has: by
    /// PostgreSQL NOTIFY, or down links the instances found through their `relay_instance` rows
    /// (opened on first use, NOTIFY carrying meanwhile); no link is used when notifying.
    @Test(arguments: RelayCrossInstance.allCases)
    func aFrameCrossesInstancesEitherWay(_ crossInstance: RelayCrossInstance) async throws {
        var configuration = RelayServerConfiguration()
        configuration.crossInstance = crossInstance
        try await withTwoInstances(configuration: configuration) { relayA, relayB in
            let home = try await relayA.home("Crossing", device: "lamp")
            let device = RelayTestDevice(relayURL: relayB.baseURL, credential: home.credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relayA.baseURL, homeToken: home.token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                #expect(await until(controller.presenceUpdates(), within: .seconds(10)) { controller.presence["lamp"] == true })
                func forwarded(_ relay: RelayHarness, _ direction: RelayClusterDirection) -> Int {
                    relay.server.metrics.snapshot.clusterForwarded[direction] ?? 0
                }
                // Both ways by link: A's command to B, B's answer to A.
                var byLink = false
                for attempt in 0..<(crossInstance == .forward ? 40 : 4) {
                    let command = attempt % 2 == 0 ? OnOff.on : OnOff.off
                    #expect(try await controller.invoke("lamp", OnOff.command(command)).statuses == [.success])
                    #expect(await device.node.isOn == (command == OnOff.on))
                    byLink = forwarded(relayA, .sent) > 0 && forwarded(relayB, .sent) > 0
                    if byLink { break }
                    // real time: external: the link to the other instance opens in its own time.
                    try await Task.sleep(for: .milliseconds(100))
                }
                let postgres = try #require(relayA.store.engine as? RelayPostgresStore)
                let published = try await postgres.query("SELECT COUNT(*) FROM relay_instance WHERE address IS NOT NULL AND linkSecret IS NOT NULL")
                    .first?.decode(Int64.self)
                switch crossInstance {
                case .forward:
                    #expect(byLink)
                    #expect(forwarded(relayB, .received) > 0 && forwarded(relayA, .received) > 0)
                    #expect(published == 2)
                case .notify:
                    #expect(!byLink)
                    #expect(forwarded(relayA, .received) == 0 && forwarded(relayB, .received) == 0)
                    #expect(relayA.server.metrics.snapshot.clusterEnvelopes[.sent] ?? 0 > 0)
                    #expect(relayB.server.metrics.snapshot.clusterEnvelopes[.sent] ?? 0 > 0)
                    #expect(published == 0)
                }
            }
        }
    }

    /// A link's listener takes only the secret its instance recorded, and drops what is not an envelope.
    @Test func aLinkWithoutTheSecretIsRefused() throws {
        let links = RelayClusterLinks(host: "127.0.0.1", port: 0, advertisedHost: nil, metrics: RelayMetrics(), logger: testLogger)
        #expect(links.accepts("Bearer \(links.secret)"))
        for bad in [nil, "", "Bearer ", "Bearer \(links.secret.dropLast())", links.secret, "Bearer \(links.secret)x"] {
            #expect(!links.accepts(bad), "\(bad ?? "nil")")
        }
        #expect(links.address == nil)
        links.listening(on: 4242)
        #expect(links.address == "127.0.0.1:4242")
    }

    /// Issue #42: a device removed through instance A loses its connection to instance B.
    @Test func aRevocationOnOneInstanceClosesTheConnectionOnTheOther() async throws {
        try await withTwoInstances { relayA, relayB in
            let home = try await relayA.home("Revoked", device: "porch-light")
            let device = RelayTestDevice(relayURL: relayB.baseURL, credential: home.credential, configuration: deviceConfiguration())
            try await withServices(device.services) {
                try await device.client.waitUntilConnected()
                let removed = try await RelayHTTP.request(
                    "DELETE", relayA.httpURL + "/v1/admin/homes/\(home.home.id)/devices/porch-light", bearer: adminToken)
                #expect(removed.status == 204)
                #expect(await until(device.client.stateUpdates(), within: .seconds(5)) { device.client.state != .connected })
                #expect(await until(relayB.server.metrics.changes(), within: .seconds(5)) {
                    relayB.server.metrics.snapshot.connections[.device] == 0
                })
            }
        }
    }

    /// An instance that stops renewing its heartbeat shows no device online, and a live one
    /// deletes its records; a live instance's records count.
    @Test func aDeadInstanceShowsNoDeviceOnlineAndIsCleanedUp() async throws {
        try await withTwoInstances { relayA, _ in
            let home = try await relayA.home("Records", device: "lamp")
            _ = try await relayA.store.registerDevice(homeID: home.home.id, deviceID: "fan")
            let postgres = try #require(relayA.store.engine as? RelayPostgresStore)
            let homeID = home.home.id
            // A live instance holding "fan", a dead one (silent for a minute) holding "lamp".
            try await postgres.query("INSERT INTO relay_instance (id, heartbeatAt) VALUES ('ilive', now() + interval '1 hour')")
            try await postgres.query("INSERT INTO relay_instance (id, heartbeatAt) VALUES ('idead', now() - interval '1 minute')")
            try await postgres.query(
                "INSERT INTO relay_connection VALUES ('ilive', 1, 'device', \(homeID), 'fan', now()), ('idead', 1, 'device', \(homeID), 'lamp', now())")
            let list = try await RelayHTTP.request("GET", relayA.httpURL + "/v1/homes/\(homeID)/devices", bearer: home.token)
            struct DeviceList: Decodable { var devices: [RelayDeviceStatus] }
            let devices = try JSONDecoder().decode(DeviceList.self, from: Data(list.body)).devices
            #expect(devices.first { $0.deviceID == "fan" }?.online == true, "\(list.text)")
            #expect(devices.first { $0.deviceID == "lamp" }?.online == false, "\(list.text)")
            #expect(
                await poll(within: .seconds(10)) {
                    let left = try? await postgres.query("SELECT COUNT(*) FROM relay_connection WHERE instanceID = 'idead'")
                    return (try? left?.first?.decode(Int64.self)) == 0
                })
            let instances = try await postgres.query("SELECT id FROM relay_instance").map { try $0.decode(String.self) }
            #expect(!instances.contains("idead"))
            #expect(instances.contains("ilive"))
        }
    }

    @Test func envelopesRoundTripAndMalformedOnesAreRefused() throws {
        let message = RelayMessage(deviceID: "lamp", exchangeID: 7, fromInitiator: true, opcode: 5, payload: [1, 2, 3])
        let envelopes: [ClusterEnvelope] = [
            .toDevice(target: "ia", from: "ib", homeID: "h1", deviceID: "lamp", session: 9, frame: .message(message)),
            .toController(target: "ib", homeID: "h1", session: 9, frame: .presence(RelayPresence(deviceID: "lamp", online: false))),
            .presence(from: "ia", homeID: "h1", deviceID: "lamp", online: true, sequence: 12),
            .controllerGone(from: "ia", session: 4_000_000_000),
        ]
        for envelope in envelopes { #expect(ClusterEnvelope(payload: envelope.payload) == envelope) }
        for bad in ["", "d", "p ia h1 lamp 2 1", "p ia h1 lamp 1", "x ia -1", "c ib h1 9 !!!", "p ia h1 bad/id 1", "z", String(repeating: "p", count: 9000)] {
            #expect(ClusterEnvelope(payload: bad) == nil, "\(bad.prefix(20))")
        }
    }
}
