import Foundation
import MatterModel
import MatterTLV
import Testing
@testable import MatterDevice

@Suite struct AccessControlTests {
    let onOff = ClusterID(0x0006)
    let admin = AccessControlEntry.administrator(fabricIndex: 1, subject: 0x1122)

    func caseSubject(_ node: UInt64, fabric: FabricIndex = 1, cats: [UInt32] = []) -> SubjectDescriptor {
        SubjectDescriptor(authMode: .case, fabricIndex: fabric, subject: node, caseAuthenticatedTags: cats)
    }

    @Test func administratorMayDoEverythingOnItsFabricOnly() {
        let request = AccessRequest(endpoint: 1, cluster: onOff, privilege: .administer)
        #expect(AccessControl.check(caseSubject(0x1122), request, entries: [admin]))
        #expect(!AccessControl.check(caseSubject(0x1122, fabric: 2), request, entries: [admin]))
        #expect(!AccessControl.check(caseSubject(0x9999), request, entries: [admin]))
    }

    @Test func privilegeHierarchy() {
        #expect(Privilege.manage.grants(.operate))
        #expect(Privilege.operate.grants(.view))
        #expect(!Privilege.manage.grants(.proxyView))
        #expect(!Privilege.operate.grants(.manage))
        #expect(Privilege.proxyView.grants(.view))
        #expect(Privilege.administer.grants(.proxyView))
    }

    @Test func targetsRestrictClusterEndpointAndDeviceType() {
        let entry = AccessControlEntry(
            fabricIndex: 1, privilege: .operate, authMode: .case, subjects: nil,
            targets: [AccessControlTarget(cluster: 0x0006, endpoint: 1)])
        let subject = caseSubject(7)
        #expect(AccessControl.check(subject, AccessRequest(endpoint: 1, cluster: onOff, privilege: .operate), entries: [entry]))
        #expect(!AccessControl.check(subject, AccessRequest(endpoint: 2, cluster: onOff, privilege: .operate), entries: [entry]))
        #expect(!AccessControl.check(subject, AccessRequest(endpoint: 1, cluster: ClusterID(8), privilege: .operate), entries: [entry]))
        #expect(!AccessControl.check(subject, AccessRequest(endpoint: 1, cluster: onOff, privilege: .manage), entries: [entry]))
        let byType = AccessControlEntry(
            fabricIndex: 1, privilege: .view, authMode: .case,
            targets: [AccessControlTarget(deviceType: 0x0101)])
        #expect(
            AccessControl.check(
                subject, AccessRequest(endpoint: 3, cluster: onOff, deviceTypes: [DeviceTypeID(0x0101)], privilege: .view),
                entries: [byType]))
        #expect(
            !AccessControl.check(
                subject, AccessRequest(endpoint: 3, cluster: onOff, deviceTypes: [DeviceTypeID(0x0100)], privilege: .view),
                entries: [byType]))
    }

    @Test func catSubjectsMatchByIdentifierAndMinimumVersion() {
        let entry = AccessControlEntry(
            fabricIndex: 1, privilege: .operate, authMode: .case,
            subjects: [0xFFFF_FFFD_ABCD_0002])
        let request = AccessRequest(endpoint: 1, cluster: onOff, privilege: .operate)
        #expect(AccessControl.check(caseSubject(5, cats: [0xABCD_0003]), request, entries: [entry]))
        #expect(!AccessControl.check(caseSubject(5, cats: [0xABCD_0001]), request, entries: [entry]))
        #expect(!AccessControl.check(caseSubject(5, cats: [0xABCE_0003]), request, entries: [entry]))
    }

    @Test func paseIsImplicitlyAdministrator() {
        #expect(AccessControl.check(.pase(), AccessRequest(endpoint: 0, cluster: ClusterID(0x3E), privilege: .administer), entries: []))
    }

    @Test func entryRoundTripsThroughTLV() throws {
        let entry = AccessControlEntry(
            fabricIndex: 3, privilege: .manage, authMode: .case, subjects: [1, 2],
            targets: [AccessControlTarget(cluster: 6, endpoint: nil, deviceType: nil)])
        let decoded = try #require(AccessControlEntry(tlv: entry.tlv, fabricIndex: 3))
        #expect(decoded == entry)
    }

    @Test func invalidEntriesAreRejected() {
        let pase = AccessControlEntry(fabricIndex: 1, privilege: .view, authMode: .pase)
        #expect(AccessControlEntry(tlv: pase.tlv, fabricIndex: 1) == nil)
        let groupAdmin = AccessControlEntry(fabricIndex: 1, privilege: .administer, authMode: .group, subjects: [5])
        #expect(AccessControlEntry(tlv: groupAdmin.tlv, fabricIndex: 1) == nil)
        let emptyTarget = AccessControlEntry(fabricIndex: 1, privilege: .view, authMode: .case, targets: [AccessControlTarget()])
        #expect(AccessControlEntry(tlv: emptyTarget.tlv, fabricIndex: 1) == nil)
        #expect(AccessControlEntry(tlv: .utf8("junk"), fabricIndex: 1) == nil)
    }

    /// TC-CADMIN-1.15 step 15 (Core 11.18.6.8): a removed fabric's index is not the next one
    /// given; indexes go on from the last allocated, wrap after 254, and skip those in use.
    @Test func fabricTableAllocatesIndexesInTurnAndDetectsConflicts() throws {
        var table = FabricTable(capacity: 2)
        let key = Data([4] + [UInt8](repeating: 1, count: 64))
        func fabric(_ index: FabricIndex, id: UInt64) -> FabricInfo {
            FabricInfo(
                index: index, rootCertificate: Data(), intermediateCertificate: nil, nodeOperationalCertificate: Data(),
                operationalPrivateKey: Data(), ipkEpochKey: Data(count: 16), adminVendorID: 0xFFF1,
                fabricID: id, nodeID: 1, rootPublicKey: key, compressedFabricID: 0)
        }
        #expect(table.nextIndex() == 1)
        table.upsert(fabric(1, id: 10))
        table.upsert(fabric(2, id: 11))
        #expect(table.isFull)
        #expect(table.conflicts(rootPublicKey: key, fabricID: 10))
        #expect(!table.conflicts(rootPublicKey: key, fabricID: 12))
        table.remove(1)
        #expect(table.nextIndex() == 3)
        table.upsert(fabric(3, id: 12))
        table.remove(2)
        #expect(table.nextIndex() == 4)
        // After 254 it wraps to the lowest index not in use.
        table.lastAllocatedIndex = 254
        #expect(table.nextIndex() == 1)
        table.upsert(fabric(1, id: 13))
        #expect(table.nextIndex() == 2)
        // The allocation survives a restart (the snapshot is JSON).
        let restored = try JSONDecoder().decode(FabricTable.self, from: JSONEncoder().encode(table))
        #expect(restored.nextIndex() == 2)
        // On no fabric at all the node starts again at 1, as at first boot.
        table.remove(1)
        table.remove(3)
        #expect(table.nextIndex() == 1)
    }

    @Test func stateStoreKeepsThePreviousVersionReadable() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = try NodeStateStore(directory: dir)
        try store.save([admin], "acl")
        try store.save([admin, admin], "acl")
        #expect(try store.load([AccessControlEntry].self, "acl")?.count == 2)
        try Data("{not json".utf8).write(to: dir.appendingPathComponent("broken.json"))
        #expect(throws: NodeStateStore.StoreError.self) { try store.load([AccessControlEntry].self, "broken") }
        #expect(try store.load([AccessControlEntry].self, "missing") == nil)
    }
}
