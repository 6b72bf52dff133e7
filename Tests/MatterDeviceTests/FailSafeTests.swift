import Foundation
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// The fail-safe (Core spec 11.10.7.2): a timer on the node clock, owned by one
// commissioner, whose expiry undoes a half-done commissioning.
@Suite struct FailSafeTests {
    let clock = ManualClock()

    func arm(_ node: MatterNode, seconds: UInt64, breadcrumb: UInt64 = 0, session: SessionContext) async throws -> UInt64? {
        try await node.call(0, CommissioningIDs.generalCommissioning, 0x00, fields((0, u(seconds)), (1, u(breadcrumb))), session: session)[
            context: 0]?.uintValue
    }

    @Test func expiryRollsBackAHalfDoneCommissioning() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock)
        let recorder = EventRecorder(node.commissioningEvents)
        let commissioner = try TestCommissioner()
        let pase = paseSession(1)
        await node.paseSessionEstablished(pase)
        let index = try await commissioner.addFabric(to: node, over: pase)
        _ = try await node.call(0, CommissioningIDs.generalCommissioning, 0x00, fields((0, u(60)), (1, u(42))), session: pase)
        #expect(await node.fabrics.map(\.index) == [index])
        #expect(await node.accessControlEntries.count == 1)

        // 59 s later nothing has happened yet; at 60 s everything AddNOC did is gone.
        await clock.advance(by: .seconds(59))
        #expect(await node.fabrics.count == 1)
        await clock.advance(by: .seconds(1))
        #expect(await !node.isFailSafeArmed)
        #expect(await node.fabrics.isEmpty)
        #expect(await node.accessControlEntries.isEmpty)
        #expect(listItems(await node.value(0, CommissioningIDs.operationalCredentials, 0x0004)) == [])
        #expect(listItems(await node.value(0, CommissioningIDs.operationalCredentials, 0x0000)) == [])
        #expect(await node.uint(0, CommissioningIDs.operationalCredentials, 0x0003) == 0)
        #expect(await node.uint(0, CommissioningIDs.generalCommissioning, 0x0000) == 0)
        // The session no longer has a fabric, and CSR/AddNOC need a new fail-safe.
        #expect(try await node.value(0, CommissioningIDs.operationalCredentials, 0x0005, session: pase).get() == u(0))
        #expect(
            await node.status(0, CommissioningIDs.operationalCredentials, 0x04, fields((0, .bytes(randomBytes(32)))), session: pase)
                == .status(InteractionStatus(.failsafeRequired)))

        let events = await recorder.events(stopping: node)
        #expect(events.contains(.failSafeExpired))
        #expect(events.contains(.closePASESessions))
        #expect(events.contains(.closeSessions(fabricIndex: index, except: nil)))
        #expect(events.contains(.fabricRemoved(index)))
        #expect(!events.contains(.fabricCommitted(index)))

        // Nothing of it was ever made permanent.
        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await restarted.fabrics.isEmpty)
        await restarted.stop()
    }

    @Test func aRestartBeforeCommissioningCompleteForgetsTheFabric() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock)
        let pase = paseSession(1)
        await node.paseSessionEstablished(pase)
        _ = try await TestCommissioner().addFabric(to: node, over: pase)
        await node.stop()
        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await restarted.fabrics.isEmpty)
        #expect(await restarted.accessControlEntries.isEmpty)
        await restarted.stop()
    }

    @Test func paseEstablishmentArmsTheDefaultFailSafe() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        await node.paseSessionEstablished(paseSession(1))
        #expect(await node.isFailSafeArmed)
        await clock.advance(by: .seconds(60))
        #expect(await !node.isFailSafeArmed)
        await node.stop()
    }

    @Test func anotherAdministratorIsBusy() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 10, caseID: 11)
        let first = paseSession(1), second = paseSession(2)
        #expect(try await arm(node, seconds: 60, session: first) == 0)
        // Another session without a fabric, or an administrator of a fabric: BusyWithOtherAdmin.
        #expect(try await arm(node, seconds: 60, session: second) == 4)
        #expect(try await arm(node, seconds: 60, session: commissioner.adminSession(3, fabric: fabric)) == 4)
        // The owner may re-arm, and disarm with 0.
        #expect(try await arm(node, seconds: 120, breadcrumb: 3, session: first) == 0)
        #expect(await node.uint(0, CommissioningIDs.generalCommissioning, 0x0000) == 3)
        #expect(try await arm(node, seconds: 0, session: first) == 0)
        #expect(await !node.isFailSafeArmed)
        #expect(await node.uint(0, CommissioningIDs.generalCommissioning, 0x0000) == 0)
        // Disarming a disarmed fail-safe is fine and leaves it disarmed.
        #expect(try await arm(node, seconds: 0, session: second) == 0)
        #expect(await !node.isFailSafeArmed)
        await node.stop()
    }

    @Test func caseCannotTakeTheFailSafeWhileAWindowIsOpen() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 10, caseID: 11)
        let admin = commissioner.adminSession(3, fabric: fabric)
        await node.openCommissioningWindow(timeout: .seconds(300))
        #expect(try await arm(node, seconds: 60, session: admin) == 4)
        #expect(try await arm(node, seconds: 60, session: paseSession(1)) == 0)
        await node.closeCommissioningWindow()
        // With the window closed, the administrator may arm it (e.g. for UpdateNOC) once the PASE one is gone.
        #expect(try await arm(node, seconds: 0, session: paseSession(1)) == 0)
        #expect(try await arm(node, seconds: 60, session: admin) == 0)
        await node.stop()
    }

    @Test func reArmingCannotPassMaxCumulativeFailsafeSeconds() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let pase = paseSession(1)
        #expect(try await arm(node, seconds: 600, session: pase) == 0)
        await clock.advance(by: .seconds(500))
        // Asks for 600 more, but the context ends 900 s after it was created.
        #expect(try await arm(node, seconds: 600, session: pase) == 0)
        await clock.advance(by: .seconds(399))
        #expect(await node.isFailSafeArmed)
        await clock.advance(by: .seconds(1))
        #expect(await !node.isFailSafeArmed)
        await node.stop()
    }

    /// A commissioning whose state cannot be saved must not succeed: after a restart the node
    /// would have no fabric while the commissioner believes it has one.
    @Test func commissioningCompleteFailsWhenItsStateCannotBeSaved() async throws {
        let directory = temporaryStateDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try commissionableNode(stateDirectory: directory, clock: clock)
        let commissioner = try TestCommissioner()
        let pase = paseSession(1)
        await node.paseSessionEstablished(pase)
        let index = try await commissioner.addFabric(to: node, over: pase)
        // A non-empty directory where the record goes: rename(2) onto it fails, even for root.
        let record = directory.appendingPathComponent("commissioning.json")
        try? FileManager.default.removeItem(at: record)
        try FileManager.default.createDirectory(at: record.appendingPathComponent("in-the-way"), withIntermediateDirectories: true)
        let admin = commissioner.adminSession(2, fabric: index)
        #expect(await node.status(0, CommissioningIDs.generalCommissioning, 0x04, session: admin) == .status(InteractionStatus(.failure)))
        #expect(await node.isFailSafeArmed)
        #expect(await node.fabrics.map(\.index) == [index])

        // Once the record can be written, a retry commits it, and a restart keeps the fabric.
        try FileManager.default.removeItem(at: record)
        let response = try await node.call(0, CommissioningIDs.generalCommissioning, 0x04, fields(), session: admin)
        #expect(response[context: 0] == u(0))
        #expect(await !node.isFailSafeArmed)
        await node.stop()
        let restarted = try commissionableNode(stateDirectory: directory, clock: clock)
        #expect(await restarted.fabrics.map(\.index) == [index])
        await restarted.stop()
    }

    @Test func commissioningCompleteNeedsAnArmedFailSafe() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 10, caseID: 11)
        let response = try await node.call(
            0, CommissioningIDs.generalCommissioning, 0x04, fields(),
            session: commissioner.adminSession(12, fabric: fabric))
        #expect(response[context: 0] == u(3))  // NoFailSafe
        await node.stop()
    }
}
