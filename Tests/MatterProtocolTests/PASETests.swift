import MatterCrypto
@testable import MatterProtocol
import NIOCore
import Testing

@Suite("PASE over UDP on loopback (spec 4.14.1)")
struct PASETests {
    static let salt = Array("SPAKE2P Key Salt".utf8)

    struct Fixture {
        let device: LoopbackNode
        let controller: LoopbackNode
        let server: SecureChannelServer

        init(passcode: UInt32 = 20202021, maxFailures: Int = 20) async throws {
            device = try await LoopbackNode.start()
            controller = try await LoopbackNode.start()
            server = SecureChannelServer(manager: device.manager,
                                         configuration: .init(maxPASEFailures: maxFailures, stepTimeout: .seconds(10)))
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
        defer { Task { await f.stop() } }
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
        defer { Task { await f.stop() } }
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
        defer { Task { await f.stop() } }
        // Hold a PASE open: send PBKDFParamRequest by hand and never continue.
        let other = try await LoopbackNode.start(host: "127.0.0.2")
        defer { Task { await other.stop() } }
        let unsecured = await other.manager.openUnsecuredSession(to: f.device.address)
        let exchange = try await other.manager.openExchange(session: unsecured, protocolID: .secureChannel)
        let request = PBKDFParamRequest(initiatorRandom: SecureRandom.bytes(32), initiatorSessionID: 1)
        let response = try await exchange.request(opcode: SecureChannelOpcode.pbkdfParamRequest.rawValue,
                                                  payload: request.encoded(), timeout: .seconds(5))
        #expect(response.opcode == SecureChannelOpcode.pbkdfParamResponse.rawValue)
        let decoded = try PBKDFParamResponse(decoding: response.payload)
        #expect(decoded.initiatorRandom == request.initiatorRandom)
        #expect(decoded.pbkdfParameters == PBKDFParameters(iterations: 1000, salt: PASETests.salt))

        await #expect(throws: SecureChannelError.busy) {
            _ = try await PASEInitiator(manager: f.controller.manager, stepTimeout: .seconds(5))
                .establish(with: f.device.address, passcode: 20202021)
        }
    }
}
