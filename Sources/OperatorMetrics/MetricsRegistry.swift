import CoreMetrics
import Hummingbird
import NIOConcurrencyHelpers
import NIOCore
import Prometheus

/// One Prometheus registry and its `/metrics` answer, the one exporter the relay, the hub and
/// `matter-sim home` share (issue #42): swift-metrics instruments made by swift-prometheus's
/// factory on a registry of this owner's own (several relays, hubs or homes in one process
/// each count their own), rendered by swift-prometheus in text format 0.0.4. Figures kept
/// elsewhere (a node's totals, a pool's use) are copied in by `beforeScrape` hooks.
public final class MetricsRegistry: Sendable {
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public let registry = PrometheusCollectorRegistry()
    public let factory: PrometheusMetricsFactory
    private let hooks = NIOLockedValueBox<[@Sendable () async -> Void]>([])

    /// `durationBuckets`: upper bounds, in seconds, of a timer's histogram buckets by its label.
    public init(durationBuckets: [String: [Double]] = [:]) {
        var factory = PrometheusMetricsFactory(registry: registry)
        for (label, bounds) in durationBuckets {
            factory.durationHistogramBuckets[label] = bounds.map { .nanoseconds(Int64($0 * 1e9)) }
        }
        self.factory = factory
    }

    public func counter(_ label: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Counter {
        CoreMetrics.Counter(label: label, dimensions: dimensions, factory: factory)
    }

    public func meter(_ label: String, _ dimensions: [(String, String)] = []) -> MetricsGauge {
        CoreMetrics.Meter(label: label, dimensions: dimensions, factory: factory)
    }

    public func timer(_ label: String, _ dimensions: [(String, String)] = []) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: label, dimensions: dimensions, factory: factory)
    }

    /// One instrument per value of a label (every series shows, at 0, from the start).
    public func each<Key: Hashable & CaseIterable & RawRepresentable<String>, Instrument>(
        _ label: String, _ dimension: String, _ make: (String, [(String, String)]) -> Instrument
    ) -> [Key: Instrument] {
        Dictionary(uniqueKeysWithValues: Key.allCases.map { ($0, make(label, [(dimension, $0.rawValue)])) })
    }

    /// A counter whose value is a total kept elsewhere, copied in at each scrape.
    public func total(_ label: String, _ dimensions: [(String, String)] = []) -> CopiedTotal {
        CopiedTotal(registry.makeCounter(name: label, labels: dimensions))
    }

    /// Runs `hook` before every rendering: gauges read from their sources, totals copied.
    public func beforeScrape(_ hook: @escaping @Sendable () async -> Void) {
        hooks.withLockedValue { $0.append(hook) }
    }

    /// The Prometheus text exposition, by swift-prometheus.
    public func render() async -> String {
        for hook in hooks.withLockedValue({ $0 }) { await hook() }
        return registry.emitToString()
    }

    /// `GET /metrics`'s answer.
    public func response() async -> Response {
        Response(status: .ok, headers: [.contentType: Self.contentType], body: .init(byteBuffer: ByteBuffer(string: await render())))
    }
}

/// A gauge: a value set, or moved up and down (swift-metrics' `Meter`).
public typealias MetricsGauge = CoreMetrics.Meter

/// A Prometheus counter showing a total kept elsewhere (a node's datagrams): moved by the
/// difference at each scrape, and started again (a counter reset, as Prometheus reads it)
/// when the total went down, as a restarted node's does.
public final class CopiedTotal: Sendable {
    private let counter: Prometheus.Counter
    // The lock guards the last total copied.
    private let last = NIOLockedValueBox<Int64>(0)

    init(_ counter: Prometheus.Counter) { self.counter = counter }

    public func set(_ total: Int64) {
        last.withLockedValue { last in
            if total >= last {
                counter.increment(by: total - last)
            } else {
                counter.reset()
                counter.increment(by: max(0, total))
            }
            last = max(0, total)
        }
    }
}

extension MetricsRegistry {
    /// The value of one series (`name{labels}` as rendered) in an exposition; nil when absent.
    public static func value(_ series: String, in exposition: String) -> Double? {
        for line in exposition.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1))
        }
        return nil
    }
}
