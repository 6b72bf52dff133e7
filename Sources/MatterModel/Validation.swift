// One value check shared by device writes, profile validation and the controller:
// type (integer widths, strings, lists and struct members recursively), nullability,
// ranges (including bounds taken from other attributes), enum sets, bitmap bits and
// string/octet/list lengths (Core spec 7.18, 7.19).
import MatterTLV

public struct ConstraintViolation: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The value has the wrong shape (a string where an integer belongs, a missing field).
        case typeMismatch
        /// The value has the right type but breaks a range, length, enum or bitmap rule.
        case constraint
        /// Null given where the element is not nullable.
        case nullNotAllowed
    }

    /// Where inside the value: "" at the top, "[2].label" inside a list of structs.
    public var path: String
    /// What was expected, in words: "an integer in 0...254", "at most 32 UTF-8 bytes".
    public var expected: String
    public var kind: Kind
    /// What was found, in words ("300", "null", "a string"), when known.
    public var actual: String?

    public init(path: String, expected: String, kind: Kind, actual: String? = nil) {
        self.path = path
        self.expected = expected
        self.kind = kind
        self.actual = actual
    }

    public var description: String {
        let prefix = path.isEmpty ? "" : "\(path): "
        switch kind {
        case .nullNotAllowed: return "\(prefix)null is not allowed; expected \(expected)"
        case .typeMismatch, .constraint:
            return "\(prefix)expected \(expected)" + (actual.map { ", got \($0)" } ?? "")
        }
    }
}

extension ClusterDefinition {
    /// Checks a value for an attribute. `current` supplies other attributes' values for
    /// constraints such as "MinLevel to MaxLevel"; when it has none, the referenced
    /// attribute's default is used, and failing that the bound is not applied.
    public func validate(
        _ value: TLVValue, for attribute: AttributeDefinition,
        current: (AttributeID) -> TLVValue? = { _ in nil }
    ) -> ConstraintViolation? {
        withoutActuallyEscaping(current) { current in
            var v = Validator(cluster: self, current: current)
            return v.check(value, type: attribute.type, nullable: attribute.nullable, constraint: attribute.constraint, path: "")
        }
    }

    /// Checks a command/event/struct field value.
    public func validate(
        _ value: TLVValue, for field: FieldDefinition,
        current: (AttributeID) -> TLVValue? = { _ in nil }
    ) -> ConstraintViolation? {
        withoutActuallyEscaping(current) { current in
            var v = Validator(cluster: self, current: current)
            return v.check(value, type: field.type, nullable: field.nullable, constraint: field.constraint, path: "")
        }
    }

    /// Checks a command's request fields given as a TLV structure (context tags = field IDs).
    public func validate(
        fields value: TLVValue, of command: CommandDefinition,
        current: (AttributeID) -> TLVValue? = { _ in nil }
    ) -> ConstraintViolation? {
        withoutActuallyEscaping(current) { current in
            var v = Validator(cluster: self, current: current)
            return v.checkStruct(value, fields: command.fields, fabricScoped: false, path: "")
        }
    }

    /// Checks a value against an explicit type description.
    public func validate(
        _ value: TLVValue, type: DataType, nullable: Bool = false, constraint: Constraint? = nil,
        current: (AttributeID) -> TLVValue? = { _ in nil }
    ) -> ConstraintViolation? {
        withoutActuallyEscaping(current) { current in
            var v = Validator(cluster: self, current: current)
            return v.check(value, type: type, nullable: nullable, constraint: constraint, path: "")
        }
    }
}

/// All-ones for an integer of `bits` bits (clamped to 1...64, so a hand-built DataType
/// with an odd width cannot trap).
func maxUnsigned(bits: Int) -> UInt64 {
    let b = min(max(bits, 1), 64)
    return b == 64 ? .max : (UInt64(1) << UInt64(b)) - 1
}

/// A 65-bit signed integer (sign + UInt64 magnitude) so uint64 and int64 values compare exactly.
struct WideInteger: Comparable, Hashable, CustomStringConvertible {
    var negative: Bool
    var magnitude: UInt64

    init(_ v: Int64) {
        negative = v < 0
        magnitude = v.magnitude
    }

    init(_ v: UInt64) {
        negative = false
        magnitude = v
    }

    init(negative: Bool, magnitude: UInt64) {
        self.negative = negative && magnitude != 0
        self.magnitude = magnitude
    }

    static func < (a: Self, b: Self) -> Bool {
        switch (a.negative, b.negative) {
        case (true, false): true
        case (false, true): false
        case (false, false): a.magnitude < b.magnitude
        case (true, true): a.magnitude > b.magnitude
        }
    }

    var description: String { (negative ? "-" : "") + String(magnitude) }

    var asUInt64: UInt64? { negative ? nil : magnitude }
}

private struct Validator {
    let cluster: ClusterDefinition
    let current: (AttributeID) -> TLVValue?

    mutating func check(_ value: TLVValue, type: DataType, nullable: Bool, constraint: Constraint?, path: String) -> ConstraintViolation? {
        if case .null = value {
            if nullable { return nil }
            return ConstraintViolation(
                path: path, expected: expectation(type: type, nullable: false, constraint: constraint),
                kind: .nullNotAllowed, actual: "null")
        }
        var constraints: [Constraint] = []
        if case .semantic(let s) = type, let implicit = s.implicitConstraint { constraints.append(implicit) }
        if let constraint { constraints.append(constraint) }

        switch type.base {
        case .bool:
            guard case .bool = value else { return mismatch(path, "a boolean", value) }
            return nil
        case .uint, .int:
            guard let n = integer(value) else { return mismatch(path, "an integer", value) }
            let (lo, hi) = bounds(type: type, nullable: nullable, constraints: constraints)
            let allowed = allowedSet(constraints)
            if n < lo || n > hi || (allowed.map { !$0.contains(n) } ?? false) {
                return ConstraintViolation(
                    path: path, expected: integerExpectation(lo, hi, allowed), kind: .constraint, actual: n.description)
            }
            return nil
        case .enumeration(let name, let bits):
            guard let n = integer(value) else { return mismatch(path, "an integer", value) }
            guard let u = n.asUInt64, u <= maxUnsigned(bits: bits) - (nullable ? 1 : 0) else {
                return ConstraintViolation(
                    path: path, expected: enumExpectation(name, bits: bits), kind: .constraint, actual: n.description)
            }
            if let def = cluster.enumDefinition(named: name), !def.values.contains(where: { UInt64($0.value) == u }) {
                return ConstraintViolation(
                    path: path, expected: enumExpectation(name, bits: bits), kind: .constraint, actual: n.description)
            }
            return nil
        case .bitmap(let name, let bits):
            guard let n = integer(value) else { return mismatch(path, "an integer", value) }
            guard let u = n.asUInt64, u & ~maxUnsigned(bits: bits) == 0 else {
                return ConstraintViolation(
                    path: path, expected: bitmapExpectation(name, bits: bits), kind: .constraint, actual: n.description)
            }
            if let def = cluster.bitmapDefinition(named: name), u & ~def.definedMask != 0 {
                return ConstraintViolation(
                    path: path, expected: bitmapExpectation(name, bits: bits), kind: .constraint, actual: hexString(u))
            }
            return nil
        case .single, .double:
            let d: Double
            switch value {
            case .float(let f): d = Double(f)
            case .double(let x): d = x
            default: return mismatch(path, "a number", value)
            }
            if case .single = type.base, d.isFinite, abs(d) > Double(Float.greatestFiniteMagnitude) {
                return ConstraintViolation(path: path, expected: "a single-precision number", kind: .constraint, actual: String(d))
            }
            let (lo, hi) = floatBounds(constraints)
            if let lo, d < lo || d.isNaN {
                return ConstraintViolation(path: path, expected: floatExpectation(lo, hi), kind: .constraint, actual: String(d))
            }
            if let hi, d > hi || d.isNaN {
                return ConstraintViolation(path: path, expected: floatExpectation(lo, hi), kind: .constraint, actual: String(d))
            }
            return nil
        case .string:
            guard case .utf8(let s) = value else { return mismatch(path, "a string", value) }
            return checkLength(s.utf8.count, constraints, unit: "UTF-8 bytes", path: path)
        case .octets:
            guard case .bytes(let b) = value else { return mismatch(path, "an octet string", value) }
            return checkLength(b.count, constraints, unit: "bytes", path: path)
        case .list(let element):
            let items: [TLVElement]
            switch value {
            case .array(let a), .list(let a): items = a
            default: return mismatch(path, "a list", value)
            }
            var countConstraints: [Constraint] = []
            var entryConstraint: Constraint? = nil
            for c in constraints {
                if case .list(let count, let entry) = c {
                    if let count { countConstraints.append(count) }
                    entryConstraint = entry
                } else {
                    countConstraints.append(c)
                }
            }
            if let v = checkLength(items.count, countConstraints, unit: "entries", path: path) { return v }
            for (i, item) in items.enumerated() {
                if let v = check(item.value, type: element, nullable: false, constraint: entryConstraint, path: path + "[\(i)]") {
                    return v
                }
            }
            return nil
        case .structure(let name):
            guard let def = cluster.structDefinition(named: name) else {
                return ConstraintViolation(path: path, expected: "a known struct \(name)", kind: .typeMismatch)
            }
            return checkStruct(value, fields: def.fields, fabricScoped: def.fabricScoped, path: path)
        case .semantic:
            return nil  // unreachable: base never yields .semantic
        }
    }

    mutating func checkStruct(_ value: TLVValue, fields: [FieldDefinition], fabricScoped: Bool, path: String) -> ConstraintViolation? {
        guard case .structure(let members) = value else { return mismatch(path, "a struct", value) }
        for field in fields {
            let fieldPath = path.isEmpty ? field.lowerCamelName : path + "." + field.lowerCamelName
            guard let member = members.first(where: { $0.tag == .context(field.id) }) else {
                // The server fills in a fabric-scoped struct's FabricIndex (Core spec 7.13.7).
                if field.optional || (fabricScoped && field.id == FieldDefinition.fabricIndexTag) { continue }
                return ConstraintViolation(
                    path: fieldPath, expected: "a value (the field is mandatory)", kind: .typeMismatch, actual: "nothing")
            }
            if let v = check(member.value, type: field.type, nullable: field.nullable, constraint: field.constraint, path: fieldPath) {
                return v
            }
        }
        return nil
    }

    // MARK: Integers

    func integer(_ value: TLVValue) -> WideInteger? {
        switch value {
        case .signed(let i): WideInteger(i)
        case .unsigned(let u): WideInteger(u)
        default: nil
        }
    }

    func typeBounds(_ type: DataType, nullable: Bool) -> (WideInteger, WideInteger) {
        switch type.base {
        case .uint(let bits):
            let max = maxUnsigned(bits: bits)
            // The all-ones value encodes null for nullable unsigned types (Core spec 7.18.1).
            return (WideInteger(UInt64(0)), WideInteger(nullable ? max - 1 : max))
        case .int(let bits):
            let magnitude: UInt64 = UInt64(1) << UInt64(min(max(bits, 1), 64) - 1)
            // The most negative value encodes null for nullable signed types.
            return (
                WideInteger(negative: true, magnitude: nullable ? magnitude - 1 : magnitude),
                WideInteger(magnitude - 1)
            )
        default:
            return (WideInteger(negative: true, magnitude: .max), WideInteger(UInt64.max))
        }
    }

    func bounds(type: DataType, nullable: Bool, constraints: [Constraint]) -> (WideInteger, WideInteger) {
        var (lo, hi) = typeBounds(type, nullable: nullable)
        func apply(_ l: WideInteger?, _ h: WideInteger?) {
            if let l, l > lo { lo = l }
            if let h, h < hi { hi = h }
        }
        for c in constraints {
            switch c {
            case .range(let l, let h): apply(l.map(WideInteger.init), h.map(WideInteger.init))
            case .rangeRef(let l, let h): apply(l.flatMap(resolve), h.flatMap(resolve))
            default: break
            }
        }
        return (lo, hi)
    }

    func allowedSet(_ constraints: [Constraint]) -> Set<WideInteger>? {
        for c in constraints {
            if case .allowed(let set) = c { return Set(set.map(WideInteger.init)) }
        }
        return nil
    }

    func resolve(_ bound: ConstraintBound) -> WideInteger? {
        switch bound {
        case .value(let v): return WideInteger(v)
        case .attribute(let name):
            guard let attr = cluster.attribute(named: name),
                let v = current(attr.id) ?? attr.defaultValue
            else { return nil }
            return integer(v)
        }
    }

    // MARK: Lengths and floats

    func checkLength(_ count: Int, _ constraints: [Constraint], unit: String, path: String) -> ConstraintViolation? {
        for c in constraints {
            let ok: Bool
            let text: String
            switch c {
            case .maxLength(let n): ok = count <= n; text = "at most \(n) \(unit)"
            case .minLength(let n): ok = count >= n; text = "at least \(n) \(unit)"
            case .lengthRange(let lo, let hi):
                ok = count >= lo && count <= hi
                text = lo == hi ? "exactly \(lo) \(unit)" : "\(lo) to \(hi) \(unit)"
            case .allowedLengths(let set):
                ok = set.contains(count)
                text = set.sorted().map(String.init).joined(separator: " or ") + " \(unit)"
            case .rangeRef(let lo, let hi):
                let l = lo.flatMap(resolve)?.asUInt64
                let h = hi.flatMap(resolve)?.asUInt64
                let c = UInt64(count)
                ok = (l.map { c >= $0 } ?? true) && (h.map { c <= $0 } ?? true)
                switch (l, h) {
                case let (l?, h?): text = "\(l) to \(h) \(unit)"
                case let (l?, nil): text = "at least \(l) \(unit)"
                case let (nil, h?): text = "at most \(h) \(unit)"
                case (nil, nil): continue
                }
            default: continue
            }
            if !ok { return ConstraintViolation(path: path, expected: text, kind: .constraint, actual: "\(count) \(unit)") }
        }
        return nil
    }

    func floatBounds(_ constraints: [Constraint]) -> (Double?, Double?) {
        var lo: Double? = nil
        var hi: Double? = nil
        for c in constraints {
            switch c {
            case .range(let l, let h):
                if let l { lo = max(lo ?? -.infinity, Double(l)) }
                if let h { hi = min(hi ?? .infinity, Double(h)) }
            case .rangeRef(let l, let h):
                if let l = l.flatMap(resolve) { lo = max(lo ?? -.infinity, Double(l.description) ?? -.infinity) }
                if let h = h.flatMap(resolve) { hi = min(hi ?? .infinity, Double(h.description) ?? .infinity) }
            default: break
            }
        }
        return (lo, hi)
    }

    // MARK: Wording

    func mismatch(_ path: String, _ expected: String, _ value: TLVValue) -> ConstraintViolation {
        ConstraintViolation(path: path, expected: expected, kind: .typeMismatch, actual: Self.kindName(value))
    }

    static func kindName(_ value: TLVValue) -> String {
        switch value {
        case .signed, .unsigned: "an integer"
        case .bool: "a boolean"
        case .float, .double: "a number"
        case .utf8: "a string"
        case .bytes: "an octet string"
        case .null: "null"
        case .structure: "a struct"
        case .array, .list: "a list"
        }
    }

    func integerExpectation(_ lo: WideInteger, _ hi: WideInteger, _ allowed: Set<WideInteger>?) -> String {
        if let allowed {
            let inRange = allowed.filter { $0 >= lo && $0 <= hi }.sorted()
            return "one of " + inRange.map(\.description).joined(separator: ", ")
        }
        if lo > hi { return "no value (the allowed range \(lo)...\(hi) is empty)" }
        return "an integer in \(lo)...\(hi)"
    }

    func enumExpectation(_ name: String, bits: Int) -> String {
        guard let def = cluster.enumDefinition(named: name) else { return "an enum\(bits) value" }
        return "one of " + def.values.map { "\($0.value) (\($0.name))" }.joined(separator: ", ")
    }

    func bitmapExpectation(_ name: String, bits: Int) -> String {
        guard let def = cluster.bitmapDefinition(named: name) else { return "a \(bits)-bit bitmap" }
        if def.fields.isEmpty { return "a bitmap with no bits set" }
        return "a bitmap of " + def.fields.map { "\(hexString($0.mask)) (\($0.name))" }.joined(separator: ", ")
    }

    func floatExpectation(_ lo: Double?, _ hi: Double?) -> String {
        switch (lo, hi) {
        case let (lo?, hi?): "a number in \(lo)...\(hi)"
        case let (lo?, nil): "a number of at least \(lo)"
        case let (nil, hi?): "a number of at most \(hi)"
        case (nil, nil): "a number"
        }
    }

    func hexString(_ v: UInt64) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return "0x" + (digits.count % 2 == 1 ? "0" : "") + digits
    }

    /// The expectation for a type as a whole, for "null is not allowed" messages.
    func expectation(type: DataType, nullable: Bool, constraint: Constraint?) -> String {
        var constraints: [Constraint] = []
        if case .semantic(let s) = type, let implicit = s.implicitConstraint { constraints.append(implicit) }
        if let constraint { constraints.append(constraint) }
        switch type.base {
        case .bool: return "a boolean"
        case .uint, .int:
            let (lo, hi) = bounds(type: type, nullable: nullable, constraints: constraints)
            return integerExpectation(lo, hi, allowedSet(constraints))
        case .enumeration(let n, let b): return enumExpectation(n, bits: b)
        case .bitmap(let n, let b): return bitmapExpectation(n, bits: b)
        case .single, .double: return "a number"
        case .string: return "a string"
        case .octets: return "an octet string"
        case .list: return "a list"
        case .structure(let n): return "a struct \(n)"
        case .semantic: return "a value"
        }
    }
}
