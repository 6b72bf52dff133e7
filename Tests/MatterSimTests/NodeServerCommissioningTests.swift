import Foundation
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import TestWaiting
import Testing

@Suite("NodeServer: commissioning and control over loopback UDP")
struct NodeServerCommissioningTests {
    @Test func commissionsOverPASEAndCASEThenServesTheLightAndSurvivesARestart() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()

        var running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let commissioned = try await commissioner.commission(try running.address, passcode: testPasscode)
        #expect(commissioned.fabricIndex == 1)
        // CommissioningComplete closed the window and, after its response, the PASE session.
        #expect(await running.node.commissioningWindow == nil)
        // The secure channel hears of it through the node's commissioning events, after the
        // response: on a loaded machine the test can look in between (seen in a lone-clone run).
        #expect(
            await until(running.server.commissioningChanges()) {
                await !running.server.secureChannel.isCommissioningWindowOpen
            })
        #expect(
            await until(running.server.exchangeManager.sessionEvents()) {
                await running.server.exchangeManager.allSessions().allSatisfy { $0.kind != .pase }
            })

        let session = commissioned.caseSession
        #expect(try await commissioner.status(session, 1, ClusterIDs.onOff, 0x01) == .success)  // On
        #expect(try await commissioner.read(session, 1, ClusterIDs.onOff, 0x0000) == .success(.bool(true)))
        // The accessing fabric comes from the CASE session.
        #expect(try await commissioner.read(session, 0, ClusterIDs.operationalCredentials, 0x0005) == .success(.unsigned(1)))
        // A concrete path to a missing attribute is reported as such.
        #expect(try await commissioner.read(session, 1, ClusterIDs.onOff, 0x7777) == .failure(InteractionStatus(.unsupportedAttribute)))

        // Restart from the same state: still on the fabric, not commissionable, reachable over CASE.
        await running.stop()
        running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.node.fabrics.map(\.index) == [1])
        #expect(await running.node.commissioningWindow == nil)
        let resumed = try await commissioner.caseSession(try running.address, deviceNodeID: commissioned.deviceNodeID)
        #expect(resumed.fabricIndex == 1)
        #expect(try await commissioner.read(resumed, 1, ClusterIDs.onOff, 0x0000) == .success(.bool(true)))
        #expect(try await commissioner.status(resumed, 1, ClusterIDs.onOff, 0x00) == .success)  // Off
        #expect(try await commissioner.read(resumed, 1, ClusterIDs.onOff, 0x0000) == .success(.bool(false)))
        // Each request is in the node's traffic log, worded with the model's names.
        let summaries = running.server.traffic.recent.map(\.summary)
        #expect(summaries.contains("invoke 1/OnOff.Off"))
        #expect(summaries.contains("read 1/OnOff.OnOff"))
        await #expect(throws: (any Error).self) {
            _ = try await commissioner.pase(try running.address, passcode: testPasscode, stepTimeout: .milliseconds(500))
        }

        await running.stop()
        await commissioner.stop()
    }

    /// Found by Home Assistant's Matter server (scripts/ohf-check.sh): a CloseSession the node
    /// sent over PASE after CommissioningComplete reached a commissioner that had dropped the
    /// session already, which logged it as data on an unknown session. The node now evicts its
    /// PASE session silently, as connectedhomeip's commissionee does.
    @Test func commissioningCompleteEndsPASEWithoutACloseSessionToTheCommissioner() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let commissioned = try await commissioner.commission(try running.address, passcode: testPasscode)
        #expect(
            await until(running.server.exchangeManager.sessionEvents()) {
                await running.server.exchangeManager.allSessions().allSatisfy { $0.kind != .pase }
            })
        // The node evicted its PASE session without telling the commissioner, whose session is still its own.
        #expect(await running.server.exchangeManager.metrics().closeSessionsSent == 0)
        #expect(await commissioner.manager.sessionInfo(commissioned.paseSession.handle) != nil)
        // A fabric's sessions, closed by RemoveFabric, still end with a CloseSession.
        _ = try await commissioner.call(
            commissioned.caseSession, 0, ClusterIDs.operationalCredentials, 0x0A,
            fields((0, u(commissioned.fabricIndex))))
        #expect(
            await until(commissioner.manager.sessionEvents()) {
                await commissioner.manager.sessionInfo(commissioned.caseSession.handle) == nil
            })
        #expect(await running.server.exchangeManager.metrics().closeSessionsSent == 1)
        await running.stop()
        await commissioner.stop()
    }

    @Test func aWrongPasscodeFailsPASEAndTheRightOneStillCommissions() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())

        await #expect(throws: (any Error).self) {
            _ = try await commissioner.pase(try running.address, passcode: 20202022, stepTimeout: .seconds(2))
        }
        #expect(await until(running.server.exchangeManager.sessionEvents()) { await running.server.secureChannel.paseFailureCount == 1 })
        let commissioned = try await commissioner.commission(try running.address, passcode: testPasscode)
        #expect(commissioned.fabricIndex == 1)

        await running.stop()
        await commissioner.stop()
    }

    /// Issue #17 item 3: a controller guessing passcodes gets the spec's 20 tries (Core spec
    /// 5.4.2.5), then no answer at all, the right passcode included, until a new window (here
    /// a power cycle, as the node is on no fabric).
    @Test func twentyWrongPasscodesCloseTheWindowUntilANewOne() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory)
        #expect(running.server.secureChannel.configuration.maxPASEFailures == 20)
        #expect(await running.commissionable())
        let address = try running.address

        for guess in 1...20 {
            await #expect(throws: (any Error).self) {
                _ = try await commissioner.pase(address, passcode: 20_202_021 + UInt32(guess), stepTimeout: .seconds(5))
            }
            // Up to the limit the window stays open and counts; the 20th closes it.
            let channel = running.server.secureChannel
            #expect(
                await until(running.server.exchangeManager.sessionEvents()) {
                    guess < 20 ? await channel.paseFailureCount == guess : await !channel.isCommissioningWindowOpen
                })
        }
        #expect(await until(running.node.commissioningEvents) { await running.node.commissioningWindow == nil })
        await #expect(throws: (any Error).self) {
            _ = try await commissioner.pase(address, passcode: testPasscode, stepTimeout: .milliseconds(500))
        }
        #expect(await !running.server.secureChannel.isCommissioningWindowOpen)

        await running.server.powerOff()
        await running.server.powerOn()
        #expect(await running.commissionable())
        let commissioned = try await commissioner.commission(address, passcode: testPasscode)
        #expect(commissioned.fabricIndex == 1)

        await running.stop()
        await commissioner.stop()
    }

    /// Issue #22 item 1: the window opened at boot expires (by default after the spec's 15
    /// minutes); then PASE goes unanswered until a power cycle opens it again.
    @Test func theBootWindowExpiresAndAPowerCycleReopensIt() async throws {
        #expect(NodeServerConfiguration(passcode: testPasscode, discriminator: testDiscriminator).bootWindowTimeout == .seconds(900))
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory) { $0.bootWindowTimeout = .milliseconds(400) }
        #expect(await running.commissionable())
        #expect(await until(running.node.commissioningEvents) { await running.node.commissioningWindow == nil })
        #expect(
            await until(running.server.commissioningChanges()) {
                await !running.server.secureChannel.isCommissioningWindowOpen
            })
        await #expect(throws: (any Error).self) {
            _ = try await commissioner.pase(try running.address, passcode: testPasscode, stepTimeout: .milliseconds(500))
        }

        await running.server.powerOff()
        await running.server.powerOn()
        #expect(await running.commissionable())
        let commissioned = try await commissioner.commission(try running.address, passcode: testPasscode)
        #expect(commissioned.fabricIndex == 1)

        await running.stop()
        await commissioner.stop()
    }

    /// A power cycle is a reboot (TC-OO-2.4 reboots the device this way): the clusters start
    /// again, so StartUpOnOff applies (1.5.6.6) and General Diagnostics counts the reboot.
    @Test func aPowerCycleRunsTheStartUpBehavioursAgain() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let running = try await RunningNode.start(stateDirectory: directory)
        let onOff = AttributePath(endpoint: 1, cluster: ClusterIDs.onOff, attribute: AttributeID(0x0000))
        let startUpOnOff = AttributePath(endpoint: 1, cluster: ClusterIDs.onOff, attribute: AttributeID(0x4003))
        let rebootCount = AttributePath(endpoint: 0, cluster: ClusterID(0x0033), attribute: AttributeID(0x0001))
        let on = await running.node.invoke(CommandPath(endpoint: 1, cluster: ClusterIDs.onOff, command: CommandID(0x01)), fields: .structure([]))
        #expect(on == .success)
        #expect(await running.node.write(startUpOnOff, value: .unsigned(0), subject: nil) == InteractionStatus(.success))
        guard case .unsigned(let reboots) = try await running.node.read(rebootCount).get().value else {
            Issue.record("no RebootCount")
            return
        }
        #expect(try await running.node.read(onOff).get().value == .bool(true))

        await running.server.powerOff()
        await running.server.powerOn()
        #expect(try await running.node.read(onOff).get().value == .bool(false))
        #expect(try await running.node.read(rebootCount).get().value == .unsigned(reboots + 1))
        await running.stop()
    }

    @Test func removingTheLastFabricAnswersFirstThenClosesItsSessionAndReopensTheWindow() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let commissioned = try await commissioner.commission(try running.address, passcode: testPasscode)

        // RemoveFabric over the fabric's own session: the NOCResponse arrives, then the
        // node closes the session and tells us so.
        let removed = try await commissioner.call(
            commissioned.caseSession, 0, ClusterIDs.operationalCredentials, 0x0A,
            fields((0, u(commissioned.fabricIndex))))
        #expect(removed[context: 0]?.uintValue == 0)
        #expect(
            await until(commissioner.manager.sessionEvents()) {
                await commissioner.manager.sessionInfo(commissioned.caseSession.handle) == nil
            })
        #expect(await running.node.fabrics.isEmpty)

        // A node on no fabric is commissionable again, as at first boot.
        #expect(await running.commissionable())
        let again = try await commissioner.commission(try running.address, passcode: testPasscode)
        #expect(again.fabricIndex == 1)
        #expect(try await commissioner.read(again.caseSession, 1, ClusterIDs.onOff, 0x0000) == .success(.bool(false)))

        await running.stop()
        await commissioner.stop()
    }

    /// Issue #22 item 11: a write or command the node acknowledged is on disk when the
    /// response arrives: the state directory as it is at that moment (what a SIGKILL
    /// leaves) restores NodeLabel and OnOff.
    @Test func acknowledgedChangesAreOnDiskBeforeTheResponse() async throws {
        let directory = temporaryDirectory()
        let crashed = temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: directory)
            try? FileManager.default.removeItem(at: crashed)
        }
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let session = try await commissioner.commission(try running.address, passcode: testPasscode).caseSession

        let nodeLabel = AttributePath(endpoint: 0, cluster: ClusterIDs.basicInformation, attribute: AttributeID(0x0005))
        let onOff = AttributePath(endpoint: 1, cluster: ClusterIDs.onOff, attribute: AttributeID(0x0000))
        #expect(
            try await commissioner.write(session, [AttributeDataIB(path: AttributePathIB(nodeLabel), data: .utf8("pantry"))])
                == [.success])
        #expect(try await commissioner.status(session, 1, ClusterIDs.onOff, 0x01) == .success)  // On
        // The disk as the responses left it, before any batching delay ran out.
        try FileManager.default.copyItem(at: directory, to: crashed)

        await running.stop()
        await commissioner.stop()
        let restored = try await RunningNode.start(stateDirectory: crashed)
        #expect(await restored.node.read(nodeLabel, subject: nil).map(\.value) == .success(.utf8("pantry")))
        #expect(await restored.node.read(onOff, subject: nil).map(\.value) == .success(.bool(true)))
        await restored.stop()
    }

    @Test func writesReachTheNodeIncludingAppendsToTheFabricScopedACL() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let session = try await commissioner.commission(try running.address, passcode: testPasscode).caseSession

        let nodeLabel = AttributePath(endpoint: 0, cluster: ClusterIDs.basicInformation, attribute: AttributeID(0x0005))
        #expect(
            try await commissioner.write(session, [AttributeDataIB(path: AttributePathIB(nodeLabel), data: .utf8("kitchen"))])
                == [.success])
        #expect(try await commissioner.read(session, 0, ClusterIDs.basicInformation, 0x0005) == .success(.utf8("kitchen")))
        // NodeLabel is at most 32 bytes: the node's own check answers.
        #expect(
            try await commissioner.write(
                session,
                [
                    AttributeDataIB(
                        path: AttributePathIB(nodeLabel), data: .utf8(String(repeating: "x", count: 33)))
                ]) == [InteractionStatus(.constraintError)])

        // Append one ACL entry (ListIndex null): View for CASE node 0x1234 on this fabric.
        let acl = AttributePath(endpoint: 0, cluster: ClusterIDs.accessControl, attribute: AttributeID(0x0000))
        let entry = TLVValue.structure([
            TLVElement(tag: .context(1), .unsigned(1)), TLVElement(tag: .context(2), .unsigned(2)),
            TLVElement(tag: .context(3), .array([TLVElement(.unsigned(0x1234))])), TLVElement(tag: .context(4), .null),
        ])
        #expect(
            try await commissioner.write(session, [AttributeDataIB(path: AttributePathIB(acl, listIndex: .append), data: entry)])
                == [.success])
        guard case .success(let entries) = try await commissioner.read(session, 0, ClusterIDs.accessControl, 0x0000),
            case .array(let items) = entries
        else {
            Issue.record("the ACL does not read as a list")
            return
        }
        // The administrator entry AddNOC wrote, then the appended one, both stamped with fabric 1.
        #expect(items.count == 2)
        #expect(items.map { $0.value[context: 1]?.uintValue } == [5, 1])
        #expect(items.allSatisfy { $0.value[context: 0xFE]?.uintValue == 1 })

        await running.stop()
        await commissioner.stop()
    }

    /// Found by Home Assistant's Matter server (scripts/ohf-check.sh): MoveToLevelWithOnOff on
    /// a light that is off changes OnOff and CurrentLevel; in the `matter-sim` process the
    /// first change often went out alone and the second waited for MinInterval. Both go in the
    /// report that follows the command. In this in-process setup the split does not show even
    /// without the fix (a race of task scheduling); ohf-check is what reproduces it.
    @Test func oneCommandsChangesGoInOneReport() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let collector = ReportCollector()
        await commissioner.manager.register(collector, for: .interactionModel)
        let running = try await RunningNode.start(stateDirectory: directory, description: dimmableLightDescription())
        #expect(await running.commissionable())
        let session = try await commissioner.commission(try running.address, passcode: testPasscode).caseSession

        let paths = [
            AttributePathIB(endpoint: 1, cluster: ClusterIDs.onOff, attribute: AttributeID(0x0000)),
            AttributePathIB(endpoint: 1, cluster: ClusterIDs.levelControl, attribute: AttributeID(0x0000)),
        ]
        // No floor: the next report may go at once, so a change made first could go alone.
        let (subscriptionID, _) = try await commissioner.subscribe(session, paths, minInterval: 0, maxInterval: 30)
        let moveToLevelWithOnOff = fields((0, u(200)), (1, u(0)), (2, u(0)), (3, u(0)))
        #expect(try await commissioner.status(session, 1, ClusterIDs.levelControl, 0x04, moveToLevelWithOnOff) == .success)
        let report = await collector.next(within: .seconds(2))
        #expect(report?.subscriptionID == subscriptionID)
        var values: [AttributePath: TLVValue] = [:]
        for case .data(let data) in report?.attributeReports ?? [] { if let path = data.path.concretePath { values[path] = data.data } }
        #expect(values[AttributePath(endpoint: 1, cluster: ClusterIDs.onOff, attribute: AttributeID(0x0000))] == .bool(true))
        #expect(values[AttributePath(endpoint: 1, cluster: ClusterIDs.levelControl, attribute: AttributeID(0x0000))] == .unsigned(200))

        await running.stop()
        await commissioner.stop()
    }

    @Test func aSubscriptionReportsTheChangeAnInvokeMakes() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let collector = ReportCollector()
        await commissioner.manager.register(collector, for: .interactionModel)
        let running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let session = try await commissioner.commission(try running.address, passcode: testPasscode).caseSession

        let onOff = AttributePath(endpoint: 1, cluster: ClusterIDs.onOff, attribute: AttributeID(0x0000))
        let (subscriptionID, priming) = try await commissioner.subscribe(session, onOff, minInterval: 0, maxInterval: 10)
        guard case .data(let primed)? = priming.first else {
            Issue.record("no priming data: \(priming)")
            return
        }
        #expect(primed.data == .bool(false))
        // The node registers the subscription just after its SubscribeResponse goes out.
        let server = running.server.interactionServer
        #expect(await until(server.subscriptionChanges()) { await server.activeSubscriptions().map(\.subscriptionID) == [subscriptionID] })

        #expect(try await commissioner.status(session, 1, ClusterIDs.onOff, 0x01) == .success)  // On
        let report = await collector.next(within: .seconds(10))
        #expect(report?.subscriptionID == subscriptionID)
        guard case .data(let changed)? = report?.attributeReports.first else {
            Issue.record("no data in the report: \(String(describing: report))")
            return
        }
        #expect(changed.path.concretePath == onOff)
        #expect(changed.data == .bool(true))

        await running.stop()
        await commissioner.stop()
    }
}
