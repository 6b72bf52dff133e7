// Constraints (Core spec 7.19.2 "Constraints"). The model file writes them as the spec
// does: "0 to 254", "max 32", "MinLevel to MaxLevel", "max 4[max 32]", "desc".
import Foundation

/// One end of a range that may name another attribute of the same cluster.
public enum ConstraintBound: Sendable, Hashable, CustomStringConvertible {
    case value(Int64)
    case attribute(String)

    public var description: String {
        switch self {
        case .value(let v): String(v)
        case .attribute(let n): n
        }
    }
}

/// The same type under a name that modules declaring their own `Constraint` (HomeAPI's
/// Google Home API shape) can still refer to.
public typealias MatterConstraint = Constraint

public indirect enum Constraint: Sendable, Hashable, CustomStringConvertible {
    /// Numeric bounds, inclusive. Unsigned values above Int64.max compare correctly.
    case range(min: Int64?, max: Int64?)
    /// Numeric bounds where at least one end is another attribute ("MinLevel to MaxLevel").
    case rangeRef(min: ConstraintBound?, max: ConstraintBound?)
    /// An explicit set of allowed numeric values ("0, 1, 3").
    case allowed(Set<Int64>)
    /// Strings and octet strings: at most N bytes. Lists: at most N entries.
    /// (On strings and lists, `.rangeRef` bounds the length, e.g. "max SupportedFabrics".)
    case maxLength(Int)
    /// Strings and octet strings: at least N bytes. Lists: at least N entries.
    case minLength(Int)
    /// Length (bytes or entries) within min...max.
    case lengthRange(min: Int, max: Int)
    /// Length must be one of these ("6, 8" for a hardware address).
    case allowedLengths(Set<Int>)
    /// A list: constraint on the entry count and on each entry ("max 4[max 32]").
    case list(count: Constraint?, entry: Constraint?)
    /// Given in prose only ("desc"); not machine-checked.
    case described

    public var description: String {
        switch self {
        case .range(let lo, let hi):
            switch (lo, hi) {
            case let (lo?, hi?): "\(lo) to \(hi)"
            case let (lo?, nil): "min \(lo)"
            case let (nil, hi?): "max \(hi)"
            case (nil, nil): "all"
            }
        case .rangeRef(let lo, let hi):
            switch (lo, hi) {
            case let (lo?, hi?): "\(lo) to \(hi)"
            case let (lo?, nil): "min \(lo)"
            case let (nil, hi?): "max \(hi)"
            case (nil, nil): "all"
            }
        case .allowed(let set): set.sorted().map(String.init).joined(separator: ", ")
        case .maxLength(let n): "max \(n)"
        case .minLength(let n): "min \(n)"
        case .lengthRange(let lo, let hi): lo == hi ? "\(lo)" : "\(lo) to \(hi)"
        case .allowedLengths(let set): set.sorted().map(String.init).joined(separator: ", ")
        case .list(let count, let entry): "\(count?.description ?? "")[\(entry?.description ?? "all")]"
        case .described: "desc"
        }
    }

    /// Names of attributes this constraint refers to.
    public var referencedAttributes: [String] {
        switch self {
        case .rangeRef(let lo, let hi):
            [lo, hi].compactMap { if case .attribute(let n)? = $0 { n } else { nil } }
        case .list(let c, let e): (c?.referencedAttributes ?? []) + (e?.referencedAttributes ?? [])
        default: []
        }
    }

    /// Parses a spec constraint string in the context of the constrained type.
    /// Returns nil for "all"/empty (no constraint); throws a message for malformed text.
    static func parse(_ text: String, for type: DataType) throws(ConstraintParseError) -> Constraint? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.isEmpty || t == "all" { return nil }
        if t == "desc" { return .described }
        if case .list(let element) = type.base {
            // "max 4[max 32]", "[max 32]", "max 4", "1 to 4"
            if let open = t.firstIndex(of: "["), t.hasSuffix("]") {
                let countText = String(t[..<open])
                let entryText = String(t[t.index(after: open)..<t.index(before: t.endIndex)])
                let count = try parseLength(countText)
                let entry = try parse(entryText, for: element)
                return .list(count: count, entry: entry)
            }
            return try parseLength(t)
        }
        switch type.base {
        case .string, .octets:
            return try parseLength(t)
        case .structure, .bool:
            // Structs and booleans carry no constraint beyond their type.
            throw ConstraintParseError(text: t, reason: "no constraint applies to \(type)")
        default:
            return try parseNumeric(t)
        }
    }

    private static func parseLength(_ text: String) throws(ConstraintParseError) -> Constraint? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.isEmpty || t == "all" { return nil }
        if t == "desc" { return .described }
        if t.hasPrefix("max ") {
            let rest = t.dropFirst(4).trimmingCharacters(in: .whitespaces)
            if isIdentifier(rest) { return .rangeRef(min: nil, max: .attribute(rest)) }
            guard let n = Int(rest), n >= 0 else {
                throw ConstraintParseError(text: t, reason: "expected a length after max")
            }
            return .maxLength(n)
        }
        if t.hasPrefix("min ") {
            guard let n = Int(t.dropFirst(4).trimmingCharacters(in: .whitespaces)), n >= 0 else {
                throw ConstraintParseError(text: t, reason: "expected a length after min")
            }
            return .minLength(n)
        }
        if let r = t.range(of: " to ") {
            guard let lo = Int(t[..<r.lowerBound].trimmingCharacters(in: .whitespaces)),
                let hi = Int(t[r.upperBound...].trimmingCharacters(in: .whitespaces)), lo >= 0, lo <= hi
            else {
                throw ConstraintParseError(text: t, reason: "expected a length range")
            }
            return .lengthRange(min: lo, max: hi)
        }
        let parts = t.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let values = parts.compactMap { Int($0) }
        guard values.count == parts.count, !values.isEmpty, values.allSatisfy({ $0 >= 0 }) else {
            throw ConstraintParseError(text: t, reason: "not a length constraint")
        }
        if values.count == 1 { return .lengthRange(min: values[0], max: values[0]) }
        return .allowedLengths(Set(values))
    }

    private static func parseNumeric(_ text: String) throws(ConstraintParseError) -> Constraint? {
        let t = text
        func bound(_ s: Substring) throws(ConstraintParseError) -> ConstraintBound {
            let s = s.trimmingCharacters(in: .whitespaces)
            if let v = parseInteger(s) { return .value(v) }
            guard isIdentifier(s) else {
                throw ConstraintParseError(text: t, reason: "bad bound '\(s)'")
            }
            return .attribute(s)
        }
        func make(_ lo: ConstraintBound?, _ hi: ConstraintBound?) -> Constraint {
            switch (lo, hi) {
            case (.value(let a)?, .value(let b)?): .range(min: a, max: b)
            case (.value(let a)?, nil): .range(min: a, max: nil)
            case (nil, .value(let b)?): .range(min: nil, max: b)
            default: .rangeRef(min: lo, max: hi)
            }
        }
        if t.hasPrefix("max ") { return make(nil, try bound(t.dropFirst(4))) }
        if t.hasPrefix("min ") { return make(try bound(t.dropFirst(4)), nil) }
        if let r = t.range(of: " to ") {
            let lo = try bound(t[..<r.lowerBound])
            let hi = try bound(t[r.upperBound...])
            if case .value(let a) = lo, case .value(let b) = hi, a > b {
                throw ConstraintParseError(text: t, reason: "empty range")
            }
            return make(lo, hi)
        }
        let parts = t.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let values = parts.compactMap(parseInteger)
        guard values.count == parts.count, !values.isEmpty else {
            throw ConstraintParseError(text: t, reason: "not a numeric constraint")
        }
        if values.count == 1 { return .range(min: values[0], max: values[0]) }
        return .allowed(Set(values))
    }
}

/// An attribute name usable as a bound ("MaxLevel").
func isIdentifier(_ s: String) -> Bool {
    guard let first = s.first, first.isLetter else { return false }
    return s.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
}

/// A malformed constraint string in the model file.
public struct ConstraintParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public var text: String
    public var reason: String
    public var description: String { "constraint '\(text)': \(reason)" }
}

/// Decimal or 0x-hex integer, optionally negative. Values above Int64.max are rejected.
func parseInteger(_ text: String) -> Int64? {
    var s = Substring(text.trimmingCharacters(in: .whitespaces))
    var negative = false
    if s.hasPrefix("-") { negative = true; s = s.dropFirst() }
    let magnitude: UInt64?
    if s.hasPrefix("0x") || s.hasPrefix("0X") {
        magnitude = UInt64(s.dropFirst(2), radix: 16)
    } else {
        magnitude = UInt64(s)
    }
    guard let m = magnitude else { return nil }
    if negative {
        if m == UInt64(Int64.max) + 1 { return Int64.min }
        guard m <= UInt64(Int64.max) else { return nil }
        return -Int64(m)
    }
    guard m <= UInt64(Int64.max) else { return nil }
    return Int64(m)
}
