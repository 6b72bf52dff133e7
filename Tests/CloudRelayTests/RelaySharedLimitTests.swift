@testable import CloudRelay
import Foundation
import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore
@testable import RelayClients
import RelayProtocol
import TestWaiting
import Testing

/// Issue #42: with two instances on one PostgreSQL, a home's frame budget is one budget, not
/// one per instance (`RelayLimitSharing`), and other homes are not touched by it.
@Suite(.enabled(if: TestPostgres.available, TestPostgres.missing))
struct RelaySharedLimitTests {
    /// A home sends 90 frames a second through each of two instances: within what one instance
    /// alone would let it send (100/s), twice what the home may send in all. Over three
    /// seconds, once the instances have told each other, they let through one budget between
    /// them (300, with at most both shares' bursts more: 400), not all of the 540 or so sent,
    /// as one budget per instance did; both shed some, counted under the home. Meanwhile
    /// another home, its controller on one instance and its device on the other, gets every
    /// command answered and loses nothing.
    @Test func aHomeFloodingTwoInstancesIsHeldToOneBudgetWhileAnotherIsServed() async throws {
        var configuration = RelayServerConfiguration()
        configuration.maxFramesPerSecondPerHome = 100
        configuration.homeFrameBurst = 100
        try await RelayClusterTests().withTwoInstances(configuration: configuration) { a, b in
            let (window, offered, flood) = try await Self.flood(a, b, framesPerTick: 9, payload: 0)
            #expect(offered >= 430, "\(offered) frames sent in 3 s: too few to need one budget")
            #expect(window <= 400, "\(window) of \(offered) frames let through in 3 s: more than one budget of 100/s")
            #expect(window >= 200, "\(window) of \(offered) frames let through in 3 s: the home's budget went unused")
            for relay in [a, b] {
                #expect(relay.server.metrics.snapshot.homeDrops[flood, default: 0] > 0, "the flood was shed on both instances")
            }
        }
    }

    /// The same with the budget of bytes read: a home sends about 9,000 bytes a second through
    /// each of two instances, within what one alone reads for it (10,000/s), twice what it may
    /// send in all. Over three seconds they read one budget between them (30,000 bytes, with at
    /// most both shares' bursts more, 40,000, and what a read takes past the budget once it is
    /// paid: the bound is 48,000, about 105 of these frames), not all 120 or so, as one budget
    /// per instance did (54,480 bytes); the other home is served meanwhile.
    @Test func aHomeSendingBytesThroughTwoInstancesIsHeldToOneByteBudget() async throws {
        var configuration = RelayServerConfiguration()
        configuration.maxBytesPerSecondPerHome = 10_000
        configuration.homeByteBurst = 10_000
        try await RelayClusterTests().withTwoInstances(configuration: configuration) { a, b in
            // Two frames of about 450 bytes on the wire every 100 ms, through each instance.
            let frame = nobodyFrame(0, payload: 420).count + 8
            let (window, offered, _) = try await Self.flood(a, b, framesPerTick: 2, payload: 420)
            #expect(offered >= 110, "\(offered) frames sent in 3 s: too few to need one budget")
            #expect(window * frame <= 48_000, "\(window) of \(offered) frames read in 3 s: more than one budget of 10,000 bytes/s")
            #expect(window * frame >= 20_000, "\(window) of \(offered) frames read in 3 s: the home's budget went unused")
        }
    }

    /// A home floods both instances, `framesPerTick` frames (for nobody, `payload` bytes each)
    /// every 100 ms through each, while another home, its controller on `b` and its device on
    /// `a`, sends ten commands: all must be answered, and that home loses nothing. Returns the
    /// flooding frames let through (answered "unknown device") and sent in the three seconds
    /// after the first (bursts spent, reports exchanged, shares set), and the flooding home.
    private static func flood(
        _ a: RelayHarness, _ b: RelayHarness, framesPerTick: Int, payload: Int
    ) async throws -> (window: Int, offered: Int, home: String) {
        let flood = try await a.home("Flood", device: "f-light")
        let calm = try await a.home("Calm", device: "c-light")
        let device = RelayTestDevice(relayURL: a.baseURL, credential: calm.credential, configuration: deviceConfiguration())
        let controller = RelayControllerClient(
            relayURL: b.baseURL, homeToken: calm.token, configuration: controllerConfiguration(), logger: testLogger)
        // Frames of the flooding home let through, on both instances (each is answered "unknown device").
        @Sendable func admitted() -> Int { [a, b].map { $0.server.metrics.snapshot.rejected[.unknownDevice, default: 0] }.reduce(0, +) }
        let flooding = NIOLockedValueBox(true)
        let sent = NIOLockedValueBox(0)
        let figures = try await withServices(device.services + [{ try await controller.run() }]) {
            // real time: external: the instances tell each other their demand in real time, so the
            // flood is paced, and the budget measured, on it.
            try await device.client.waitUntilConnected()
            try await controller.waitUntilConnected()
            #expect(await until(controller.presenceUpdates(), within: .seconds(10)) { controller.presence["c-light"] == true })
            let figures = try await withThrowingTaskGroup(of: (Int, Int)?.self) { group in
                for relay in [a, b] {
                    group.addTask {
                        // framesPerTick every 100 ms, until told to stop.
                        try? await withRawController(relay, token: flood.token) { _, outbound in
                            var n = 0
                            while flooding.withLockedValue({ $0 }) {
                                for _ in 0..<framesPerTick {
                                    try await outbound.write(.binary(ByteBuffer(bytes: nobodyFrame(n, payload: payload))))
                                    n += 1
                                }
                                sent.withLockedValue { $0 += framesPerTick }
                                try await Task.sleep(for: .milliseconds(100))
                            }
                        }
                        return nil
                    }
                }
                group.addTask {
                    defer { flooding.withLockedValue { $0 = false } }
                    try await Task.sleep(for: .seconds(1))
                    let (start, startSent) = (admitted(), sent.withLockedValue { $0 })
                    let end = ContinuousClock.now + .seconds(3)
                    for _ in 0..<10 {
                        #expect(try await controller.invoke("c-light", OnOff.command(OnOff.toggle)).statuses == [.success])
                    }
                    try await Task.sleep(until: end, clock: .continuous)
                    return (admitted() - start, sent.withLockedValue { $0 } - startSent)
                }
                var figures: (Int, Int)?
                for try await result in group { figures = figures ?? result }
                return figures ?? (0, 0)
            }
            #expect(await device.node.invocations.count == 10)
            return figures
        }
        for relay in [a, b] {
            #expect(relay.server.metrics.snapshot.homeDrops[calm.home.id] == nil, "the other home lost nothing")
        }
        return (figures.0, figures.1, flood.home.id)
    }

    @Test func reportsRoundTripAndMalformedOnesAreRefused() {
        let rates = ["h:home-1": 523.0, "a:127.0.0.1": 40.0, "a:::1": 7.0]
        let payloads = RelayLimitSharing.payloads(from: "iabc", rates)
        #expect(payloads == ["iabc a:127.0.0.1=40 a:::1=7 h:home-1=523"])
        #expect(RelayLimitSharing.parse(payloads[0])?.instance == "iabc")
        #expect(RelayLimitSharing.parse(payloads[0])?.rates == rates)
        #expect(RelayLimitSharing.parse("iabc")?.rates == [:])
        for bad in ["", "bad/id h:x=1", "iabc h:x", "iabc x:y=1", "iabc h:x=-1", "iabc h:x=nan", "iabc h:x=1e999"] {
            #expect(RelayLimitSharing.parse(bad) == nil, "\(bad)")
        }
        let many = Dictionary(uniqueKeysWithValues: (0..<2000).map { ("h:home-\($0)", 1000.0) })
        let parts = RelayLimitSharing.payloads(from: "iabc", many)
        #expect(parts.count > 1 && parts.allSatisfy { $0.utf8.count <= ClusterEnvelope.payloadLimit })
        #expect(parts.compactMap { RelayLimitSharing.parse($0)?.rates }.reduce(into: [:]) { $0.merge($1) { $1 } } == many)
    }
}
