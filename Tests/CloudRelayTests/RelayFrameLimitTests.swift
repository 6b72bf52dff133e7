@testable import CloudRelay
import Foundation
import HummingbirdWSClient
import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore
import NIOWebSocket
@testable import RelayClients
@testable import RelayProtocol
import TestWaiting
import Testing

/// Issue #17 item 5: per-connection frame-rate limits.
@Suite struct RelayFrameLimitTests {
    /// A sender at its rate is never limited; frames past the burst are dropped until the
    /// bucket refills at the rate.
    @Test func theBucketPassesTheRateAndTheBurstAndDropsTheRest() {
        var limiter = RelayFrameLimiter(framesPerSecond: 200, burst: 400, now: .zero)
        #expect((0..<400).map { _ in limiter.admit(at: .zero) }.allSatisfy { $0 == .pass })
        #expect(limiter.admit(at: .zero) == .drop)
        // Half a second refills 100 frames, no more.
        #expect((0..<100).map { _ in limiter.admit(at: .milliseconds(500)) }.allSatisfy { $0 == .pass })
        #expect(limiter.admit(at: .milliseconds(500)) == .drop)

        // Exactly the rate (a frame every 5 ms) for a minute, after a full burst: never limited.
        var steady = RelayFrameLimiter(framesPerSecond: 200, burst: 400, now: .zero)
        #expect((0..<400).map { _ in steady.admit(at: .zero) }.allSatisfy { $0 == .pass })
        #expect((1...12_000).map { steady.admit(at: .milliseconds(5 * $0)) }.allSatisfy { $0 == .pass })
    }

    /// More than ten times the rate in each of five seconds in a row closes the connection,
    /// at the frame that makes the fifth; exactly ten times, or a quiet second between
    /// floods, only drops.
    @Test func aSustainedFloodIsClosedAndASpikeIsNot() {
        /// `perSecond` frames spread over each of `seconds` seconds from `start`.
        func flood(
            _ limiter: inout RelayFrameLimiter, from start: Duration = .zero, perSecond: Int, seconds: Int
        )
            -> [RelayFrameLimiter.Verdict]
        {
            (0..<seconds).flatMap { second in
                (0..<perSecond).map { i in
                    limiter.admit(at: start + .seconds(second) + .seconds(1) * i / perSecond)
                }
            }
        }
        var closing = RelayFrameLimiter(framesPerSecond: 10, burst: 20, now: .zero)
        let verdicts = flood(&closing, perSecond: 101, seconds: 5)
        #expect(verdicts.firstIndex(of: .close) == 4 * 101 + 100)
        #expect(verdicts.contains(.drop))

        var atTenTimes = RelayFrameLimiter(framesPerSecond: 10, burst: 20, now: .zero)
        let steady = flood(&atTenTimes, perSecond: 100, seconds: 10)
        #expect(!steady.contains(.close))
        #expect(steady.filter { $0 == .drop }.count > 800)

        var paused = RelayFrameLimiter(framesPerSecond: 10, burst: 20, now: .zero)
        let first = flood(&paused, perSecond: 101, seconds: 4)
        let second = flood(&paused, from: .seconds(5), perSecond: 101, seconds: 4)
        #expect(!(first + second).contains(.close))
    }

    /// A controller floods the relay with frames for a device its home does not have (each one
    /// the relay lets through is answered "unknown device"). The relay's clock stands still,
    /// so no bucket refills: exactly the flood's frames past its burst are dropped and counted
    /// rate_limited. Meanwhile another home's controller, and a well-behaved controller of the
    /// flooder's own home, get every command answered, and none of their frames is limited.
    @Test func aFloodIsLimitedWhileOtherConnectionsAreServed() async throws {
        let clock = ManualClock()
        let configuration = limitedConfiguration(on: clock) { _ in }
        let burst = configuration.frameBurst
        try await withRelay(configuration: configuration) { relay in
            let a = try await relay.home("Flooder", device: "a-light")
            let b = try await relay.home("Neighbour", device: "b-light")
            let deviceA = RelayTestDevice(relayURL: relay.baseURL, credential: a.credential, configuration: deviceConfiguration())
            let deviceB = RelayTestDevice(relayURL: relay.baseURL, credential: b.credential, configuration: deviceConfiguration())
            let controllerA = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: a.token, configuration: controllerConfiguration(), logger: testLogger)
            let controllerB = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: b.token, configuration: controllerConfiguration(), logger: testLogger)
            let metrics = relay.server.metrics
            try await withServices(
                deviceA.services + deviceB.services + [{ try await controllerA.run() }, { try await controllerB.run() }]
            ) {
                for client in [deviceA.client, deviceB.client] { try await client.waitUntilConnected() }
                try await controllerA.waitUntilConnected()
                try await controllerB.waitUntilConnected()

                let stop = NIOLockedValueBox(false)
                try await withThrowingTaskGroup(of: Int.self) { group in
                    group.addTask {
                        try await floodController(relay, token: a.token, until: { stop.withLockedValue { $0 } })
                    }
                    // The flood is under way once its first frames are dropped.
                    #expect(await until(metrics.changes()) { metrics.snapshot.rejected[.rateLimited, default: 0] > 0 })
                    for _ in 0..<20 {
                        #expect(try await controllerB.invoke("b-light", OnOff.command(OnOff.toggle)).statuses == [.success])
                        #expect(try await controllerA.invoke("a-light", OnOff.command(OnOff.toggle)).statuses == [.success])
                    }
                    stop.withLockedValue { $0 = true }
                    let sent = try #require(try await group.next())
                    let after = metrics.snapshot
                    #expect(sent > burst)
                    #expect(after.rejected[.rateLimited] == sent - burst, "only the flood's excess is limited")
                    #expect(after.rejected[.unknownDevice] == burst, "the flood's burst was routed (to nobody)")
                    #expect(after.routed[.toDevice] == 40)
                    #expect(after.routed[.toController] == 40)
                    let text = try await RelayHTTP.request("GET", relay.httpURL + "/metrics").text
                    #expect(text.contains("relay_rejected_total{reason=\"rate_limited\"} \(sent - burst)\n"))
                }
                #expect(await deviceA.node.invocations.count == 20)
                #expect(await deviceB.node.invocations.count == 20)
                #expect(controllerA.state == .connected && controllerB.state == .connected)
            }
        }
    }

    /// A connection that keeps sending more than ten times its rate, second after second,
    /// is closed with 1008 in the fifth; its home's other connections stay.
    @Test func aSustainedFloodIsClosedWithPolicyViolation() async throws {
        let clock = ManualClock()
        let configuration = limitedConfiguration(on: clock) {
            $0.maxFramesPerSecond = 10
            $0.frameBurst = 20
        }
        try await withRelay(configuration: configuration) { relay in
            let a = try await relay.home("Flooder", device: "a-light")
            let device = RelayTestDevice(relayURL: relay.baseURL, credential: a.credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: a.token, configuration: controllerConfiguration(), logger: testLogger)
            let metrics = relay.server.metrics
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                let perSecond = 10 * 10 + 1
                let close = try await withRawController(relay, token: a.token) { inbound, outbound in
                    try await floodFiveSeconds(outbound, perSecond: perSecond, clock: clock) { second in
                        // Every frame of this second counted on the standing clock, then the next second.
                        let handled = (second + 1) * perSecond
                        #expect(await until(metrics.changes()) { metrics.snapshot.handledFrames == handled })
                        return true
                    }
                    for try await _ in inbound.messages(maxSize: 1 << 16) {}
                }
                #expect(close?.closeCode == .policyViolation)
                #expect(close?.reason == "frame rate limit exceeded")
                #expect(try await controller.invoke("a-light", OnOff.command(OnOff.on)).statuses == [.success])
                #expect(controller.state == .connected)
            }
        }
    }
}

extension RelayMetrics.Snapshot {
    /// Flood frames the relay has dealt with: let through (to nobody) or dropped.
    fileprivate var handledFrames: Int { rejected[.unknownDevice, default: 0] + rejected[.rateLimited, default: 0] }
}

/// Sends frames in batches of 1,000, each as fast as the connection takes it, until `stop`
/// says so (at most 200 batches); after each batch it waits until the relay has dealt with
/// every frame, so the flood runs at the relay's pace rather than this process's (the sender
/// shares the test's threads with the relay under test). Returns how many it sent.
/// The flood's connection failed under it: how far it got and the relay's rejections then.
private struct FloodEnded: Error {
    var sent: Int
    var error: String
    var rejected: [String]
}

private func floodController(_ relay: RelayHarness, token: String, until stop: @escaping @Sendable () -> Bool) async throws -> Int {
    let sent = NIOLockedValueBox(0)
    let metrics = relay.server.metrics
    try await withRawController(relay, token: token) { _, outbound in
        var n = 0
        for _ in 0..<200 where !stop() {
            for _ in 0..<1000 {
                do {
                    try await outbound.write(.binary(ByteBuffer(bytes: nobodyFrame(n))))
                } catch {
                    // Once seen on CI only ("I/O on closed channel"): say what the relay had done.
                    throw FloodEnded(sent: n, error: "\(error)", rejected: metrics.snapshot.rejected.map { "\($0.key): \($0.value)" })
                }
                n += 1
            }
            let handled = n
            guard await until(metrics.changes(), within: .seconds(30), { metrics.snapshot.handledFrames == handled }) else { break }
        }
        sent.withLockedValue { $0 = n }
    }
    return sent.withLockedValue { $0 }
}
