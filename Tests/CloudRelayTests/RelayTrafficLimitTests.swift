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

/// Issue #37 item 7: frame limits per home and per address as well as per connection,
/// counted where frames arrive rather than where the relay gets round to reading them.
@Suite struct RelayTrafficLimitTests {
    /// Four connections of one home, each far within its own limit, together send more than
    /// the home may: its burst goes through, the rest is shed where it arrives or not read at
    /// all (the home's reads are held back while it owes frames) as long as the standing clock
    /// refills nothing. Another home's controller meanwhile gets every command answered, and
    /// the shed home is read, and served, again once it has paid at its rate.
    @Test func aHomeOverItsTotalIsShedWhileAnotherHomeIsServed() async throws {
        let clock = ManualClock()
        let configuration = limitedConfiguration(on: clock) {
            $0.maxFramesPerSecondPerHome = 50
            $0.homeFrameBurst = 100
        }
        try await withRelay(configuration: configuration) { relay in
            let a = try await relay.home("Crowd", device: "a-light")
            let b = try await relay.home("Neighbour", device: "b-light")
            let deviceA = RelayTestDevice(relayURL: relay.baseURL, credential: a.credential, configuration: deviceConfiguration())
            let deviceB = RelayTestDevice(relayURL: relay.baseURL, credential: b.credential, configuration: deviceConfiguration())
            let controllerA = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: a.token, configuration: controllerConfiguration(timeout: .seconds(2)),
                logger: testLogger)
            let controllerB = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: b.token, configuration: controllerConfiguration(), logger: testLogger)
            let metrics = relay.server.metrics
            @Sendable func handled() -> Int {
                let s = metrics.snapshot
                return s.rejected[.unknownDevice, default: 0] + s.rejected[.homeRateLimited, default: 0]
            }
            try await withServices(
                deviceA.services + deviceB.services + [{ try await controllerA.run() }, { try await controllerB.run() }]
            ) {
                for client in [deviceA.client, deviceB.client] { try await client.waitUntilConnected() }
                try await controllerA.waitUntilConnected()
                try await controllerB.waitUntilConnected()
                let sent = 4 * 60
                try await withThrowingTaskGroup(of: Void.self) { floods in
                    // Four more connections of home A, 60 frames each (their own burst is 4,000), held open.
                    for n in 0..<4 {
                        floods.addTask {
                            try await sendFrames(relay, token: a.token, count: 60, first: n * 60) {
                                #expect(await until(metrics.changes(), within: .seconds(30)) { handled() == sent })
                            }
                        }
                    }
                    #expect(
                        await until(metrics.changes()) {
                            metrics.snapshot.rejected[.unknownDevice, default: 0] == 100
                                && metrics.snapshot.readsHeld[.home, default: 0] > 0
                        }, "the home's burst went through, then its reads were held back")
                    #expect(handled() <= sent)
                    #expect(metrics.snapshot.rejected[.rateLimited, default: 0] == 0, "no connection went past its own limit")
                    for _ in 0..<20 {
                        #expect(try await controllerB.invoke("b-light", OnOff.command(OnOff.toggle)).statuses == [.success])
                    }
                    #expect(await deviceB.node.invocations.count == 20)
                    #expect(metrics.snapshot.rejected[.unknownDevice, default: 0] == 100, "none of home A's frames got past its burst")
                    // Paid at its rate, the home is read again: every frame is dealt with.
                    await clock.advance(by: .seconds(10))
                    try await floods.waitForAll()
                }
                // Home A's own controller is served once the home has paid for the rest.
                await clock.advance(by: .seconds(10))
                #expect(try await controllerA.invoke("a-light", OnOff.command(OnOff.on)).statuses == [.success])
                #expect(await deviceA.node.isOn)
            }
        }
    }

    /// Issue #37 item 7: bytes are counted as they arrive, whatever the frames. A home may
    /// send a little over two frames of about 1.5 KB: the third is read and handled (the
    /// budget was not spent when it came), after it the home owes bytes and its connection
    /// is not read, so a fourth waits in the kernel while another home is served; once the
    /// clock refills the budget, the fourth is read. Frame limits alone (before) let all four
    /// through at once: four frames are far within every frame limit.
    @Test func aHomeOverItsBytesIsNotReadUntilItHasPaid() async throws {
        let clock = ManualClock()
        let wire = bigFrame(0).count + 8  // 2-byte extended length and 4-byte mask
        let configuration = limitedConfiguration(on: clock) {
            $0.maxBytesPerSecondPerHome = 2 * wire + 1100
            $0.homeByteBurst = 2 * wire + 1100
        }
        try await withRelay(configuration: configuration) { relay in
            let a = try await relay.home("Bulky", device: "a-light")
            let b = try await relay.home("Neighbour", device: "b-light")
            let deviceB = RelayTestDevice(relayURL: relay.baseURL, credential: b.credential, configuration: deviceConfiguration())
            let controllerB = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: b.token, configuration: controllerConfiguration(), logger: testLogger)
            let metrics = relay.server.metrics
            @Sendable func answered() -> Int { metrics.snapshot.rejected[.unknownDevice, default: 0] }
            try await withServices(deviceB.services + [{ try await controllerB.run() }]) {
                try await deviceB.client.waitUntilConnected()
                try await controllerB.waitUntilConnected()
                try await withRawController(relay, token: a.token) { _, outbound in
                    for n in 0..<3 {
                        try await outbound.write(.binary(ByteBuffer(bytes: bigFrame(n))))
                        #expect(await until(metrics.changes()) { answered() == n + 1 }, "frame \(n) read")
                    }
                    #expect(await until(metrics.changes()) { metrics.snapshot.readsHeld[.home, default: 0] > 0 })
                    try await outbound.write(.binary(ByteBuffer(bytes: bigFrame(3))))
                    for _ in 0..<10 {
                        #expect(try await controllerB.invoke("b-light", OnOff.command(OnOff.toggle)).statuses == [.success])
                    }
                    #expect(answered() == 3, "the fourth frame waits unread while the home owes bytes")
                    await clock.advance(by: .seconds(1))
                    #expect(await until(metrics.changes()) { answered() == 4 }, "read once paid for")
                }
            }
        }
    }

    /// A connection whose home stays over its byte budget (it sent far more than the budget
    /// refills in five seconds) is held back at every look, second after second, and closed
    /// (1008) five seconds after the first.
    @Test func aConnectionHeldBackForFiveSecondsIsClosed() async throws {
        let clock = ManualClock()
        let configuration = limitedConfiguration(on: clock) {
            $0.maxBytesPerSecondPerHome = 1000
            $0.homeByteBurst = 1000
        }
        try await withRelay(configuration: configuration) { relay in
            let a = try await relay.home("Hog", device: "a-light")
            let metrics = relay.server.metrics
            @Sendable func held() -> Int { metrics.snapshot.readsHeld[.home, default: 0] }
            let close = try await withRawController(relay, token: a.token) { inbound, outbound in
                for n in 0..<12 { try await outbound.write(.binary(ByteBuffer(bytes: bigFrame(n)))) }
                #expect(await until(metrics.changes()) { held() > 0 })
                for second in 1...5 {
                    let before = held()
                    await clock.advance(by: .seconds(1))
                    guard second < 5 else { break }
                    // Looked at again after the clock moved, and still over.
                    #expect(await until(metrics.changes()) { held() > before + 1 }, "second \(second)")
                    #expect(metrics.snapshot.closedOverLimit == 0)
                }
                try await withRelayTimeout(.seconds(10), "the relay's close") {
                    for try await _ in inbound.messages(maxSize: 1 << 16) {}
                }
            }
            #expect(close?.closeCode == .policyViolation)
            #expect(close?.reason == "traffic limit exceeded")
            #expect(metrics.snapshot.closedOverLimit == 1)
        }
    }
    /// A connection sending more than ten times its rate, second after second, is closed
    /// (1008) in the fifth, though the relay reads none of its frames after the first: its
    /// controller routing is stalled. The frames are counted as they arrive; counted where
    /// they were read (before), the flood was never seen.
    @Test func aConnectionFloodingFasterThanItIsReadIsClosed() async throws {
        let clock = ManualClock()
        let configuration = limitedConfiguration(on: clock) {
            $0.maxFramesPerSecond = 1
            $0.frameBurst = 1
        }
        let stalled = NIOLockedValueBox<StalledRouting?>(nil)
        try await withRelay(
            configuration: configuration,
            controllers: { hub in
                let routing = StalledRouting(hub)
                stalled.withLockedValue { $0 = routing }
                return routing
            }
        ) { relay in
            let a = try await relay.home("Flooder", device: "a-light")
            let metrics = relay.server.metrics
            let perSecond = 10 * 1 + 1
            let close = try await withRawController(relay, token: a.token) { inbound, outbound in
                try await floodFiveSeconds(outbound, perSecond: perSecond, clock: clock) { second in
                    // All but the one frame a second the bucket lets through are dropped as they arrive.
                    let dropped = (second + 1) * (perSecond - 1)
                    guard await until(metrics.changes(), { metrics.snapshot.rejected[.rateLimited, default: 0] == dropped }) else {
                        Issue.record("second \(second): \(metrics.snapshot.rejected[.rateLimited, default: 0]) dropped, not \(dropped)")
                        return false
                    }
                    return true
                }
                // Bounded: a relay that never closes fails the test rather than holding it.
                try await withRelayTimeout(.seconds(10), "the relay's close") {
                    for try await _ in inbound.messages(maxSize: 1 << 16) {}
                }
            }
            #expect(close?.closeCode == .policyViolation)
            #expect(close?.reason == "frame rate limit exceeded")
            // At most the one frame the bucket let through reached the stalled routing; whether
            // its read began before the close is a race (a lone-clone CI run saw 0).
            #expect((stalled.withLockedValue { $0 }?.entered ?? 0) <= 1, "the relay read at most one frame of the flood")
            stalled.withLockedValue { $0 }?.release()
        }
    }
}

/// A controller frame for nobody carrying 1,500 bytes: bytes count, not frames.
private func bigFrame(_ n: Int) -> [UInt8] { nobodyFrame(n, payload: 1500) }

/// Sends `count` frames for nobody on a controller connection of its own, and keeps it open
/// while `whileOpen` runs.
private func sendFrames(
    _ relay: RelayHarness, token: String, count: Int, first: Int, whileOpen: @escaping @Sendable () async -> Void
) async throws {
    try await withRawController(relay, token: token) { _, outbound in
        for n in 0..<count { try await outbound.write(.binary(ByteBuffer(bytes: nobodyFrame(first + n)))) }
        await whileOpen()
    }
}

/// The relay's hub, except that controllers' requests wait until `release()`: a relay that
/// reads nothing more from a connection once it is busy with one frame.
final class StalledRouting: RelayControllerRouting {
    let hub: RelayHub
    // The lock guards the waiting requests and the count of those that came.
    private let state = NIOLockedValueBox<(open: Bool, waiting: [CheckedContinuation<Void, Never>], entered: Int)>(
        (false, [], 0))

    init(_ hub: RelayHub) { self.hub = hub }

    var entered: Int { state.withLockedValue { $0.entered } }

    func release() {
        let waiting = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
            s.open = true
            defer { s.waiting = [] }
            return s.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    var connectedCounts: (devices: Int, controllers: Int) { hub.connectedCounts }
    func onlineDevices(homeID: String) -> Set<String> { hub.onlineDevices(homeID: homeID) }
    func makePeer(role: RelayRole, homeID: String, deviceID: String?) -> RelayPeer {
        hub.makePeer(role: role, homeID: homeID, deviceID: deviceID)
    }
    func attachController(_ peer: RelayPeer, hello: RelayHello, registered: [String]) {
        hub.attachController(peer, hello: hello, registered: registered)
    }
    func detachController(_ peer: RelayPeer) { hub.detachController(peer) }

    func routeFromController(_ message: RelayMessage, from controller: RelayPeer) async {
        await withCheckedContinuation { continuation in
            let go = state.withLockedValue { s -> Bool in
                s.entered += 1
                if s.open { return true }
                s.waiting.append(continuation)
                return false
            }
            if go { continuation.resume() }
        }
        await hub.routeFromController(message, from: controller)
    }
}
