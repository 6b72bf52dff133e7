// Dumped JSON → TLV. By the model's type where the model knows the attribute (Home
// Assistant's Matter server writes octet strings as base64, structs as objects keyed by
// field ID, or by field name in older dumps, null for null); by the JSON's shape where it
// does not (a manufacturer's attribute), with the type it inferred.
import Foundation
import MatterModel
import MatterTLV

struct DumpValueDecoder {
    let cluster: ClusterDefinition

    /// A value that contradicts its model type: where inside it, and what was expected.
    struct Mismatch: Error {
        var path: String
        var expected: String
        var got: String
    }

    func decode(_ json: DumpJSON, type: DataType, at path: String = "", depth: Int = 0) throws(Mismatch) -> TLVValue {
        guard depth < 32 else { throw Mismatch(path: path, expected: "a value nested at most 32 deep", got: "deeper") }
        if case .null = json { return .null }  // nullability is the model's check
        switch type.base {
        case .bool:
            if case .bool(let b) = json { return .bool(b) }
            throw Mismatch(path: path, expected: "true or false (\(type))", got: json.kind)
        case .uint, .int, .enumeration, .bitmap:
            guard let i = json.integer else { throw Mismatch(path: path, expected: "an integer (\(type))", got: json.kind) }
            if i.negative, i.magnitude != 0 {
                guard i.magnitude <= UInt64(Int64.max) + 1 else { throw Mismatch(path: path, expected: "an integer (\(type))", got: json.kind) }
                return .signed(i.magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(i.magnitude))
            }
            return type.encoding(.unsigned(i.magnitude))
        case .single:
            guard let d = json.double else { throw Mismatch(path: path, expected: "a number (\(type))", got: json.kind) }
            return .float(Float(d))
        case .double:
            guard let d = json.double else { throw Mismatch(path: path, expected: "a number (\(type))", got: json.kind) }
            return .double(d)
        case .string:
            guard case .string(let s) = json else { throw Mismatch(path: path, expected: "a string", got: json.kind) }
            return .utf8(s)
        case .octets:
            guard case .string(let s) = json, let data = Data(base64Encoded: s) else {
                throw Mismatch(path: path, expected: "octets as base64 text (\(type))", got: json.kind)
            }
            return .bytes([UInt8](data))
        case .list(let element):
            guard case .array(let items) = json else { throw Mismatch(path: path, expected: "a list (\(type))", got: json.kind) }
            var out: [TLVElement] = []
            for (i, item) in items.enumerated() {
                out.append(TLVElement(try decode(item, type: element, at: "\(path)[\(i)]", depth: depth + 1)))
            }
            return .array(out)
        case .structure(let name):
            guard case .object(let entries) = json else { throw Mismatch(path: path, expected: "an object of \(name) fields", got: json.kind) }
            guard let def = cluster.structDefinition(named: name) else { return try Self.infer(json, at: path) }
            var members: [TLVElement] = []
            for (key, value) in entries {
                let fieldPath = path + "." + key
                if let field = UInt8(key).flatMap({ id in def.fields.first { $0.id == id } }) ?? def.field(named: key) {
                    members.append(TLVElement(tag: .context(field.id), try decode(value, type: field.type, at: fieldPath, depth: depth + 1)))
                } else if let tag = UInt8(key) {
                    // A field newer than the model: kept as dumped.
                    members.append(TLVElement(tag: .context(tag), try Self.infer(value, at: fieldPath, depth: depth + 1)))
                } else {
                    throw Mismatch(path: fieldPath, expected: "a field of \(name) (by ID or name)", got: "'\(key)'")
                }
            }
            return .structure(members)
        case .semantic:
            throw Mismatch(path: path, expected: "\(type)", got: json.kind)
        }
    }

    /// A value the model does not type: integers, booleans, numbers and text as they are;
    /// base64 text that is not printable as bytes; objects keyed by field IDs as structures.
    static func infer(_ json: DumpJSON, at path: String = "", depth: Int = 0) throws(Mismatch) -> TLVValue {
        guard depth < 32 else { throw Mismatch(path: path, expected: "a value nested at most 32 deep", got: "deeper") }
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let text):
            if let i = json.integer {
                if i.negative, i.magnitude != 0 {
                    guard i.magnitude <= UInt64(Int64.max) else { throw Mismatch(path: path, expected: "an integer of 64 bits", got: text) }
                    return .signed(-Int64(i.magnitude))
                }
                return .unsigned(i.magnitude)
            }
            guard let d = Double(text) else { throw Mismatch(path: path, expected: "a number", got: text) }
            return .double(d)
        case .string(let s):
            if let bytes = base64Bytes(s) { return .bytes(bytes) }
            return .utf8(s)
        case .array(let items):
            var out: [TLVElement] = []
            for (i, item) in items.enumerated() { out.append(TLVElement(try infer(item, at: "\(path)[\(i)]", depth: depth + 1))) }
            return .array(out)
        case .object(let entries):
            var members: [TLVElement] = []
            for (key, value) in entries {
                guard let tag = UInt8(key) else { throw Mismatch(path: path + "." + key, expected: "a structure keyed by field IDs", got: "'\(key)'") }
                members.append(TLVElement(tag: .context(tag), try infer(value, at: path + "." + key, depth: depth + 1)))
            }
            return .structure(members)
        }
    }

    /// Base64 text that decodes to bytes which are not plain text (so "Battery" stays a string).
    static func base64Bytes(_ s: String) -> [UInt8]? {
        guard s.count >= 4, s.count % 4 == 0, let data = Data(base64Encoded: s) else { return nil }
        let bytes = [UInt8](data)
        let printable = bytes.allSatisfy { (0x20...0x7E).contains($0) }
        return printable ? nil : bytes
    }
}
