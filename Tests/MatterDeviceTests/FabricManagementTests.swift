import Foundation
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Managing fabrics after commissioning (Core spec 11.18.6.9-12): labels, UpdateNOC,
// RemoveFabric; and a second administrator's window (11.19).
@Suite struct FabricManagementTests {
    let clock = ManualClock()

    /// Two fabrics on one node, committed; the second through a window the first opened.
    func twoFabrics() async throws -> (MatterNode, TestCommissioner, TestCommissioner) {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let first = try TestCommissioner(fabricID: 1, adminNodeID: 0x1111)
        let second = try TestCommissioner(fabricID: 2, adminNodeID: 0x2222)
        _ = try await first.commission(node, paseID: 1, caseID: 2)
        let open = await node.status(
            0, CommissioningIDs.administratorCommissioning, 0x01, fields((0, u(180))),
            session: first.adminSession(3, fabric: 1), timed: true)
        #expect(open == .success)
        _ = try await second.commission(node, paseID: 4, caseID: 5)
        return (node, first, second)
    }

    func label(_ node: MatterNode, _ text: String, session: SessionContext) async throws -> TLVValue {
        try await node.call(0, CommissioningIDs.operationalCredentials, 0x09, fields((0, .utf8(text))), session: session)
    }

    @Test func fabricLabelsAreUnique() async throws {
        let (node, first, second) = try await twoFabrics()
        let admin1 = first.adminSession(6, fabric: 1), admin2 = second.adminSession(7, fabric: 2)
        let set = try await label(node, "Home", session: admin1)
        #expect(set[context: 0] == u(0))
        #expect(set[context: 1] == u(1))
        let conflict = try await label(node, "Home", session: admin2)
        #expect(conflict[context: 0] == u(10))  // LabelConflict
        #expect(conflict[context: 1] == nil)
        #expect(try await label(node, "Office", session: admin2)[context: 0] == u(0))
        // Relabelling a fabric with its own label is no conflict.
        #expect(try await label(node, "Home", session: admin1)[context: 0] == u(0))
        #expect(await node.fabrics.map(\.label) == ["Home", "Office"])
        // Fabrics is fabric-scoped: filtered, a reader sees its own; unfiltered, all (no field is sensitive).
        let own = listItems(try await node.value(0, CommissioningIDs.operationalCredentials, 0x0001, session: admin2).get())
        #expect(own.map { $0[context: 5] } == [.utf8("Office")])
        let descriptors = listItems(
            try await node.value(
                0, CommissioningIDs.operationalCredentials, 0x0001, session: admin2,
                fabricFiltered: false
            ).get())
        #expect(descriptors.map { $0[context: 5] } == [.utf8("Home"), .utf8("Office")])
        // Labels are at most 32 bytes.
        #expect(
            await node.status(
                0, CommissioningIDs.operationalCredentials, 0x09, fields((0, .utf8(String(repeating: "x", count: 33)))),
                session: admin1) == .status(InteractionStatus(.constraintError)))
        await node.stop()
    }

    @Test func removeFabricTakesItsAccessAndKeysAlong() async throws {
        let (node, first, second) = try await twoFabrics()
        let recorder = EventRecorder(node.commissioningEvents)
        let admin1 = first.adminSession(6, fabric: 1), admin2 = second.adminSession(7, fabric: 2)
        #expect(await node.status(1, IDs.onOff, 0x01, session: admin2) == .success)

        let removed = try await node.call(0, CommissioningIDs.operationalCredentials, 0x0A, fields((0, u(2))), session: admin1)
        #expect(removed[context: 0] == u(0))
        #expect(removed[context: 1] == u(2))
        // BasicInformation Leave (11.1.6.3) names the fabric that went.
        let leave = await node.events().filter { $0.cluster == ClusterID(0x0028) && $0.event == EventID(0x02) }
        #expect(leave.map(\.data) == [.structure([TLVElement(tag: .context(0), .unsigned(2))])])
        #expect(await node.fabrics.map(\.index) == [1])
        #expect(await node.accessControlEntries.allSatisfy { $0.fabricIndex == 1 })
        #expect(await node.status(1, IDs.onOff, 0x01, session: admin2) == .status(InteractionStatus(.unsupportedAccess)))
        #expect(await node.uint(0, CommissioningIDs.operationalCredentials, 0x0003) == 1)
        #expect(listItems(await node.value(0, CommissioningIDs.operationalCredentials, 0x0004)).count == 1)

        // An index that is not there: InvalidFabricIndex.
        let missing = try await node.call(0, CommissioningIDs.operationalCredentials, 0x0A, fields((0, u(7))), session: admin1)
        #expect(missing[context: 0] == u(11))

        let events = await recorder.events(stopping: node)
        // Saving the state after the removal is announced too (group keys follow it).
        #expect(events.contains(.committedStateSaved))
        #expect(events.filter { $0 != .committedStateSaved } == [.fabricRemoved(2), .closeSessions(fabricIndex: 2, except: nil)])
    }

    @Test func updateNOCReplacesTheIdentityAndRollsBackOnExpiry() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let admin = commissioner.adminSession(3, fabric: fabric)
        let before = try #require(await node.fabrics.first)

        func update(nodeID: NodeID) async throws -> TLVValue {
            _ = try await node.call(0, CommissioningIDs.generalCommissioning, 0x00, fields((0, u(60)), (1, u(0))), session: admin)
            let csrResponse = try await node.call(
                0, CommissioningIDs.operationalCredentials, 0x04,
                fields((0, .bytes(randomBytes(32))), (1, .bool(true))), session: admin)
            let csr = try DeviceAttestation.parseNOCSRElements(try #require(csrResponse[context: 0]?.bytesValue)).csr
            let noc = try commissioner.noc(fromCSR: csr, nodeID: nodeID)
            return try await node.call(
                0, CommissioningIDs.operationalCredentials, 0x07, fields((0, .bytes(noc.tlvEncoded))), session: admin)
        }

        // Rolled back when the fail-safe expires.
        #expect(try await update(nodeID: 0x5555)[context: 0] == u(0))
        #expect(await node.fabrics.first?.nodeID == 0x5555)
        await clock.advance(by: .seconds(60))
        #expect(await node.fabrics.first == before)

        // Kept once commissioning completes.
        #expect(try await update(nodeID: 0x6666)[context: 0] == u(0))
        let complete = try await node.call(0, CommissioningIDs.generalCommissioning, 0x04, fields(), session: admin)
        #expect(complete[context: 0] == u(0))
        await clock.advance(by: .seconds(60))
        #expect(await node.fabrics.first?.nodeID == 0x6666)
        #expect(await node.fabrics.first?.operationalPrivateKey != before.operationalPrivateKey)
        await node.stop()
    }

    /// TC-OPCREDS-3.4 step 20: a trusted root added under the fail-safe is for a new fabric, so
    /// an UpdateNOC after it answers MissingCsr, as connectedhomeip does.
    @Test func updateNOCAfterAddTrustedRootIsMissingCSR() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let admin = commissioner.adminSession(3, fabric: fabric)
        _ = try await node.call(0, CommissioningIDs.generalCommissioning, 0x00, fields((0, u(60)), (1, u(0))), session: admin)
        let csrResponse = try await node.call(
            0, CommissioningIDs.operationalCredentials, 0x04, fields((0, .bytes(randomBytes(32))), (1, .bool(true))), session: admin)
        let csr = try DeviceAttestation.parseNOCSRElements(try #require(csrResponse[context: 0]?.bytesValue)).csr
        let noc = try commissioner.noc(fromCSR: csr, nodeID: 0x5555)
        let otherRoot = try TestCommissioner().root.tlvEncoded
        #expect(await node.status(0, CommissioningIDs.operationalCredentials, 0x0B, fields((0, .bytes(otherRoot))), session: admin) == .success)
        let response = try await node.call(
            0, CommissioningIDs.operationalCredentials, 0x07, fields((0, .bytes(noc.tlvEncoded))), session: admin)
        #expect(response[context: 0] == u(4))  // MissingCsr
        #expect(await node.fabrics.first?.nodeID != 0x5555)
    }

    @Test func openCommissioningWindowNeedsATimedInvokeAndAValidVerifier() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let recorder = EventRecorder(node.commissioningEvents)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let admin = commissioner.adminSession(3, fabric: fabric)
        let salt = randomBytes(16)
        let verifier = try Spake2pVerifier(passcode: 20202021, salt: salt, iterations: 1000)
        let request = fields((0, u(180)), (1, .bytes(verifier.serialized)), (2, u(3840)), (3, u(1000)), (4, .bytes(salt)))

        #expect(
            await node.status(0, CommissioningIDs.administratorCommissioning, 0x00, request, session: admin)
                == .status(InteractionStatus(.needsTimedInteraction)))
        #expect(await node.uint(0, CommissioningIDs.administratorCommissioning, 0x0000) == 0)
        // A verifier that is not w0 || L: PAKEParameterError. A timeout under 3 minutes: INVALID_COMMAND.
        let badVerifier = fields((0, u(180)), (1, .bytes(randomBytes(97))), (2, u(3840)), (3, u(1000)), (4, .bytes(salt)))
        #expect(
            await node.status(0, CommissioningIDs.administratorCommissioning, 0x00, badVerifier, session: admin, timed: true)
                == .status(InteractionStatus(.failure, clusterStatus: 3)))
        // Iterations under 1000 or a salt under 16 bytes: PAKEParameterError, not the generic
        // CONSTRAINT_ERROR of the field's range (11.19.8.1; TC-CADMIN-1.5 step 9).
        let fewIterations = fields((0, u(180)), (1, .bytes(verifier.serialized)), (2, u(3840)), (3, u(999)), (4, .bytes(salt)))
        #expect(
            await node.status(0, CommissioningIDs.administratorCommissioning, 0x00, fewIterations, session: admin, timed: true)
                == .status(InteractionStatus(.failure, clusterStatus: 3)))
        let shortSalt = fields((0, u(180)), (1, .bytes(verifier.serialized)), (2, u(3840)), (3, u(1000)), (4, .bytes(randomBytes(15))))
        #expect(
            await node.status(0, CommissioningIDs.administratorCommissioning, 0x00, shortSalt, session: admin, timed: true)
                == .status(InteractionStatus(.failure, clusterStatus: 3)))
        let tooShort = fields((0, u(60)), (1, .bytes(verifier.serialized)), (2, u(3840)), (3, u(1000)), (4, .bytes(salt)))
        #expect(
            await node.status(0, CommissioningIDs.administratorCommissioning, 0x00, tooShort, session: admin, timed: true)
                == .status(InteractionStatus(.invalidCommand)))

        #expect(await node.status(0, CommissioningIDs.administratorCommissioning, 0x00, request, session: admin, timed: true) == .success)
        #expect(await node.uint(0, CommissioningIDs.administratorCommissioning, 0x0000) == 1)  // EnhancedWindowOpen
        #expect(await node.uint(0, CommissioningIDs.administratorCommissioning, 0x0001) == UInt64(fabric))
        #expect(await node.uint(0, CommissioningIDs.administratorCommissioning, 0x0002) == UInt64(CommissioningIDs.vendorID))
        // A second window while one is open: Busy.
        #expect(
            await node.status(0, CommissioningIDs.administratorCommissioning, 0x01, fields((0, u(180))), session: admin, timed: true)
                == .status(InteractionStatus(.failure, clusterStatus: 2)))

        // The window closes by itself after its timeout; revoking a closed window: WindowNotOpen.
        await clock.advance(by: .seconds(180))
        #expect(await node.uint(0, CommissioningIDs.administratorCommissioning, 0x0000) == 0)
        #expect(await node.value(0, CommissioningIDs.administratorCommissioning, 0x0001) == .null)
        #expect(
            await node.status(0, CommissioningIDs.administratorCommissioning, 0x02, session: admin, timed: true)
                == .status(InteractionStatus(.failure, clusterStatus: 4)))

        // Basic window, revoked.
        #expect(
            await node.status(0, CommissioningIDs.administratorCommissioning, 0x01, fields((0, u(300))), session: admin, timed: true)
                == .success)
        #expect(await node.uint(0, CommissioningIDs.administratorCommissioning, 0x0000) == 2)
        #expect(await node.status(0, CommissioningIDs.administratorCommissioning, 0x02, session: admin, timed: true) == .success)
        #expect(await node.commissioningWindow == nil)

        let events = await recorder.events(stopping: node)
        let enhanced = events.compactMap { event -> CommissioningWindowInfo? in
            if case .commissioningWindowOpened(let info) = event, info.kind.isEnhanced { return info }
            return nil
        }
        #expect(enhanced.count == 1)
        #expect(enhanced.first?.kind == .enhanced(verifier: verifier, discriminator: 3840, iterations: 1000, salt: salt))
        #expect(enhanced.first?.openedBy == fabric)
        // Closed by its timeout, then by RevokeCommissioning.
        #expect(events.filter { $0 == .commissioningWindowClosed }.count == 2)
    }
}
