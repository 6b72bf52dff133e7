import Foundation
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// The commissioning flow a controller runs (Core spec 5.5), step by step through
// MatterNode.invoke, checking each answer the way the commissioner checks it.
@Suite struct CommissioningFlowTests {
    let clock = ManualClock()

    @Test func fullCommissioningFlowAndRestart() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock)
        let recorder = EventRecorder(node.commissioningEvents)
        let commissioner = try TestCommissioner()
        await node.openCommissioningWindow(timeout: nil)

        // PASE established: the node arms the fail-safe itself.
        let pase = paseSession(1)
        await node.paseSessionEstablished(pase)
        #expect(await node.isFailSafeArmed)

        // ArmFailSafe sets the breadcrumb.
        let arm = try await node.call(0, CommissioningIDs.generalCommissioning, 0x00, fields((0, u(60)), (1, u(7))), session: pase)
        #expect(arm[context: 0] == u(0))
        #expect(try await node.value(0, CommissioningIDs.generalCommissioning, 0x0000, session: pase).get() == u(7))

        // Device attestation: chain, then the signed attestation elements.
        let dacDER = try #require(
            try await node.call(0, CommissioningIDs.operationalCredentials, 0x02, fields((0, u(1))), session: pase)[context: 0]?.bytesValue)
        let paiDER = try #require(
            try await node.call(0, CommissioningIDs.operationalCredentials, 0x02, fields((0, u(2))), session: pase)[context: 0]?.bytesValue)
        let dac = try AttestationCertificate(der: dacDER)
        let pai = try AttestationCertificate(der: paiDER)
        let paa = try AttestationCertificate(pem: testAuthority.paaCertificatePEM)
        #expect(dac.isIssued(by: pai))
        #expect(pai.isIssued(by: paa))
        #expect(dac.vendorID == CommissioningIDs.vendorID)
        #expect(dac.productID == CommissioningIDs.productID)

        let attestationNonce = randomBytes(32)
        let attestation = try await node.call(
            0, CommissioningIDs.operationalCredentials, 0x00,
            fields((0, .bytes(attestationNonce))), session: pase)
        let elements = try #require(attestation[context: 0]?.bytesValue)
        let signature = try #require(attestation[context: 1]?.bytesValue)
        #expect(
            DeviceAttestation.verify(
                elements: elements, attestationChallenge: pase.attestationChallenge,
                signature: signature, dacPublicKey: dac.publicKey))
        // Signed over this session's challenge, not another's.
        #expect(
            !DeviceAttestation.verify(
                elements: elements, attestationChallenge: randomBytes(16),
                signature: signature, dacPublicKey: dac.publicKey))
        let parsed = try DeviceAttestation.parseAttestationElements(elements)
        #expect(parsed.attestationNonce == attestationNonce)
        let cdSigner = try AttestationCertificate(pem: testAuthority.cdSigningCertificatePEM)
        let declaration = try CertificationDeclaration.parseCMS(parsed.certificationDeclaration).verify(signerPublicKey: cdSigner.publicKey)
        #expect(declaration.vendorID == CommissioningIDs.vendorID)
        #expect(declaration.productIDs.contains(CommissioningIDs.productID))

        // CSR: signed the same way, for a fresh key.
        let csrNonce = randomBytes(32)
        let csrResponse = try await node.call(
            0, CommissioningIDs.operationalCredentials, 0x04, fields((0, .bytes(csrNonce))), session: pase)
        let nocsr = try #require(csrResponse[context: 0]?.bytesValue)
        #expect(
            DeviceAttestation.verify(
                elements: nocsr, attestationChallenge: pase.attestationChallenge,
                signature: try #require(csrResponse[context: 1]?.bytesValue), dacPublicKey: dac.publicKey))
        let nocsrElements = try DeviceAttestation.parseNOCSRElements(nocsr)
        #expect(nocsrElements.csrNonce == csrNonce)
        let csr = try CertificateSigningRequest(der: nocsrElements.csr)
        #expect(csr.publicKey != dac.publicKey)

        // Trusted root, then the NOC for the CSR's key.
        let addRoot = await node.status(
            0, CommissioningIDs.operationalCredentials, 0x0B,
            fields((0, .bytes(commissioner.root.tlvEncoded))), session: pase)
        #expect(addRoot == .success)
        #expect(
            listItems(try await node.value(0, CommissioningIDs.operationalCredentials, 0x0004, session: pase).get())
                == [.bytes(commissioner.root.tlvEncoded)])
        let noc = try commissioner.noc(fromCSR: nocsrElements.csr, nodeID: 0x4D0A)
        let nocResponse = try await node.call(
            0, CommissioningIDs.operationalCredentials, 0x06,
            fields(
                (0, .bytes(noc.tlvEncoded)), (2, .bytes(commissioner.ipk)), (3, .unsigned(commissioner.adminNodeID)),
                (4, u(CommissioningIDs.vendorID))), session: pase)
        #expect(nocResponse[context: 0] == u(0))
        let fabricIndex = try #require(nocResponse[context: 1]?.uintValue.flatMap { FabricIndex(exactly: $0) })
        #expect(fabricIndex == 1)
        // The PASE session now has the new fabric as its accessing fabric.
        #expect(try await node.value(0, CommissioningIDs.operationalCredentials, 0x0005, session: pase).get() == u(1))

        // CommissioningComplete is refused over PASE, accepted over CASE on the new fabric.
        let overPASE = try await node.call(0, CommissioningIDs.generalCommissioning, 0x04, fields(), session: pase)
        #expect(overPASE[context: 0] == u(2))  // InvalidAuthentication
        let admin = commissioner.adminSession(2, fabric: fabricIndex)
        let complete = try await node.call(0, CommissioningIDs.generalCommissioning, 0x04, fields(), session: admin)
        #expect(complete[context: 0] == u(0))
        #expect(await !node.isFailSafeArmed)
        #expect(await node.commissioningWindow == nil)
        #expect(try await node.value(0, CommissioningIDs.generalCommissioning, 0x0000, session: admin).get() == u(0))

        // The fabric, its administrator and its IPK are in place.
        let fabrics = listItems(try await node.value(0, CommissioningIDs.operationalCredentials, 0x0001, session: admin).get())
        #expect(fabrics.count == 1)
        #expect(fabrics.first?[context: 1] == .bytes(commissioner.root.publicKey))
        #expect(fabrics.first?[context: 3] == .unsigned(commissioner.fabricID))
        #expect(fabrics.first?[context: 4] == u(0x4D0A))
        #expect(await node.accessControlEntries == [.administrator(fabricIndex: 1, subject: commissioner.adminNodeID)])
        let indices = try await node.call(0, CommissioningIDs.groupKeyManagement, 0x04, fields(), session: admin)
        #expect(uintList(indices[context: 0]) == [0])
        let stored = try #require(await node.fabrics.first)
        #expect(
            stored.compressedFabricID
                == (try FabricKeys.compressedFabricIDValue(
                    rootPublicKey: commissioner.root.publicKey,
                    fabricID: commissioner.fabricID)))
        #expect(try P256KeyPair(rawPrivateKey: [UInt8](stored.operationalPrivateKey)).publicKey == csr.publicKey)
        // The administrator can operate the light.
        #expect(await node.status(1, IDs.onOff, 0x01, session: admin) == .success)

        let events = await recorder.events(stopping: node)
        #expect(events.contains(.paseSessionAdoptedFabric(session: SessionID(1), fabricIndex: 1)))
        #expect(events.contains(.fabricAdded(1)))
        #expect(events.contains(.fabricCommitted(1)))
        #expect(events.contains(.commissioningComplete(fabricIndex: 1, nodeID: commissioner.adminNodeID)))
        let complete_ = try #require(events.firstIndex(of: .commissioningComplete(fabricIndex: 1, nodeID: commissioner.adminNodeID)))
        let closed = try #require(events.firstIndex(of: .commissioningWindowClosed))
        #expect(closed < complete_)

        // Restart from the same state directory: same fabric, ACL and DAC.
        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await restarted.fabrics == [stored])
        #expect(await restarted.accessControlEntries == [.administrator(fabricIndex: 1, subject: commissioner.adminNodeID)])
        let dacAgain = try await restarted.call(0, CommissioningIDs.operationalCredentials, 0x02, fields((0, u(1))), session: admin)
        #expect(dacAgain[context: 0] == .bytes(dacDER))
        #expect(await restarted.status(1, IDs.onOff, 0x00, session: admin) == .success)
        let stranger = caseSession(9, fabric: 1, node: 0x9999)
        #expect(await restarted.status(1, IDs.onOff, 0x00, session: stranger) == .status(InteractionStatus(.unsupportedAccess)))
        await restarted.stop()
    }

    /// TC-DA-1.2 step 13: a nonce that is not 32 bytes fails AttestationRequest (Core 11.18.6.1)
    /// and CSRRequest (11.18.6.5) with INVALID_COMMAND, an unknown CertificateType fails
    /// CertificateChainRequest (11.18.6.3) the same way; none is a CONSTRAINT_ERROR.
    @Test func attestationNeedsA32ByteNonceAndCSRNeedsTheFailSafe() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let pase = paseSession(1)
        for length in [0, 31, 33] {
            #expect(
                await node.status(
                    0, CommissioningIDs.operationalCredentials, 0x00, fields((0, .bytes(randomBytes(length)))), session: pase)
                    == .status(InteractionStatus(.invalidCommand)))
        }
        #expect(
            await node.status(0, CommissioningIDs.operationalCredentials, 0x04, fields((0, .bytes(randomBytes(31)))), session: pase)
                == .status(InteractionStatus(.invalidCommand)))
        #expect(
            await node.status(0, CommissioningIDs.operationalCredentials, 0x02, fields((0, u(3))), session: pase)
                == .status(InteractionStatus(.invalidCommand)))
        // No fail-safe armed: CSRRequest, AddTrustedRootCertificate and AddNOC need one.
        #expect(
            await node.status(0, CommissioningIDs.operationalCredentials, 0x04, fields((0, .bytes(randomBytes(32)))), session: pase)
                == .status(InteractionStatus(.failsafeRequired)))
        let commissioner = try TestCommissioner()
        #expect(
            await node.status(
                0, CommissioningIDs.operationalCredentials, 0x0B, fields((0, .bytes(commissioner.root.tlvEncoded))), session: pase)
                == .status(InteractionStatus(.failsafeRequired)))
        // CommissioningComplete is fabric-scoped: a PASE session without a fabric has no access.
        #expect(
            await node.status(0, CommissioningIDs.generalCommissioning, 0x04, session: pase)
                == .status(InteractionStatus(.unsupportedAccess)))
        await node.stop()
    }

    @Test func addNOCChecksTheChainTheKeyAndTheOrder() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let pase = paseSession(1)
        let commissioner = try TestCommissioner()
        _ = try await node.call(0, CommissioningIDs.generalCommissioning, 0x00, fields((0, u(60)), (1, u(0))), session: pase)
        func addNOC(_ noc: MatterCertificate) async throws -> TLVValue {
            try await node.call(
                0, CommissioningIDs.operationalCredentials, 0x06,
                fields(
                    (0, .bytes(noc.tlvEncoded)), (2, .bytes(commissioner.ipk)), (3, .unsigned(commissioner.adminNodeID)),
                    (4, u(CommissioningIDs.vendorID))), session: pase)
        }
        // No CSR yet: MissingCsr.
        let someKey = P256KeyPair()
        let stray = try MatterCertificateIssuer.issueNode(
            publicKey: someKey.publicKey, nodeID: 5, fabricID: commissioner.fabricID,
            issuer: commissioner.root, issuerKey: commissioner.rootKey, notBefore: 0)
        #expect(try await addNOC(stray)[context: 0] == u(4))
        let csrResponse = try await node.call(
            0, CommissioningIDs.operationalCredentials, 0x04, fields((0, .bytes(randomBytes(32)))), session: pase)
        let csr = try DeviceAttestation.parseNOCSRElements(try #require(csrResponse[context: 0]?.bytesValue)).csr
        // No trusted root yet: InvalidNOC.
        #expect(try await addNOC(stray)[context: 0] == u(3))
        // A root that is not self-signed is refused.
        var forged = commissioner.root
        forged.signature = Array(forged.signature.reversed())
        #expect(
            await node.status(0, CommissioningIDs.operationalCredentials, 0x0B, fields((0, .bytes(forged.tlvEncoded))), session: pase)
                == .status(InteractionStatus(.invalidCommand)))
        #expect(
            await node.status(
                0, CommissioningIDs.operationalCredentials, 0x0B, fields((0, .bytes(commissioner.root.tlvEncoded))), session: pase)
                == .success)
        // Only one root per fail-safe.
        #expect(
            await node.status(
                0, CommissioningIDs.operationalCredentials, 0x0B, fields((0, .bytes(commissioner.root.tlvEncoded))), session: pase)
                == .status(InteractionStatus(.constraintError)))
        // A NOC for another key: InvalidPublicKey. One from another root: InvalidNOC.
        #expect(try await addNOC(stray)[context: 0] == u(1))
        let other = try TestCommissioner()
        #expect(try await addNOC(try other.noc(fromCSR: csr, nodeID: 5))[context: 0] == u(3))
        #expect(await node.fabrics.isEmpty)
        // The right one works, once.
        let good = try commissioner.noc(fromCSR: csr, nodeID: 5)
        #expect(try await addNOC(good)[context: 0] == u(0))
        #expect(
            await node.status(
                0, CommissioningIDs.operationalCredentials, 0x06,
                fields(
                    (0, .bytes(good.tlvEncoded)), (2, .bytes(commissioner.ipk)), (3, .unsigned(commissioner.adminNodeID)),
                    (4, u(CommissioningIDs.vendorID))), session: pase) == .status(InteractionStatus(.constraintError)))
        await node.stop()
    }

    @Test func malformedCertificatesAndElementsAreRefused() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let pase = paseSession(1)
        let commissioner = try TestCommissioner()
        _ = try await node.call(0, CommissioningIDs.generalCommissioning, 0x00, fields((0, u(60)), (1, u(0))), session: pase)
        for garbage in [[], [0x15], randomBytes(200), [0x15, 0x30, 0x01, 0xFF] + randomBytes(40)] as [[UInt8]] {
            #expect(
                await node.status(0, CommissioningIDs.operationalCredentials, 0x0B, fields((0, .bytes(garbage))), session: pase)
                    == .status(InteractionStatus(.invalidCommand)))
        }
        _ = try await node.call(0, CommissioningIDs.operationalCredentials, 0x04, fields((0, .bytes(randomBytes(32)))), session: pase)
        #expect(
            await node.status(
                0, CommissioningIDs.operationalCredentials, 0x0B, fields((0, .bytes(commissioner.root.tlvEncoded))), session: pase)
                == .success)
        for garbage in [[], randomBytes(300)] as [[UInt8]] {
            let response = try await node.call(
                0, CommissioningIDs.operationalCredentials, 0x06,
                fields(
                    (0, .bytes(garbage)), (1, .bytes(randomBytes(10))), (2, .bytes(commissioner.ipk)),
                    (3, .unsigned(commissioner.adminNodeID)),
                    (4, u(CommissioningIDs.vendorID))), session: pase)
            #expect(response[context: 0] == u(3))  // InvalidNOC
        }
        // Fields of the wrong type never reach the cluster.
        #expect(
            await node.status(0, CommissioningIDs.operationalCredentials, 0x06, fields((0, .utf8("noc"))), session: pase)
                == .status(InteractionStatus(.invalidCommand)))
        #expect(await node.fabrics.isEmpty)
        await node.stop()
    }

    @Test func attestationCredentialsAreKeptAcrossRestarts() throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try NodeStateStore(directory: directory)
        let first = try DeviceAttestationProvisioning.loadOrMint(
            store: store, vendorID: 0xFFF1, productID: 0x8001, deviceTypeID: 0x0101,
            authority: testAuthority)
        let second = try DeviceAttestationProvisioning.loadOrMint(
            store: store, vendorID: 0xFFF1, productID: 0x8001, deviceTypeID: 0x0101,
            authority: testAuthority)
        #expect(first.dac == second.dac)
        #expect(first.dacKey.publicKey == second.dacKey.publicKey)
        // Another product gets its own DAC.
        let other = try DeviceAttestationProvisioning.loadOrMint(
            store: store, vendorID: 0xFFF1, productID: 0x8002, deviceTypeID: 0x0101,
            authority: testAuthority)
        #expect(other.dac.productID == 0x8002)
        #expect(other.dac != first.dac)
    }
}
