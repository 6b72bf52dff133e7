// `matter-sim home HOME.yaml --scenario FILE.yaml [--speed N]`: the scenario's timeline run
// against the home on the nodes' own (possibly faster) clock. Acts and faults go through the
// control socket's queue, as `act` and `fault` do; expectations read the nodes' attribute
// stores and wait on their changes. Prints each step, a summary, and writes a JUnit report.
import DeviceProfile
import Foundation
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV

/// What `home` was asked to run, with the clock every node of the home shares.
struct ScenarioPlan {
    var scenario: Scenario
    var clock: any MatterClock
    var speed: Double
    var junitPath: String
}

/// One step checked against the running home.
struct ResolvedStep: Sendable {
    enum Subject: Sendable {
        case attribute(AttributePath, name: String)
        case route(String)
    }

    var step: ScenarioStep
    var node: SimulatedNode
    var subject: Subject?
}

/// What is wrong with a scenario for this home, one message per problem.
struct ScenarioProblems: Error {
    var messages: [String]
}

/// A step's outcome, for the log and the JUnit report.
struct StepResult: Sendable {
    var name: String
    var passed: Bool
    var message: String
    /// Simulated time the step was set for, and how long (simulated) it took.
    var at: Duration
    var took: Duration
}

struct ScenarioRunner: Sendable {
    let scenario: Scenario
    let steps: [ResolvedStep]
    let clock: any MatterClock
    let speed: Double
    let control: NodeControlServer

    static let routes = ["route.lan", "route.power", "route.cloud"]

    /// Checks every step's node and subject against the home; errors name the file, line and path.
    static func resolve(_ scenario: Scenario, control: NodeControlServer) -> Result<[ResolvedStep], ScenarioProblems> {
        var resolved: [ResolvedStep] = [], errors: [String] = []
        for step in scenario.steps {
            let place = "\(scenario.file):\(step.line.map { "\($0):" } ?? "") \(step.path)"
            let node: SimulatedNode
            switch control.select(step.node) {
            case .success(let nodes) where nodes.count == 1: node = nodes[0]
            case .success:
                errors.append("\(place).node: 'all' is for faults from the command line; name one device")
                continue
            case .failure(let error):
                errors.append("\(place).node: \(error.description)")
                continue
            }
            var subject: ResolvedStep.Subject?
            switch step.kind {
            case .act(let action, let value):
                switch PhysicalActionName.parse(action, value: value) {
                case .failure(let error): errors.append("\(place).act: \(error.description)")
                case .success(let physical) where !node.server.node.canAct(physical):
                    let cluster = node.server.node.model.cluster(physical.cluster)?.name ?? "\(physical.cluster)"
                    errors.append("\(place).act: '\(action)' needs a \(cluster) cluster, and \(node.name) has none")
                case .success: break
                }
            case .fault("lan-impair", let value?):
                if case .failure(let error) = LinkImpairment.parse(value) {
                    errors.append("\(place).fault: lan-impair \(value): \(error.description)")
                }
            case .fault: break
            case .expect(let expectation):
                switch Self.subject(expectation.subject, on: node.server.node) {
                case .success(let found): subject = found
                case .failure(let message): errors.append("\(place).expect: \(message.description)")
                }
            }
            resolved.append(ResolvedStep(step: step, node: node, subject: subject))
        }
        return errors.isEmpty ? .success(resolved) : .failure(ScenarioProblems(messages: errors))
    }

    /// "route.lan", or "[ENDPOINT/]Cluster.Attribute" on the first endpoint with that cluster.
    static func subject(_ text: String, on node: MatterNode) -> Result<ResolvedStep.Subject, ControlSocketError> {
        func fail(_ message: String) -> Result<ResolvedStep.Subject, ControlSocketError> {
            .failure(ControlSocketError(description: message))
        }
        if text.hasPrefix("route.") {
            return routes.contains(text)
                ? .success(.route(text)) : fail("unknown route '\(text)'; expected one of: \(routes.joined(separator: ", "))")
        }
        var rest = Substring(text), endpoint: EndpointNumber?
        if let slash = text.firstIndex(of: "/") {
            guard let number = UInt16(text[..<slash]) else {
                return fail("'\(text)': expected ENDPOINT/Cluster.Attribute, e.g. 1/OnOff.OnOff")
            }
            endpoint = EndpointNumber(number)
            rest = text[text.index(after: slash)...]
        }
        let parts = rest.split(separator: ".").map(String.init)
        guard parts.count == 2 else {
            return fail("'\(text)': expected Cluster.Attribute, e.g. OnOff.OnOff or 1/LevelControl.CurrentLevel")
        }
        let composition = node.composition
        let clusterNames = Set(composition.endpoints.flatMap { composition.clusters(on: $0) }.compactMap { node.model.cluster($0)?.name })
            .sorted()
        guard let cluster = node.model.cluster(named: parts[0]) else {
            let suggestion = closestMatch(to: parts[0], in: clusterNames).map { "did you mean \($0)? " } ?? ""
            return fail("no cluster \(parts[0]) on this device; \(suggestion)it has: \(clusterNames.joined(separator: ", "))")
        }
        let hosting = composition.endpoints.filter { composition.clusters(on: $0).contains(cluster.id) }
        let chosen: EndpointNumber?
        if let endpoint {
            chosen = hosting.contains(endpoint) ? endpoint : nil
        } else {
            chosen = hosting.first { $0 != 0 } ?? hosting.first
        }
        guard let at = chosen else {
            return fail(
                "no cluster \(cluster.name) \(endpoint.map { "on endpoint \($0) " } ?? "")on this device; it has: \(clusterNames.joined(separator: ", "))"
            )
        }
        let present = composition.attributes(of: ClusterPath(endpoint: at, cluster: cluster.id))
        guard let attribute = cluster.attribute(named: parts[1]), present.contains(attribute.id) else {
            let suggestion = closestMatch(to: parts[1], in: present.compactMap { cluster.attribute($0)?.name })
            return fail("\(cluster.name) has no attribute \(parts[1]) here" + (suggestion.map { "; did you mean \($0)?" } ?? ""))
        }
        return .success(
            .attribute(
                AttributePath(endpoint: at, cluster: cluster.id, attribute: attribute.id), name: "\(at)/\(cluster.name).\(attribute.name)"))
    }

    // MARK: - Running

    /// Runs the timeline to its end (and every expectation still waiting), printing as it goes.
    func run() async -> [StepResult] {
        let start = clock.now
        // real time: benchmark: how long the scenario took, for a person to read.
        let realStart = ContinuousClock.now
        let ordered = steps.enumerated().sorted { ($0.element.step.at, $0.offset) < ($1.element.step.at, $1.offset) }.map(\.element)
        printOut(
            "scenario \"\(scenario.name)\": \(steps.count) steps over \(Self.clockText(ordered.last?.step.at ?? .zero)) simulated, at ×\(Self.number(speed))"
        )
        let results = await withTaskGroup(of: (Int, StepResult).self) { group -> [StepResult] in
            for (index, resolved) in ordered.enumerated() {
                try? await clock.sleep(until: start + resolved.step.at)
                if case .expect(let expectation) = resolved.step.kind, expectation.within > .zero {
                    // Waits on its own while the timeline goes on.
                    group.addTask {
                        let result = await check(resolved, expectation, start: start)
                        report(result)
                        return (index, result)
                    }
                    continue
                }
                let result = await perform(resolved, start: start)
                report(result)
                group.addTask { (index, result) }
            }
            var collected: [(Int, StepResult)] = []
            for await item in group { collected.append(item) }
            return collected.sorted { $0.0 < $1.0 }.map(\.1)
        }
        let failed = results.filter { !$0.passed }.count
        let simulated = clock.now - start
        let real = realStart.duration(to: ContinuousClock.now)
        printOut(
            "scenario \"\(scenario.name)\": \(results.count) steps, \(results.count - failed) passed, \(failed) failed; "
                + "\(Self.clockText(simulated)) simulated in \(real.secondsText) real")
        return results
    }

    private func report(_ result: StepResult) {
        printOut("[\(Self.clockText(result.at))] \(result.passed ? "PASS" : "FAIL") \(result.name): \(result.message)")
    }

    private func perform(_ resolved: ResolvedStep, start: Duration) async -> StepResult {
        let at = resolved.step.at
        let began = clock.now
        let node = resolved.node
        switch resolved.step.kind {
        case .act(let action, let value):
            let answer = await control.submit(ControlRequest(node: node.serialNumber, action: action, value: value))
            let name = "act \(action)\(value.map { " \($0)" } ?? "") at \(node.name)"
            return StepResult(name: name, passed: answer.error == nil, message: answer.error ?? "done", at: at, took: clock.now - began)
        case .fault(let action, let value):
            let answer = await control.submit(ControlRequest(node: node.serialNumber, action: action, value: value))
            let note = answer.error ?? answer.results.first?.note
            return StepResult(
                name: "fault \(action)\(value.map { " \($0)" } ?? "") on \(node.name)", passed: note == nil,
                message: note ?? (answer.results.first?.state ?? "done"),
                at: at,
                took: clock.now - began)
        case .expect(let expectation):
            return await check(resolved, expectation, start: start)
        }
    }

    /// Holds at once, or on a change before `within` runs out (simulated time).
    private func check(_ resolved: ResolvedStep, _ expectation: ScenarioExpectation, start: Duration) async -> StepResult {
        let at = resolved.step.at
        let began = clock.now
        let node = resolved.node
        let subjectName: String
        switch resolved.subject {
        case .attribute(_, let name): subjectName = name
        case .route(let route): subjectName = route
        case nil: subjectName = expectation.subject
        }
        let name =
            "expect \(node.name) \(subjectName) \(expectation.comparison)"
            + (expectation.within > .zero ? " within \(Self.durationText(expectation.within))" : "")
        // Subscribed before the first look, so no change falls between.
        let changes = node.server.node.changes
        let deadline = clock.now + expectation.within
        var seen = await current(resolved)
        var holds = Self.matches(seen, expectation.comparison)
        if !holds, expectation.within > .zero {
            holds = await withTaskGroup(of: Bool.self) { group in
                if case .attribute(let path, _) = resolved.subject {
                    group.addTask {
                        for await change in changes where change.path == path {
                            if Self.matches(Self.value(change.value), expectation.comparison) { return true }
                        }
                        return false
                    }
                } else {
                    // A route has no change stream: look each 1/50 of the wait.
                    group.addTask {
                        while clock.now < deadline {
                            try? await clock.sleep(until: min(deadline, clock.now + expectation.within / 50))
                            if Task.isCancelled { return false }
                            if Self.matches(await current(resolved), expectation.comparison) { return true }
                        }
                        return false
                    }
                }
                group.addTask {
                    try? await clock.sleep(until: deadline)
                    return false
                }
                let first = await group.next() ?? false
                group.cancelAll()
                return first
            }
            seen = await current(resolved)
            holds = holds || Self.matches(seen, expectation.comparison)
        }
        let took = clock.now - began
        let message =
            holds
            ? "\(seen.map(\.description) ?? "no value")" + (expectation.within > .zero ? " after \(Self.durationText(took))" : "")
            : "expected \(subjectName) \(expectation.comparison)"
                + (expectation.within > .zero ? " within \(Self.durationText(expectation.within))" : "")
                + ", but it is \(seen.map(\.description) ?? "unreadable")"
        return StepResult(name: name, passed: holds, message: message, at: at, took: took)
    }

    private func current(_ resolved: ResolvedStep) async -> ScenarioValue? {
        switch resolved.subject {
        case .attribute(let path, _):
            guard case .success(let data) = await resolved.node.server.node.read(path) else { return nil }
            return Self.value(data.value)
        case .route(let route):
            let server = resolved.node.server
            switch route {
            case "route.lan": return .bool(server.isLANUp && server.isPoweredOn)
            case "route.power": return .bool(server.isPoweredOn)
            default: return resolved.node.cloud.map { .bool($0.isConnected) }
            }
        case nil: return nil
        }
    }

    static func value(_ tlv: TLVValue) -> ScenarioValue? {
        switch tlv {
        case .bool(let b): .bool(b)
        case .signed(let v): .number(Double(v))
        case .unsigned(let v): .number(Double(v))
        case .float(let v): .number(Double(v))
        case .double(let v): .number(v)
        case .utf8(let s): .string(s)
        default: nil
        }
    }

    static func matches(_ value: ScenarioValue?, _ comparison: ScenarioExpectation.Comparison) -> Bool {
        guard let value else { return false }
        switch (comparison, value) {
        case (.equals(let wanted), _):
            if case .string(let text) = wanted, case .bool(let b) = value {
                // Routes read as up/down, on/off too.
                return ["up", "on"].contains(text) ? b : ["down", "off"].contains(text) ? !b : false
            }
            return wanted == value
        case (.between(let low, let high), .number(let n)): return n >= low && n <= high
        case (.atLeast(let low), .number(let n)): return n >= low
        case (.atMost(let high), .number(let n)): return n <= high
        default: return false
        }
    }

    // MARK: - Text

    /// HH:MM:SS(.mmm) of simulated time.
    static func clockText(_ duration: Duration) -> String {
        let ms = Int64(duration.components.seconds) * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        let s = ms / 1000
        let text = String(format: "%02lld:%02lld:%02lld", s / 3600, (s / 60) % 60, s % 60)
        return ms % 1000 == 0 ? text : text + String(format: ".%03lld", ms % 1000)
    }

    static func durationText(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        if seconds < 120 { return "\(Self.number((seconds * 10).rounded() / 10)) s" }
        if seconds < 7200 { return "\(Self.number((seconds / 6).rounded() / 10)) min" }
        return "\(Self.number((seconds / 360).rounded() / 10)) h"
    }

    /// "600", "2.5": an amount without trailing zeros.
    static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    // MARK: - JUnit

    /// The report CI systems read: one testcase per step, a failure with its message.
    static func junit(_ scenario: Scenario, results: [StepResult], speed: Double, realSeconds: Double) -> String {
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let failures = results.filter { !$0.passed }.count
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites tests=\"\(results.count)\" failures=\"\(failures)\" time=\"\(String(format: "%.3f", realSeconds))\">\n"
        xml +=
            "  <testsuite name=\"\(escape(scenario.name))\" tests=\"\(results.count)\" failures=\"\(failures)\" errors=\"0\" time=\"\(String(format: "%.3f", realSeconds))\">\n"
        for result in results {
            // JUnit times are real seconds.
            let took = (Double(result.took.components.seconds) + Double(result.took.components.attoseconds) / 1e18) / speed
            xml +=
                "    <testcase classname=\"\(escape(scenario.file))\" name=\"\(escape("[\(clockText(result.at))] \(result.name)"))\" time=\"\(String(format: "%.3f", took))\""
            if result.passed {
                xml += "/>\n"
            } else {
                xml +=
                    ">\n      <failure message=\"\(escape(result.message))\">\(escape(result.name)): \(escape(result.message))</failure>\n    </testcase>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        return xml
    }
}
