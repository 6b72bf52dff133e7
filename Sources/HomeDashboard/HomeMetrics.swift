import MatterDevice
import MatterProtocol
import OperatorMetrics
import Synchronization

/// `matter-sim home`'s `/metrics` (issue #42), on the exporter the relay and the hub use: the
/// nodes' sessions, subscriptions and relay links by kind, their messages in and out and
/// dropped by reason, the requests they served by kind, and each kind's service time (the
/// histogram `/api/figures` shows: count, sum, p50, p99 and max; its quarter-octave buckets
/// stay inside the node). The nodes keep the totals; each scrape copies them in.
public final class HomeMetrics: Sendable {
    public let registry = MetricsRegistry()
    private let devices: [DashboardDevice]
    /// Series per request kind, made as kinds are first served.
    private let kinds = Mutex<[String: KindSeries]>([:])

    private struct KindSeries: Sendable {
        let requests: CopiedTotal
        let count: CopiedTotal
        let sum: MetricsGauge
        let p50: MetricsGauge
        let p99: MetricsGauge
        let max: MetricsGauge

        func show(_ histogram: ServiceTimeHistogram) {
            func seconds(_ d: Duration?) -> Double { Double(ServiceTimeHistogram.nanoseconds(d ?? .zero)) / 1e9 }
            requests.set(Int64(clamping: histogram.count))
            count.set(Int64(clamping: histogram.count))
            sum.set(seconds(histogram.total))
            p50.set(seconds(histogram.percentile(0.5)))
            p99.set(seconds(histogram.percentile(0.99)))
            max.set(seconds(histogram.maximum))
        }
    }

    init(devices: [DashboardDevice]) {
        self.devices = devices
        let r = registry
        let nodes = ["running", "powered_off", "lan_down", "commissioned"].map { ($0, r.meter("matter_nodes", [("state", $0)])) }
        let sessions = ["pase", "case"].map { ($0, r.meter("matter_node_sessions", [("kind", $0)])) }
        let subscriptions = r.meter("matter_node_subscriptions")
        let links = ["connected", "disconnected"].map { ($0, r.meter("matter_node_cloud_links", [("state", $0)])) }
        let received = r.total("matter_node_messages_total", [("direction", "received")])
        let sent = r.total("matter_node_messages_total", [("direction", "sent")])
        let drops: [(String, WritableKeyPath<TransportMetrics, UInt64> & Sendable)] = [
            ("malformed", \.droppedMalformed), ("unknown_session", \.droppedUnknownSession),
            ("authentication_failed", \.droppedAuthenticationFailed), ("duplicate", \.droppedDuplicate),
            ("unsupported", \.droppedUnsupported), ("unsolicited", \.droppedUnsolicited), ("overload", \.droppedOverload),
            ("inbound_queue_full", \.inboundQueueOverflows),
        ]
        let dropped = drops.map { (r.total("matter_node_messages_dropped_total", [("reason", $0.0)]), $0.1) }
        let failures: [(CopiedTotal, WritableKeyPath<TransportMetrics, UInt64> & Sendable)] = [
            (r.total("matter_node_retransmissions_total"), \.retransmissions),
            (r.total("matter_node_delivery_failures_total"), \.deliveryFailures),
            (r.total("matter_node_exchange_timeouts_total"), \.exchangeTimeouts),
        ]
        r.beforeScrape { [weak self] in
            var count: [String: Int] = [:]
            var transport = TransportMetrics()
            var served: [String: ServiceTimeHistogram] = [:]
            count["running"] = devices.count
            for device in devices {
                let route = device.route()
                count["powered_off", default: 0] += route.power ? 0 : 1
                count["lan_down", default: 0] += route.lan ? 0 : 1
                if let cloud = route.cloud { count[cloud ? "connected" : "disconnected", default: 0] += 1 }
                count["commissioned", default: 0] += await device.server.node.fabrics.isEmpty ? 0 : 1
                let manager = device.server.exchangeManager
                for session in await manager.allSessions() where session.isSecure && session.kind != .group {
                    count[session.kind == .pase ? "pase" : "case", default: 0] += 1
                }
                count["subscriptions", default: 0] += await device.server.interactionServer.activeSubscriptions().count
                let m = await manager.metrics()
                transport.datagramsReceived += m.datagramsReceived
                transport.datagramsSent += m.datagramsSent
                for (_, path) in drops { transport[keyPath: path] += m[keyPath: path] }
                for (_, path) in failures { transport[keyPath: path] += m[keyPath: path] }
                for (kind, histogram) in await manager.serviceTimes() { served[kind, default: ServiceTimeHistogram()].merge(histogram) }
            }
            for (name, gauge) in nodes + sessions + links { gauge.set(count[name, default: 0]) }
            subscriptions.set(count["subscriptions", default: 0])
            received.set(Int64(clamping: transport.datagramsReceived))
            sent.set(Int64(clamping: transport.datagramsSent))
            for (total, path) in dropped + failures { total.set(Int64(clamping: transport[keyPath: path])) }
            for (kind, histogram) in served { self?.series(kind).show(histogram) }
        }
    }

    private func series(_ kind: String) -> KindSeries {
        kinds.withLock { kinds in
            if let made = kinds[kind] { return made }
            let r = registry, label = [("kind", kind)]
            let made = KindSeries(
                requests: r.total("matter_node_requests_total", label + [("outcome", "answered")]),
                count: r.total("matter_node_service_time_seconds_count", label),
                sum: r.meter("matter_node_service_time_seconds_sum", label),
                p50: r.meter("matter_node_service_time_seconds", label + [("quantile", "0.5")]),
                p99: r.meter("matter_node_service_time_seconds", label + [("quantile", "0.99")]),
                max: r.meter("matter_node_service_time_seconds_max", label))
            kinds[kind] = made
            return made
        }
    }
}
