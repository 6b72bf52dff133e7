import Foundation
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import Testing

/// Issue #21: the Groups cluster's mandatory commands, over CASE from a commissioner, with
/// the membership kept per fabric in GroupKeyManagement's GroupTable and across a restart.
@Suite("Groups: membership commands over loopback UDP")
struct GroupsServerTests {
    static let groups = ClusterID(0x0004)
    static let groupKeyManagement = ClusterID(0x003F)
    static let kitchen: UInt16 = 0x0101

    @Test func addViewListRemoveGroupsAndKeepThemAcrossARestart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        var running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let commissioned = try await commissioner.commission(try running.address, passcode: testPasscode)
        var session = commissioned.caseSession

        // No key set is mapped to the group yet: UNSUPPORTED_ACCESS (1.3.7.1).
        var added = try await commissioner.call(session, 1, Self.groups, 0x00, fields((0, u(Self.kitchen)), (1, .utf8("Kitchen"))))
        #expect(added[context: 0]?.uintValue == UInt64(StatusCode.unsupportedAccess.rawValue))
        #expect(added[context: 1]?.uintValue == UInt64(Self.kitchen))

        // KeySetWrite (key set 1, TrustFirst, one epoch key), then map the group to it.
        let keySet = groupKeySet(1, epochKey: Array(repeating: 0xA5, count: 16), startTime: 1)
        #expect(try await commissioner.status(session, 0, Self.groupKeyManagement, 0x00, fields((0, keySet))) == .success)
        #expect(try await commissioner.write(session, [groupKeyMapWrite(group: Self.kitchen, keySet: 1)]) == [.success])

        added = try await commissioner.call(session, 1, Self.groups, 0x00, fields((0, u(Self.kitchen)), (1, .utf8("Kitchen"))))
        #expect(added[context: 0]?.uintValue == 0)
        // GroupID 0 and a name over 16 bytes are constraint errors.
        let zero = try await commissioner.call(session, 1, Self.groups, 0x00, fields((0, u(0)), (1, .utf8("x"))))
        #expect(zero[context: 0]?.uintValue == UInt64(StatusCode.constraintError.rawValue))
        let long = try await commissioner.call(
            session, 1, Self.groups, 0x00,
            fields((0, u(Self.kitchen)), (1, .utf8(String(repeating: "n", count: 17)))))
        #expect(long[context: 0]?.uintValue == UInt64(StatusCode.constraintError.rawValue))

        let viewed = try await commissioner.call(session, 1, Self.groups, 0x01, fields((0, u(Self.kitchen))))
        #expect(viewed[context: 0]?.uintValue == 0)
        let unknown = try await commissioner.call(session, 1, Self.groups, 0x01, fields((0, u(0x0202))))
        #expect(unknown[context: 0]?.uintValue == UInt64(StatusCode.notFound.rawValue))

        // GroupKeyManagement's GroupTable shows the membership of this fabric.
        guard case .success(let table) = try await commissioner.read(session, 0, Self.groupKeyManagement, 0x0001),
            let entry = table.members?.first?.value
        else {
            Issue.record("GroupTable does not read as a list with one entry")
            return
        }
        #expect(entry[context: 1]?.uintValue == UInt64(Self.kitchen))
        #expect(entry[context: 2]?.members?.compactMap { $0.value.uintValue } == [1])
        #expect(entry[context: 254]?.uintValue == UInt64(commissioned.fabricIndex))

        // Across a restart: still a member.
        await running.stop()
        running = try await RunningNode.start(stateDirectory: directory)
        session = try await commissioner.caseSession(try running.address, deviceNodeID: commissioned.deviceNodeID)
        let membership = try await commissioner.call(session, 1, Self.groups, 0x02, fields((0, .array([]))))
        #expect(membership[context: 1]?.members?.compactMap { $0.value.uintValue } == [UInt64(Self.kitchen)])
        #expect(membership[context: 0]?.uintValue == 3)  // four groups per fabric, one used

        let removed = try await commissioner.call(session, 1, Self.groups, 0x03, fields((0, u(Self.kitchen))))
        #expect(removed[context: 0]?.uintValue == 0)
        let again = try await commissioner.call(session, 1, Self.groups, 0x03, fields((0, u(Self.kitchen))))
        #expect(again[context: 0]?.uintValue == UInt64(StatusCode.notFound.rawValue))
        #expect(try await commissioner.status(session, 1, Self.groups, 0x04) == .success)  // RemoveAllGroups
        let empty = try await commissioner.call(session, 1, Self.groups, 0x02, fields((0, .array([]))))
        #expect(empty[context: 1]?.members?.isEmpty == true)
        // AddGroupIfIdentifying while not identifying: SUCCESS, and nothing added.
        #expect(try await commissioner.status(session, 1, Self.groups, 0x05, fields((0, u(Self.kitchen)), (1, .utf8("K")))) == .success)
        let still = try await commissioner.call(session, 1, Self.groups, 0x02, fields((0, .array([]))))
        #expect(still[context: 1]?.members?.isEmpty == true)

        await running.stop()
        await commissioner.stop()
    }
}
