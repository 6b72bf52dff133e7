// A small, Sendable copy of a parsed YAML document that keeps each node's position,
// so every diagnostic can point at the line it is about. Yams does the parsing; this
// layer classifies scalars itself (YAML 1.1's "NO" is a country code here, not false)
// and bounds the size of what it builds, so an alias bomb cannot exhaust memory.
import Yams

/// 1-based line and column of a node in its file.
public struct SourceMark: Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public init(line: Int, column: Int) { self.line = line; self.column = column }
    public var description: String { "line \(line), column \(column)" }
}

/// What a scalar's text means, decided once at parse time.
enum ScalarKind: Hashable, Sendable {
    case null
    case bool(Bool)
    /// Integer text that parsed; the value is kept exactly (negative or not).
    case integer(ParsedInteger)
    case float(Double)
    case string
}

/// An integer as written: sign and magnitude, so UInt64.max and Int64.min both fit.
struct ParsedInteger: Hashable, Sendable, CustomStringConvertible {
    var negative: Bool
    var magnitude: UInt64

    var asInt64: Int64? {
        if negative {
            if magnitude == UInt64(Int64.max) + 1 { return Int64.min }
            return magnitude <= UInt64(Int64.max) ? -Int64(magnitude) : nil
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    var asUInt64: UInt64? { negative && magnitude != 0 ? nil : magnitude }

    /// The value as an Int when it fits.
    var asInt: Int? { asInt64.flatMap { Int(exactly: $0) } }

    var description: String { (negative && magnitude != 0 ? "-" : "") + String(magnitude) }

    /// Decimal, 0x hex, 0o octal or 0b binary, with an optional sign and `_` separators.
    /// Returns nil for anything else (including values beyond 64 bits).
    static func parse(_ text: String) -> ParsedInteger? {
        var s = Substring(text)
        var negative = false
        if s.hasPrefix("-") { negative = true; s = s.dropFirst() } else if s.hasPrefix("+") { s = s.dropFirst() }
        var radix = 10
        if s.hasPrefix("0x") || s.hasPrefix("0X") {
            radix = 16; s = s.dropFirst(2)
        } else if s.hasPrefix("0o") || s.hasPrefix("0O") {
            radix = 8; s = s.dropFirst(2)
        } else if s.hasPrefix("0b") || s.hasPrefix("0B") {
            radix = 2; s = s.dropFirst(2)
        }
        let digits = s.filter { $0 != "_" }
        guard !digits.isEmpty, !s.hasPrefix("_"), let magnitude = UInt64(digits, radix: radix) else { return nil }
        return ParsedInteger(negative: negative, magnitude: magnitude)
    }
}

/// True when integer-looking text is too large for 64 bits (so the error can say so).
func looksLikeOverlongInteger(_ text: String) -> Bool {
    var s = Substring(text)
    if s.hasPrefix("-") || s.hasPrefix("+") { s = s.dropFirst() }
    if s.hasPrefix("0x") || s.hasPrefix("0X") {
        let d = s.dropFirst(2)
        return !d.isEmpty && d.allSatisfy { $0.isHexDigit || $0 == "_" }
    }
    return !s.isEmpty && s.allSatisfy { ("0"..."9").contains($0) || $0 == "_" } && s.first != "_"
}

struct YAMLScalar: Hashable, Sendable {
    var text: String
    var kind: ScalarKind
    var mark: SourceMark
}

/// One YAML node. Mapping entries keep document order.
indirect enum YAMLNode: Sendable {
    case scalar(YAMLScalar)
    case mapping([YAMLEntry], SourceMark)
    case sequence([YAMLNode], SourceMark)

    var mark: SourceMark {
        switch self {
        case .scalar(let s): s.mark
        case .mapping(_, let m), .sequence(_, let m): m
        }
    }

    var isNull: Bool {
        if case .scalar(let s) = self, s.kind == .null { return true }
        return false
    }

    /// How the node reads in an error message: `300`, `"abc"`, `a list`.
    var shortDescription: String {
        switch self {
        case .scalar(let s):
            switch s.kind {
            case .null: return "null"
            case .bool(let b): return String(b)
            case .integer, .float: return s.text
            case .string:
                let clipped = s.text.count > 40 ? String(s.text.prefix(40)) + "…" : s.text
                return "\"" + clipped + "\""
            }
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        }
    }
}

struct YAMLEntry: Sendable {
    var key: YAMLNode
    var value: YAMLNode

    /// The key's text when it is a scalar (mapping keys in profiles always are).
    var keyText: String? {
        if case .scalar(let s) = key { return s.text }
        return nil
    }
}

/// A YAML syntax problem, with where it is.
struct YAMLSyntaxError: Error {
    var message: String
    var mark: SourceMark?
}

enum YAMLDocument {
    /// Profiles are small; anything past these is rejected rather than built.
    static let maxBytes = 4 * 1024 * 1024
    static let maxNodes = 200_000

    /// Parses one YAML document. An empty document is a null scalar.
    static func parse(_ text: String) -> Result<YAMLNode, YAMLSyntaxError> {
        guard text.utf8.count <= maxBytes else {
            return .failure(YAMLSyntaxError(message: "file is larger than \(maxBytes / 1024 / 1024) MiB", mark: nil))
        }
        let root: Node?
        do {
            root = try Yams.compose(yaml: text)
        } catch let error as YamlError {
            return .failure(syntaxError(from: error))
        } catch {
            return .failure(YAMLSyntaxError(message: "cannot parse YAML: \(error)", mark: nil))
        }
        guard let root else {
            return .success(.scalar(YAMLScalar(text: "", kind: .null, mark: SourceMark(line: 1, column: 1))))
        }
        var budget = maxNodes
        guard let node = convert(root, budget: &budget) else {
            return .failure(
                YAMLSyntaxError(
                    message: "document expands to more than \(maxNodes) nodes (aliases nested too deeply?)", mark: nil))
        }
        return .success(node)
    }

    private static func syntaxError(from error: YamlError) -> YAMLSyntaxError {
        func mark(_ m: Mark) -> SourceMark { SourceMark(line: m.line, column: m.column) }
        func text(_ context: YamlError.Context?, _ problem: String) -> String {
            guard let context else { return problem }
            return "\(problem) (\(context.text) at \(mark(context.mark)))"
        }
        switch error {
        case .scanner(let context, let problem, let m, _):
            return YAMLSyntaxError(message: "YAML syntax error: " + text(context, problem), mark: mark(m))
        case .parser(let context, let problem, let m, _):
            return YAMLSyntaxError(message: "YAML syntax error: " + text(context, problem), mark: mark(m))
        case .composer(let context, let problem, let m, _):
            return YAMLSyntaxError(message: "YAML error: " + text(context, problem), mark: mark(m))
        case .reader(let problem, let offset, _, let yaml):
            var m: SourceMark?
            if let offset, offset >= 0 {
                let prefix = yaml.prefix(offset)
                let line = prefix.reduce(1) { $1 == "\n" ? $0 + 1 : $0 }
                let column =
                    prefix.count - (prefix.lastIndex(of: "\n").map { prefix.distance(from: prefix.startIndex, to: $0) + 1 } ?? 0) + 1
                m = SourceMark(line: line, column: column)
            }
            return YAMLSyntaxError(message: "cannot read YAML: \(problem)", mark: m)
        case .duplicatedKeysInMapping(let duplicates, let context):
            let keys = duplicates.sorted().map { "'\($0)'" }.joined(separator: ", ")
            return YAMLSyntaxError(
                message: "duplicate key \(keys) in one mapping (each key may appear once)", mark: mark(context.mark))
        default:
            return YAMLSyntaxError(message: "cannot parse YAML: \(error)", mark: nil)
        }
    }

    private static func convert(_ node: Node, budget: inout Int) -> YAMLNode? {
        budget -= 1
        guard budget >= 0 else { return nil }
        let mark = node.mark.map { SourceMark(line: $0.line, column: $0.column) } ?? SourceMark(line: 1, column: 1)
        switch node {
        case .scalar(let scalar):
            return .scalar(YAMLScalar(text: scalar.string, kind: classify(scalar), mark: mark))
        case .mapping(let mapping):
            var entries: [YAMLEntry] = []
            entries.reserveCapacity(mapping.count)
            for (k, v) in mapping {
                guard let key = convert(k, budget: &budget), let value = convert(v, budget: &budget) else { return nil }
                entries.append(YAMLEntry(key: key, value: value))
            }
            return .mapping(entries, mark)
        case .sequence(let sequence):
            var items: [YAMLNode] = []
            items.reserveCapacity(sequence.count)
            for item in sequence {
                guard let converted = convert(item, budget: &budget) else { return nil }
                items.append(converted)
            }
            return .sequence(items, mark)
        case .alias:
            // Yams resolves aliases while composing; an unresolved one reads as null.
            return .scalar(YAMLScalar(text: "", kind: .null, mark: mark))
        }
    }

    /// Plain scalars are typed by their text (YAML 1.2 core schema, plus 0o/0b integers);
    /// quoted and block scalars are strings; explicit tags (`!!str 12`) are honoured.
    private static func classify(_ scalar: Node.Scalar) -> ScalarKind {
        let text = scalar.string
        let tag = scalar.tag.rawValue
        switch tag {
        case "", "!":
            guard scalar.style == .plain || scalar.style == .any else { return .string }
            return classifyPlain(text)
        case Tag.Name.str.rawValue:
            return .string
        case Tag.Name.null.rawValue:
            return .null
        case Tag.Name.bool.rawValue, Tag.Name.int.rawValue, Tag.Name.float.rawValue:
            let k = classifyPlain(text)
            if case .string = k { return .string }
            return k
        default:
            return .string
        }
    }

    static func classifyPlain(_ text: String) -> ScalarKind {
        switch text {
        case "", "~", "null", "Null", "NULL": return .null
        case "true", "True", "TRUE": return .bool(true)
        case "false", "False", "FALSE": return .bool(false)
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .float(.infinity)
        case "-.inf", "-.Inf", "-.INF": return .float(-.infinity)
        case ".nan", ".NaN", ".NAN": return .float(.nan)
        default: break
        }
        if let i = ParsedInteger.parse(text) { return .integer(i) }
        if isFloatText(text), let d = Double(text.filter { $0 != "_" }) { return .float(d) }
        return .string
    }

    private static func isFloatText(_ text: String) -> Bool {
        // [-+]? digits [. digits] [e[-+]digits], or .digits; no hex floats, no "nan"/"inf" words.
        var s = Substring(text)
        if s.hasPrefix("-") || s.hasPrefix("+") { s = s.dropFirst() }
        guard let first = s.first, first.isASCII, first.isNumber || first == "." else { return false }
        return s.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "." || $0 == "e" || $0 == "E" || $0 == "-" || $0 == "+" || $0 == "_") }
    }
}
