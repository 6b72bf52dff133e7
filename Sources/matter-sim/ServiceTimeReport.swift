// `kill -USR1` a running `matter-sim run` or `home`: one line on standard output with the
// nodes' own service time per kind of request (datagram in → response out, ExchangeManager's
// histograms), over every node of the process since it started and since the previous USR1.
// scripts/fleet-bench.sh marks its invoke phase with two, so that commissioning's slow steps
// (CSR, AddNOC: invokes too) stay out of the On/Off figures.
import Foundation
import HomeDashboard
import MatterProtocol
import Synchronization

final class ServiceTimeReport: Sendable {
    private let servers: [NodeServerTimes]
    /// The merged histograms at the previous report.
    private let mark = Mutex<[String: ServiceTimeHistogram]>([:])

    /// What the report reads of a node: its message layer's histograms.
    struct NodeServerTimes: Sendable {
        let serviceTimes: @Sendable () async -> [String: ServiceTimeHistogram]
    }

    init(_ servers: [NodeServerTimes]) {
        self.servers = servers
    }

    typealias Figures = ServiceTimeFigures

    struct Line: Codable, Equatable {
        var nodes: Int
        var all: [String: Figures]
        var sinceMark: [String: Figures]
    }

    /// Merges every node's histograms, reports them and moves the mark.
    func report() async -> Line {
        var merged: [String: ServiceTimeHistogram] = [:]
        for server in servers {
            for (kind, histogram) in await server.serviceTimes() { merged[kind, default: ServiceTimeHistogram()].merge(histogram) }
        }
        let earlier = mark.withLock { mark in
            defer { mark = merged }
            return mark
        }
        let since = merged.map { kind, now in (kind, now.since(earlier[kind] ?? ServiceTimeHistogram())) }
        return Line(
            nodes: servers.count, all: merged.mapValues(Figures.init),
            sinceMark: Dictionary(uniqueKeysWithValues: since.filter { $0.1.count > 0 }).mapValues(Figures.init))
    }

    /// The report as the one line `kill -USR1` prints: `service-times {json}`.
    static func text(_ line: Line) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return "service-times " + ((try? encoder.encode(line)).map { String(decoding: $0, as: UTF8.self) } ?? "{}")
    }
}
