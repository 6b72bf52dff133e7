// Conformance (Core spec 7.3 "Conformance"): whether an element must, may or must not be
// present, possibly depending on features. The model file keeps the spec's notation:
//   "M", "O", "P", "D", "X", "desc", "LT", "[LT]", "!LT", "LF & PA_LF", "LF | TL",
//   "[LT], O" (otherwise list), "O.a+" (choice group), "!(LT | OO)".
import Foundation

/// A boolean expression over feature codes (and other condition names).
public indirect enum ConformanceExpression: Sendable, Hashable, CustomStringConvertible {
    case name(String)
    case not(ConformanceExpression)
    case and(ConformanceExpression, ConformanceExpression)
    case or(ConformanceExpression, ConformanceExpression)
    case xor(ConformanceExpression, ConformanceExpression)

    /// True when the expression holds for the given set of present features/conditions.
    /// A name not in the set (a feature not supported, an unknown condition) is false.
    public func evaluate(_ present: Set<String>) -> Bool {
        switch self {
        case .name(let n): present.contains(n)
        case .not(let e): !e.evaluate(present)
        case .and(let a, let b): a.evaluate(present) && b.evaluate(present)
        case .or(let a, let b): a.evaluate(present) || b.evaluate(present)
        case .xor(let a, let b): a.evaluate(present) != b.evaluate(present)
        }
    }

    public var names: Set<String> {
        switch self {
        case .name(let n): [n]
        case .not(let e): e.names
        case .and(let a, let b), .or(let a, let b), .xor(let a, let b): a.names.union(b.names)
        }
    }

    public var description: String { render(top: true) }

    private func render(top: Bool) -> String {
        let s: String
        switch self {
        case .name(let n): return n
        case .not(let e):
            if case .name = e { return "!" + e.render(top: false) }
            return "!(" + e.render(top: true) + ")"
        case .and(let a, let b): s = a.render(top: false) + " & " + b.render(top: false)
        case .or(let a, let b): s = a.render(top: false) + " | " + b.render(top: false)
        case .xor(let a, let b): s = a.render(top: false) + " ^ " + b.render(top: false)
        }
        return top ? s : "(" + s + ")"
    }
}

/// A choice group marker ("O.a+" = at least one of group a; "O.a" = exactly one).
public struct ConformanceChoice: Sendable, Hashable {
    public var group: String
    /// "+": more than one member of the group may be present.
    public var more: Bool
    public init(group: String, more: Bool) { self.group = group; self.more = more }
}

/// What a conformance resolves to for a given feature set.
public enum ConformanceResult: Sendable, Hashable {
    case mandatory, optional, disallowed
}

public indirect enum Conformance: Sendable, Hashable, CustomStringConvertible {
    /// M
    case mandatory
    /// O
    case optional
    /// P: provisional (allowed, not required).
    case provisional
    /// D: deprecated (allowed for compatibility, not required).
    case deprecated
    /// X: must not be present.
    case disallowed
    /// desc: given in prose; treated as optional.
    case described
    /// `LT`, `LF & PA_LF`: mandatory when the expression holds.
    case mandatoryIf(ConformanceExpression)
    /// `[LT]`: optional when the expression holds.
    case optionalIf(ConformanceExpression)
    /// A member of a choice group: `O.a+`, `[LT].b`.
    case choice(Conformance, ConformanceChoice)
    /// `LT, O`: the first entry whose condition holds applies; none holding means disallowed.
    case otherwise([Conformance])

    /// Resolves this conformance for a set of supported features (and other condition names).
    public func evaluate(features: Set<String>) -> ConformanceResult? {
        switch self {
        case .mandatory: .mandatory
        case .optional, .provisional, .deprecated, .described: .optional
        case .disallowed: .disallowed
        case .mandatoryIf(let e): e.evaluate(features) ? .mandatory : nil
        case .optionalIf(let e): e.evaluate(features) ? .optional : nil
        case .choice(let inner, _):
            // A choice never forces a particular member by itself.
            inner.evaluate(features: features).map { $0 == .mandatory ? .optional : $0 }
        case .otherwise(let list):
            list.lazy.compactMap { $0.evaluate(features: features) }.first
        }
    }

    /// The resolved result; a condition that does not hold means "not allowed".
    public func result(features: Set<String>) -> ConformanceResult {
        evaluate(features: features) ?? .disallowed
    }

    public func isMandatory(features: Set<String>) -> Bool { result(features: features) == .mandatory }
    public func isAllowed(features: Set<String>) -> Bool { result(features: features) != .disallowed }

    /// Feature codes / condition names this conformance mentions.
    public var names: Set<String> {
        switch self {
        case .mandatoryIf(let e), .optionalIf(let e): e.names
        case .choice(let c, _): c.names
        case .otherwise(let l): l.reduce(into: Set<String>()) { $0.formUnion($1.names) }
        default: []
        }
    }

    public var description: String {
        switch self {
        case .mandatory: "M"
        case .optional: "O"
        case .provisional: "P"
        case .deprecated: "D"
        case .disallowed: "X"
        case .described: "desc"
        case .mandatoryIf(let e): e.description
        case .optionalIf(let e): "[" + e.description + "]"
        case .choice(let c, let ch): c.description + "." + ch.group + (ch.more ? "+" : "")
        case .otherwise(let l): l.map(\.description).joined(separator: ", ")
        }
    }

    /// Parses the spec's conformance notation.
    public init(parsing text: String) throws(ConformanceParseError) {
        var parser = ConformanceParser(text: text)
        self = try parser.parseList()
    }
}

public struct ConformanceParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var position: Int
    public var reason: String
    public var description: String { "conformance '\(text)' at \(position): \(reason)" }
}

/// Recursive-descent parser. Precedence (loosest first): ",", "|", "^", "&", "!".
private struct ConformanceParser {
    let text: String
    let chars: [Character]
    var pos = 0

    init(text: String) {
        self.text = text
        self.chars = Array(text)
    }

    func fail(_ reason: String) -> ConformanceParseError {
        ConformanceParseError(text: text, position: pos, reason: reason)
    }

    mutating func skipSpaces() { while pos < chars.count, chars[pos] == " " { pos += 1 } }

    mutating func peek() -> Character? {
        skipSpaces()
        return pos < chars.count ? chars[pos] : nil
    }

    mutating func parseList() throws(ConformanceParseError) -> Conformance {
        var items: [Conformance] = [try parseItem()]
        while peek() == "," {
            pos += 1
            items.append(try parseItem())
        }
        guard peek() == nil else { throw fail("unexpected '\(chars[pos])'") }
        return items.count == 1 ? items[0] : .otherwise(items)
    }

    mutating func parseItem() throws(ConformanceParseError) -> Conformance {
        guard let c = peek() else { throw fail("missing conformance") }
        var item: Conformance
        if c == "[" {
            pos += 1
            let e = try parseOr()
            guard peek() == "]" else { throw fail("expected ']'") }
            pos += 1
            item = .optionalIf(e)
        } else {
            let start = pos
            let e = try parseOr()
            if case .name(let n) = e {
                switch n {
                case "M": item = .mandatory
                case "O": item = .optional
                case "P": item = .provisional
                case "D": item = .deprecated
                case "X": item = .disallowed
                case "desc": item = .described
                default: item = .mandatoryIf(e)
                }
            } else {
                for reserved in ["M", "O", "P", "D", "X", "desc"] where e.names.contains(reserved) {
                    pos = start
                    throw fail("'\(reserved)' cannot appear inside an expression")
                }
                item = .mandatoryIf(e)
            }
        }
        // Choice suffix: ".a", ".a+", ".b2"
        if pos < chars.count, chars[pos] == "." {
            pos += 1
            var group = ""
            while pos < chars.count, chars[pos].isLetter || chars[pos].isNumber { group.append(chars[pos]); pos += 1 }
            guard !group.isEmpty else { throw fail("expected a choice group name") }
            var more = false
            if pos < chars.count, chars[pos] == "+" { more = true; pos += 1 }
            item = .choice(item, ConformanceChoice(group: group, more: more))
        }
        return item
    }

    mutating func parseOr() throws(ConformanceParseError) -> ConformanceExpression {
        var lhs = try parseXor()
        while peek() == "|" { pos += 1; lhs = .or(lhs, try parseXor()) }
        return lhs
    }

    mutating func parseXor() throws(ConformanceParseError) -> ConformanceExpression {
        var lhs = try parseAnd()
        while peek() == "^" { pos += 1; lhs = .xor(lhs, try parseAnd()) }
        return lhs
    }

    mutating func parseAnd() throws(ConformanceParseError) -> ConformanceExpression {
        var lhs = try parseUnary()
        while peek() == "&" { pos += 1; lhs = .and(lhs, try parseUnary()) }
        return lhs
    }

    mutating func parseUnary() throws(ConformanceParseError) -> ConformanceExpression {
        guard let c = peek() else { throw fail("expected a name") }
        if c == "!" {
            pos += 1
            return .not(try parseUnary())
        }
        if c == "(" {
            pos += 1
            let e = try parseOr()
            guard peek() == ")" else { throw fail("expected ')'") }
            pos += 1
            return e
        }
        var name = ""
        while pos < chars.count, chars[pos].isLetter || chars[pos].isNumber || chars[pos] == "_" {
            name.append(chars[pos]); pos += 1
        }
        guard !name.isEmpty, name.first?.isLetter == true else { throw fail("expected a name") }
        return .name(name)
    }
}
