// `rawAttributes` values: a TLV type stated in the profile and a value of that type, served
// as written. For what the model cannot check (manufacturer-specific attributes) or what a
// real device holds against the model's constraints; a clone states each type it inferred.
import MatterModel
import MatterTLV

struct RawAttributeDecoder {
    let reader: DocumentReader

    static let scalarTypes = [
        "null", "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "single", "double", "string",
        "octstr",
    ]
    static let typeWords = scalarTypes + ["list", "list[T]", "struct"]

    static func isKnown(_ type: String) -> Bool {
        if type.hasPrefix("list["), type.hasSuffix("]") { return scalarTypes.contains(String(type.dropFirst(5).dropLast())) }
        return scalarTypes.contains(type) || type == "list" || type == "struct"
    }

    /// `{type: T, value: V}`.
    func decodeTyped(_ node: YAMLNode, at path: ProfilePath, depth: Int = 0) -> TLVValue? {
        guard depth < 16 else {
            reader.error(path, node, "expected a value nested at most 16 deep")
            return nil
        }
        guard let fields = reader.fields(node, at: path, known: ["type", "value"], what: "a mapping {type: T, value: V}"),
            let typeNode = reader.require(fields, "type", at: path, node: node)
        else { return nil }
        // `{type: null}`: YAML reads the word null as null itself.
        if typeNode.isNull { return .null }
        guard let type = reader.string(typeNode, at: path.key("type")) else { return nil }
        guard Self.isKnown(type) else {
            reader.error(path.key("type"), typeNode, unknownNameMessage("TLV type", type, candidates: Self.typeWords, listLimit: 20))
            return nil
        }
        if type == "null" { return .null }
        guard let value = reader.require(fields, "value", at: path, node: node) else { return nil }
        return decode(value, type: type, at: path.key("value"), typeNode: typeNode, depth: depth)
    }

    func decode(_ node: YAMLNode, type: String, at path: ProfilePath, typeNode: YAMLNode, depth: Int) -> TLVValue? {
        if type.hasPrefix("list["), type.hasSuffix("]") {
            let element = String(type.dropFirst(5).dropLast())
            guard Self.scalarTypes.contains(element) else {
                reader.error(path, typeNode, "expected a list of one of \(Self.scalarTypes.joined(separator: ", ")), got list[\(element)]")
                return nil
            }
            guard case .sequence(let items, _) = node else { return mismatch(node, path, "a list") }
            let values = items.enumerated().map { decode($1, type: element, at: path.index($0), typeNode: typeNode, depth: depth + 1) }
            return values.contains(nil) ? nil : .array(values.map { TLVElement($0!) })
        }
        if node.isNull { return .null }
        switch type {
        case "bool":
            if case .scalar(let s) = node, case .bool(let b) = s.kind { return .bool(b) }
            return mismatch(node, path, "true or false")
        case "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64":
            let signed = type.hasPrefix("int")
            let bits = Int(type.drop { !$0.isNumber }) ?? 64
            guard case .scalar(let s) = node, case .integer(let i) = s.kind else { return mismatch(node, path, "an integer (\(type))") }
            if signed {
                let limit = bits == 64 ? UInt64(Int64.max) : (UInt64(1) << UInt64(bits - 1)) - 1
                guard i.negative ? i.magnitude <= limit + 1 : i.magnitude <= limit, let v = i.asInt64 else {
                    return mismatch(node, path, "an integer that fits \(type)")
                }
                return .signed(v)
            }
            guard !i.negative || i.magnitude == 0, bits == 64 || i.magnitude < UInt64(1) << UInt64(bits) else {
                return mismatch(node, path, "an integer that fits \(type)")
            }
            return .unsigned(i.magnitude)
        case "single", "double":
            guard case .scalar(let s) = node else { return mismatch(node, path, "a number") }
            switch s.kind {
            case .integer(let i):
                let d = i.negative ? -Double(i.magnitude) : Double(i.magnitude)
                return type == "single" ? .float(Float(d)) : .double(d)
            case .float(let d): return type == "single" ? .float(Float(d)) : .double(d)
            default: return mismatch(node, path, "a number")
            }
        case "string":
            guard case .scalar(let s) = node else { return mismatch(node, path, "a string") }
            return .utf8(s.text)
        case "octstr":
            guard case .scalar(let s) = node, let bytes = AttributeValueDecoder.hexBytes(s.text) else {
                return mismatch(node, path, "hex octets such as \"0a1bff\"")
            }
            return .bytes(bytes)
        case "list":
            guard case .sequence(let items, _) = node else { return mismatch(node, path, "a list of {type, value} mappings") }
            let values = items.enumerated().map { decodeTyped($1, at: path.index($0), depth: depth + 1) }
            return values.contains(nil) ? nil : .array(values.map { TLVElement($0!) })
        case "struct":
            guard let entries = reader.mappingEntries(node, at: path, what: "a mapping from field tags (0...255) to {type, value}") else {
                return nil
            }
            var members: [TLVElement] = []
            var ok = true
            for entry in entries {
                guard let key = reader.scalarKey(entry, at: path) else { ok = false; continue }
                guard case .scalar(let s) = entry.key, case .integer(let i) = s.kind, let tag = i.asUInt64.flatMap({ UInt8(exactly: $0) }),
                    !members.contains(where: { $0.tag == .context(tag) })
                else {
                    reader.error(path.key(key), entry.key, "expected a field tag in 0...255 given once, got \(entry.key.shortDescription)")
                    ok = false
                    continue
                }
                if let v = decodeTyped(entry.value, at: path.key(key), depth: depth + 1) {
                    members.append(TLVElement(tag: .context(tag), v))
                } else {
                    ok = false
                }
            }
            return ok ? .structure(members) : nil
        default:
            reader.error(path, typeNode, unknownNameMessage("TLV type", type, candidates: Self.typeWords, listLimit: 20))
            return nil
        }
    }

    private func mismatch(_ node: YAMLNode, _ path: ProfilePath, _ expected: String) -> TLVValue? {
        reader.error(path, node, "expected \(expected), got \(node.shortDescription)")
        return nil
    }
}
