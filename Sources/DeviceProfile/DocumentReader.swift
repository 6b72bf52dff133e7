// Typed reads from a YAML tree that report, rather than stop at, every mismatch.
import Foundation

/// The closest candidate to a misspelt name, when one is close enough to be a likely typo
/// (for the tools' own "did you mean" too: a device name, an attribute).
public func closestMatch(to word: String, in candidates: [String]) -> String? {
    let lowered = word.lowercased()
    var best: (candidate: String, distance: Int)?
    for candidate in candidates {
        let d = editDistance(lowered, candidate.lowercased())
        if d < (best?.distance ?? Int.max) { best = (candidate, d) }
    }
    guard let (candidate, distance) = best else { return nil }
    // Allow about one edit per three letters, at least one, at most three.
    let allowed = max(1, min(3, word.count / 3))
    return distance <= allowed ? candidate : nil
}

/// Edit distance where swapping two neighbours counts as one edit ("nmae" → "name"),
/// over characters; inputs are short keys and names (clipped to 64).
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.prefix(64)), b = Array(b.prefix(64))
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var beforePrevious = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            let cost = a[i - 1] == b[j - 1] ? 0 : 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
            if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                current[j] = min(current[j], beforePrevious[j - 2] + 1)
            }
        }
        (beforePrevious, previous, current) = (previous, current, beforePrevious)
    }
    return previous[b.count]
}

/// "unknown key 'behavior'; did you mean 'behaviour'?" or "...; expected one of a, b".
func unknownNameMessage(_ what: String, _ name: String, candidates: [String], listLimit: Int = 12) -> String {
    if let suggestion = closestMatch(to: name, in: candidates) {
        return "unknown \(what) '\(name)'; did you mean '\(suggestion)'?"
    }
    if candidates.isEmpty { return "unknown \(what) '\(name)'" }
    if candidates.count <= listLimit {
        return "unknown \(what) '\(name)'; expected one of: " + candidates.joined(separator: ", ")
    }
    return "unknown \(what) '\(name)'"
}

/// The keys of one mapping, after unknown and malformed keys were reported.
struct Fields {
    var entries: [(key: String, entry: YAMLEntry)]
    var mark: SourceMark

    subscript(_ key: String) -> YAMLNode? {
        entries.first { $0.key == key }?.entry.value
    }

    func has(_ key: String) -> Bool { entries.contains { $0.key == key } }
}

/// Reading one file: every check reports into the sink with the file's name.
struct DocumentReader {
    let file: String
    let sink: DiagnosticSink

    func origin(_ path: ProfilePath, _ node: YAMLNode?) -> Origin {
        Origin(file: file, path: path, mark: node?.mark)
    }

    func error(_ path: ProfilePath, _ node: YAMLNode?, _ message: String) {
        sink.error(origin(path, node), message)
    }

    /// Reads a mapping whose keys are all known; a null node reads as empty.
    /// Unknown keys are reported with the closest known key.
    func fields(_ node: YAMLNode, at path: ProfilePath, known: [String], what: String) -> Fields? {
        guard let entries = mappingEntries(node, at: path, what: what) else { return nil }
        var result: [(key: String, entry: YAMLEntry)] = []
        for entry in entries {
            guard let key = scalarKey(entry, at: path) else { continue }
            guard known.contains(key) else {
                error(path.key(key), entry.key, unknownNameMessage("key", key, candidates: known))
                continue
            }
            result.append((key, entry))
        }
        return Fields(entries: result, mark: node.mark)
    }

    /// The entries of a mapping (null reads as empty), or a type error.
    func mappingEntries(_ node: YAMLNode, at path: ProfilePath, what: String) -> [YAMLEntry]? {
        switch node {
        case .mapping(let entries, _): return entries
        case .scalar(let s) where s.kind == .null: return []
        default:
            error(path, node, "expected \(what), got \(node.shortDescription)")
            return nil
        }
    }

    /// A mapping key's text; non-scalar keys are reported.
    func scalarKey(_ entry: YAMLEntry, at path: ProfilePath) -> String? {
        guard let key = entry.keyText else {
            error(path, entry.key, "expected a plain key name, got \(entry.key.shortDescription) as a key")
            return nil
        }
        return key
    }

    func require(_ fields: Fields, _ key: String, at path: ProfilePath, node: YAMLNode) -> YAMLNode? {
        if let value = fields[key] { return value }
        error(path, node, "missing required key '\(key)'")
        return nil
    }

    /// Any non-null scalar as text.
    func string(_ node: YAMLNode, at path: ProfilePath, nonEmpty: Bool = false) -> String? {
        guard case .scalar(let s) = node, s.kind != .null else {
            error(path, node, "expected a string, got \(node.shortDescription)")
            return nil
        }
        if nonEmpty, s.text.trimmingCharacters(in: .whitespaces).isEmpty {
            error(path, node, "expected a non-empty string")
            return nil
        }
        return s.text
    }

    func integer(_ node: YAMLNode, at path: ProfilePath, in range: ClosedRange<Int64>) -> Int64? {
        let expected = "an integer in \(range.lowerBound)...\(range.upperBound)"
        guard case .scalar(let s) = node, case .integer(let i) = s.kind else {
            error(path, node, "expected \(expected), got \(node.shortDescription)")
            return nil
        }
        guard let v = i.asInt64, range.contains(v) else {
            error(path, node, "expected \(expected), got \(i)")
            return nil
        }
        return v
    }

    func number(_ node: YAMLNode, at path: ProfilePath, in range: ClosedRange<Double>, unit: String = "") -> Double? {
        let expected = "a number in \(Self.format(range.lowerBound))...\(Self.format(range.upperBound))" + unit
        guard case .scalar(let s) = node else {
            error(path, node, "expected \(expected), got \(node.shortDescription)")
            return nil
        }
        let value: Double
        switch s.kind {
        case .integer(let i): value = i.negative ? -Double(i.magnitude) : Double(i.magnitude)
        case .float(let d): value = d
        default:
            error(path, node, "expected \(expected), got \(node.shortDescription)")
            return nil
        }
        guard value.isFinite, range.contains(value) else {
            error(path, node, "expected \(expected), got \(s.text)")
            return nil
        }
        return value
    }

    /// A list; a single scalar is read as a one-element list so `deviceTypes: OnOffLight` works.
    func list(_ node: YAMLNode, at path: ProfilePath, what: String) -> [YAMLNode]? {
        switch node {
        case .sequence(let items, _): return items
        case .scalar(let s) where s.kind != .null: return [node]
        default:
            error(path, node, "expected \(what), got \(node.shortDescription)")
            return nil
        }
    }

    static func format(_ d: Double) -> String {
        d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    }
}
