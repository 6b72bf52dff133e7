import Foundation
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Door Lock (Application Cluster spec 5.2): remote lock and unlock as Timed Invokes with PIN
// checking, the wrong-code lockout, auto-relock on the clock, users and PIN credentials kept in
// the state directory (hashed), and the events each raises; by hand with the key or at the keypad.
@Suite struct DoorLockTests {
    let clock = ManualClock()
    static let lock = ClusterID(0x0101)
    static let lockState: UInt32 = 0x0000

    func lockNode(
        features: Set<String> = ["PIN", "USR", "COTA"], attributes: [AttributeID: TLVValue] = [:], store: NodeStateStore? = nil
    )
        async throws -> MatterNode
    {
        let node = try MatterNode(
            description: NodeDescription(endpoints: [
                rootEndpoint(),
                EndpointDescription(
                    number: 1, deviceTypes: [deviceType(DeviceTypeID(0x000A))],
                    serverClusters: [
                        ClusterInstanceDescription(id: IDs.identify),
                        ClusterInstanceDescription(id: Self.lock, features: features, attributes: attributes),
                    ]),
            ]), clock: clock, logger: quietLogger, commissioning: CommissioningConfiguration(stateStore: store))
        // The controller administers fabric 1 (SetUser and SetCredential need Administer).
        await node.replaceAccessControlEntries(of: 1, with: [AccessControlEntry(fabricIndex: 1, privilege: .administer, authMode: .case)])
        return node
    }

    /// A command from a controller on fabric 1, node 0x77 (CASE).
    func send(_ node: MatterNode, _ command: UInt32, _ fields: TLVValue = .structure([]), timed: Bool = true) async -> InvokeResult {
        let session = SessionContext(subject: SubjectDescriptor(authMode: .case, fabricIndex: 1, subject: 0x77))
        return await node.invoke(
            CommandPath(endpoint: 1, cluster: Self.lock, command: CommandID(command)), fields: fields, session: session, timed: timed)
    }

    func events(_ node: MatterNode, _ id: UInt32, from: UInt64) async -> [[UInt8: TLVValue]] {
        await node.events(from: from).filter { $0.cluster == Self.lock && $0.event == EventID(id) }.map { event in
            var fields: [UInt8: TLVValue] = [:]
            if case .structure(let members) = event.data {
                for m in members { if case .context(let tag) = m.tag { fields[tag] = m.value } }
            }
            return fields
        }
    }

    func mark(_ node: MatterNode) async -> UInt64 { await node.events().last.map { $0.number + 1 } ?? 0 }

    /// A user with PIN "1234" at credential index 1; returns the user index.
    func addUserWithPIN(_ node: MatterNode, _ code: String = "1234", index: UInt64 = 1) async -> UInt64? {
        let response = await send(
            node, 0x22,
            fields(
                (0, u(0)), (1, .structure([.context(0, u(1)), .context(1, u(index))])), (2, .bytes(Array(code.utf8))), (3, .null),
                (4, .null), (5, .null)))
        guard case .response(let id, let value) = response, id == CommandID(0x23), value[context: 0]?.unsignedValue == 0 else {
            return nil
        }
        return value[context: 1]?.unsignedValue
    }

    @Test func lockCommandsAreTimedAndRaiseLockOperationWithTheCaller() async throws {
        let node = try await lockNode()
        let start = await mark(node)
        #expect(await send(node, 0x01, timed: false) == .failure(.needsTimedInteraction))
        #expect(await send(node, 0x01) == .success)
        #expect(await node.uint(1, Self.lock, Self.lockState) == 2)
        #expect(await send(node, 0x00) == .success)
        #expect(await node.uint(1, Self.lock, Self.lockState) == 1)
        let operations = await events(node, 0x02, from: start)
        #expect(operations.map { $0[0] } == [u(1), u(0)])  // Unlock, Lock
        #expect(operations.allSatisfy { $0[1] == u(7) && $0[2] == .null && $0[3] == u(1) && $0[4] == u(0x77) })
    }

    @Test func aPINIsCheckedAndTheWrongCodeLimitLocksTheKeypadOut() async throws {
        let node = try await lockNode(attributes: [AttributeID(0x0033): .bool(true)])  // RequirePINforRemoteOperation
        let user = try #require(await addUserWithPIN(node))
        #expect(user == 1)
        let start = await mark(node)
        // Required and missing: refused, counted.
        #expect(await send(node, 0x01) == .failure(.failure))
        #expect(await send(node, 0x01, fields((0, .bytes(Array("1234".utf8))))) == .success)
        #expect(await node.uint(1, Self.lock, Self.lockState) == 2)
        let unlock = try #require(await events(node, 0x02, from: start).last)
        #expect(unlock[2] == u(1) && unlock[5] == .array([TLVElement(.structure([.context(0, u(1)), .context(1, u(1))]))]))
        // Three wrong codes: the third raises DoorLockAlarm WrongCodeEntryLimit and starts a lockout
        // in which even the right code is refused.
        for _ in 0..<3 { #expect(await send(node, 0x00, fields((0, .bytes(Array("9999".utf8))))) == .failure(.failure)) }
        #expect(await events(node, 0x00, from: start).map { $0[0] } == [u(4)])
        #expect(await events(node, 0x03, from: start).map { $0[2] } == [u(1), u(1), u(1), u(1)])  // InvalidCredential
        #expect(await send(node, 0x00, fields((0, .bytes(Array("1234".utf8))))) == .failure(.failure))
        await clock.advance(by: .seconds(10))  // UserCodeTemporaryDisableTime
        #expect(await send(node, 0x00, fields((0, .bytes(Array("1234".utf8))))) == .success)
        #expect(await node.uint(1, Self.lock, Self.lockState) == 1)
    }

    @Test func autoRelockAndUnlockWithTimeoutRelockOnTheClockAsAuto() async throws {
        let node = try await lockNode(attributes: [AttributeID(0x0023): u(30)])
        let start = await mark(node)
        #expect(await send(node, 0x01) == .success)
        await clock.advance(by: .seconds(29))
        #expect(await node.uint(1, Self.lock, Self.lockState) == 2)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, Self.lock, Self.lockState) == 1)
        #expect(await send(node, 0x03, fields((0, u(5)))) == .success)
        await clock.advance(by: .seconds(5))
        #expect(await node.uint(1, Self.lock, Self.lockState) == 1)
        #expect(
            await events(node, 0x02, from: start).map { [$0[0], $0[1]] } == [[u(1), u(7)], [u(0), u(4)], [u(1), u(7)], [u(0), u(4)]])
    }

    @Test func usersAndCredentialsFollowTheSpecsStatusesAndSurviveARestartHashed() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try NodeStateStore(directory: directory)
        let node = try await lockNode(store: store)
        let start = await mark(node)
        // SetUser Add, then Add again at the same index: FAILURE with cluster status OCCUPIED.
        let add = fields((0, u(0)), (1, u(2)), (2, .utf8("Ada")), (3, .null), (4, .null), (5, .null), (6, .null))
        let added = await send(node, 0x1A, add)
        #expect(added == .success, "\(added)")
        #expect(await send(node, 0x1A, add) == .status(InteractionStatus(.failure, clusterStatus: 3)))
        #expect(await send(node, 0x1A, add, timed: false) == .failure(.needsTimedInteraction))
        // A PIN for her; the same PIN again is a Duplicate; too short is InvalidField.
        func setPIN(_ code: String, index: UInt64, user: TLVValue) async -> TLVValue? {
            guard
                case .response(_, let value) = await send(
                    node, 0x22,
                    fields(
                        (0, u(0)), (1, .structure([.context(0, u(1)), .context(1, u(index))])), (2, .bytes(Array(code.utf8))), (3, user),
                        (4, .null), (5, .null)))
            else { return nil }
            return value
        }
        #expect(await setPIN("246810", index: 1, user: u(2))?[context: 0] == u(0))
        #expect(await setPIN("246810", index: 2, user: u(2))?[context: 0] == u(2))
        #expect(await setPIN("12", index: 2, user: u(2))?[context: 0] == u(0x85))
        #expect(await setPIN("13579", index: 1, user: u(2))?[context: 0] == u(3))  // Occupied
        // GetUser shows her and the credential; GetCredentialStatus the owner.
        guard case .response(_, let got) = await send(node, 0x1B, fields((0, u(2))), timed: false) else {
            Issue.record("no GetUserResponse")
            return
        }
        #expect(got[context: 1] == .utf8("Ada") && got[context: 3] == u(1) && got[context: 7] == u(1))
        #expect(got[context: 6] == .array([TLVElement(.structure([.context(0, u(1)), .context(1, u(1))]))]))
        guard
            case .response(_, let status) = await send(
                node, 0x24, fields((0, .structure([.context(0, u(1)), .context(1, u(1))]))), timed: false)
        else {
            Issue.record("no GetCredentialStatusResponse")
            return
        }
        #expect(status[context: 0] == .bool(true) && status[context: 1] == u(2))
        #expect(await events(node, 0x04, from: start).map { [$0[0], $0[1], $0[6]] } == [[u(2), u(0), u(2)], [u(6), u(0), u(1)]])
        await node.stop()

        // The state directory keeps no PIN in clear; a restarted lock still knows it.
        let kept = try String(contentsOf: directory.appendingPathComponent("door-lock-1.json"), encoding: .utf8)
        #expect(!kept.contains("246810") && !kept.contains(Data("246810".utf8).base64EncodedString()))
        let again = try await lockNode(store: store)
        #expect(await send(again, 0x01, fields((0, .bytes(Array("246810".utf8))))) == .success)
        #expect(await events(again, 0x02, from: 0).last?[2] == u(2))
        // ClearCredential of her only PIN clears her too.
        #expect(await send(again, 0x26, fields((0, .structure([.context(0, u(1)), .context(1, u(1))])))) == .success)
        guard case .response(_, let cleared) = await send(again, 0x1B, fields((0, u(2))), timed: false) else {
            Issue.record("no GetUserResponse")
            return
        }
        #expect(cleared[context: 1] == .null)
    }

    /// TC-DRLK-2.9 steps 4 and 14b (Application Cluster 5.2.10.40, 5.2.10.44): SetCredential with
    /// a UserStatus or UserType outside its enum, or ClearCredential with an unknown
    /// CredentialType, is INVALID_COMMAND, before the credential itself is looked at.
    @Test func credentialCommandsWithAnUnknownEnumAreInvalidCommand() async throws {
        let node = try await lockNode()
        func setPIN(status: TLVValue, type: TLVValue) async -> InvokeResult {
            await send(
                node, 0x22,
                fields(
                    (0, u(0)), (1, .structure([.context(0, u(1)), .context(1, u(2))])), (2, .bytes(Array("8642097".utf8))),
                    (3, .null), (4, status), (5, type)))
        }
        let both = await setPIN(status: u(5), type: u(10))
        #expect(both == .failure(.invalidCommand), "\(both)")
        #expect(await setPIN(status: u(0), type: .null) == .failure(.invalidCommand))  // Available
        #expect(await setPIN(status: .null, type: u(10)) == .failure(.invalidCommand))
        guard case .response(_, let added) = await setPIN(status: u(3), type: u(9)) else {
            Issue.record("no SetCredentialResponse")
            return
        }
        #expect(added[context: 0] == u(0))
        // ClearCredential of a CredentialType outside its enum (9): INVALID_COMMAND (step 14b).
        let unknownType = fields((0, .structure([.context(0, u(9)), .context(1, u(1))])))
        #expect(await send(node, 0x26, unknownType) == .failure(.invalidCommand))
        // SetUser with a UserType or CredentialRule outside its enum: INVALID_COMMAND (TC-DRLK-2.8 step 4).
        let setUser = { (type: UInt64, rule: UInt64) in
            fields((0, u(0)), (1, u(2)), (2, .utf8("xxx")), (3, u(6452)), (4, u(1)), (5, u(type)), (6, u(rule)))
        }
        #expect(await send(node, 0x1A, setUser(10, 0)) == .failure(.invalidCommand))
        #expect(await send(node, 0x1A, setUser(0, 3)) == .failure(.invalidCommand))
        // GetUser of UserIndex 0 (out of range): INVALID_COMMAND (TC-DRLK-2.8 step 6c).
        #expect(await send(node, 0x1B, fields((0, u(0)))) == .failure(.invalidCommand))
        await node.stop()
    }

    /// TC-DRLK-2.4 step 2d: SetCredentialResponse's UserIndex names the user an Add created
    /// and is null where the credential went to an existing user or was modified
    /// (Application Cluster spec 5.2, SetCredentialResponse UserIndex).
    @Test func setCredentialResponseNamesOnlyTheUserItCreated() async throws {
        let node = try await lockNode()
        let add = fields((0, u(0)), (1, u(1)), (2, .utf8("Ada")), (3, .null), (4, .null), (5, .null), (6, .null))
        #expect(await send(node, 0x1A, add) == .success)
        func setPIN(_ operation: UInt64, _ code: String, index: UInt64, user: TLVValue) async -> TLVValue? {
            guard
                case .response(_, let value) = await send(
                    node, 0x22,
                    fields(
                        (0, u(operation)), (1, .structure([.context(0, u(1)), .context(1, u(index))])),
                        (2, .bytes(Array(code.utf8))), (3, user), (4, .null), (5, .null)))
            else { return nil }
            return value
        }
        let toExisting = await setPIN(0, "123456", index: 1, user: u(1))
        #expect(toExisting?[context: 0] == u(0))
        #expect(toExisting?[context: 1] == .null)
        let modified = await setPIN(2, "654321", index: 1, user: .null)
        #expect(modified?[context: 0] == u(0))
        #expect(modified?[context: 1] == .null)
        // No user given: the Add creates one at the first free index and names it.
        let created = await setPIN(0, "112233", index: 2, user: .null)
        #expect(created?[context: 0] == u(0))
        #expect(created?[context: 1] == u(2))
        await node.stop()
    }

    /// 5.2.9.25: SupportedOperatingModes has a bit set for every mode NOT supported, reserved
    /// bits included (the spec's default 0xFFF6); Normal and NoRemoteLockUnlock (mandatory) are
    /// the clear ones (TC-DRLK-2.1 step 23a).
    @Test func supportedOperatingModesSetsTheBitOfEveryModeNotSupported() async throws {
        let node = try await lockNode()
        #expect(await node.uint(1, Self.lock, 0x0026) == 0xFFF6)
        await node.stop()
    }

    @Test func byHandTheKeyAndTheKeypadLockAndUnlockWithTheirSource() async throws {
        let node = try await lockNode()
        _ = try #require(await addUserWithPIN(node, "4321"))
        let start = await mark(node)
        try await node.act(.unlock(code: nil))
        try await node.act(.lock(code: nil))
        try await node.act(.unlock(code: "4321"))
        await #expect(throws: PhysicalActionError.self) { try await node.act(.lock(code: "0000")) }
        #expect(await node.uint(1, Self.lock, Self.lockState) == 2)
        let operations = await events(node, 0x02, from: start)
        #expect(operations.map { [$0[0], $0[1], $0[2]] } == [[u(1), u(1), .null], [u(0), u(1), .null], [u(1), u(3), u(1)]])
        #expect(await events(node, 0x03, from: start).map { [$0[1], $0[2]] } == [[u(3), u(1)]])  // Keypad, InvalidCredential
    }
}
