import MatterModel
import MatterTLV

/// The values an attribute, command field or event field may take (the Google Home APIs'
/// `Constraint`). Built from the Matter data model, the same data the simulated devices
/// validate writes and commands with, narrowed by bounds a device reports itself.
public indirect enum Constraint: Sendable, Hashable {
    case booleanConstraint
    case uintRangeConstraint(lowerBound: UInt64, upperBound: UInt64, step: UInt64, unit: String)
    case intRangeConstraint(lowerBound: Int64, upperBound: Int64, step: Int64, unit: String)
    case floatRangeConstraint(lowerBound: Double, upperBound: Double, step: Double, unit: String)
    /// An enumeration: the allowed raw values.
    case enumConstraint(allowedSet: Set<UInt64>)
    /// A bitmap: the bits that may be set.
    case bitmapConstraint(allowedBits: UInt64)
    case byteConstraint(minLength: UInt32, maxLength: UInt32)
    case stringConstraint(
        minLength: UInt32 = 0, maxLength: UInt32 = 256, disallowedValues: [String] = [],
        disallowedValuesCaseSensitive: Bool = false, regex: String = "")
    /// A struct: the constraint of each field, by field name.
    case structConstraint(fieldConstraints: [String: Constraint])
    case listConstraint(elementConstraint: Constraint)

    /// Whether `value` satisfies the constraint (null is left to the field's nullability).
    func admits(_ value: AutomationValue) -> Bool {
        switch (self, value) {
        case (_, .null): return true
        case (.booleanConstraint, .bool): return true
        case (.uintRangeConstraint(let lo, let hi, let step, _), _):
            guard let v = value.uint64 else { return false }
            return v >= lo && v <= hi && (step <= 1 || (v - lo) % step == 0)
        case (.intRangeConstraint(let lo, let hi, let step, _), _):
            guard let v = value.int64 else { return false }
            return v >= lo && v <= hi && (step <= 1 || (v - lo) % step == 0)
        case (.floatRangeConstraint(let lo, let hi, _, _), _):
            guard let v = value.int64.map(Double.init) else { return false }
            return v >= lo && v <= hi
        case (.enumConstraint(let allowed), _):
            guard let v = value.uint64 else { return false }
            return allowed.contains(v)
        case (.bitmapConstraint(let bits), _):
            guard let v = value.uint64 else { return false }
            return v & ~bits == 0
        case (.stringConstraint(let lo, let hi, let disallowed, let caseSensitive, _), .string(let s)):
            let n = s.utf8.count
            let bad = disallowed.contains { caseSensitive ? $0 == s : $0.lowercased() == s.lowercased() }
            return n >= lo && n <= hi && !bad
        default: return false
        }
    }
}

/// Builds `Constraint`s from the data model for one cluster of one device.
struct ConstraintBuilder {
    let cluster: ClusterDefinition
    /// Values the device reported, by attribute ID (for bounds named after attributes).
    let reported: [AttributeID: TLVValue]

    /// An attribute's value by name: as reported, else the model's default.
    func attributeValue(_ name: String) -> Int64? {
        guard let a = cluster.attribute(named: name) else { return nil }
        let value = reported[a.id] ?? a.defaultValue
        switch value {
        case .unsigned(let u)?: return Int64(exactly: u)
        case .signed(let s)?: return s
        default: return nil
        }
    }

    func constraint(type: DataType, _ modelConstraint: MatterConstraint?, fieldName: String? = nil) -> Constraint {
        let unit: String
        if case .semantic(let s) = type { unit = s.rawValue } else { unit = "" }
        switch type.base {
        case .bool:
            return .booleanConstraint
        case .uint(let bits):
            var lo: UInt64 = 0
            var hi: UInt64 = bits >= 64 ? .max : (1 << UInt64(bits)) - 1
            if let (a, b) = bounds(modelConstraint) {
                if let a, a > 0 { lo = max(lo, UInt64(a)) }
                if let b, b >= 0 { hi = min(hi, UInt64(b)) }
            }
            if case .allowed(let set)? = modelConstraint { return .enumConstraint(allowedSet: Set(set.compactMap { UInt64(exactly: $0) })) }
            // A command field Level is bounded by the device's MinLevel/MaxLevel (spec 1.6.6.1).
            if let fieldName {
                if let min = attributeValue("Min" + fieldName), min >= 0 { lo = max(lo, UInt64(min)) }
                if let max = attributeValue("Max" + fieldName), max >= 0 { hi = min(hi, UInt64(max)) }
            }
            return .uintRangeConstraint(lowerBound: lo, upperBound: hi, step: 1, unit: unit)
        case .int(let bits):
            var lo: Int64 = bits >= 64 ? .min : -(1 << Int64(bits - 1))
            var hi: Int64 = bits >= 64 ? .max : (1 << Int64(bits - 1)) - 1
            if let (a, b) = bounds(modelConstraint) {
                if let a { lo = max(lo, a) }
                if let b { hi = min(hi, b) }
            }
            return .intRangeConstraint(lowerBound: lo, upperBound: hi, step: 1, unit: unit)
        case .single, .double:
            return .floatRangeConstraint(lowerBound: -.greatestFiniteMagnitude, upperBound: .greatestFiniteMagnitude, step: 0, unit: unit)
        case .enumeration(let name, _):
            let values = cluster.enums.first { $0.name == name }?.values.map { UInt64($0.value) } ?? []
            return .enumConstraint(allowedSet: Set(values))
        case .bitmap(let name, _):
            let mask = cluster.bitmaps.first { $0.name == name }?.fields.reduce(UInt64(0)) { $0 | $1.mask } ?? 0
            return .bitmapConstraint(allowedBits: mask)
        case .string:
            let (lo, hi) = lengths(modelConstraint)
            return .stringConstraint(minLength: lo, maxLength: hi)
        case .octets:
            let (lo, hi) = lengths(modelConstraint)
            return .byteConstraint(minLength: lo, maxLength: hi)
        case .structure(let name):
            var fields: [String: Constraint] = [:]
            for f in cluster.structs.first(where: { $0.name == name })?.fields ?? [] {
                fields[f.lowerCamelName] = constraint(type: f.type, f.constraint)
            }
            return .structConstraint(fieldConstraints: fields)
        case .list(let element):
            var entry: MatterConstraint?
            if case .list(_, let e)? = modelConstraint { entry = e }
            return .listConstraint(elementConstraint: constraint(type: element, entry))
        case .semantic:
            return .booleanConstraint  // unreachable: `base` strips semantics
        }
    }

    /// Numeric bounds, with attribute names resolved on the device.
    private func bounds(_ c: MatterConstraint?) -> (Int64?, Int64?)? {
        switch c {
        case .range(let lo, let hi)?: return (lo, hi)
        case .rangeRef(let lo, let hi)?:
            func resolve(_ b: ConstraintBound?) -> Int64? {
                switch b {
                case .value(let v)?: v
                case .attribute(let n)?: attributeValue(n)
                case nil: nil
                }
            }
            return (resolve(lo), resolve(hi))
        default: return nil
        }
    }

    private func lengths(_ c: MatterConstraint?) -> (UInt32, UInt32) {
        switch c {
        case .maxLength(let n)?: (0, UInt32(clamping: n))
        case .minLength(let n)?: (UInt32(clamping: n), .max)
        case .lengthRange(let lo, let hi)?: (UInt32(clamping: lo), UInt32(clamping: hi))
        case .allowedLengths(let set)?: (UInt32(clamping: set.min() ?? 0), UInt32(clamping: set.max() ?? 0))
        default: (0, .max)
        }
    }
}
