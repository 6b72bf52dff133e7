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
            let flood = try await a.home("Flood", device: "f-light")
            let calm = try await a.home("Calm", device: "c-light")
            let device = RelayTestDevice(relayURL: a.baseURL, credential: calm.credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: b.baseURL, homeToken: calm.token, configuration: controllerConfiguration(), logger: testLogger)
            // Frames of the flooding home let through, on both instances (each is answered "unknown device").
            @Sendable func admitted() -> Int { [a, b].map { $0.server.metrics.snapshot.rejected[.unknownDevice, default: 0] }.reduce(0, +) }
            let flooding = NIOLockedValueBox(true)
            let sent = NIOLockedValueBox(0)
            try await withServices(device.services + [{ try await controller.run() }]) {
                // real time: external: the instances tell each other their demand in real time, so the
                // flood is paced, and the budget measured, on it.
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                #expect(await until(controller.presenceUpdates(), within: .seconds(10)) { controller.presence["c-light"] == true })
                let (window, offered) = try await withThrowingTaskGroup(of: (Int, Int)?.self) { group in
                    for relay in [a, b] {
                        group.addTask {
                            // About 90 frames a second, until told to stop.
                            try? await withRawController(relay, token: flood.token) { _, outbound in
                                var n = 0
                                while flooding.withLockedValue({ $0 }) {
                                    for _ in 0..<9 {
                                        try await outbound.write(.binary(ByteBuffer(bytes: nobodyFrame(n))))
                                        n += 1
                                    }
                                    sent.withLockedValue { $0 += 9 }
                                    try await Task.sleep(for: .milliseconds(100))
                                }
                            }
                            return nil
                        }
                    }
                    group.addTask {
                        defer { flooding.withLockedValue { $0 = false } }
                        // The first second: bursts spent, reports exchanged, shares set.
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
                #expect(offered >= 430, "\(offered) frames sent in 3 s: too few to need one budget")
                #expect(window <= 400, "\(window) of \(offered) frames let through in 3 s: more than one budget of 100/s")
                #expect(window >= 200, "\(window) of \(offered) frames let through in 3 s: the home's budget went unused")
                #expect(await device.node.invocations.count == 10)
            }
            for relay in [a, b] {
                let drops = relay.server.metrics.snapshot.homeDrops
                #expect(drops[flood.home.id, default: 0] > 0, "the flood was shed on both instances")
                #expect(drops[calm.home.id] == nil, "the other home lost nothing")
            }
        }
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
