// YAML → TLV for attribute values, driven by the model's data types. This layer only
// turns text into the right TLV shape (an enum name into its number, a struct's field
// names into context tags); ranges, lengths and enum membership are the model's
// `validate`, so no bound is written down twice.
import Foundation
import MatterModel
import MatterTLV

struct AttributeValueDecoder {
    let reader: DocumentReader
    let cluster: ClusterDefinition

    /// Decodes `node` as a value of `type`. Reports a shape mismatch and returns nil.
    func decode(_ node: YAMLNode, type: DataType, nullable: Bool, at path: ProfilePath) -> TLVValue? {
        if node.isNull {
            // Null's legality is the model's call (it names the expected type).
            return .null
        }
        switch type.base {
        case .bool:
            if case .scalar(let s) = node {
                if case .bool(let b) = s.kind { return .bool(b) }
                if s.kind == .string {
                    switch s.text.lowercased() {
                    case "on", "yes": return .bool(true)
                    case "off", "no": return .bool(false)
                    default: break
                    }
                }
            }
            return mismatch(node, path, "true or false")
        case .uint, .int:
            return integer(node, path)
        case .enumeration(let name, _):
            if case .scalar(let s) = node, s.kind == .string {
                guard let def = cluster.enumDefinition(named: name) else {
                    return mismatch(node, path, "an integer")
                }
                if let v = def.value(named: s.text) { return .unsigned(UInt64(v.value)) }
                let names = def.values.map { Self.lowerFirst($0.name) }
                reader.error(
                    path, node,
                    unknownNameMessage("\(name) value", s.text, candidates: names, listLimit: 16)
                        + (closestMatch(to: s.text, in: names) == nil ? " (or its number)" : ""))
                return nil
            }
            return integer(node, path)
        case .bitmap(let name, _):
            if case .sequence(let items, _) = node {
                guard let def = cluster.bitmapDefinition(named: name) else {
                    return mismatch(node, path, "an integer")
                }
                var bits: UInt64 = 0
                var ok = true
                for (i, item) in items.enumerated() {
                    guard case .scalar(let s) = item, s.kind == .string, let field = def.field(named: s.text) else {
                        let names = def.fields.map { Self.lowerFirst($0.name) }
                        let text = (item.isNull ? "null" : (item.keyLikeText ?? item.shortDescription))
                        reader.error(path.index(i), item, unknownNameMessage("\(name) bit", text, candidates: names, listLimit: 16))
                        ok = false
                        continue
                    }
                    bits |= field.mask
                }
                return ok ? .unsigned(bits) : nil
            }
            return integer(node, path, what: "an integer or a list of bit names")
        case .single, .double:
            guard case .scalar(let s) = node else { return mismatch(node, path, "a number") }
            let d: Double
            switch s.kind {
            case .integer(let i): d = i.negative ? -Double(i.magnitude) : Double(i.magnitude)
            case .float(let f): d = f
            default: return mismatch(node, path, "a number")
            }
            if case .single = type.base {
                // Out-of-range values stay double so the model's check reports them.
                return d.isFinite && abs(d) > Double(Float.greatestFiniteMagnitude) ? .double(d) : .float(Float(d))
            }
            return .double(d)
        case .string:
            guard case .scalar(let s) = node else { return mismatch(node, path, "a string") }
            return .utf8(s.text)
        case .octets:
            guard case .scalar(let s) = node, s.kind == .string || s.kind.isInteger else {
                return mismatch(node, path, "hex octets such as \"0a1bff\"")
            }
            guard let bytes = Self.hexBytes(s.text) else {
                return mismatch(node, path, "hex octets such as \"0a1bff\" (an even number of hex digits)")
            }
            return .bytes(bytes)
        case .list(let element):
            guard case .sequence(let items, _) = node else { return mismatch(node, path, "a list") }
            var out: [TLVElement] = []
            var ok = true
            for (i, item) in items.enumerated() {
                if let v = decode(item, type: element, nullable: false, at: path.index(i)) {
                    out.append(TLVElement(v))
                } else {
                    ok = false
                }
            }
            return ok ? .array(out) : nil
        case .structure(let name):
            guard let def = cluster.structDefinition(named: name) else {
                reader.error(path, node, "values of type \(name) cannot be written in a profile")
                return nil
            }
            guard case .mapping(let entries, _) = node else {
                return mismatch(node, path, "a mapping of \(name) fields")
            }
            var members: [TLVElement] = []
            var ok = true
            var seen: Set<UInt8> = []
            let names = def.fields.map(\.lowerCamelName)
            for entry in entries {
                guard let key = reader.scalarKey(entry, at: path) else { ok = false; continue }
                guard let field = def.field(named: key) else {
                    reader.error(path.key(key), entry.key, unknownNameMessage("field of \(name)", key, candidates: names))
                    ok = false
                    continue
                }
                guard seen.insert(field.id).inserted else {
                    reader.error(path.key(key), entry.key, "field '\(field.lowerCamelName)' is given twice")
                    ok = false
                    continue
                }
                if let v = decode(entry.value, type: field.type, nullable: field.nullable, at: path.key(field.lowerCamelName)) {
                    members.append(TLVElement(tag: .context(field.id), v))
                } else {
                    ok = false
                }
            }
            return ok ? .structure(members) : nil
        case .semantic:
            return nil  // `base` never returns a semantic type
        }
    }

    private func integer(_ node: YAMLNode, _ path: ProfilePath, what: String = "an integer") -> TLVValue? {
        guard case .scalar(let s) = node, case .integer(let i) = s.kind else {
            if case .scalar(let s) = node, s.kind == .string, looksLikeOverlongInteger(s.text) {
                reader.error(path, node, "expected \(what), got \(s.text) (more than 64 bits)")
                return nil
            }
            return mismatch(node, path, what)
        }
        // Signed only when negative: the model compares signed and unsigned exactly.
        if i.negative, i.magnitude != 0 {
            guard let v = i.asInt64 else {
                reader.error(path, node, "expected \(what), got \(i) (less than -2^63)")
                return nil
            }
            return .signed(v)
        }
        return .unsigned(i.magnitude)
    }

    private func mismatch(_ node: YAMLNode, _ path: ProfilePath, _ expected: String) -> TLVValue? {
        reader.error(path, node, "expected \(expected), got \(node.shortDescription)")
        return nil
    }

    static func lowerFirst(_ s: String) -> String {
        guard let f = s.first else { return s }
        return f.lowercased() + s.dropFirst()
    }

    /// "0a1bff", "0x0a1bff", "0a:1b:ff" or "0a 1b ff".
    static func hexBytes(_ text: String) -> [UInt8]? {
        var t = Substring(text)
        if t.hasPrefix("0x") || t.hasPrefix("0X") { t = t.dropFirst(2) }
        let digits = t.filter { $0 != ":" && $0 != " " }.utf8
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var high: UInt8?
        for c in digits {
            let v: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): v = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): v = c - UInt8(ascii: "A") + 10
            default: return nil
            }
            if let h = high { out.append(h << 4 | v); high = nil } else { high = v }
        }
        return out
    }
}

extension ScalarKind {
    var isInteger: Bool {
        if case .integer = self { return true }
        return false
    }
}

extension YAMLNode {
    /// A scalar's text (for "unknown name" messages).
    var keyLikeText: String? {
        if case .scalar(let s) = self { return s.text }
        return nil
    }
}
