// A scenario (`matter-sim home HOME.yaml --scenario FILE.yaml`): a timeline of what people
// do at the devices, faults, and expectations on the devices' state, in simulated time.
import Foundation

/// One parsed scenario file. Names of devices and attributes are checked against the running
/// home by the runner; everything the file alone can get wrong is checked here.
public struct Scenario: Sendable {
    public var file: String
    public var name: String
    /// The speed the file asks for (`--speed` overrides it).
    public var speed: Double?
    public var steps: [ScenarioStep]
}

public struct ScenarioStep: Sendable {
    public enum Kind: Sendable {
        /// What a person does at the device, by `matter-sim act`'s names ("press", value "double").
        case act(action: String, value: String?)
        /// A fault, by `matter-sim fault`'s names (lan-impair with its settings).
        case fault(String, value: String?)
        case expect(ScenarioExpectation)
    }

    /// Simulated time since the scenario started.
    public var at: Duration
    public var node: String
    public var kind: Kind
    /// `steps[3]` in the file, for messages.
    public var path: ProfilePath
    public var line: Int?
}

/// "expect the hall light on within 1 s".
public struct ScenarioExpectation: Sendable {
    public enum Comparison: Sendable, CustomStringConvertible {
        case equals(ScenarioValue)
        case between(Double, Double)
        case atLeast(Double)
        case atMost(Double)

        public var description: String {
            switch self {
            case .equals(let v): "= \(v)"
            case .between(let a, let b): "between \(DocumentReader.format(a)) and \(DocumentReader.format(b))"
            case .atLeast(let a): "≥ \(DocumentReader.format(a))"
            case .atMost(let a): "≤ \(DocumentReader.format(a))"
            }
        }
    }

    /// "OnOff.OnOff", "1/LevelControl.CurrentLevel", or a route: "route.lan", "route.power", "route.cloud".
    public var subject: String
    public var comparison: Comparison
    /// How long (simulated) the value may take to get there; zero: at that moment.
    public var within: Duration
}

public enum ScenarioValue: Sendable, Hashable, CustomStringConvertible {
    case bool(Bool)
    case number(Double)
    case string(String)

    public var description: String {
        switch self {
        case .bool(let b): String(b)
        case .number(let n): DocumentReader.format(n)
        case .string(let s): "\"\(s)\""
        }
    }
}

extension ProfileLoader {
    /// Reads a scenario file; every problem is reported with its file, path and line.
    public func loadScenario(file: String) throws(ProfileErrors) -> Scenario {
        let sink = DiagnosticSink()
        guard let text = readText(file, sink: sink, reference: nil) else { throw ProfileErrors(sink.all) }
        return try loadScenario(yaml: text, file: file)
    }

    /// A scenario's problems, or nil when the file is not a scenario (no `steps` at its top):
    /// `matter-sim validate` checks scenarios beside profiles and homes.
    public func scenarioDiagnostics(file: String) -> [ProfileDiagnostic]? {
        let sink = DiagnosticSink()
        guard let text = readText(file, sink: sink, reference: nil), case .success(let root) = YAMLDocument.parse(text),
            case .mapping(let entries, _) = root, entries.contains(where: { $0.keyText == "steps" })
        else { return nil }
        do {
            _ = try loadScenario(yaml: text, file: file)
            return []
        } catch {
            return error.diagnostics
        }
    }

    public func loadScenario(yaml: String, file: String) throws(ProfileErrors) -> Scenario {
        let sink = DiagnosticSink()
        guard let root = parse(yaml, file: file, sink: sink) else { throw ProfileErrors(sink.all) }
        let scenario = ScenarioReader(reader: DocumentReader(file: file, sink: sink)).read(root)
        guard let scenario, sink.all.isEmpty else { throw ProfileErrors(sink.all) }
        return scenario
    }
}

struct ScenarioReader {
    let reader: DocumentReader
    static let kinds = ["act", "fault", "expect"]
    static let faults = ["lan-down", "lan-up", "cloud-down", "cloud-up", "power-off", "power-on", "lan-impair"]
    /// A week: longer timelines are a typo more likely than a plan.
    static let longest: Double = 7 * 86_400

    func read(_ root: YAMLNode) -> Scenario? {
        let path = ProfilePath.root
        guard let fields = reader.fields(root, at: path, known: ["name", "speed", "steps"], what: "a scenario (a mapping)") else {
            return nil
        }
        let name = fields["name"].flatMap { reader.string($0, at: path.key("name"), nonEmpty: true) } ?? reader.file
        let speed = fields["speed"].flatMap { reader.number($0, at: path.key("speed"), in: 0.01...100_000, unit: " (times real time)") }
        guard let stepsNode = reader.require(fields, "steps", at: path, node: root),
            let items = reader.list(stepsNode, at: path.key("steps"), what: "a list of steps")
        else { return nil }
        if items.isEmpty { reader.error(path.key("steps"), stepsNode, "expected at least one step, got an empty list") }
        let steps = items.enumerated().compactMap { index, item in step(item, at: path.key("steps").index(index)) }
        return Scenario(file: reader.file, name: name, speed: speed, steps: steps)
    }

    func step(_ node: YAMLNode, at path: ProfilePath) -> ScenarioStep? {
        let known = ["at", "node", "act", "fault", "expect", "equals", "between", "atLeast", "atMost", "within"]
        guard let fields = reader.fields(node, at: path, known: known, what: "a step (a mapping with at, node and act, fault or expect)")
        else { return nil }
        let given = Self.kinds.filter { fields.has($0) }
        guard given.count == 1 else {
            reader.error(
                path, node,
                given.isEmpty
                    ? "expected one of act, fault or expect"
                    : "expected one of act, fault or expect, got \(given.joined(separator: " and "))")
            return nil
        }
        let at = reader.require(fields, "at", at: path, node: node).flatMap { time($0, at: path.key("at")) }
        let target = reader.require(fields, "node", at: path, node: node).flatMap {
            reader.string($0, at: path.key("node"), nonEmpty: true)
        }
        let comparisons = ["equals", "between", "atLeast", "atMost"].filter { fields.has($0) }
        var kind: ScenarioStep.Kind?
        switch given[0] {
        case "act":
            if let text = fields["act"].flatMap({ reader.string($0, at: path.key("act"), nonEmpty: true) }) {
                let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
                kind = .act(action: parts[0], value: parts.count > 1 ? parts[1] : nil)
            }
        case "fault":
            if let text = fields["fault"].flatMap({ reader.string($0, at: path.key("fault"), nonEmpty: true) }) {
                let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
                if !Self.faults.contains(parts[0]) {
                    reader.error(path.key("fault"), fields["fault"], unknownNameMessage("fault", parts[0], candidates: Self.faults))
                } else if (parts[0] == "lan-impair") != (parts.count > 1) {
                    reader.error(
                        path.key("fault"), fields["fault"],
                        parts[0] == "lan-impair"
                            ? "lan-impair needs its settings, e.g. lan-impair loss=20%,delay=50ms" : "'\(parts[0])' takes no value")
                } else {
                    kind = .fault(parts[0], value: parts.count > 1 ? parts[1] : nil)
                }
            }
        default:
            kind = expectation(fields, comparisons: comparisons, node: node, at: path).map { .expect($0) }
        }
        if given[0] != "expect" {
            for extra in comparisons + (fields.has("within") ? ["within"] : []) {
                reader.error(path.key(extra), fields[extra], "'\(extra)' belongs to an expect step, not to \(given[0])")
            }
        }
        guard let at, let target, let kind else { return nil }
        return ScenarioStep(at: at, node: target, kind: kind, path: path, line: node.mark.line)
    }

    func expectation(_ fields: Fields, comparisons: [String], node: YAMLNode, at path: ProfilePath) -> ScenarioExpectation? {
        guard let subject = fields["expect"].flatMap({ reader.string($0, at: path.key("expect"), nonEmpty: true) }) else { return nil }
        guard comparisons.count == 1 else {
            reader.error(
                path, node,
                comparisons.isEmpty
                    ? "an expect step needs one of equals, between, atLeast or atMost"
                    : "expected one of equals, between, atLeast or atMost, got \(comparisons.joined(separator: " and "))")
            return nil
        }
        let key = comparisons[0]
        let p = path.key(key)
        guard let valueNode = fields[key] else { return nil }
        var comparison: ScenarioExpectation.Comparison?
        switch key {
        case "equals":
            if case .scalar(let s) = valueNode {
                switch s.kind {
                case .bool(let b): comparison = .equals(.bool(b))
                case .integer, .float: comparison = reader.number(valueNode, at: p, in: -1e18...1e18).map { .equals(.number($0)) }
                case .string: comparison = .equals(.string(s.text))
                case .null: reader.error(p, valueNode, "expected a value to compare with, got null")
                }
            } else {
                reader.error(p, valueNode, "expected a boolean, a number or a string, got \(valueNode.shortDescription)")
            }
        case "between":
            if let pair = reader.list(valueNode, at: p, what: "a [low, high] pair"), pair.count == 2,
                let low = reader.number(pair[0], at: p.index(0), in: -1e18...1e18),
                let high = reader.number(pair[1], at: p.index(1), in: -1e18...1e18)
            {
                if low <= high {
                    comparison = .between(low, high)
                } else {
                    reader.error(p, valueNode, "expected low ≤ high, got [\(DocumentReader.format(low)), \(DocumentReader.format(high))]")
                }
            } else if case .sequence(let items, _) = valueNode, items.count != 2 {
                reader.error(p, valueNode, "expected a [low, high] pair, got \(items.count) values")
            }
        case "atLeast": comparison = reader.number(valueNode, at: p, in: -1e18...1e18).map { .atLeast($0) }
        default: comparison = reader.number(valueNode, at: p, in: -1e18...1e18).map { .atMost($0) }
        }
        let within = fields["within"].flatMap { time($0, at: path.key("within")) } ?? .zero
        guard let comparison else { return nil }
        return ScenarioExpectation(subject: subject, comparison: comparison, within: within)
    }

    /// A time: seconds (`90`, `1.5`), `[HH:]MM:SS`, or units (`500ms`, `30s`, `10m`, `2h`, `1h30m`).
    func time(_ node: YAMLNode, at path: ProfilePath) -> Duration? {
        let expected = "a time: seconds, [HH:]MM:SS or units like 500ms, 30s, 10m, 1h30m"
        guard case .scalar(let s) = node, s.kind != .null else {
            reader.error(path, node, "expected \(expected), got \(node.shortDescription)")
            return nil
        }
        guard let seconds = Self.seconds(s.text), seconds >= 0, seconds <= Self.longest else {
            reader.error(path, node, "expected \(expected) (at most a week), got \(node.shortDescription)")
            return nil
        }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }

    static func seconds(_ text: String) -> Double? {
        let text = text.trimmingCharacters(in: .whitespaces)
        if let plain = Double(text), plain.isFinite { return plain }
        if text.contains(":") {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { Double($0) }
            guard (2...3).contains(parts.count), parts.allSatisfy({ $0 != nil && $0! >= 0 }) else { return nil }
            let values = parts.map { $0! }
            // MM:SS or HH:MM:SS; minutes and seconds below 60.
            guard values.dropFirst().allSatisfy({ $0 < 60 }) else { return nil }
            return values.reduce(0) { $0 * 60 + $1 }
        }
        var total = 0.0, number = "", rest = Substring(text)
        var units = 0
        while let c = rest.first {
            if c.isNumber || c == "." {
                number.append(c)
                rest = rest.dropFirst()
                continue
            }
            let unit: (String, Double)? = [("ms", 0.001), ("h", 3600), ("m", 60), ("s", 1)].first { rest.hasPrefix($0.0) }
            guard let unit, let value = Double(number) else { return nil }
            total += value * unit.1
            number = ""
            units += 1
            rest = rest.dropFirst(unit.0.count)
        }
        return number.isEmpty && units > 0 ? total : nil
    }
}
