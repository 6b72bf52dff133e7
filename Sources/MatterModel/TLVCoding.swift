// The typed side of the generated cluster layer (Generated/, scripts/matter-codegen.py):
// each cluster's structs, command requests and responses and event payloads convert to and
// from the TLV their fields are carried in. Decoding never traps: it throws a
// `TLVDecodingError` naming the type, the field (tag and name) and what was expected.
// Unknown context tags are skipped (Core spec 7.19.1: forward compatibility).
import Foundation
import MatterTLV

/// A value with a Matter TLV form: a field's type, a struct, a command, an event payload.
public protocol TLVCodable: Sendable {
    /// Decodes the value; throws `TLVDecodingError` when it has the wrong shape.
    init(tlv: TLVValue) throws
    /// The value as the TLV a field, command or event carries.
    var tlv: TLVValue { get }
}

/// A generated command of a cluster (request or response), as its fields' structure.
public protocol ClusterCommand: TLVCodable, Hashable {
    static var clusterID: ClusterID { get }
    static var commandID: CommandID { get }
}

/// A generated request answered with a response command (not a bare status).
public protocol ClusterCommandWithResponse: ClusterCommand {
    associatedtype Response: ClusterCommand
}

/// A generated event payload of a cluster, as its fields' structure.
public protocol ClusterEvent: TLVCodable, Hashable {
    static var clusterID: ClusterID { get }
    static var eventID: EventID { get }
    static var priority: EventPriority { get }
}

/// A field both nullable and optional (quality X, not mandatory): `nil` when absent,
/// `.null` when present as null, `.value` otherwise.
public enum Nullable<Wrapped> {
    case null
    case value(Wrapped)

    /// The value, or nil for null.
    public var nonNull: Wrapped? {
        if case .value(let v) = self { return v }
        return nil
    }

    public init(_ value: Wrapped?) {
        self = value.map(Nullable.value) ?? .null
    }
}

extension Nullable: Sendable where Wrapped: Sendable {}
extension Nullable: Equatable where Wrapped: Equatable {}
extension Nullable: Hashable where Wrapped: Hashable {}

extension Nullable: TLVCodable where Wrapped: TLVCodable {
    public init(tlv: TLVValue) throws {
        self = try tlv.isNull ? .null : .value(Wrapped(tlv: tlv))
    }

    public var tlv: TLVValue {
        switch self {
        case .null: .null
        case .value(let v): v.tlv
        }
    }
}

/// Why a TLV value is not the generated type it was decoded as.
public struct TLVDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Problem: Sendable, Hashable {
        /// A mandatory field is absent.
        case missing
        /// The element has another TLV type ("an integer", found "a string").
        case wrongType(expected: String, found: String)
        /// An integer that does not fit the field's type ("an integer in 0...255").
        case outOfRange(expected: String, found: String)
        /// Null where the field is not nullable.
        case nullNotAllowed(expected: String)
        /// An enum value the model does not define.
        case unknownEnumValue(type: String, value: UInt64)
    }

    /// The type decoded: "LevelControl.MoveToLevel", "DoorLock.CredentialStruct".
    public var type: String
    /// Where in it, field by field: "Credential (1).CredentialIndex (1)", "Targets (0)[2]"; empty
    /// when the value itself is wrong.
    public var field: String
    public var problem: Problem

    public init(type: String = "", field: String = "", _ problem: Problem) {
        self.type = type
        self.field = field
        self.problem = problem
    }

    /// The Interaction Model status for a command whose fields fail to decode (Core spec
    /// 8.8.3.2, 7.18): a missing field or a wrong type makes the command invalid; a value of
    /// the right type outside what the type allows is a constraint error.
    public var status: StatusCode {
        switch problem {
        case .missing, .wrongType: .invalidCommand
        case .outOfRange, .nullNotAllowed, .unknownEnumValue: .constraintError
        }
    }

    public var description: String {
        let place = [type, field.isEmpty ? "" : "field \(field)"].filter { !$0.isEmpty }.joined(separator: ": ")
        let prefix = place.isEmpty ? "" : place + ": "
        switch problem {
        case .missing: return prefix + "missing mandatory field"
        case .wrongType(let expected, let found): return prefix + "expected \(expected), found \(found)"
        case .outOfRange(let expected, let found): return prefix + "expected \(expected), found \(found)"
        case .nullNotAllowed(let expected): return prefix + "null is not allowed, expected \(expected)"
        case .unknownEnumValue(let type, let value): return prefix + "\(value) is not a value of \(type)"
        }
    }

    /// Whether the error is in the field of this model name (at the top level, or inside it).
    public func concerns(field name: String) -> Bool {
        field.hasPrefix(name + " (")
    }

    /// This error seen from one level up: inside `field` of `type`.
    func inside(_ type: String, field: String) -> TLVDecodingError {
        let inner = self.field.isEmpty ? "" : (self.field.hasPrefix("[") ? self.field : "." + self.field)
        return TLVDecodingError(type: type, field: field + inner, problem)
    }
}

extension TLVValue {
    /// What kind of element this is, in words, for decoding errors.
    var kindDescription: String {
        switch self {
        case .signed(let v): "the signed integer \(v)"
        case .unsigned(let v): "the unsigned integer \(v)"
        case .bool(let v): "the boolean \(v)"
        case .float, .double: "a floating-point number"
        case .utf8: "a string"
        case .bytes: "an octet string"
        case .null: "null"
        case .structure: "a structure"
        case .array: "an array"
        case .list: "a list"
        }
    }
}

// MARK: Reading and writing a structure's fields

/// Reads the context-tagged fields of a generated struct, command or event, naming `type`
/// and the field in every error. Fields it is not asked for are ignored.
public struct ClusterFieldReader {
    let type: String
    let members: [TLVElement]

    public init(_ value: TLVValue, _ type: String) throws {
        guard case .structure(let members) = value else {
            throw TLVDecodingError(type: type, .wrongType(expected: "a structure", found: value.kindDescription))
        }
        self.type = type
        self.members = members
    }

    private func element(_ tag: UInt8) -> TLVValue? {
        members.first { $0.tag == .context(tag) }?.value
    }

    private func decode<T: TLVCodable>(_ value: TLVValue, _ tag: UInt8, _ name: String) throws -> T {
        do {
            return try T(tlv: value)
        } catch let error as TLVDecodingError {
            throw error.inside(type, field: "\(name) (\(tag))")
        }
    }

    private func error(_ tag: UInt8, _ name: String, _ problem: TLVDecodingError.Problem) -> TLVDecodingError {
        TLVDecodingError(type: type, field: "\(name) (\(tag))", problem)
    }

    /// A mandatory, not nullable field. `default` stands in when it is absent: fields with a
    /// spec default that legacy clients leave out (OptionsMask, Application Cluster spec 1.6.7.1.1).
    public func mandatory<T: TLVCodable>(_ tag: UInt8, _ name: String, default fallback: TLVValue? = nil) throws -> T {
        guard let value = element(tag) ?? fallback else { throw error(tag, name, .missing) }
        if value.isNull { throw error(tag, name, .nullNotAllowed(expected: String(describing: T.self))) }
        return try decode(value, tag, name)
    }

    /// A mandatory nullable field: nil for null.
    public func nullable<T: TLVCodable>(_ tag: UInt8, _ name: String, default fallback: TLVValue? = nil) throws -> T? {
        guard let value = element(tag) ?? fallback else { throw error(tag, name, .missing) }
        if value.isNull { return nil }
        return try decode(value, tag, name) as T
    }

    /// An optional, not nullable field: nil when absent.
    public func optional<T: TLVCodable>(_ tag: UInt8, _ name: String) throws -> T? {
        guard let value = element(tag) else { return nil }
        if value.isNull { throw error(tag, name, .nullNotAllowed(expected: String(describing: T.self))) }
        return try decode(value, tag, name) as T
    }

    /// An optional nullable field: nil when absent, `.null` when null.
    public func optionalNullable<T: TLVCodable>(_ tag: UInt8, _ name: String) throws -> Nullable<T>? {
        guard let value = element(tag) else { return nil }
        if value.isNull { return .null }
        return .value(try decode(value, tag, name))
    }
}

/// Writes a generated type's fields as a structure, in the order given (the model's tag order).
public struct ClusterFieldWriter {
    public private(set) var fields: [TLVElement] = []

    public init() {}

    public mutating func mandatory(_ tag: UInt8, _ value: some TLVCodable) {
        fields.append(.context(tag, value.tlv))
    }

    /// A mandatory nullable field: nil is written as null.
    public mutating func nullable(_ tag: UInt8, _ value: (some TLVCodable)?) {
        fields.append(.context(tag, value?.tlv ?? .null))
    }

    /// An optional field (also an optional nullable one, as `Nullable`): nil is left out.
    public mutating func optional(_ tag: UInt8, _ value: (some TLVCodable)?) {
        if let value { fields.append(.context(tag, value.tlv)) }
    }

    public var value: TLVValue { .structure(fields) }
}

// MARK: Field types

/// Integers of either TLV signedness, as Core spec 7.18 lets a value of the right range be
/// written either way (the model's validator accepts both too); out of the Swift type's range
/// is a constraint error.
extension TLVCodable where Self: FixedWidthInteger {
    public init(tlv: TLVValue) throws {
        let fitted: Self?
        switch tlv {
        case .unsigned(let v): fitted = Self(exactly: v)
        case .signed(let v): fitted = Self(exactly: v)
        default: throw TLVDecodingError(.wrongType(expected: "an integer", found: tlv.kindDescription))
        }
        guard let fitted else {
            throw TLVDecodingError(
                .outOfRange(expected: "an integer in \(Self.min)...\(Self.max)", found: tlv.kindDescription))
        }
        self = fitted
    }
}

extension TLVCodable where Self: FixedWidthInteger & UnsignedInteger {
    public var tlv: TLVValue { .unsigned(UInt64(self)) }
}

extension TLVCodable where Self: FixedWidthInteger & SignedInteger {
    public var tlv: TLVValue { .signed(Int64(self)) }
}

extension UInt8: TLVCodable {}
extension UInt16: TLVCodable {}
extension UInt32: TLVCodable {}
extension UInt64: TLVCodable {}
extension Int8: TLVCodable {}
extension Int16: TLVCodable {}
extension Int32: TLVCodable {}
extension Int64: TLVCodable {}

extension Bool: TLVCodable {
    public init(tlv: TLVValue) throws {
        guard case .bool(let v) = tlv else { throw TLVDecodingError(.wrongType(expected: "a boolean", found: tlv.kindDescription)) }
        self = v
    }

    public var tlv: TLVValue { .bool(self) }
}

extension String: TLVCodable {
    public init(tlv: TLVValue) throws {
        guard case .utf8(let v) = tlv else { throw TLVDecodingError(.wrongType(expected: "a string", found: tlv.kindDescription)) }
        self = v
    }

    public var tlv: TLVValue { .utf8(self) }
}

/// Octet strings (octstr, and the address types built on it).
extension Data: TLVCodable {
    public init(tlv: TLVValue) throws {
        guard case .bytes(let v) = tlv else {
            throw TLVDecodingError(.wrongType(expected: "an octet string", found: tlv.kindDescription))
        }
        self = Data(v)
    }

    public var tlv: TLVValue { .bytes([UInt8](self)) }
}

extension Float: TLVCodable {
    public init(tlv: TLVValue) throws {
        switch tlv {
        case .float(let v): self = v
        default: throw TLVDecodingError(.wrongType(expected: "a single-precision number", found: tlv.kindDescription))
        }
    }

    public var tlv: TLVValue { .float(self) }
}

extension Double: TLVCodable {
    public init(tlv: TLVValue) throws {
        guard let v = tlv.doubleValue else { throw TLVDecodingError(.wrongType(expected: "a number", found: tlv.kindDescription)) }
        self = v
    }

    public var tlv: TLVValue { .double(self) }
}

/// Matter lists: TLV arrays (a TLV list is read too). An element's error names its index.
extension Array: TLVCodable where Element: TLVCodable {
    public init(tlv: TLVValue) throws {
        let members: [TLVElement]
        switch tlv {
        case .array(let m), .list(let m): members = m
        default: throw TLVDecodingError(.wrongType(expected: "a list", found: tlv.kindDescription))
        }
        var items: [Element] = []
        items.reserveCapacity(members.count)
        for (index, member) in members.enumerated() {
            do {
                items.append(try Element(tlv: member.value))
            } catch let error as TLVDecodingError {
                throw error.inside(error.type, field: "[\(index)]")
            }
        }
        self = items
    }

    public var tlv: TLVValue { .array(map { TLVElement($0.tlv) }) }
}

/// A generated enum: an unsigned integer that must be one of the model's values (Core spec
/// 7.19.2.23: a command with another value is a constraint error).
public protocol TLVEnum: TLVCodable, RawRepresentable where RawValue: FixedWidthInteger & UnsignedInteger & TLVCodable {}

extension TLVEnum {
    public init(tlv: TLVValue) throws {
        let raw = try RawValue(tlv: tlv)
        guard let value = Self(rawValue: raw) else {
            throw TLVDecodingError(.unknownEnumValue(type: String(describing: Self.self), value: UInt64(raw)))
        }
        self = value
    }

    public var tlv: TLVValue { .unsigned(UInt64(rawValue)) }
}

/// A generated bitmap: every bit kept, defined or not (the model's validator judges them).
public protocol TLVBitmap: TLVCodable, OptionSet where RawValue: FixedWidthInteger & UnsignedInteger & TLVCodable {}

extension TLVBitmap {
    public init(tlv: TLVValue) throws {
        self.init(rawValue: try RawValue(tlv: tlv))
    }

    public var tlv: TLVValue { .unsigned(UInt64(rawValue)) }
}
