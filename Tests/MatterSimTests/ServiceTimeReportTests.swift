import Foundation
import MatterProtocol
import Synchronization
import Testing

@testable import matter_sim

/// What `kill -USR1` prints of a `matter-sim home` (scripts/fleet-bench.sh marks its phases
/// with it), and how a fleet is split over processes (`--part K/N`).
@Suite("service times on USR1, and a home's parts (issue #43)")
struct ServiceTimeReportTests {
    /// One node's histograms, changed by the test between reports.
    final class FakeNode: Sendable {
        let times = Mutex<[String: ServiceTimeHistogram]>([:])
        func record(_ kind: String, _ time: Duration, times n: Int) {
            times.withLock { for _ in 0..<n { $0[kind, default: ServiceTimeHistogram()].record(time) } }
        }
        var reader: ServiceTimeReport.NodeServerTimes { .init { self.times.withLock { $0 } } }
    }

    @Test func eachReportMergesTheNodesAndGivesWhatCameSinceThePreviousOne() async throws {
        let nodes = [FakeNode(), FakeNode()]
        let report = ServiceTimeReport(nodes.map(\.reader))
        // Commissioning: slow invokes (CSRRequest, AddNOC) on both nodes.
        nodes[0].record("invoke", .milliseconds(20), times: 3)
        nodes[1].record("invoke", .milliseconds(20), times: 2)
        let first = await report.report()
        #expect(first.nodes == 2)
        #expect(first.all["invoke"]?.count == 5)
        #expect(first.sinceMark["invoke"]?.count == 5)
        // The phase being measured: fast On/Off invokes, and a read on one node.
        nodes[0].record("invoke", .microseconds(40), times: 10)
        nodes[1].record("invoke", .microseconds(40), times: 10)
        nodes[1].record("read", .microseconds(80), times: 1)
        let second = await report.report()
        #expect(second.all["invoke"]?.count == 25)
        let phase = try #require(second.sinceMark["invoke"])
        #expect(phase.count == 20)
        #expect(phase.p50Us >= 40 && phase.p99Us <= 50)
        #expect(second.sinceMark["read"]?.count == 1)
        // Nothing since: the kinds without new requests are left out.
        let third = await report.report()
        #expect(third.sinceMark.isEmpty && third.all["invoke"]?.count == 25)
        // One line, `service-times` and JSON, for the script to read.
        let text = ServiceTimeReport.text(second)
        #expect(text.hasPrefix("service-times {") && !text.contains("\n"))
        let decoded = try JSONDecoder().decode(ServiceTimeReport.Line.self, from: Data(text.dropFirst("service-times ".count).utf8))
        #expect(decoded == second)
    }

    @Test func aPartIsKOfNWithKFromOneToN() {
        #expect(HomeCommand.part("2/4")! == (2, 4))
        #expect(HomeCommand.part("1/1")! == (1, 1))
        for bad in ["0/4", "5/4", "2", "a/b", "2/4/1", "/4", "-1/4", ""] {
            #expect(HomeCommand.part(bad) == nil, "\(bad)")
        }
    }
}
