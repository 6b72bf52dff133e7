import MatterCrypto
@testable import MatterProtocol
import NIOCore
import TestWaiting
import Testing

@Suite("PASE over UDP on loopback (spec 4.14.1)")
struct PASETests {
    static let salt = Array("SPAKE2P Key Salt".utf8)

    struct Fixture {
        let device: LoopbackNode
        let controller: LoopbackNode
        let server: SecureChannelServer

        /// `pake1Grace`: long by default, so a test's slow step is never taken over.
        init(passcode: UInt32 = 20202021, maxFailures: Int = 20, pake1Grace: Duration = .seconds(30)) async throws {
            device = try await LoopbackNode.start()
            controller = try await LoopbackNode.start()
            server = SecureChannelServer(
                manager: device.manager,
                configuration: .init(maxPASEFailures: maxFailures, stepTimeout: .seconds(10), pake1Grace: pake1Grace))
            await device.manager.register(server, for: .secureChannel)
            await server.openCommissioningWindow(try PASEVerifierParameters(passcode: passcode, iterations: 1000, salt: PASETests.salt))
        }

        func stop() async {
            await device.stop()
            await controller.stop()
        }
    }

    @Test func establishesASessionThatCarriesMessages() async throws {
        let f = try await Fixture()
        defer { PendingCleanups.run { await f.stop() } }
        let events = f.device.manager.sessionEvents()
        let echo = EchoHandler()
        await f.device.manager.register(echo, for: .forTesting)

        let session = try await PASEInitiator(manager: f.controller.manager, stepTimeout: .seconds(10))
            .establish(with: f.device.address, passcode: 20202021)
        #expect(session.kind == .pase)
        #expect(session.role == .initiator)
        #expect(session.attestationChallenge.count == 16)

        // The device reported the new session, with the same keys' challenge.
        var iterator = events.makeAsyncIterator()
        guard case .established(let deviceSession)? = await iterator.next() else {
            Issue.record("no established event")
            return
        }
        #expect(deviceSession.kind == .pase && deviceSession.role == .responder)
        #expect(deviceSession.peerSessionID == session.localSessionID)
        #expect(deviceSession.localSessionID == session.peerSessionID)
        #expect(deviceSession.attestationChallenge == session.attestationChallenge)

        // Encrypted traffic in both directions.
        let exchange = try await f.controller.manager.openExchange(session: session.handle, protocolID: .forTesting)
        let reply = try await exchange.request(opcode: 0x10, payload: Array("ping".utf8), timeout: .seconds(5))
        #expect(reply.payload == Array("gnip".utf8))
        #expect(echo.received.withLockedValue { $0.first?.session.handle } == deviceSession.handle)
        #expect(await f.device.manager.metrics().sessionsEstablished == 1)
    }

    @Test func wrongPasscodeFailsAndIsCounted() async throws {
        let f = try await Fixture(passcode: 20202021, maxFailures: 2)
        defer { PendingCleanups.run { await f.stop() } }
        let events = f.device.manager.sessionEvents()
        let initiator = PASEInitiator(manager: f.controller.manager, stepTimeout: .seconds(10))

        await #expect(throws: SecureChannelError.passcodeMismatch) {
            _ = try await initiator.establish(with: f.device.address, passcode: 12345678)
        }
        var iterator = events.makeAsyncIterator()
        guard case .establishmentFailed(let failure)? = await iterator.next() else {
            Issue.record("no failure event")
            return
        }
        #expect(failure.kind == .pase && failure.failureCount == 1)
        #expect(await f.server.paseFailureCount == 1)
        #expect(await f.device.manager.allSessions().allSatisfy { $0.kind == .unsecured })

        // The right passcode still works after a failure.
        _ = try await initiator.establish(with: f.device.address, passcode: 20202021)
        guard case .established? = await iterator.next() else {
            Issue.record("no established event")
            return
        }

        // A second failure reaches the limit: the window closes.
        await #expect(throws: SecureChannelError.passcodeMismatch) {
            _ = try await initiator.establish(with: f.device.address, passcode: 11111111)
        }
        guard case .establishmentFailed(let second)? = await iterator.next() else {
            Issue.record("no second failure event")
            return
        }
        #expect(second.failureCount == 2)
        #expect(await iterator.next() == .commissioningWindowClosedAfterFailures(failures: 2))
        #expect(await f.server.isCommissioningWindowOpen == false)

        // With the window closed PBKDFParamRequest goes unanswered.
        let quick = PASEInitiator(manager: f.controller.manager, stepTimeout: .milliseconds(500))
        await #expect(throws: SecureChannelError.transport(.timeout)) {
            _ = try await quick.establish(with: f.device.address, passcode: 20202021)
        }
    }

    @Test func secondCommissionerGetsBusy() async throws {
        let f = try await Fixture()
        defer { PendingCleanups.run { await f.stop() } }
        // Hold a PASE open: send PBKDFParamRequest by hand and never continue.
        let other = try await LoopbackNode.start(host: "127.0.0.2")
        defer { PendingCleanups.run { await other.stop() } }
        let held = try await HandPASE.begin(from: other, to: f.device.address)
        let request = try PBKDFParamRequest(decoding: held.requestBytes)
        #expect(held.response.initiatorRandom == request.initiatorRandom)
        #expect(held.response.pbkdfParameters == PBKDFParameters(iterations: 1000, salt: PASETests.salt))

        await #expect(throws: SecureChannelError.busy) {
            _ = try await PASEInitiator(manager: f.controller.manager, stepTimeout: .seconds(5))
                .establish(with: f.device.address, passcode: 20202021)
        }
    }

    /// A PASE handshake driven message by message, as a tool that does not follow the
    /// protocol would: stop after any step, start again at will.
    struct HandPASE {
        let exchange: Exchange
        let requestBytes: [UInt8]
        let responseBytes: [UInt8]
        let response: PBKDFParamResponse

        /// Sends a PBKDFParamRequest on a new unsecured session; returns the exchange, the
        /// request and the device's answer (PBKDFParamResponse, or a StatusReport).
        static func request(from node: LoopbackNode, to device: SocketAddress) async throws -> (Exchange, [UInt8], Message) {
            let unsecured = await node.manager.openUnsecuredSession(to: device)
            let exchange = try await node.manager.openExchange(session: unsecured, protocolID: .secureChannel)
            let requestBytes = PBKDFParamRequest(initiatorRandom: SecureRandom.bytes(32), initiatorSessionID: 0x4242).encoded()
            let reply = try await exchange.request(
                opcode: SecureChannelOpcode.pbkdfParamRequest.rawValue,
                payload: requestBytes, timeout: .seconds(10))
            return (exchange, requestBytes, reply)
        }

        /// PBKDFParamRequest → PBKDFParamResponse.
        static func begin(from node: LoopbackNode, to device: SocketAddress) async throws -> HandPASE {
            let (exchange, requestBytes, reply) = try await request(from: node, to: device)
            #expect(reply.opcode == SecureChannelOpcode.pbkdfParamResponse.rawValue)
            return HandPASE(
                exchange: exchange, requestBytes: requestBytes, responseBytes: reply.payload,
                response: try PBKDFParamResponse(decoding: reply.payload))
        }

        /// Pake1 with `passcode` → Pake2; returns the prover and whether cB says the passcode was right.
        func guess(_ passcode: UInt32) async throws -> (Spake2pProver, Pake2, right: Bool) {
            let context = Spake2p.matterContext(pbkdfParamRequest: requestBytes, pbkdfParamResponse: responseBytes)
            let prover = try Spake2pProver(context: context, passcode: passcode, salt: PASETests.salt, iterations: 1000)
            let reply = try await exchange.request(
                opcode: SecureChannelOpcode.pake1.rawValue,
                payload: Pake1(pA: prover.shareX).encoded(), timeout: .seconds(10))
            #expect(reply.opcode == SecureChannelOpcode.pake2.rawValue)
            let pake2 = try Pake2(decoding: reply.payload)
            let right = (try? prover.finish(shareY: pake2.pB, confirmationB: pake2.cB)) != nil
            return (prover, pake2, right)
        }
    }

    /// Issue #17 item 3: 300 PBKDFParamRequests from as many initiators that never acknowledge
    /// anything. Each evicted unsecured session takes its exchanges (and their retransmissions)
    /// with it, so the flood cannot fill the exchange table: a real commissioner right after it
    /// gets its session at once. (Before, the flood's answers kept retransmitting until MRP gave
    /// up and the commissioner's PBKDFParamRequest was dropped meanwhile.)
    @Test func aFloodOfSilentInitiatorsLeavesNoLockout() async throws {
        let f = try await Fixture()
        let attacker = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])))
        defer {
            PendingCleanups.run {
                await attacker.close()
                await f.stop()
            }
        }
        let total = 300
        for i in 0..<total {
            let header = MessageHeader(sessionID: 0, messageCounter: UInt32(i + 1), sourceNodeID: UInt64(0x1000 + i))
            let request = PBKDFParamRequest(initiatorRandom: SecureRandom.bytes(32), initiatorSessionID: UInt16(i + 1)).encoded()
            let datagram =
                try header.encoded()
                + ProtocolHeader(
                    isInitiator: true, needsAcknowledgement: true, opcode: SecureChannelOpcode.pbkdfParamRequest.rawValue,
                    exchangeID: UInt16(i), protocolID: .secureChannel
                ).encoded(payload: request)
            attacker.send(datagram, to: f.device.address)
            if i % 20 == 19 {
                let sent = UInt64(i + 1)
                _ = await until(f.device.manager.metricsChanges()) { await f.device.manager.metrics().datagramsReceived >= sent }
            }
        }
        #expect(await until(f.device.manager.metricsChanges()) { await f.device.manager.metrics().datagramsReceived >= UInt64(total) })
        // Received is not yet decided: until each request the device took has had its
        // admission decided, a late one can race the commissioner's request for the slot and
        // win it (BUSY by design, not a lockout). Each decision is followed by a send.
        #expect(
            await until(f.device.manager.metricsChanges()) {
                let dropped = await f.device.manager.metrics().droppedTotal
                return await f.server.paseRequestsDecided + Int(dropped) >= total
            })
        #expect(
            await f.device.manager.allSessions().filter { $0.kind == .unsecured }.count
                <= ExchangeManager.Configuration().maxUnsecuredSessions)
        // The commissioner, with less time than one MRP course of the flood's answers.
        _ = try await PASEInitiator(manager: f.controller.manager, stepTimeout: .seconds(3))
            .establish(with: f.device.address, passcode: 20202021)
        #expect(await f.server.paseFailureCount == 0)
    }

    /// Issue #22 item 1: a guess that reached Pake2 learned its verdict from cB, so it counts
    /// even when the guesser abandons the exchange by starting the next attempt.
    @Test func abandonedGuessesAfterPake2AreCounted() async throws {
        let f = try await Fixture(passcode: 20202021, maxFailures: 3)
        defer { PendingCleanups.run { await f.stop() } }
        for (n, wrong) in [11111111, 22222222, 33333333].enumerated() {
            // Each request replaces the previous attempt, which learned its verdict and stopped.
            let attempt = try await HandPASE.begin(from: f.controller, to: f.device.address)
            #expect(await until(f.device.manager.sessionEvents()) { await f.server.paseFailureCount == n }, "guess \(n) counted")
            let (_, _, right) = try await attempt.guess(UInt32(wrong))
            #expect(!right)
        }
        // The fourth request ends the third guess: three verdicts, the window closes.
        _ = try? await HandPASE.begin(from: f.controller, to: f.device.address)
        #expect(await until(f.device.manager.sessionEvents()) { await f.server.isCommissioningWindowOpen == false })
    }

    /// Issue #22 item 2: unauthenticated initiators that fill the unsecured-session table
    /// neither evict the handshake in progress nor count as passcode failures.
    @Test func aFloodOfInitiatorsNeitherEvictsNorCountsAgainstTheCommissioner() async throws {
        let f = try await Fixture(passcode: 20202021, maxFailures: 20)
        defer { PendingCleanups.run { await f.stop() } }
        let commissioner = try await HandPASE.begin(from: f.controller, to: f.device.address)

        let flooder = try await LoopbackNode.start(host: "127.0.0.2")
        defer { PendingCleanups.run { await flooder.stop() } }
        for _ in 0..<40 {
            let (exchange, _, reply) = try await HandPASE.request(from: flooder, to: f.device.address)
            #expect(reply.opcode == SecureChannelOpcode.statusReport.rawValue)
            #expect(try StatusReport.decode(reply.payload).secureChannelCode == .busy)
            await exchange.close()
        }
        #expect(await f.server.paseFailureCount == 0)

        // The commissioner's handshake goes on where it stopped, and succeeds.
        let (prover, pake2, right) = try await commissioner.guess(20202021)
        #expect(right)
        let (confirmationA, _) = try prover.finish(shareY: pake2.pB, confirmationB: pake2.cB)
        let status = try await commissioner.exchange.request(
            opcode: SecureChannelOpcode.pake3.rawValue,
            payload: Pake3(cA: confirmationA).encoded(), timeout: .seconds(10))
        #expect(try StatusReport.decode(status.payload).isSuccess)
        #expect(await f.server.paseFailureCount == 0)
        #expect(await f.device.manager.allSessions().contains { $0.kind == .pase })
    }

    /// Issue #37 item 3, the rules: an attempt that has not sent Pake1 within the grace (zero
    /// here) is taken over by a host that had no turn lately, never by one that had, nor once
    /// Pake1 arrived; its own host's restart replaces it. Nothing is kept for anyone.
    @Test func aStalledAttemptIsTakenOverOnlyByAHostWhoseTurnItIs() async throws {
        let f = try await Fixture(pake1Grace: .zero)
        let first = try await LoopbackNode.start(host: "127.0.0.2")
        let second = try await LoopbackNode.start(host: "127.0.0.3")
        defer {
            PendingCleanups.run {
                for node in [first, second] { await node.stop() }
                await f.stop()
            }
        }
        func answer(_ node: LoopbackNode) async throws -> SecureChannelOpcode? {
            let (exchange, _, reply) = try await HandPASE.request(from: node, to: f.device.address)
            await exchange.close()
            return SecureChannelOpcode(rawValue: reply.opcode)
        }

        _ = try await HandPASE.begin(from: first, to: f.device.address)
        #expect(try await answer(second) == .pbkdfParamResponse, "a stalled attempt is taken over")
        #expect(await f.server.paseTakeovers == 1)
        #expect(try await answer(first) == .statusReport, "the first host had its turn: BUSY")
        #expect(try await answer(second) == .pbkdfParamResponse, "a restart replaces the host's own attempt")

        // A commissioner takes the slot over; once its Pake1 arrived, nobody takes it.
        let commissioner = try await HandPASE.begin(from: f.controller, to: f.device.address)
        #expect(await f.server.paseTakeovers == 2)
        let (prover, pake2, right) = try await commissioner.guess(20202021)
        #expect(right)
        #expect(try await answer(second) == .statusReport)
        let (confirmationA, _) = try prover.finish(shareY: pake2.pB, confirmationB: pake2.cB)
        let status = try await commissioner.exchange.request(
            opcode: SecureChannelOpcode.pake3.rawValue,
            payload: Pake3(cA: confirmationA).encoded(), timeout: .seconds(10))
        #expect(try StatusReport.decode(status.payload).isSuccess)
        #expect(await f.server.paseFailureCount == 0)
    }
}
