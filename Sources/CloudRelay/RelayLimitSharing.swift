import Foundation
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import RelayProtocol
import ServiceLifecycle

/// One frame budget per home and per client address across every relay instance on one
/// PostgreSQL store (issue #42): a home with connections on two instances gets the budget
/// once, not once per instance. So are the budgets of bytes and frames read, which hold a
/// key's connections back (`SharedBudgets`), each under its own prefix in the reports.
///
/// The hot path never asks the database: each instance keeps enforcing its own buckets
/// (`SharedFrameBuckets`), only with a share of each busy key's rate and burst. Every
/// `interval` it counts the frames each home and address offered it (smoothed over two
/// intervals), tells the others by `NOTIFY` (keys past `reportFraction` of their budget only,
/// so a report stays small), and sets each key's share from the others' last reports: its own
/// demand over everyone's, so instances flooded alike split the budget, and one with little of
/// a busy key's traffic keeps little of its budget. A key nobody else reports keeps all of it.
/// Demand rather than frames let through decides, so the shares settle instead of swinging.
///
/// Why reports rather than leases of budget: a lease needs a round trip before a key's first
/// frames and a renewal per key as it is spent, a row write per busy key, and a lost lease
/// holder to wait out; a report is one notification per instance per interval, costs nothing
/// for quiet keys, and a dead instance's reports simply age out (`staleAfter`). The price: a
/// new flood passes up to one interval at each instance's full rate before the shares catch
/// up. Why NOTIFY rather than a table: the figures live a second, so nothing needs storing,
/// vacuuming or cleaning up after a crash, and `LISTEN` brings them without polling.
final class RelayLimitSharing: Service, Sendable {
    static let channel = "relay_limits"
    /// A key is reported once it offered this part of its budget's rate at one instance.
    static let reportFraction = 1.0 / 16
    /// The least share an instance keeps of a busy key's budget.
    static let minimumShare = 0.05
    /// Reports older than this many intervals count no more (their instance stopped or went).
    static let staleAfter = 4

    let store: RelayPostgresStore
    let instanceID: String
    let traffic: RelayTraffic
    let interval: Duration
    let logger: Logger

    private struct Report {
        /// Rates by key: a prefix saying which budget (`limits`), then the home or address.
        var rates: [String: Double]
        // real time: external: other instances' reports age in real time, as their heartbeats do.
        var at: ContinuousClock.Instant
    }
    private struct State {
        /// What each key offered this instance per second, smoothed.
        var local: [String: Double] = [:]
        var others: [String: Report] = [:]
        var reportedLast = false
    }
    // The lock guards the demand figures.
    private let state = NIOLockedValueBox(State())

    init(store: RelayPostgresStore, instanceID: String, traffic: RelayTraffic, interval: Duration, logger: Logger) {
        self.store = store
        self.instanceID = instanceID
        self.traffic = traffic
        self.interval = interval
        self.logger = logger
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await self.listen() }
                group.addTask { await self.keepReporting() }
            }
        }
    }

    // MARK: Reports

    private var intervalSeconds: Double { Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18 }

    private func keepReporting() async {
        while !Task.isCancelled {
            // real time: external: the instances' reports meet in real time.
            try? await Task.sleep(for: interval)
            let payloads = tally()
            for payload in payloads {
                do {
                    try await store.query("SELECT pg_notify(\(Self.channel), \(payload))")
                } catch {
                    logger.debug("limit report failed: \(error)")
                }
            }
        }
    }

    /// Counts the interval's demand, sets the shares, and returns the report to send (in
    /// payloads NOTIFY takes), empty when there is nothing new to say.
    func tally() -> [String] {
        let seconds = intervalSeconds
        let limits = limits
        var offered: [String: Int] = [:]
        for (prefix, limit) in limits {
            for (key, n) in limit.takeDemand() { offered[prefix + key] = n }
        }
        // real time: external: other instances' reports age in real time.
        let now = ContinuousClock.now
        let stale = interval * Self.staleAfter
        let (report, shares) = state.withLockedValue { s -> ([String: Double]?, [String: Double]) in
            var local: [String: Double] = [:]
            for key in Set(s.local.keys).union(offered.keys) {
                let rate = (s.local[key, default: 0] + Double(offered[key, default: 0]) / seconds) / 2
                if rate >= 1 { local[key] = rate }
            }
            s.local = local
            s.others = s.others.filter { now - $0.value.at < stale }
            var othersDemand: [String: Double] = [:]
            for report in s.others.values {
                for (key, rate) in report.rates { othersDemand[key, default: 0] += rate }
            }
            var shares: [String: Double] = [:]
            for (key, others) in othersDemand where others > 0 {
                let mine = local[key, default: 0]
                shares[key] = max(Self.minimumShare, mine / (mine + others))
            }
            let reported = local.filter { $0.value >= self.budget(of: $0.key) * Self.reportFraction }
            // An empty report once, after a non-empty one: the others' shares go back at once.
            guard !reported.isEmpty || s.reportedLast else { return (nil, shares) }
            s.reportedLast = !reported.isEmpty
            return (reported, shares)
        }
        var byPrefix: [String: [String: Double]] = [:]
        for (key, share) in shares {
            guard let (prefix, rest) = Self.split(key) else { continue }
            byPrefix[prefix, default: [:]][rest] = share
        }
        for (prefix, limit) in limits { limit.setShares(byPrefix[prefix] ?? [:]) }
        return report.map { Self.payloads(from: instanceID, $0) } ?? []
    }

    /// The budgets shared, by the prefix of their keys in a report: frames let through ("h:" a
    /// home's, "a:" an address's), bytes read ("hb:", "ab:") and frames read ("hn:", "an:").
    private var limits: [(String, any RelaySharedBudget)] {
        [
            ("h:", traffic.homes), ("a:", traffic.addresses), ("hb:", traffic.homeBytes), ("ab:", traffic.addressBytes),
            ("hn:", traffic.homeArrivals), ("an:", traffic.addressArrivals),
        ]
    }
    static let prefixes: Set<String> = ["h:", "a:", "hb:", "ab:", "hn:", "an:"]

    /// A report key's prefix (up to its first ':') and the home or address after it.
    static func split(_ key: some StringProtocol) -> (prefix: String, key: String)? {
        guard let colon = key.firstIndex(of: ":") else { return nil }
        let prefix = String(key[...colon])
        guard prefixes.contains(prefix) else { return nil }
        return (prefix, String(key[key.index(after: colon)...]))
    }

    private func budget(of key: String) -> Double {
        guard let prefix = Self.split(key)?.prefix, let limit = limits.first(where: { $0.0 == prefix })?.1 else { return .infinity }
        return Double(limit.perSecond)
    }

    /// "FROM KEY=RATE KEY=RATE …", split to stay within what NOTIFY takes; one "FROM" alone
    /// when there is nothing to report.
    static func payloads(from instance: String, _ rates: [String: Double]) -> [String] {
        var payloads: [String] = []
        var current = instance
        for (key, rate) in rates.sorted(by: { $0.key < $1.key }) {
            let item = " \(key)=\(Int(rate.rounded()))"
            if current.utf8.count + item.utf8.count > ClusterEnvelope.payloadLimit {
                payloads.append(current)
                current = instance
            }
            current += item
        }
        payloads.append(current)
        return payloads
    }

    /// The instance and rates of a report; nil for anything else.
    static func parse(_ payload: String) -> (instance: String, rates: [String: Double])? {
        let fields = payload.split(separator: " ")
        guard let instance = fields.first, RelayFrame.isValidIdentifier(String(instance)) else { return nil }
        var rates: [String: Double] = [:]
        for field in fields.dropFirst() {
            guard let equals = field.lastIndex(of: "="), Self.split(field[..<equals]) != nil,
                let rate = Double(field[field.index(after: equals)...]), rate.isFinite, rate >= 0
            else { return nil }
            rates[String(field[..<equals])] = rate
        }
        return (String(instance), rates)
    }

    /// Takes another instance's report (one of several parts: the parts of one interval add up).
    func receive(_ payload: String) {
        guard let (instance, rates) = Self.parse(payload) else {
            traffic.metrics.rejected(.malformed)
            return
        }
        guard instance != instanceID else { return }
        // real time: external: other instances' reports age in real time.
        let now = ContinuousClock.now
        state.withLockedValue { s in
            if let last = s.others[instance], now - last.at < interval / 2 {
                s.others[instance] = Report(rates: last.rates.merging(rates) { $1 }, at: now)
            } else {
                s.others[instance] = Report(rates: rates, at: now)
            }
        }
    }

    /// Hands `receive` every report, on one pooled connection held for it; again after a lost one.
    private func listen() async {
        // real time: external: listening again on the database server.
        while !Task.isCancelled {
            do {
                try await store.client.withConnection { connection in
                    try await connection.listen(on: Self.channel) { notifications in
                        for try await notification in notifications { self.receive(notification.payload) }
                    }
                }
            } catch {
                if Task.isCancelled { return }
                logger.warning("limit listener lost its connection (listening again): \(error)")
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }
}

/// A per-key budget instances share (`RelayLimitSharing`): what each key offered here since
/// the last report, and this instance's share of it.
protocol RelaySharedBudget: Sendable {
    associatedtype Entry: Sendable
    /// The budget's rate per key (frames or bytes a second).
    var perSecond: Int { get }
    var table: SharedKeyTable<Entry> { get }
}

extension RelaySharedBudget {
    func takeDemand() -> [String: Int] { table.takeDemand() }
    func setShares(_ shares: [String: Double]) { table.setShares(shares) }
}

extension SharedFrameBuckets: RelaySharedBudget {
    var perSecond: Int { framesPerSecond }
}

extension SharedBudgets: RelaySharedBudget {}
