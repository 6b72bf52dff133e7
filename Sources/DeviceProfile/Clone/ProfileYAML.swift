// TLV values written back as profile YAML: by the model's type (enum and bitmap numbers,
// struct fields by name, octets in hex) for `values`, or as `{type, value}` for
// `rawAttributes`. Everything goes in flow style, so one attribute is one line.
import MatterModel
import MatterTLV

enum ProfileYAML {
    /// A string in double quotes, escaped as YAML reads it back.
    static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\x" + String(scalar.value, radix: 16).leftPadded(2)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    static func hex(_ bytes: [UInt8]) -> String {
        "\"" + bytes.map { String($0, radix: 16).leftPadded(2) }.joined() + "\""
    }

    static func number(_ d: Double) -> String {
        if d.isNaN { return ".nan" }
        if d.isInfinite { return d < 0 ? "-.inf" : ".inf" }
        let text = "\(d)"
        return text.contains(".") || text.contains("e") ? text : text + ".0"
    }

    /// A value of the model type `type`, as a profile writes it.
    static func value(_ v: TLVValue, type: DataType, cluster: ClusterDefinition) -> String {
        switch v {
        case .null: return "null"
        case .bool(let b): return b ? "true" : "false"
        case .unsigned(let u): return String(u)
        case .signed(let i): return String(i)
        case .float(let f): return number(Double(f))
        case .double(let d): return number(d)
        case .utf8(let s): return quoted(s)
        case .bytes(let b): return hex(b)
        case .array(let items), .list(let items):
            let element: DataType = if case .list(let e) = type.base { e } else { type }
            return "[" + items.map { value($0.value, type: element, cluster: cluster) }.joined(separator: ", ") + "]"
        case .structure(let members):
            guard case .structure(let name) = type.base, let def = cluster.structDefinition(named: name) else { return "{}" }
            let fields = members.compactMap { m -> String? in
                guard case .context(let id) = m.tag, let field = def.fields.first(where: { $0.id == id }) else { return nil }
                return "\(field.lowerCamelName): " + value(m.value, type: field.type, cluster: cluster)
            }
            return "{" + fields.joined(separator: ", ") + "}"
        }
    }

    /// True when `value(_:type:cluster:)` writes all of `v` (no field unknown to the model).
    static func writable(_ v: TLVValue, type: DataType, cluster: ClusterDefinition) -> Bool {
        switch v {
        case .array(let items), .list(let items):
            let element: DataType = if case .list(let e) = type.base { e } else { type }
            return items.allSatisfy { writable($0.value, type: element, cluster: cluster) }
        case .structure(let members):
            guard case .structure(let name) = type.base, let def = cluster.structDefinition(named: name) else { return false }
            return members.allSatisfy { m in
                guard case .context(let id) = m.tag, let field = def.fields.first(where: { $0.id == id }) else { return false }
                return writable(m.value, type: field.type, cluster: cluster)
            }
        default: return true
        }
    }

    /// `{type: T, value: V}` for `rawAttributes`, the narrowest integer type that holds the value.
    static func raw(_ v: TLVValue) -> String {
        switch v {
        case .null: return "{type: null}"
        case .bool(let b): return "{type: bool, value: \(b)}"
        case .unsigned(let u):
            let bits = u <= 0xFF ? 8 : u <= 0xFFFF ? 16 : u <= 0xFFFF_FFFF ? 32 : 64
            return "{type: uint\(bits), value: \(u)}"
        case .signed(let i):
            let bits = Int64(Int8.min)...Int64(Int8.max) ~= i ? 8 : Int64(Int16.min)...Int64(Int16.max) ~= i ? 16 : Int64(Int32.min)...Int64(Int32.max) ~= i ? 32 : 64
            return "{type: int\(bits), value: \(i)}"
        case .float(let f): return "{type: single, value: \(number(Double(f)))}"
        case .double(let d): return "{type: double, value: \(number(d))}"
        case .utf8(let s): return "{type: string, value: \(quoted(s))}"
        case .bytes(let b): return "{type: octstr, value: \(hex(b))}"
        case .array(let items), .list(let items): return "{type: list, value: [" + items.map { raw($0.value) }.joined(separator: ", ") + "]}"
        case .structure(let members):
            let fields = members.compactMap { m -> String? in
                guard case .context(let id) = m.tag else { return nil }
                return "\(id): " + raw(m.value)
            }
            return "{type: struct, value: {" + fields.joined(separator: ", ") + "}}"
        }
    }

    static func hexID(_ v: UInt32, width: Int = 4) -> String {
        "0x" + String(v, radix: 16, uppercase: true).leftPadded(width)
    }

    static func idList(_ ids: [UInt32]) -> String { "[" + ids.map(String.init).joined(separator: ", ") + "]" }
}

extension String {
    func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
