import Foundation
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// The other root node clusters: General Diagnostics, Network Commissioning, Group Key
// Management, the regulatory configuration, and what persists across restarts.
@Suite struct RootNodeClusterTests {
    let clock = ManualClock()

    @Test func rebootCountUpTimeAndTimeSnapshot() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock) { $0.posixTimeMilliseconds = { 1_700_000_000_000 } }
        #expect(await node.uint(0, CommissioningIDs.generalDiagnostics, 0x0001) == 1)
        await clock.advance(by: .seconds(5))
        #expect(await node.uint(0, CommissioningIDs.generalDiagnostics, 0x0002) == 5)
        let snapshot = try await node.call(0, CommissioningIDs.generalDiagnostics, 0x01, fields(), session: paseSession(1))
        #expect(snapshot[context: 0] == u(5000))
        // TC-DGGEN-2.4 step 4 (11.12.7.3): without a Time Synchronization cluster PosixTimeMs is
        // null, though the process knows the wall-clock time.
        #expect(snapshot[context: 1] == .null)
        #expect(await node.bool(0, CommissioningIDs.generalDiagnostics, 0x0008) == false)
        // Test event triggers are disabled: no enable key matches.
        #expect(
            await node.status(
                0, CommissioningIDs.generalDiagnostics, 0x00, fields((0, .bytes(randomBytes(16))), (1, u(1))),
                session: paseSession(1)) == .status(InteractionStatus(.constraintError)))
        let interfaces = listItems(await node.value(0, CommissioningIDs.generalDiagnostics, 0x0000))
        #expect(interfaces.count == 1)
        #expect(interfaces.first?[context: 7] == u(2))  // Ethernet
        await node.stop()

        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await restarted.uint(0, CommissioningIDs.generalDiagnostics, 0x0001) == 2)
        #expect(await restarted.uint(0, CommissioningIDs.generalDiagnostics, 0x0002) == 0)
        await restarted.stop()
    }

    @Test func ethernetNetworkCommissioning() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        #expect(await node.uint(0, CommissioningIDs.networkCommissioning, 0xFFFC) == 0x4)  // ET
        #expect(await node.uint(0, CommissioningIDs.networkCommissioning, 0x0000) == 1)
        let networks = listItems(await node.value(0, CommissioningIDs.networkCommissioning, 0x0001))
        #expect(networks == [.structure([.context(0, .bytes(Array("eth0".utf8))), .context(1, .bool(true))])])
        #expect(await node.bool(0, CommissioningIDs.networkCommissioning, 0x0004) == true)
        // TC-CNET-4.3 steps 5-7: the connected Ethernet network was the last networking
        // operation: Success, its NetworkID, no connect error.
        #expect(await node.value(0, CommissioningIDs.networkCommissioning, 0x0005) == u(0))
        #expect(await node.value(0, CommissioningIDs.networkCommissioning, 0x0006) == .bytes(Array("eth0".utf8)))
        #expect(await node.value(0, CommissioningIDs.networkCommissioning, 0x0007) == .null)
        // No Wi-Fi or Thread commands on an Ethernet interface.
        #expect(uintList(await node.value(0, CommissioningIDs.networkCommissioning, 0xFFF9)) == [])
        await node.stop()
    }

    @Test func groupKeySets() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let admin = commissioner.adminSession(3, fabric: fabric)
        func keySet(_ id: UInt64, key: [UInt8]? = randomBytes(16), start: UInt64 = 1_000) -> TLVValue {
            fields(
                (0, u(id)), (1, u(0)), (2, key.map { .bytes($0) } ?? .null), (3, .unsigned(start)),
                (4, .null), (5, .null), (6, .null), (7, .null))
        }
        func write(_ set: TLVValue) async -> InvokeResult {
            await node.status(0, CommissioningIDs.groupKeyManagement, 0x00, fields((0, set)), session: admin)
        }
        #expect(await write(keySet(1)) == .success)
        // The IPK set is AddNOC's alone; keys are 16 bytes; key 0 starts after the epoch.
        #expect(await write(keySet(0)) == .status(InteractionStatus(.invalidCommand)))
        #expect(await write(keySet(2, key: randomBytes(15))) == .status(InteractionStatus(.constraintError)))
        #expect(await write(keySet(2, start: 0)) == .status(InteractionStatus(.invalidCommand)))
        #expect(await write(keySet(2, key: nil)) == .status(InteractionStatus(.invalidCommand)))
        // Three sets per fabric, the IPK included.
        #expect(await write(keySet(2)) == .success)
        #expect(await write(keySet(3)) == .status(InteractionStatus(.resourceExhausted)))

        // KeySetRead gives the start times, never the keys.
        let read = try await node.call(0, CommissioningIDs.groupKeyManagement, 0x01, fields((0, u(1))), session: admin)
        let set = try #require(read[context: 0])
        #expect(set[context: 0] == u(1))
        #expect(set[context: 2] == .null)
        #expect(set[context: 3] == u(1_000))
        let ipk = try await node.call(0, CommissioningIDs.groupKeyManagement, 0x01, fields((0, u(0))), session: admin)
        #expect(ipk[context: 0]?[context: 2] == .null)
        #expect(
            await node.status(0, CommissioningIDs.groupKeyManagement, 0x01, fields((0, u(9))), session: admin)
                == .status(InteractionStatus(.notFound)))

        // The group key map refers to sets; removing a set drops its groups.
        let mapPath = AttributePath(endpoint: 0, cluster: CommissioningIDs.groupKeyManagement, attribute: AttributeID(0))
        let map: TLVValue = .arrayOf([fields((1, u(0x0101)), (2, u(1))), fields((1, u(0x0102)), (2, u(2)))])
        #expect(await node.write(mapPath, value: map, session: admin) == .success)
        #expect(
            await node.write(mapPath, value: .arrayOf([fields((1, u(0x0103)), (2, u(0)))]), session: admin)
                == InteractionStatus(.constraintError))
        #expect(await node.status(0, CommissioningIDs.groupKeyManagement, 0x03, fields((0, u(1))), session: admin) == .success)
        #expect(
            await node.status(0, CommissioningIDs.groupKeyManagement, 0x03, fields((0, u(0))), session: admin)
                == .status(InteractionStatus(.invalidCommand)))
        let remaining = listItems(try await node.value(0, CommissioningIDs.groupKeyManagement, 0x0000, session: admin).get())
        #expect(remaining.map { $0[context: 1] } == [u(0x0102)])
        let indices = try await node.call(0, CommissioningIDs.groupKeyManagement, 0x04, fields(), session: admin)
        #expect(uintList(indices[context: 0]) == [0, 2])
        await node.stop()

        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        let again = try await restarted.call(0, CommissioningIDs.groupKeyManagement, 0x04, fields(), session: admin)
        #expect(uintList(again[context: 0]) == [0, 2])
        #expect(listItems(try await restarted.value(0, CommissioningIDs.groupKeyManagement, 0x0000, session: admin).get()).count == 1)
        await restarted.stop()
    }

    @Test func regulatoryConfigFollowsLocationCapability() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock) { $0.locationCapability = .indoor }
        let pase = paseSession(1)
        #expect(await node.uint(0, CommissioningIDs.generalCommissioning, 0x0003) == 0)
        let outdoor = try await node.call(
            0, CommissioningIDs.generalCommissioning, 0x02,
            fields((0, u(1)), (1, .utf8("DE")), (2, u(3))), session: pase)
        #expect(outdoor[context: 0] == u(1))  // ValueOutsideRange
        // TC-CGEN-2.4 step 19: a location outside RegulatoryLocationTypeEnum is a response
        // with ValueOutsideRange (11.10.7.4), not an IM CONSTRAINT_ERROR; a CountryCode
        // that is not two characters stays a CONSTRAINT_ERROR.
        let unknown = try await node.call(
            0, CommissioningIDs.generalCommissioning, 0x02,
            fields((0, u(3)), (1, .utf8("DE")), (2, u(3))), session: pase)
        #expect(unknown[context: 0] == u(1))
        #expect(
            await node.status(
                0, CommissioningIDs.generalCommissioning, 0x02, fields((0, u(0)), (1, .utf8("DEU")), (2, u(3))), session: pase)
                == .status(InteractionStatus(.constraintError)))
        let indoor = try await node.call(
            0, CommissioningIDs.generalCommissioning, 0x02,
            fields((0, u(0)), (1, .utf8("DE")), (2, u(3))), session: pase)
        #expect(indoor[context: 0] == u(0))
        #expect(await node.uint(0, CommissioningIDs.generalCommissioning, 0x0002) == 0)
        #expect(await node.uint(0, CommissioningIDs.generalCommissioning, 0x0000) == 3)
        #expect(await node.value(0, IDs.basicInformation, 0x0006) == .utf8("DE"))
        // BasicCommissioningInfo: 60 s per arming, 900 s in all.
        let info = await node.value(0, CommissioningIDs.generalCommissioning, 0x0001)
        #expect(info == .structure([.context(0, u(60)), .context(1, u(900))]))
        await node.stop()
    }

    @Test func nonVolatileAttributesSurviveARestart() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock)
        let uniqueID = try #require(await node.value(0, IDs.basicInformation, 0x0012))
        #expect(await node.write(0, IDs.basicInformation, 0x0005, .utf8("Kitchen")) == .success)
        _ = await node.invoke(1, IDs.onOff, 0x00)  // Off: OnOff is non-volatile too.
        // Saved after a short delay, without waiting for the stop.
        await clock.advance(by: .seconds(2))
        // The change is a journal line (the snapshot was written at start-up).
        let store = try NodeStateStore(directory: directory)
        let saved = try #require(try store.load([PersistedAttribute].self, "attributes"))
        let labelTLV = Data(TLVElement(.utf8("Kitchen")).encoded())
        #expect(!saved.contains { $0.cluster == IDs.basicInformation.rawValue && $0.attribute == 0x0005 && $0.tlv == labelTLV })
        let journal = try store.journalLines("attributes")
        #expect(journal.contains { $0.contains("0/28/5=\([UInt8](labelTLV).hexString)") })
        await node.stop()

        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await restarted.value(0, IDs.basicInformation, 0x0005) == .utf8("Kitchen"))
        #expect(await restarted.bool(1, IDs.onOff, 0x0000) == false)
        // UniqueID was made up on the first start and stays.
        #expect(await restarted.value(0, IDs.basicInformation, 0x0012) == uniqueID)
        await restarted.stop()
    }

    @Test func theAttributeJournalIsReplayedOverTheSnapshotAndATornLineIsLeftOut() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await node.write(0, IDs.basicInformation, 0x0005, .utf8("Hall")) == .success)
        await node.persistChanges()
        _ = await node.invoke(1, IDs.onOff, 0x00)  // Off
        await node.persistChanges()
        await node.stop()
        let store = try NodeStateStore(directory: directory)
        let journalFile = store.journalURL("attributes")
        // A power cut in the middle of an append: a last line with no newline, which says On.
        let on = [UInt8](TLVElement(.bool(true)).encoded()).hexString
        let handle = try FileHandle(forWritingTo: journalFile)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("garbage line\n1/6/0=\(on)".utf8))
        try handle.close()

        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await restarted.value(0, IDs.basicInformation, 0x0005) == .utf8("Hall"))
        #expect(await restarted.bool(1, IDs.onOff, 0x0000) == false)
        // Start-up wrote the replayed values as the new snapshot and emptied the journal.
        #expect(try store.journalLines("attributes").isEmpty)
        #expect(fileIdentity(journalFile)?.size == 0)
        let saved = try #require(try store.load([PersistedAttribute].self, "attributes"))
        #expect(
            saved.contains {
                $0.cluster == IDs.basicInformation.rawValue && $0.attribute == 0x0005
                    && $0.tlv == Data(TLVElement(.utf8("Hall")).encoded())
            })
        await restarted.stop()
    }

    /// A node's first save before a response appends to a journal start-up already made and
    /// keeps open, and so does one after the snapshot is rewritten: making the file then took
    /// about 350 µs of a command's service time in a fleet (`perf`: ext4_create).
    @Test func theAttributeJournalIsMadeAtStartUpAndEmptiedInPlace() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock)
        let store = try NodeStateStore(directory: directory)
        let journalFile = store.journalURL("attributes")
        let atStart = try #require(fileIdentity(journalFile))
        #expect(atStart.size == 0)
        _ = await node.invoke(1, IDs.onOff, 0x01)  // On (the light starts off)
        await node.persistChanges()
        let afterCommand = try #require(fileIdentity(journalFile))
        #expect(afterCommand.inode == atStart.inode)
        let firstLines = try store.journalLines("attributes")
        #expect(firstLines.count == 1, "\(firstLines)")
        // At the limit the snapshot is rewritten and the same file emptied.
        for i in 1..<NodePersistence.journalLimit {
            _ = await node.invoke(1, IDs.onOff, i % 2 == 1 ? 0x00 : 0x01)  // Off, On, ... Off
            await node.persistChanges()
        }
        #expect(try store.journalLines("attributes").count == NodePersistence.journalLimit)
        _ = await node.invoke(1, IDs.onOff, 0x01)  // On: the save that rewrites the snapshot
        await node.persistChanges()
        let afterSnapshot = try #require(fileIdentity(journalFile))
        #expect(afterSnapshot.inode == atStart.inode)
        #expect(afterSnapshot.size == 0)
        let saved = try #require(try store.load([PersistedAttribute].self, "attributes"))
        let on = Data(TLVElement(.bool(true)).encoded())
        #expect(saved.contains { $0.endpoint == 1 && $0.cluster == IDs.onOff.rawValue && $0.attribute == 0 && $0.tlv == on })
        await node.stop()
        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await restarted.bool(1, IDs.onOff, 0x0000) == true)
        await restarted.stop()
    }

    @Test func unreadableStateIsReportedWithItsPlace() throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try NodeStateStore(directory: directory)
        try Data("{broken".utf8).write(to: directory.appendingPathComponent("commissioning.json"))
        do {
            _ = try MatterNode(
                description: commissionableDescription(), clock: clock, logger: quietLogger,
                commissioning: CommissioningConfiguration(stateStore: store))
            Issue.record("a node was built from a corrupt state directory")
        } catch {
            #expect(error.path.contains(directory.path))
            #expect(error.message.contains("commissioning.json"))
            // What to do, and what it costs (issue #17 item 6); the damaged file is left as it was.
            #expect(error.message.contains("move the file away to start uncommissioned"))
            #expect(try Data(contentsOf: directory.appendingPathComponent("commissioning.json")) == Data("{broken".utf8))
        }
    }

    @Test func withoutAttestationCredentialsTheNodeCannotBeCommissioned() async throws {
        let node = try MatterNode(description: commissionableDescription(), clock: clock, logger: quietLogger)
        let pase = paseSession(1)
        #expect(
            await node.status(0, CommissioningIDs.operationalCredentials, 0x00, fields((0, .bytes(randomBytes(32)))), session: pase)
                == .status(InteractionStatus(.failure)))
        #expect(
            await node.status(0, CommissioningIDs.operationalCredentials, 0x02, fields((0, u(1))), session: pase)
                == .status(InteractionStatus(.failure)))
        await node.stop()
    }
}

/// A file's inode and size (stat(2)); nil when it does not exist.
private func fileIdentity(_ url: URL) -> (inode: UInt64, size: Int64)? {
    var info = stat()
    guard stat(url.path, &info) == 0 else { return nil }
    return (UInt64(info.st_ino), Int64(info.st_size))
}
