// The JSON schema of Resources/matter-model.json and its conversion into definitions.
// The file keeps the spec's notations as strings (IDs in hex, access "RW VM T", quality
// "X N S", constraints "0 to 254", conformance "[LT], O") so rows read like the spec.
import Foundation
import MatterTLV

struct ModelFile: Decodable {
    var specVersion: String?
    var globalAttributes: [AttributeRow]
    var clusters: [ClusterRow]
    var deviceTypes: [DeviceTypeRow]
}

struct ClusterRow: Decodable {
    var id: String
    var name: String
    var revision: UInt16
    var features: [FeatureRow]?
    var attributes: [AttributeRow]?
    var commands: [CommandRow]?
    var events: [EventRow]?
    var enums: [EnumRow]?
    var bitmaps: [BitmapRow]?
    var structs: [StructRow]?
}

struct FeatureRow: Decodable {
    var bit: Int
    var code: String
    var name: String
    var conformance: String?
}

struct AttributeRow: Decodable {
    var id: String
    var name: String
    var type: String
    var access: String?
    var quality: String?
    var `default`: JSONValue?
    var constraint: String?
    var conformance: String?
}

struct FieldRow: Decodable {
    var id: Int
    var name: String
    var type: String
    var access: String?
    var quality: String?
    var `default`: JSONValue?
    var constraint: String?
    var conformance: String?
}

struct CommandRow: Decodable {
    var id: String
    var name: String
    var direction: String?
    var response: String?
    var access: String?
    var conformance: String?
    var fields: [FieldRow]?
}

struct EventRow: Decodable {
    var id: String
    var name: String
    var priority: String
    var access: String?
    var conformance: String?
    var fields: [FieldRow]?
}

struct EnumRow: Decodable {
    var name: String
    var type: String
    var values: [NumberedName]
}

struct BitmapRow: Decodable {
    var name: String
    var type: String
    var fields: [NumberedName]
}

struct StructRow: Decodable {
    var name: String
    var access: String?
    var fields: [FieldRow]
}

/// `[0, "Off"]` in an enum, `[0, "Lighting"]` or `["2..3", "Mode"]` (bit range) in a bitmap.
struct NumberedName: Decodable {
    enum Number { case single(Int), range(Int, Int) }
    var number: Number
    var name: String

    init(from decoder: Decoder) throws {
        var c = try decoder.unkeyedContainer()
        if let n = try? c.decode(Int.self) {
            number = .single(n)
        } else {
            let text = try c.decode(String.self)
            let parts = text.components(separatedBy: "..")
            guard parts.count == 2, let lo = Int(parts[0]), let hi = Int(parts[1]), lo <= hi else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "expected a number or 'lo..hi', got '\(text)'")
            }
            number = .range(lo, hi)
        }
        name = try c.decode(String.self)
    }
}

struct DeviceTypeRow: Decodable {
    var id: String
    var name: String
    var revision: UInt16
    var `class`: String
    var server: [RequirementRow]
    var optionalServer: [RequirementRow]?
    var client: [String]?
    var optionalClient: [String]?
}

struct RequirementRow: Decodable {
    var cluster: String
    var features: [String]?
    var attributes: [String]?
    var commands: [String]?
    /// Attribute name → constraint in spec notation.
    var constraints: [String: String]?
}

/// A JSON literal for defaults.
enum JSONValue: Decodable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case number(Double)
    case string(String)
    case array([JSONValue])

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let i = try? c.decode(Int64.self) {
            self = .integer(i)
        } else if let u = try? c.decode(UInt64.self) {
            self = .unsigned(u)
        } else if let d = try? c.decode(Double.self) {
            self = .number(d)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "unsupported default literal")
        }
    }
}

// MARK: - Building definitions

enum ModelBuilder {
    struct Built {
        var globals: [AttributeDefinition]
        var clusters: [ClusterDefinition]
        var deviceTypes: [DeviceTypeDefinition]
    }

    static func build(_ file: ModelFile) throws -> Built {
        let noTypes = TypeScope(enums: [], bitmaps: [], structs: [])
        let globals = try file.globalAttributes.enumerated().map { i, row in
            try attribute(row, scope: noTypes, path: "globalAttributes[\(i)]")
        }
        let clusters = try file.clusters.enumerated().map { i, row in
            try cluster(row, globals: globals, path: "clusters[\(i)]")
        }
        let lookup = ClusterLookup(
            named: { name in clusters.first { $0.name == name }?.id }, byID: { id in clusters.first { $0.id == id } })
        let deviceTypes = try file.deviceTypes.enumerated().map { i, row in
            try deviceType(row, clusters: lookup, path: "deviceTypes[\(i)]")
        }
        return Built(globals: globals, clusters: clusters, deviceTypes: deviceTypes)
    }

    /// How a device type's rows find the clusters they name: in the built list, or in a
    /// model that builds each cluster on first use (`ModelCatalog`).
    struct ClusterLookup {
        /// The ID of the cluster with this exact spec name.
        var named: (String) -> ClusterID?
        var byID: (ClusterID) -> ClusterDefinition?
    }

    struct TypeScope {
        var enums: [EnumDefinition]
        var bitmaps: [BitmapDefinition]
        var structs: [StructDefinition]

        func resolve(_ name: String) -> DataType? {
            if let e = enums.first(where: { $0.name == name }) { return .enumeration(e.name, bits: e.bits) }
            if let b = bitmaps.first(where: { $0.name == name }) { return .bitmap(b.name, bits: b.bits) }
            if structs.contains(where: { $0.name == name }) { return .structure(name) }
            return nil
        }
    }

    static func cluster(_ row: ClusterRow, globals: [AttributeDefinition], path: String) throws -> ClusterDefinition {
        let id = ClusterID(try hexID(row.id, path: path + ".id"))
        let enums = try (row.enums ?? []).enumerated().map { i, e in
            try enumDefinition(e, path: "\(path).enums[\(i)]")
        }
        let bitmaps = try (row.bitmaps ?? []).enumerated().map { i, b in
            try bitmapDefinition(b, path: "\(path).bitmaps[\(i)]")
        }
        // Structs may refer to each other, so resolve names against the declared list first.
        let declared = TypeScope(
            enums: enums, bitmaps: bitmaps,
            structs: (row.structs ?? []).map { StructDefinition(name: $0.name, fields: []) })
        let structs = try (row.structs ?? []).enumerated().map { i, s in
            let p = "\(path).structs[\(i)]"
            let fabricScoped = try access(s.access ?? "", path: p + ".access").fabricScoped
            return StructDefinition(
                name: s.name,
                fields: try s.fields.enumerated().map { j, f in try field(f, scope: declared, path: "\(p).fields[\(j)]") },
                fabricScoped: fabricScoped)
        }
        let scope = TypeScope(enums: enums, bitmaps: bitmaps, structs: structs)
        let features = try (row.features ?? []).enumerated().map { i, f in
            FeatureDefinition(
                bit: f.bit, code: f.code, name: f.name,
                conformance: try conformance(f.conformance, path: "\(path).features[\(i)].conformance"))
        }
        let attributes = try (row.attributes ?? []).enumerated().map { i, a in
            try attribute(a, scope: scope, path: "\(path).attributes[\(i)]")
        }
        let commands = try (row.commands ?? []).enumerated().map { i, c in
            try command(c, scope: scope, path: "\(path).commands[\(i)]")
        }
        let events = try (row.events ?? []).enumerated().map { i, e in
            try event(e, scope: scope, path: "\(path).events[\(i)]")
        }
        var cluster = ClusterDefinition(
            id: id, name: row.name, revision: row.revision, features: features, attributes: attributes,
            globalAttributes: globals, commands: commands, events: events,
            enums: enums, bitmaps: bitmaps, structs: structs)
        // ClusterRevision's default is this cluster's revision.
        if let i = cluster.globalAttributes.firstIndex(where: { $0.id == Clusters.Global.Attribute.clusterRevision }) {
            cluster.globalAttributes[i].defaultValue = .unsigned(UInt64(row.revision))
        }
        return cluster
    }

    static func enumDefinition(_ row: EnumRow, path: String) throws -> EnumDefinition {
        let bits: Int
        switch row.type {
        case "enum8": bits = 8
        case "enum16": bits = 16
        default: throw ModelLoadError(path: path + ".type", message: "expected enum8 or enum16, got '\(row.type)'")
        }
        let values = try row.values.enumerated().map { i, v in
            guard case .single(let n) = v.number, n >= 0, n < (1 << bits) else {
                throw ModelLoadError(path: "\(path).values[\(i)]", message: "value out of range for \(row.type)")
            }
            return EnumDefinition.Value(name: v.name, value: UInt16(n))
        }
        return EnumDefinition(name: row.name, bits: bits, values: values)
    }

    static func bitmapDefinition(_ row: BitmapRow, path: String) throws -> BitmapDefinition {
        let bits: Int
        switch row.type {
        case "map8": bits = 8
        case "map16": bits = 16
        case "map32": bits = 32
        case "map64": bits = 64
        default: throw ModelLoadError(path: path + ".type", message: "expected map8/16/32/64, got '\(row.type)'")
        }
        let fields = try row.fields.enumerated().map { i, f in
            let (lo, hi): (Int, Int)
            switch f.number {
            case .single(let b): (lo, hi) = (b, b)
            case .range(let a, let b): (lo, hi) = (a, b)
            }
            guard lo >= 0, hi < bits else {
                throw ModelLoadError(path: "\(path).fields[\(i)]", message: "bit outside \(row.type)")
            }
            var mask: UInt64 = 0
            for b in lo...hi { mask |= UInt64(1) << UInt64(b) }
            return BitmapDefinition.Field(name: f.name, mask: mask)
        }
        return BitmapDefinition(name: row.name, bits: bits, fields: fields)
    }

    static func attribute(_ row: AttributeRow, scope: TypeScope, path: String) throws -> AttributeDefinition {
        let id = AttributeID(try hexID(row.id, path: path + ".id"))
        let type = try dataType(row.type, scope: scope, path: path + ".type")
        let acc = try access(row.access ?? "R V", path: path + ".access")
        guard acc.readable else { throw ModelLoadError(path: path + ".access", message: "attribute must be readable (R)") }
        let (quality, nullable) = try qualities(row.quality ?? "", path: path + ".quality")
        let readPrivilege = acc.readPrivilege ?? acc.privilege ?? .view
        var writePrivilege: Privilege? = nil
        if acc.writable {
            guard let w = acc.writePrivilege ?? acc.privilege else {
                throw ModelLoadError(path: path + ".access", message: "writable attribute needs a write privilege")
            }
            writePrivilege = w
        }
        return AttributeDefinition(
            id: id, name: row.name, type: type, nullable: nullable,
            readPrivilege: readPrivilege, writePrivilege: writePrivilege,
            timedWrite: acc.timed, fabricScoped: acc.fabricScoped, fabricSensitive: acc.fabricSensitive,
            quality: quality,
            defaultValue: try defaultValue(row.default, type: type, nullable: nullable, path: path + ".default"),
            constraint: try constraint(row.constraint, type: type, path: path + ".constraint"),
            conformance: try conformance(row.conformance, path: path + ".conformance"))
    }

    static func field(_ row: FieldRow, scope: TypeScope, path: String) throws -> FieldDefinition {
        guard (0...255).contains(row.id) else {
            throw ModelLoadError(path: path + ".id", message: "field id must be a context tag 0...255")
        }
        let type = try dataType(row.type, scope: scope, path: path + ".type")
        let (_, nullable) = try qualities(row.quality ?? "", path: path + ".quality")
        let acc = try access(row.access ?? "", path: path + ".access")
        return FieldDefinition(
            id: UInt8(row.id), name: row.name, type: type, nullable: nullable,
            constraint: try constraint(row.constraint, type: type, path: path + ".constraint"),
            defaultValue: try defaultValue(row.default, type: type, nullable: nullable, path: path + ".default"),
            conformance: try conformance(row.conformance, path: path + ".conformance"),
            fabricSensitive: acc.fabricSensitive)
    }

    static func command(_ row: CommandRow, scope: TypeScope, path: String) throws -> CommandDefinition {
        let id = CommandID(try hexID(row.id, path: path + ".id"))
        let direction: CommandDirection
        switch row.direction ?? "request" {
        case "request": direction = .request
        case "response": direction = .response
        default: throw ModelLoadError(path: path + ".direction", message: "expected request or response")
        }
        let acc = try access(row.access ?? (direction == .request ? "O" : ""), path: path + ".access")
        var responseName: String? = nil
        if let r = row.response, r != "Y", r != "N" { responseName = r }
        return CommandDefinition(
            id: id, name: row.name, direction: direction,
            fields: try (row.fields ?? []).enumerated().map { i, f in try field(f, scope: scope, path: "\(path).fields[\(i)]") },
            responseName: responseName, invokePrivilege: acc.privilege ?? .operate,
            timed: acc.timed, fabricScoped: acc.fabricScoped,
            conformance: try conformance(row.conformance, path: path + ".conformance"))
    }

    static func event(_ row: EventRow, scope: TypeScope, path: String) throws -> EventDefinition {
        let id = EventID(try hexID(row.id, path: path + ".id"))
        guard let priority = EventPriority(rawValue: row.priority.lowercased()) else {
            throw ModelLoadError(path: path + ".priority", message: "expected debug, info or critical")
        }
        let acc = try access(row.access ?? "V", path: path + ".access")
        return EventDefinition(
            id: id, name: row.name, priority: priority, readPrivilege: acc.privilege ?? .view,
            fields: try (row.fields ?? []).enumerated().map { i, f in try field(f, scope: scope, path: "\(path).fields[\(i)]") },
            fabricSensitive: acc.fabricSensitive,
            conformance: try conformance(row.conformance, path: path + ".conformance"))
    }

    static func deviceType(_ row: DeviceTypeRow, clusters: ClusterLookup, path: String) throws -> DeviceTypeDefinition {
        let id = DeviceTypeID(try hexID(row.id, path: path + ".id"))
        guard let cls = DeviceTypeClass(rawValue: row.class) else {
            throw ModelLoadError(path: path + ".class", message: "expected node, simple or utility")
        }
        func clusterID(_ ref: String, _ p: String) throws -> ClusterID {
            if ref.hasPrefix("0x") { return ClusterID(try hexID(ref, path: p)) }
            guard let id = clusters.named(ref) else {
                throw ModelLoadError(path: p, message: "unknown cluster '\(ref)'")
            }
            return id
        }
        func requirement(_ r: RequirementRow, _ p: String) throws -> ClusterRequirement {
            let cid = try clusterID(r.cluster, p + ".cluster")
            let def = clusters.byID(cid)
            if def == nil,
                !(r.features ?? []).isEmpty || !(r.attributes ?? []).isEmpty
                    || !(r.commands ?? []).isEmpty || !(r.constraints ?? [:]).isEmpty
            {
                throw ModelLoadError(path: p, message: "requirements on cluster \(r.cluster), which the model does not define")
            }
            let attributes = try (r.attributes ?? []).map { name in
                guard let a = def?.attribute(named: name) else {
                    throw ModelLoadError(path: p + ".attributes", message: "unknown attribute '\(name)' in \(r.cluster)")
                }
                return a.id
            }
            let commands = try (r.commands ?? []).map { name in
                guard let c = def?.command(named: name), c.direction == .request else {
                    throw ModelLoadError(path: p + ".commands", message: "unknown command '\(name)' in \(r.cluster)")
                }
                return c.id
            }
            for f in r.features ?? [] where def?.feature(code: f) == nil {
                throw ModelLoadError(path: p + ".features", message: "unknown feature '\(f)' in \(r.cluster)")
            }
            var constraints: [AttributeID: Constraint] = [:]
            for (name, text) in (r.constraints ?? [:]).sorted(by: { $0.key < $1.key }) {
                guard let a = def?.attribute(named: name) else {
                    throw ModelLoadError(path: p + ".constraints", message: "unknown attribute '\(name)' in \(r.cluster)")
                }
                constraints[a.id] = try constraint(text, type: a.type, path: p + ".constraints." + name)
            }
            return ClusterRequirement(
                cluster: cid, requiredFeatures: Set(r.features ?? []),
                requiredAttributes: attributes, requiredCommands: commands,
                attributeConstraints: constraints)
        }
        let required = try row.server.enumerated().map { i, r in try requirement(r, "\(path).server[\(i)]") }
        let optional = try (row.optionalServer ?? []).enumerated().map { i, r in try requirement(r, "\(path).optionalServer[\(i)]") }
        return DeviceTypeDefinition(
            id: id, name: row.name, revision: row.revision, deviceClass: cls,
            requiredServerClusters: required,
            optionalServerRequirements: optional,
            requiredClientClusters: try (row.client ?? []).map { try clusterID($0, path + ".client") },
            optionalClientClusters: try (row.optionalClient ?? []).map { try clusterID($0, path + ".optionalClient") })
    }

    // MARK: Notation helpers

    static func hexID(_ text: String, path: String) throws -> UInt32 {
        guard text.hasPrefix("0x"), let v = UInt32(text.dropFirst(2), radix: 16) else {
            throw ModelLoadError(path: path, message: "expected a hex id like 0x0006, got '\(text)'")
        }
        return v
    }

    static func dataType(_ text: String, scope: TypeScope, path: String) throws -> DataType {
        guard let t = DataType.parse(text, resolve: scope.resolve) else {
            throw ModelLoadError(path: path, message: "unknown type '\(text)'")
        }
        return t
    }

    static func access(_ text: String, path: String) throws -> AccessSpec {
        guard let a = AccessSpec.parse(text) else {
            throw ModelLoadError(path: path, message: "bad access '\(text)'")
        }
        return a
    }

    static func qualities(_ text: String, path: String) throws -> (AttributeQuality, nullable: Bool) {
        var q: AttributeQuality = []
        var nullable = false
        for token in text.split(separator: " ") {
            guard token.count == 1, let letter = token.first else {
                throw ModelLoadError(path: path, message: "bad quality '\(token)'")
            }
            if letter == "X" { nullable = true; continue }
            guard let flag = AttributeQuality.letters.first(where: { $0.0 == letter })?.1 else {
                throw ModelLoadError(path: path, message: "unknown quality '\(letter)'")
            }
            q.insert(flag)
        }
        return (q, nullable)
    }

    static func conformance(_ text: String?, path: String) throws -> Conformance {
        guard let text else { return .mandatory }
        do {
            return try Conformance(parsing: text)
        } catch {
            throw ModelLoadError(path: path, message: error.description)
        }
    }

    static func constraint(_ text: String?, type: DataType, path: String) throws -> Constraint? {
        guard let text else { return nil }
        do {
            return try Constraint.parse(text, for: type)
        } catch {
            throw ModelLoadError(path: path, message: error.description)
        }
    }

    static func defaultValue(_ value: JSONValue?, type: DataType, nullable: Bool, path: String) throws -> TLVValue? {
        guard let value else { return nil }
        func bad() -> ModelLoadError { ModelLoadError(path: path, message: "default does not fit \(type)") }
        if case .null = value {
            guard nullable else { throw ModelLoadError(path: path, message: "null default on a non-nullable element") }
            return .null
        }
        switch type.base {
        case .bool:
            guard case .bool(let b) = value else { throw bad() }
            return .bool(b)
        case .uint, .enumeration, .bitmap:
            switch value {
            case .integer(let i) where i >= 0: return .unsigned(UInt64(i))
            case .unsigned(let u): return .unsigned(u)
            case .string(let s) where s.hasPrefix("0x"):
                guard let u = UInt64(s.dropFirst(2), radix: 16) else { throw bad() }
                return .unsigned(u)
            default: throw bad()
            }
        case .int:
            guard case .integer(let i) = value else { throw bad() }
            return .signed(i)
        case .single, .double:
            let d: Double
            switch value {
            case .integer(let i): d = Double(i)
            case .number(let n): d = n
            default: throw bad()
            }
            if case .single = type.base { return .float(Float(d)) }
            return .double(d)
        case .string:
            guard case .string(let s) = value else { throw bad() }
            return .utf8(s)
        case .octets:
            guard case .string(let s) = value, let bytes = hexBytes(s) else { throw bad() }
            return .bytes(bytes)
        case .list:
            guard case .array(let a) = value, a.isEmpty else { throw bad() }
            return .array([])
        case .structure, .semantic:
            throw bad()
        }
    }

    static func hexBytes(_ s: String) -> [UInt8]? {
        let chars = Array(s.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        var i = 0
        while i < chars.count {
            guard let b = UInt8(String(decoding: chars[i..<(i + 2)], as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
            i += 2
        }
        return out
    }
}

extension KeyedDecodingContainer {
    /// Keeps `"default": null` (a null default) apart from a missing key (no default);
    /// the synthesized decoders of the row types pick this overload.
    func decodeIfPresent(_ type: JSONValue.Type, forKey key: Key) throws -> JSONValue? {
        guard contains(key) else { return nil }
        return try decode(JSONValue.self, forKey: key)
    }
}
