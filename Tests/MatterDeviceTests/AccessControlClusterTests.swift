import Foundation
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// The Access Control cluster's ACL (Core spec 9.10) and its enforcement on every
// read, write and invoke, with fabric-scoped writes and fabric-filtered reads.
@Suite struct AccessControlClusterTests {
    let clock = ManualClock()
    let aclPath = AttributePath(endpoint: 0, cluster: CommissioningIDs.accessControl, attribute: AttributeID(0))

    func entry(_ privilege: Privilege, _ subjects: [UInt64]?, targets: [AccessControlTarget]? = nil) -> TLVValue {
        // The fabric index is whatever the writer's session says; a client's value is ignored.
        FabricScopedList.stamped(
            AccessControlEntry(
                fabricIndex: 99, privilege: privilege, authMode: .case,
                subjects: subjects, targets: targets
            ).tlv, fabric: 99)
    }

    /// TC-ACE-1.2, TC-ACL-2.6 step 5 (Core 9.10.7.1): every entry an ACL write adds, updates or
    /// removes records an AccessControlEntryChanged event with the writer (AdminNodeID for
    /// CASE), the ChangeType, the entry's latest value and the fabric; a position the write fills
    /// again is an update (Changed) even when its value is the same.
    @Test func aclWritesRecordAccessControlEntryChanged() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let admin = commissioner.adminSession(3, fabric: fabric)
        func changes(_ write: [TLVValue]) async -> [TLVValue] {
            let start = await node.events().last.map { $0.number + 1 } ?? 0
            #expect(await node.write(aclPath, value: .arrayOf(write), session: admin) == .success)
            return await node.events(from: start)
                .filter { $0.cluster == CommissioningIDs.accessControl && $0.event == EventID(0) }.map(\.data)
        }
        let administrator = entry(.administer, [commissioner.adminNodeID])
        let added = await changes([administrator, entry(.view, [0x3000])])
        #expect(added.map { $0[context: 3] } == [.unsigned(0), .unsigned(1)])  // Changed (the same), Added
        #expect(added.first?[context: 4]?[context: 1] == .unsigned(5))  // Privilege Administer
        #expect(added.last?[context: 1] == .unsigned(commissioner.adminNodeID))
        #expect(added.last?[context: 2] == .null)
        #expect(added.last?[context: 4]?[context: 1] == .unsigned(1))  // Privilege View
        #expect(added.last?[context: 254] == .unsigned(UInt64(fabric)))
        let changed = await changes([administrator, entry(.operate, [0x3000])])
        #expect(changed.map { $0[context: 3] } == [.unsigned(0), .unsigned(0)])  // Changed, Changed
        #expect(changed.last?[context: 4]?[context: 1] == .unsigned(3))  // Privilege Operate
        let removed = await changes([administrator])
        #expect(removed.map { $0[context: 3] } == [.unsigned(0), .unsigned(2)])  // Removed, with its last value
        #expect(removed.last?[context: 4]?[context: 1] == .unsigned(3))
    }

    /// TC-ACL-2.6 step 3 (Core 9.10.7.1, 11.18.6.8): the administrator entry AddNOC makes is
    /// recorded as Added, made over PASE (AdminNodeID null, AdminPasscodeID 0), on its fabric.
    @Test func addNOCRecordsItsAdministratorEntryAsAdded() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let changes = await node.events().filter { $0.cluster == CommissioningIDs.accessControl && $0.event == EventID(0) }
        #expect(changes.count == 1)
        let added = changes.first?.data
        #expect(added?[context: 1] == .null)
        #expect(added?[context: 2] == .unsigned(0))
        #expect(added?[context: 3] == .unsigned(1))  // Added
        #expect(added?[context: 4]?[context: 1] == .unsigned(5))  // Privilege Administer
        #expect(added?[context: 4]?[context: 2] == .unsigned(2))  // AuthMode CASE
        #expect(added?[context: 254] == .unsigned(UInt64(fabric)))
        #expect(changes.first?.endpoint == 0)
    }

    @Test func aclIsEnforcedOnReadWriteAndInvoke() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let admin = commissioner.adminSession(3, fabric: fabric)
        let operatorSession = caseSession(4, fabric: fabric, node: 0x2000)
        let viewer = caseSession(5, fabric: fabric, node: 0x3000)

        let written: TLVValue = .arrayOf([
            entry(.administer, [commissioner.adminNodeID]),
            entry(.operate, [0x2000]),
            entry(.view, [0x3000], targets: [AccessControlTarget(endpoint: 1)]),
        ])
        #expect(await node.write(aclPath, value: written, session: admin) == .success)
        let entries = await node.accessControlEntries
        #expect(entries.count == 3)
        #expect(entries.allSatisfy { $0.fabricIndex == fabric })

        // Operate: may switch the light, may not touch the ACL (Administer) or even read it.
        #expect(await node.status(1, IDs.onOff, 0x01, session: operatorSession) == .success)
        #expect(await node.write(aclPath, value: written, session: operatorSession) == InteractionStatus(.unsupportedAccess))
        #expect(await node.read(aclPath, session: operatorSession).isUnsupportedAccess)
        // View on endpoint 1 only: reads the light, cannot invoke On, sees nothing on endpoint 0.
        #expect(await node.value(1, IDs.onOff, 0x0000, session: viewer) == .success(.bool(true)))
        #expect(await node.status(1, IDs.onOff, 0x01, session: viewer) == .status(InteractionStatus(.unsupportedAccess)))
        #expect(
            await node.read(
                AttributePath(endpoint: 0, cluster: IDs.basicInformation, attribute: AttributeID(0x0001)),
                session: viewer
            ).isUnsupportedAccess)
        // canAccess gives the Interaction Model the same answers for wildcard expansion.
        #expect(await node.canAccess(viewer.subject, ClusterPath(endpoint: 1, cluster: IDs.onOff), privilege: .view))
        #expect(await !node.canAccess(viewer.subject, ClusterPath(endpoint: 0, cluster: IDs.basicInformation), privilege: .view))
        #expect(await !node.canAccess(operatorSession.subject, aclPath))
        #expect(await node.canAccess(admin.subject, aclPath, for: .write))
        #expect(await node.canAccess(nil, aclPath, for: .write))

        // The attribute shows exactly what the checks use.
        let shown = listItems(try await node.value(0, CommissioningIDs.accessControl, 0x0000, session: admin).get())
        #expect(shown.compactMap { AccessControlEntry(tlv: $0, fabricIndex: fabric) } == entries)
        #expect(shown.allSatisfy { FabricScopedList.fabricIndex(of: $0) == fabric })

        // Dropping the operator's entry revokes its access at once.
        #expect(await node.write(aclPath, value: .arrayOf([entry(.administer, [commissioner.adminNodeID])]), session: admin) == .success)
        #expect(await node.status(1, IDs.onOff, 0x01, session: operatorSession) == .status(InteractionStatus(.unsupportedAccess)))
        await node.stop()
    }

    @Test func aclWritesAreValidatedAndLimited() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let admin = commissioner.adminSession(3, fabric: fabric)
        let adminEntry = entry(.administer, [commissioner.adminNodeID])
        let before = await node.accessControlEntries

        // Five entries per fabric is one too many.
        let five = TLVValue.arrayOf([adminEntry] + (1...4).map { entry(.view, [UInt64($0)]) })
        #expect(await node.write(aclPath, value: five, session: admin) == InteractionStatus(.resourceExhausted))
        // A PASE entry, a group administrator, a non-operational CASE subject: constraint errors.
        let pase = AccessControlEntry(fabricIndex: fabric, privilege: .view, authMode: .pase).tlv
        #expect(await node.write(aclPath, value: .arrayOf([adminEntry, pase]), session: admin) == InteractionStatus(.constraintError))
        #expect(
            await node.write(aclPath, value: .arrayOf([adminEntry, entry(.view, [0xFFFF_FFFF_FFFF_FFF0])]), session: admin)
                == InteractionStatus(.constraintError))
        // Five subjects in one entry, four targets: more than SubjectsPerAccessControlEntry and
        // TargetsPerAccessControlEntry allow (the model's "max" constraints on those fields).
        #expect(
            await node.write(aclPath, value: .arrayOf([adminEntry, entry(.view, [1, 2, 3, 4, 5])]), session: admin)
                == InteractionStatus(.constraintError))
        let fourTargets = (1...4).map { AccessControlTarget(endpoint: UInt16($0)) }
        #expect(
            await node.write(aclPath, value: .arrayOf([adminEntry, entry(.view, [1], targets: fourTargets)]), session: admin)
                == InteractionStatus(.constraintError))
        #expect(await node.accessControlEntries == before)
        // Not a list at all.
        #expect(await node.write(aclPath, value: .utf8("everyone"), session: admin) == InteractionStatus(.invalidDataType))
        await node.stop()
    }

    @Test func writesReplaceOnlyTheWritersFabricAndReadsAreFiltered() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let first = try TestCommissioner(fabricID: 1, adminNodeID: 0x1111)
        let second = try TestCommissioner(fabricID: 2, adminNodeID: 0x2222)
        let fabric1 = try await first.commission(node, paseID: 1, caseID: 2)
        await node.openCommissioningWindow(timeout: nil)
        let fabric2 = try await second.commission(node, paseID: 3, caseID: 4)
        #expect([fabric1, fabric2] == [1, 2])
        let admin1 = first.adminSession(5, fabric: fabric1)
        let admin2 = second.adminSession(6, fabric: fabric2)

        // Fabric 2 adds an operator; fabric 1's administrator entry is untouched.
        #expect(
            await node.write(aclPath, value: .arrayOf([entry(.administer, [0x2222]), entry(.operate, [0x77])]), session: admin2) == .success
        )
        #expect(
            await node.accessControlEntries.filter { $0.fabricIndex == fabric1 } == [.administrator(fabricIndex: fabric1, subject: 0x1111)])
        #expect(await node.accessControlEntries.filter { $0.fabricIndex == fabric2 }.count == 2)
        // An operator of fabric 2 has nothing on fabric 1.
        #expect(
            await node.status(1, IDs.onOff, 0x01, session: caseSession(7, fabric: fabric1, node: 0x77))
                == .status(InteractionStatus(.unsupportedAccess)))
        #expect(await node.status(1, IDs.onOff, 0x01, session: caseSession(7, fabric: fabric2, node: 0x77)) == .success)

        // Fabric-filtered reads see the reader's entries only.
        let filtered = listItems(try await node.value(0, CommissioningIDs.accessControl, 0x0000, session: admin1).get())
        #expect(filtered.count == 1)
        // Unfiltered, other fabrics' entries show only their fabric index (every other field is fabric-sensitive).
        let all = listItems(try await node.value(0, CommissioningIDs.accessControl, 0x0000, session: admin1, fabricFiltered: false).get())
        #expect(all.count == 3)
        let foreign = all.filter { FabricScopedList.fabricIndex(of: $0) == fabric2 }
        #expect(foreign.count == 2)
        #expect(foreign.allSatisfy { $0 == .structure([.context(0xFE, u(fabric2))]) })
        // The NOCs list hides other fabrics' certificates the same way.
        let nocs = listItems(
            try await node.value(0, CommissioningIDs.operationalCredentials, 0x0000, session: admin1, fabricFiltered: false).get())
        #expect(nocs.count == 2)
        #expect(nocs.first { FabricScopedList.fabricIndex(of: $0) == fabric1 }?[context: 1] != nil)
        #expect(nocs.first { FabricScopedList.fabricIndex(of: $0) == fabric2 }?[context: 1] == nil)
        // CurrentFabricIndex is the reader's.
        #expect(try await node.value(0, CommissioningIDs.operationalCredentials, 0x0005, session: admin2).get() == u(fabric2))
        await node.stop()
    }

    @Test func aclWritesPersist() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let written: TLVValue = .arrayOf([entry(.administer, [commissioner.adminNodeID]), entry(.operate, [0x2000])])
        #expect(await node.write(aclPath, value: written, session: commissioner.adminSession(3, fabric: fabric)) == .success)
        let entries = await node.accessControlEntries
        await node.stop()
        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await restarted.accessControlEntries == entries)
        #expect(await restarted.status(1, IDs.onOff, 0x01, session: caseSession(4, fabric: fabric, node: 0x2000)) == .success)
        await restarted.stop()
    }
}

extension Result where Failure == InteractionStatus {
    var isUnsupportedAccess: Bool {
        if case .failure(let status) = self { return status == InteractionStatus(.unsupportedAccess) }
        return false
    }
}
