import MatterCrypto
@testable import MatterProtocol
import NIOCore
import Testing
import TestWaiting

/// Issue #37 item 3: two attacking addresses kept a commissioner out of the one PASE slot
/// for good. One was given the slot, acknowledged the PBKDFParamResponse and said nothing
/// more (the slot was held for the 30 s step timeout); the other asked every 100 ms, was
/// reserved the slot next as a host answered BUSY, and won it again before the commissioner.
@Suite("PASE slot under contention")
struct PASEContentionTests {
    @Test func aSilentHolderAndAFastAskerDoNotKeepACommissionerOut() async throws {
        let device = try await LoopbackNode.start()
        let controller = try await LoopbackNode.start()
        let silent = try await LoopbackNode.start(host: "127.0.0.2")
        let asker = try await LoopbackNode.start(host: "127.0.0.3")
        defer { PendingCleanups.run { for node in [device, controller, silent, asker] { await node.stop() } } }
        // The responder as a node runs it: 30 s for each next handshake message.
        let server = SecureChannelServer(manager: device.manager)
        await device.manager.register(server, for: .secureChannel)
        await server.openCommissioningWindow(try PASEVerifierParameters(passcode: 20202021, iterations: 1000, salt: PASETests.salt))

        // The first attacker gets the slot; its exchange manager acks the answer; then silence.
        _ = try await PASETests.HandPASE.begin(from: silent, to: device.address)
        // The second asks again every 100 ms whatever it is answered, 300 times at most.
        let asking = Task {
            let clock = asker.manager.clock
            for _ in 0..<300 where !Task.isCancelled {
                if let (exchange, _, _) = try? await PASETests.HandPASE.request(from: asker, to: device.address) {
                    await exchange.close()
                }
                try? await clock.sleep(until: clock.now + .milliseconds(100))
            }
        }
        defer { asking.cancel() }

        // The commissioner retries BUSY as MatterController does, for 20 s: less than the
        // silent holder's 30 s, and it gets in.
        let session = try await Self.establishRetryingBusy(from: controller, to: device.address, for: .seconds(20))
        #expect(session.kind == .pase)
        #expect(await server.paseFailureCount == 0)
    }

    /// PASE, retried on BUSY with MatterController's backoff (0.5 s doubling to 8 s, with
    /// jitter) until `limit` has passed.
    static func establishRetryingBusy(
        from node: LoopbackNode, to device: SocketAddress, for limit: Duration
    ) async throws -> SessionInfo {
        let clock = node.manager.clock
        let deadline = clock.now + limit
        var delay = Duration.milliseconds(500)
        while true {
            let initiator = PASEInitiator(manager: node.manager, stepTimeout: .seconds(10))
            do {
                return try await initiator.establish(with: device, passcode: 20202021)
            } catch {
                guard case .busy = error else { throw error }
            }
            let wait = delay * Double.random(in: 1.0..<1.25)
            guard clock.now + wait < deadline else { throw SecureChannelError.busy }
            try await clock.sleep(until: clock.now + wait)
            delay = min(delay * 2, .seconds(8))
        }
    }
}
