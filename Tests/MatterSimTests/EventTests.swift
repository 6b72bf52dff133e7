import Foundation
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import Testing

/// Matter events on the device (Core spec 7.14, 8.4.3.3, 8.5): the BasicInformation StartUp
/// event, EventMin, numbers that never go back across a restart, status for paths that are
/// not there, and events in subscription reports: at once for an urgent path, with the next
/// report otherwise.
@Suite("Events", .serialized)
struct EventTests {
    static let basic = ClusterID(0x0028)
    static let onOff = ClusterID(0x0006)

    private func startUps(_ reports: [EventReportIB]) -> [EventDataIB] {
        reports.compactMap { report -> EventDataIB? in
            guard case .data(let event) = report, event.path.cluster == Self.basic, event.path.event == EventID(0) else { return nil }
            return event
        }
    }

    @Test func startUpIsReadFilteredAndNumberedPastTheLastRun() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        var running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let session = try await commissioner.commission(try running.address, passcode: testPasscode).caseSession

        let all = EventPathIB(endpoint: 0, cluster: Self.basic)
        let first = startUps(try await commissioner.readEvents(session, [all]))
        #expect(first.count == 1)
        let startUp = try #require(first.first)
        #expect(startUp.priority == .critical)
        let version = try await commissioner.read(session, 0, Self.basic, 0x0009).get()
        #expect(startUp.data?[context: 0] == version, "StartUp carries SoftwareVersion")
        let now = UInt64(Date().timeIntervalSince1970 * 1000)
        #expect(startUp.epochTimestamp.map { $0 <= now && now - $0 < 60_000 } == true)
        // EventMin past it: nothing; a cluster or endpoint that is not there: a status.
        #expect(try await commissioner.readEvents(session, [all], eventMin: startUp.eventNumber + 1).isEmpty)
        let missing = try await commissioner.readEvents(
            session,
            [
                EventPathIB(endpoint: 0, cluster: Self.onOff),
                EventPathIB(endpoint: 7, cluster: Self.basic),
            ])
        let statuses = missing.compactMap { report -> StatusCode? in
            if case .status(let s) = report { return s.status.status.status }
            return nil
        }
        #expect(statuses == [.unsupportedCluster, .unsupportedEndpoint])

        // A restart: ShutDown went into the old log; the new StartUp is numbered past both.
        await running.stop()
        running = try await RunningNode.start(stateDirectory: directory)
        let again = try await commissioner.caseSession(try running.address, deviceNodeID: 0x4D0A)
        let second = startUps(try await commissioner.readEvents(again, [all]))
        #expect(second.count == 1)
        #expect((second.first?.eventNumber ?? 0) > startUp.eventNumber + 1, "\(second.map(\.eventNumber)) after \(startUp.eventNumber)")
        await running.stop()
        await commissioner.stop()
    }

    @Test func subscriptionsReportUrgentEventsAtOnceAndOthersWithTheNextReport() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let collector = ReportCollector()
        await commissioner.manager.register(collector, for: .interactionModel)
        let running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let session = try await commissioner.commission(try running.address, passcode: testPasscode).caseSession

        // Urgent on StartUp (event 0), not on Leave (event 2); priming carries the StartUp.
        let paths = [
            EventPathIB(endpoint: 0, cluster: Self.basic, event: EventID(0), isUrgent: true),
            EventPathIB(endpoint: 0, cluster: Self.basic, event: EventID(2)),
        ]
        let (id, priming) = try await commissioner.subscribeEvents(session, paths, minInterval: 0, maxInterval: 4)
        #expect(startUps(priming).count == 1)

        let basic = ClusterPath(endpoint: 0, cluster: Self.basic)
        let leave = await running.node.recordEvent(basic, EventID(2), priority: .info, data: fields((0, u(9))))
        let urgent = await running.node.recordEvent(basic, EventID(0), priority: .critical, data: fields((0, u(1))))
        let report = await collector.next(within: .seconds(2))
        #expect(report?.subscriptionID == id)
        let numbers = (report?.eventReports ?? []).compactMap { r -> UInt64? in if case .data(let e) = r { e.eventNumber } else { nil } }
        #expect(numbers == [leave.number, urgent.number], "the urgent event brings the pending one along: \(numbers)")

        // A non-urgent event alone waits for the next report (MaxInterval, 4 s), and comes once.
        // (ReportCollector cannot wait again after a wait that timed out: time the report instead,
        // on the clock the node's subscriptions run on.)
        let clock = running.node.clock
        let recordedAt = clock.now
        let later = await running.node.recordEvent(basic, EventID(2), priority: .info, data: fields((0, u(3))))
        let keepAlive = await collector.next(within: .seconds(6))
        let waited = clock.now - recordedAt
        #expect(waited > .seconds(2), "reported after \(waited), before MaxInterval")
        let carried = (keepAlive?.eventReports ?? []).compactMap { r -> UInt64? in if case .data(let e) = r { e.eventNumber } else { nil } }
        #expect(carried == [later.number])
        let next = await collector.next(within: .seconds(5))
        #expect(next != nil && next?.eventReports.isEmpty == true, "an event is reported once")
        await running.stop()
        await commissioner.stop()
    }
}
