@testable import CloudRelay
import Foundation
import MatterProtocol
import NIOCore
import OperatorMetrics
@testable import RelayClients
import RelayProtocol
import TestWaiting
import Testing

/// Issue #42: `/metrics` in Prometheus text format (swift-metrics instruments, swift-prometheus
/// registry): connections by kind, frames in and out, requests by outcome, the round-trip
/// histogram, rate-limit drops and the database pool, each moving with the traffic.
@Suite struct RelayMetricsTests {
    /// The value of one series (`name{labels}` exactly) in an exposition.
    static func value(_ series: String, in text: String) -> Double? { MetricsRegistry.value(series, in: text) }

    static func scrape(_ relay: RelayHarness) async throws -> String {
        let response = try await RelayHTTP.request("GET", relay.httpURL + "/metrics")
        #expect(response.status == 200)
        return response.text
    }

    @Test(arguments: StoreEngine.testable) func theCountersMoveWithTheTraffic(engine: StoreEngine) async throws {
        try await withStore(engine) { store, _ in
            try await withRelay(store: store) { relay in
                let before = try await Self.scrape(relay)
                for series in [
                    #"relay_connections{role="device"}"#, #"relay_frames_received_total{role="controller"}"#,
                    #"relay_requests_total{outcome="answered"}"#, #"relay_rejected_total{reason="home_rate_limited"}"#,
                    "relay_exchange_round_trip_seconds_count",
                ] {
                    #expect(Self.value(series, in: before) == 0, "\(series) is missing or not 0 at start")
                }
                #expect(before.contains("# TYPE relay_exchange_round_trip_seconds histogram"))

                let home = try await relay.home("Metered", device: "lamp")
                let device = RelayTestDevice(relayURL: relay.baseURL, credential: home.credential, configuration: deviceConfiguration())
                let controller = RelayControllerClient(
                    relayURL: relay.baseURL, homeToken: home.token, configuration: controllerConfiguration(timeout: .seconds(3)),
                    logger: testLogger)
                try await withServices(device.services + [{ try await controller.run() }]) {
                    try await device.client.waitUntilConnected()
                    try await controller.waitUntilConnected()
                    #expect(try await controller.invoke("lamp", OnOff.command(OnOff.on)).statuses == [.success])
                    await #expect(throws: (any Error).self) { _ = try await controller.invoke("nobody", OnOff.command(OnOff.on)) }
                    let during = try await Self.scrape(relay)
                    #expect(Self.value(#"relay_connections{role="device"}"#, in: during) == 1)
                    #expect(Self.value(#"relay_connections{role="controller"}"#, in: during) == 1)
                    #expect(Self.value(#"relay_frames_received_total{role="controller"}"#, in: during) ?? 0 >= 1)
                    #expect(Self.value(#"relay_frames_received_total{role="device"}"#, in: during) ?? 0 >= 1)
                    #expect(Self.value(#"relay_frames_routed_total{direction="to_device"}"#, in: during) ?? 0 >= 1)
                    #expect(Self.value(#"relay_requests_total{outcome="answered"}"#, in: during) ?? 0 >= 1)
                    #expect(Self.value(#"relay_requests_total{outcome="unknown_device"}"#, in: during) ?? 0 >= 1)
                    #expect(Self.value("relay_exchange_round_trip_seconds_count", in: during) ?? 0 >= 1)
                    // Two hellos, the command to the device, its answer and the failure for "nobody",
                    // at least; a socket write carries one frame or more.
                    let written = Self.value("relay_frames_written_total", in: during) ?? 0
                    let writes = Self.value("relay_socket_writes_total", in: during) ?? 0
                    #expect(written >= 5 && writes >= 1 && writes <= written, "\(written) frames in \(writes) writes")
                    #expect(Self.value(#"relay_exchange_round_trip_seconds_bucket{le="+Inf"}"#, in: during) ?? 0 >= 1)
                    if engine == .postgres {
                        #expect(Self.value(#"relay_database_connections{state="pool_size"}"#, in: during) == 20)
                        #expect(Self.value(#"relay_database_connections{state="in_use"}"#, in: during) != nil)
                    }
                }
                #expect(
                    await until(relay.server.metrics.changes(), within: .seconds(5)) {
                        relay.server.metrics.snapshot.connections[.device] == 0
                    })
                #expect(Self.value(#"relay_connections{role="device"}"#, in: try await Self.scrape(relay)) == 0)
            }
        }
    }

    /// Issue #42: frames a rate limit dropped are counted per home, in the home's own series;
    /// a home within its limits has none.
    @Test func rateLimitDropsAreCountedPerHome() async throws {
        let clock = ManualClock()
        let configuration = limitedConfiguration(on: clock) {
            $0.maxFramesPerSecondPerHome = 10
            $0.homeFrameBurst = 10
        }
        try await withRelay(configuration: configuration) { relay in
            let crowd = try await relay.home("Crowd", device: "a-light")
            let quiet = try await relay.home("Quiet", device: "b-light")
            let metrics = relay.server.metrics
            try await withRawController(relay, token: quiet.token) { _, outbound in
                for n in 0..<5 { try await outbound.write(.binary(ByteBuffer(bytes: nobodyFrame(n)))) }
                #expect(await until(metrics.changes()) { metrics.snapshot.rejected[.unknownDevice, default: 0] == 5 })
            }
            try await withRawController(relay, token: crowd.token) { _, outbound in
                for n in 0..<30 { try await outbound.write(.binary(ByteBuffer(bytes: nobodyFrame(n)))) }
                #expect(await until(metrics.changes()) { metrics.snapshot.homeDrops[crowd.home.id, default: 0] > 0 })
                // Paid for, the home is read again, its close frame with it.
                await clock.advance(by: .seconds(10))
            }
            let text = try await Self.scrape(relay)
            let dropped = Self.value(#"relay_rate_limit_drops_total{home="\#(crowd.home.id)",limit="home"}"#, in: text)
            #expect(dropped ?? 0 > 0, "\(text)")
            #expect(dropped.map(Int.init) == metrics.snapshot.homeDrops[crowd.home.id])
            #expect(!text.contains(#"home="\#(quiet.home.id)""#))
            #expect(metrics.snapshot.homeDrops[quiet.home.id] == nil)
        }
    }
}
