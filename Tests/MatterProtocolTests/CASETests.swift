import Foundation
import MatterCrypto
@testable import MatterProtocol
import NIOCore
import Testing
import TestWaiting

/// A test fabric: a root CA and NOCs for nodes on it.
struct TestFabric {
    let rootKey = P256KeyPair()
    let rcac: MatterCertificate
    let fabricID: UInt64
    let epochKey = SecureRandom.bytes(16)
    static let notBefore = MatterEpoch.seconds(fromUnix: Int64(Date().timeIntervalSince1970)) - 3600

    init(fabricID: UInt64, rcacID: UInt64 = 1) throws {
        self.fabricID = fabricID
        rcac = try MatterCertificateIssuer.issueRoot(key: rootKey, rcacID: rcacID, notBefore: Self.notBefore)
    }

    /// Credentials for one node; with `viaICAC`, its NOC is issued by an intermediate CA.
    func node(_ nodeID: UInt64, fabricIndex: UInt8, cats: [UInt32] = [], viaICAC: Bool = false) throws -> OperationalFabric {
        let key = P256KeyPair()
        var issuer = rcac
        var issuerKey = rootKey
        var icac: MatterCertificate?
        if viaICAC {
            let icacKey = P256KeyPair()
            let cert = try MatterCertificateIssuer.issueIntermediate(
                publicKey: icacKey.publicKey, icacID: 2, issuer: rcac,
                issuerKey: rootKey, notBefore: Self.notBefore)
            icac = cert
            issuer = cert
            issuerKey = icacKey
        }
        let noc = try MatterCertificateIssuer.issueNode(
            publicKey: key.publicKey, nodeID: nodeID, fabricID: fabricID,
            caseAuthenticatedTags: cats, issuer: issuer, issuerKey: issuerKey,
            notBefore: Self.notBefore)
        return try OperationalFabric(
            fabricIndex: fabricIndex, nodeID: nodeID, rootCertificate: rcac.tlvEncoded,
            noc: noc.tlvEncoded, icac: icac?.tlvEncoded, ipkEpochKey: epochKey, operationalKey: key)
    }
}

@Suite("CASE over UDP on loopback (spec 4.14.2)")
struct CASETests {
    struct Fixture {
        let device: LoopbackNode
        let controller: LoopbackNode
        let fabric: TestFabric
        let deviceCredentials: OperationalFabric
        let controllerCredentials: OperationalFabric

        init(viaICAC: Bool = false) async throws {
            device = try await LoopbackNode.start()
            controller = try await LoopbackNode.start()
            fabric = try TestFabric(fabricID: 0x0000_0000_0000_0ABC)
            deviceCredentials = try fabric.node(0x0000_0000_1234_0001, fabricIndex: 1, viaICAC: viaICAC)
            controllerCredentials = try fabric.node(0x0000_0000_0001_B669, fabricIndex: 7, cats: [0x0001_0001], viaICAC: viaICAC)
            // The device is on two fabrics; Sigma1's destination ID selects the right one.
            let otherFabric = try TestFabric(fabricID: 0x99).node(0x55, fabricIndex: 2)
            let server = SecureChannelServer(
                manager: device.manager,
                fabrics: StaticFabricProvider([otherFabric, deviceCredentials]),
                configuration: .init(stepTimeout: .seconds(10)))
            await device.manager.register(server, for: .secureChannel)
        }

        func stop() async {
            await device.stop()
            await controller.stop()
        }
    }

    @Test(arguments: [false, true])
    func establishesAnOperationalSession(viaICAC: Bool) async throws {
        let f = try await Fixture(viaICAC: viaICAC)
        defer { PendingCleanups.run { await f.stop() } }
        let events = f.device.manager.sessionEvents()
        let echo = EchoHandler()
        await f.device.manager.register(echo, for: .forTesting)

        let result = try await CASEInitiator(manager: f.controller.manager, stepTimeout: .seconds(10))
            .establish(with: f.device.address, peerNodeID: f.deviceCredentials.nodeID, fabric: f.controllerCredentials)
        #expect(result.session.kind == .case)
        #expect(result.session.peerNodeID == f.deviceCredentials.nodeID)
        #expect(result.session.localNodeID == f.controllerCredentials.nodeID)
        #expect(result.resumption.resumptionID.count == 16)

        var iterator = events.makeAsyncIterator()
        guard case .established(let deviceSession)? = await iterator.next() else {
            Issue.record("no established event")
            return
        }
        #expect(deviceSession.kind == .case && deviceSession.role == .responder)
        #expect(deviceSession.fabricIndex == 1)
        #expect(deviceSession.peerNodeID == f.controllerCredentials.nodeID)
        #expect(deviceSession.localNodeID == f.deviceCredentials.nodeID)
        #expect(deviceSession.caseAuthenticatedTags == [0x0001_0001])

        // The session carries traffic; the nonces use the operational node IDs.
        let exchange = try await f.controller.manager.openExchange(session: result.session.handle, protocolID: .forTesting)
        let reply = try await exchange.request(opcode: 2, payload: [1, 2, 3, 4], timeout: .seconds(5))
        #expect(reply.payload == [4, 3, 2, 1])
        #expect(echo.received.withLockedValue { $0.first?.session.peerNodeID } == f.controllerCredentials.nodeID)
    }

    @Test func resumesWithSigma2Resume() async throws {
        let f = try await Fixture()
        defer { PendingCleanups.run { await f.stop() } }
        await f.device.manager.register(EchoHandler(), for: .forTesting)
        let initiator = CASEInitiator(manager: f.controller.manager, stepTimeout: .seconds(10))
        let first = try await initiator.establish(
            with: f.device.address, peerNodeID: f.deviceCredentials.nodeID,
            fabric: f.controllerCredentials)
        let resumed = try await initiator.establish(
            with: f.device.address, peerNodeID: f.deviceCredentials.nodeID,
            fabric: f.controllerCredentials, resumption: first.resumption)
        #expect(resumed.resumption.resumptionID != first.resumption.resumptionID)
        #expect(resumed.session.localSessionID != first.session.localSessionID)
        let exchange = try await f.controller.manager.openExchange(session: resumed.session.handle, protocolID: .forTesting)
        let reply = try await exchange.request(opcode: 2, payload: [7, 8], timeout: .seconds(5))
        #expect(reply.payload == [8, 7])
        let deviceSessions = await f.device.manager.allSessions().filter { $0.kind == .case }
        #expect(deviceSessions.count == 2)
        #expect(deviceSessions.allSatisfy { $0.peerNodeID == f.controllerCredentials.nodeID && $0.fabricIndex == 1 })

        // An unknown resumption ID falls back to a full CASE.
        let bogus = CASEInitiator.Resumption(resumptionID: SecureRandom.bytes(16), sharedSecret: SecureRandom.bytes(32))
        let full = try await initiator.establish(
            with: f.device.address, peerNodeID: f.deviceCredentials.nodeID,
            fabric: f.controllerCredentials, resumption: bogus)
        #expect(full.session.kind == .case)
    }

    @Test func foreignFabricHasNoSharedTrustRoot() async throws {
        let f = try await Fixture()
        defer { PendingCleanups.run { await f.stop() } }
        let stranger = try TestFabric(fabricID: 0x0ABC).node(0x0001_B669, fabricIndex: 1)
        await #expect(throws: SecureChannelError.noSharedTrustRoots) {
            _ = try await CASEInitiator(manager: f.controller.manager, stepTimeout: .seconds(5))
                .establish(with: f.device.address, peerNodeID: f.deviceCredentials.nodeID, fabric: stranger)
        }
    }

    @Test func initiatorWithForgedNOCIsRejected() async throws {
        let f = try await Fixture()
        defer { PendingCleanups.run { await f.stop() } }
        let events = f.device.manager.sessionEvents()
        // Same fabric ID, IPK and root public key as the device's fabric, but the NOC is signed by another root:
        // Sigma1 matches, Sigma3's chain does not validate.
        let forger = try TestFabric(fabricID: f.fabric.fabricID)
        let forgedKey = P256KeyPair()
        let forgedNOC = try MatterCertificateIssuer.issueNode(
            publicKey: forgedKey.publicKey, nodeID: 0x0001_B669,
            fabricID: f.fabric.fabricID, issuer: forger.rcac,
            issuerKey: forger.rootKey, notBefore: TestFabric.notBefore)
        var credentials = f.controllerCredentials
        credentials.noc = forgedNOC.tlvEncoded
        credentials.operationalKey = forgedKey
        // The initiator validates the device against its own (real) root, so Sigma2 passes.
        await #expect(throws: SecureChannelError.self) {
            _ = try await CASEInitiator(manager: f.controller.manager, stepTimeout: .seconds(5))
                .establish(with: f.device.address, peerNodeID: f.deviceCredentials.nodeID, fabric: credentials)
        }
        var iterator = events.makeAsyncIterator()
        guard case .establishmentFailed(let failure)? = await iterator.next() else {
            Issue.record("no failure event")
            return
        }
        #expect(failure.kind == .case)
        #expect(failure.reason.contains("invalidCredentials"))
        #expect(await f.device.manager.allSessions().allSatisfy { $0.kind == .unsecured })
    }

    /// The resumed session's keys are HKDF(shared secret, initiatorRandom || the resumption ID *sent in
    /// Sigma1*, "SessionResumptionKeys") (spec 4.14.2.2.1); connectedhomeip agrees. Checked on the wire.
    @Test func resumedSessionKeysUseTheSigma1ResumptionID() async throws {
        let network = TestNetwork()
        let deviceTransport = network.makeTransport(port: 5540)
        let controllerTransport = network.makeTransport(port: 5541)
        let device = ExchangeManager(transport: deviceTransport)
        let controller = ExchangeManager(transport: controllerTransport)
        let runners = [Task { await device.run() }, Task { await controller.run() }]
        defer { runners.forEach { $0.cancel() } }
        let fabric = try TestFabric(fabricID: 0x77)
        let deviceCredentials = try fabric.node(0x10, fabricIndex: 1)
        let controllerCredentials = try fabric.node(0x20, fabricIndex: 1)
        await device.register(
            SecureChannelServer(manager: device, fabrics: StaticFabricProvider([deviceCredentials])),
            for: .secureChannel)
        let events = device.sessionEvents()
        let initiator = CASEInitiator(manager: controller, stepTimeout: .seconds(10))
        let first = try await initiator.establish(with: deviceTransport.address, peerNodeID: 0x10, fabric: controllerCredentials)
        let logBefore = network.sent(from: controllerTransport.address).count
        let resumed = try await initiator.establish(
            with: deviceTransport.address, peerNodeID: 0x10, fabric: controllerCredentials,
            resumption: first.resumption)

        // Find the second Sigma1 on the wire.
        var sigma1: Sigma1?
        for sent in network.sent(from: controllerTransport.address).dropFirst(logBefore) {
            let (header, length) = try MessageHeader.decode(sent.bytes)
            guard header.isUnsecured else { continue }
            let (ph, payload) = try ProtocolHeader.decode(Array(sent.bytes[length...]))
            if ph.opcode == SecureChannelOpcode.sigma1.rawValue { sigma1 = try Sigma1(decoding: payload) }
        }
        let sent = try #require(sigma1)
        #expect(sent.resumptionID == first.resumption.resumptionID)
        let expected = SessionKeys.caseResumption(
            sharedSecret: first.resumption.sharedSecret,
            initiatorRandom: sent.initiatorRandom,
            resumptionID: first.resumption.resumptionID)
        #expect(resumed.session.attestationChallenge == expected.attestationChallenge)
        var iterator = events.makeAsyncIterator()
        _ = await iterator.next()
        guard case .established(let deviceSide)? = await iterator.next() else {
            Issue.record("no second established event")
            return
        }
        #expect(deviceSide.attestationChallenge == expected.attestationChallenge)
    }
}
