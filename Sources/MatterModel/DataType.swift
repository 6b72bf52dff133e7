// Data types of the Matter data model (Core spec 7.18 "Data Types").
// Semantic types (percent, node-id, fabric-idx, ...) keep their name so a UI or a
// profile can show "percent", while `base` gives the wire encoding and `implicitRange`
// the bounds the spec gives the type itself.
import MatterTLV

public indirect enum DataType: Sendable, Hashable, CustomStringConvertible {
    case bool
    case uint(bits: Int)
    case int(bits: Int)
    case single
    case double
    /// char_string: UTF-8 text.
    case string
    /// octstr: raw bytes.
    case octets
    /// A cluster enum by name ("StartUpOnOffEnum"), 8 or 16 bits.
    case enumeration(String, bits: Int)
    /// A cluster bitmap by name ("OnOffControlBitmap"), 8/16/32/64 bits.
    case bitmap(String, bits: Int)
    /// A cluster struct by name ("TargetStruct").
    case structure(String)
    case list(DataType)
    /// A semantic alias of a base type with its own bounds.
    case semantic(SemanticType)

    /// The encoding-level type (semantic aliases resolved).
    public var base: DataType {
        if case .semantic(let s) = self { return s.base }
        return self
    }

    public var isInteger: Bool {
        switch base {
        case .uint, .int, .enumeration, .bitmap: true
        default: false
        }
    }

    /// The spec's name of this type, as written in the model file.
    public var description: String {
        switch self {
        case .bool: "bool"
        case .uint(let b): "uint\(b)"
        case .int(let b): "int\(b)"
        case .single: "single"
        case .double: "double"
        case .string: "string"
        case .octets: "octstr"
        case .enumeration(let n, _), .bitmap(let n, _), .structure(let n): n
        case .list(let e): "list[\(e)]"
        case .semantic(let s): s.rawValue
        }
    }

    /// Names of cluster-defined types this type refers to (enum/bitmap/struct).
    public var referencedTypeName: String? {
        switch self {
        case .enumeration(let n, _), .bitmap(let n, _), .structure(let n): n.isEmpty ? nil : n
        case .list(let e): e.referencedTypeName
        default: nil
        }
    }

    /// Parses a primitive or semantic type name ("uint8", "percent100ths", "list[uint16]").
    /// Cluster-defined names are resolved by the loader, which passes `resolve`.
    static func parse(_ text: String, resolve: (String) -> DataType?) -> DataType? {
        let t = text.trimmingCharacters(in: .whitespaces)
        if t.hasPrefix("list[") && t.hasSuffix("]") {
            let inner = String(t.dropFirst(5).dropLast())
            return parse(inner, resolve: resolve).map { .list($0) }
        }
        switch t {
        case "bool", "boolean": return .bool
        case "single", "float": return .single
        case "double": return .double
        case "string", "char_string", "long_char_string": return .string
        case "octstr", "octet_string", "long_octet_string": return .octets
        case "enum8": return .enumeration("", bits: 8)
        case "enum16": return .enumeration("", bits: 16)
        case "map8": return .bitmap("", bits: 8)
        case "map16": return .bitmap("", bits: 16)
        case "map32": return .bitmap("", bits: 32)
        case "map64": return .bitmap("", bits: 64)
        default: break
        }
        for (prefix, make) in [("uint", { DataType.uint(bits: $0) }), ("int", { DataType.int(bits: $0) })] as [(String, (Int) -> DataType)]
        {
            if t.hasPrefix(prefix), let bits = Int(t.dropFirst(prefix.count)), bits % 8 == 0, (8...64).contains(bits) {
                return make(bits)
            }
        }
        if let s = SemanticType(rawValue: t) { return .semantic(s) }
        return resolve(t)
    }
}

/// Semantic data types (Core spec 7.18.2) used by the modelled clusters.
public enum SemanticType: String, Sendable, Hashable, CaseIterable {
    case percent
    case percent100ths
    case epochSeconds = "epoch-s"
    case epochMicroseconds = "epoch-us"
    case posixMilliseconds = "posix-ms"
    case elapsedSeconds = "elapsed-s"
    case systimeMicroseconds = "systime-us"
    case systimeMilliseconds = "systime-ms"
    case utc
    case temperature
    case vendorID = "vendor-id"
    case fabricIndex = "fabric-idx"
    case fabricID = "fabric-id"
    case nodeID = "node-id"
    case groupID = "group-id"
    case endpointNumber = "endpoint-no"
    case clusterID = "cluster-id"
    case attributeID = "attrib-id"
    case commandID = "command-id"
    case eventID = "event-id"
    case eventNumber = "event-no"
    case deviceTypeID = "devtype-id"
    case dataVersion = "data-ver"
    case entryIndex = "entry-idx"
    case subjectID = "subject-id"
    case actionID = "action-id"
    case transactionID = "trans-id"
    case tag = "tag"
    case namespace = "namespace"
    case status = "status"
    case priority = "priority"
    case ipAddress = "ipadr"
    case ipv4Address = "ipv4adr"
    case ipv6Address = "ipv6adr"
    case ipv6Prefix = "ipv6pre"
    case hardwareAddress = "hwadr"

    /// The encoding-level type.
    public var base: DataType {
        switch self {
        case .percent, .status, .priority, .fabricIndex, .actionID, .tag, .namespace: .uint(bits: 8)
        case .percent100ths, .vendorID, .groupID, .endpointNumber, .entryIndex: .uint(bits: 16)
        case .epochSeconds, .elapsedSeconds, .utc, .clusterID, .attributeID, .commandID,
            .eventID, .deviceTypeID, .dataVersion, .transactionID:
            .uint(bits: 32)
        case .epochMicroseconds, .posixMilliseconds, .systimeMicroseconds, .systimeMilliseconds,
            .fabricID, .nodeID, .subjectID, .eventNumber:
            .uint(bits: 64)
        case .temperature: .int(bits: 16)
        case .ipAddress, .ipv4Address, .ipv6Address, .ipv6Prefix, .hardwareAddress: .octets
        }
    }

    /// Bounds the type itself imposes beyond its base width (nil when none).
    public var implicitConstraint: Constraint? {
        switch self {
        case .percent: .range(min: 0, max: 100)
        case .percent100ths: .range(min: 0, max: 10000)
        case .fabricIndex: .range(min: 0, max: 254)
        case .temperature: .range(min: -27315, max: 32767)
        case .ipv4Address: .lengthRange(min: 4, max: 4)
        case .ipv6Address: .lengthRange(min: 16, max: 16)
        case .ipAddress: .allowedLengths([4, 16])
        case .ipv6Prefix: .lengthRange(min: 1, max: 17)
        case .hardwareAddress: .allowedLengths([6, 8])
        default: nil
        }
    }
}

extension DataType {
    /// `value` with each integer in the signedness this type has (Core spec A.11.1: a signed
    /// type is encoded as a signed integer), for values that came from a source where 2100 is
    /// just a number (a profile). Other values, and integers that do not fit, are left alone.
    public func encoding(_ value: TLVValue) -> TLVValue {
        switch (base, value) {
        case (.int, .unsigned(let u)) where u <= UInt64(Int64.max): return .signed(Int64(u))
        case (.uint, .signed(let v)) where v >= 0: return .unsigned(UInt64(v))
        case (.enumeration, .signed(let v)) where v >= 0, (.bitmap, .signed(let v)) where v >= 0: return .unsigned(UInt64(v))
        case (.list(let element), .array(let items)): return .array(items.map { TLVElement(tag: $0.tag, element.encoding($0.value)) })
        default: return value
        }
    }
}
