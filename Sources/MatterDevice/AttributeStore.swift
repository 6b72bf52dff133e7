import MatterModel
import MatterProtocol
import MatterTLV

/// Why a quieter-reporting attribute (quality Q) changed: a step of a transition still under
/// way, or a milestone (a command's immediate change, a transition's end or stop, a physical
/// act). Only milestones and the rules of `QuietRule` make a change reportable.
enum QuietChange {
    case progress
    case milestone
}

/// When a change of a Q attribute is marked reportable (Core spec 7.7.9 and each cluster's
/// attribute text, e.g. Level Control 1.6.6.2 and 1.6.6.3).
enum QuietRule {
    /// At most once per second, at a milestone, or when it changes from or to null
    /// (CurrentLevel, CurrentHue, ColorTemperatureMireds, …).
    case oncePerSecond
    /// RemainingTime: when it changes from 0 to more than 10, by more than 10 at a
    /// milestone (a command), or to 0.
    case remainingTime
    /// IdentifyTime (Application Cluster 1.2.5.1, Q): when it changes from 0 or to 0, or when
    /// a client writes it or an Identify command sets it (a milestone); not the countdown's
    /// seconds (TC-I-2.4). Its Q comes from the model overlay: the imported data lacks it.
    /// A valve's RemainingDuration follows the same rule (Application Cluster 4.6.6.4: from or
    /// to null or 0, or when it increases, which only an Open, a milestone, does).
    case identifyTime

    static func of(_ attribute: AttributeDefinition) -> QuietRule? {
        guard attribute.quality.contains(.quieterReporting) else { return nil }
        switch attribute.name {
        case "RemainingTime": return .remainingTime
        case "IdentifyTime", "RemainingDuration": return .identifyTime
        default: return .oncePerSecond
        }
    }
}

/// The node's single source of truth: every attribute value, and one data version
/// per cluster instance. Owned by the node actor and never shared outside it; all
/// updates funnel through `update`, which bumps the version and publishes the change.
final class AttributeStore {
    private var values: [AttributePath: TLVValue] = [:]
    private var versions: [ClusterPath: DataVersion] = [:]
    private var attributeIDs: [ClusterPath: [AttributeID]] = [:]
    private let broadcaster: ChangeBroadcaster
    private let clock: any MatterClock
    /// Quieter reporting: the rule of each Q attribute, when and with which value each was last
    /// reported, and those changed since without a report (their value is current, their data
    /// version not).
    private var quietRules: [AttributePath: QuietRule] = [:]
    private var lastReported: [AttributePath: Duration] = [:]
    private var reportedValues: [AttributePath: TLVValue] = [:]
    private var unreported: Set<AttributePath> = []
    /// Told of every change, synchronously on the node actor (persistence listens here).
    var onUpdate: ((AttributePath) -> Void)?

    init(broadcaster: ChangeBroadcaster, clock: any MatterClock) {
        self.broadcaster = broadcaster
        self.clock = clock
    }

    /// Adds a cluster instance with its initial values. The data version starts at
    /// a random value (Core spec 7.10.3) so a restarted node is not mistaken for the old one.
    func addCluster(_ cluster: ClusterPath, values initial: [AttributeID: TLVValue], quiet: [AttributeID: QuietRule] = [:]) {
        versions[cluster] = DataVersion.random(in: DataVersion.min...DataVersion.max)
        attributeIDs[cluster] = initial.keys.sorted()
        for (attribute, value) in initial {
            values[AttributePath(endpoint: cluster.endpoint, cluster: cluster.cluster, attribute: attribute)] = value
        }
        for (attribute, rule) in quiet {
            guard let value = initial[attribute] else { continue }
            let path = AttributePath(endpoint: cluster.endpoint, cluster: cluster.cluster, attribute: attribute)
            quietRules[path] = rule
            reportedValues[path] = value
        }
    }

    func contains(_ path: AttributePath) -> Bool { values[path] != nil }

    func value(_ path: AttributePath) -> TLVValue? { values[path] }

    func dataVersion(_ cluster: ClusterPath) -> DataVersion? { versions[cluster] }

    /// The attributes present on a cluster instance, ascending.
    func attributes(of cluster: ClusterPath) -> [AttributeID] { attributeIDs[cluster] ?? [] }

    /// Sets an existing attribute. Returns false (and changes nothing) when the path
    /// is not in the store or the value is unchanged. A Q attribute's change that its rule does
    /// not make reportable is kept without a report; a later milestone reports it. A Q attribute
    /// back at the value it was last reported with, no report between, is not reported again: for
    /// a subscriber nothing changed (a Move done within a tick takes RemainingTime 0 → 1 → 0,
    /// and "changes to 0" would report a 0 the subscriber already has: TC-CC-2.2 step 40).
    @discardableResult
    func update(_ path: AttributePath, to value: TLVValue, _ change: QuietChange = .milestone) -> Bool {
        guard let old = values[path] else { return false }
        guard old != value || (change == .milestone && unreported.contains(path)) else { return false }
        values[path] = value
        if let rule = quietRules[path] {
            if unreported.contains(path), reportedValues[path] == value {
                unreported.remove(path)
            } else if reportable(path, rule, old: old, new: value, change) {
                report(path)
            } else {
                unreported.insert(path)
            }
        } else {
            report(path)
        }
        onUpdate?(path)
        return true
    }

    /// A transition starts on a cluster: its start counts as a report of every Q attribute
    /// (a step is reported only a second after it), so a transition shorter than a second is
    /// reported once, at its end, and a subscriber's MinInterval does not hold that end back
    /// behind a first step's report.
    func begin(_ cluster: ClusterPath) {
        let now = clock.now
        for path in quietRules.keys where path.endpoint == cluster.endpoint && path.cluster == cluster.cluster {
            lastReported[path] = now
        }
    }

    /// Reports every Q attribute of a cluster changed since its last report: a transition
    /// ended or stopped where its last step was not reported.
    func settle(_ cluster: ClusterPath) {
        for path in unreported where path.endpoint == cluster.endpoint && path.cluster == cluster.cluster {
            report(path)
        }
    }

    private func report(_ path: AttributePath) {
        guard let value = values[path] else { return }
        let cluster = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        let version = (versions[cluster] ?? 0) &+ 1
        versions[cluster] = version
        unreported.remove(path)
        if quietRules[path] != nil {
            lastReported[path] = clock.now
            reportedValues[path] = value
        }
        broadcaster.publish(AttributeChange(path: path, value: value, dataVersion: version))
    }

    private func reportable(_ path: AttributePath, _ rule: QuietRule, old: TLVValue, new: TLVValue, _ change: QuietChange) -> Bool {
        switch rule {
        case .oncePerSecond:
            if change == .milestone || old.isNull != new.isNull { return true }
            guard let last = lastReported[path] else { return true }
            return clock.now - last >= .seconds(1)
        case .remainingTime:
            let before = old.unsignedValue ?? 0, after = new.unsignedValue ?? 0
            if after == 0 || (before == 0 && after > 10) { return true }
            return change == .milestone && (after > before ? after - before : before - after) > 10
        case .identifyTime:
            return change == .milestone || (old.unsignedValue == 0) != (new.unsignedValue == 0)
        }
    }
}
