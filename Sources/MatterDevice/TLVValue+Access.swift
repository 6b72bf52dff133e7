import MatterTLV

// Small typed views of TLV values for cluster servers, beside MatterTLV's own
// accessors. Every accessor returns nil on a mismatch instead of trapping: values
// can come from a controller.

extension TLVValue {
    /// A non-negative integer of either signedness (the model has already checked
    /// the type; servers only need the number).
    var unsignedValue: UInt64? {
        switch self {
        case .unsigned(let value): return value
        case .signed(let value) where value >= 0: return UInt64(value)
        default: return nil
        }
    }

    /// An integer of either signedness as Int64, for servers that do arithmetic across
    /// unsigned attributes and signed command fields (nil past Int64.max).
    var integerValue: Int64? {
        switch self {
        case .unsigned(let value): return Int64(exactly: value)
        case .signed(let value): return value
        default: return nil
        }
    }

    /// A structure from context-tagged members, in tag order.
    static func contextStructure(_ members: [(UInt8, TLVValue)]) -> TLVValue {
        .structure(members.map { TLVElement(tag: .context($0.0), $0.1) })
    }

    /// A Matter list, encoded as a TLV array of anonymous elements.
    static func arrayOf(_ items: [TLVValue]) -> TLVValue {
        .array(items.map { TLVElement($0) })
    }

    /// The elements of a Matter list.
    var listItems: [TLVValue]? {
        switch self {
        case .array(let elements), .list(let elements): return elements.map(\.value)
        default: return nil
        }
    }

    static func uint(_ value: some BinaryInteger) -> TLVValue { .unsigned(UInt64(clamping: value)) }
}

/// The fields of an invoked command (a TLV structure with context tags).
public struct CommandFields: Sendable, Hashable {
    public var value: TLVValue

    public init(_ value: TLVValue) {
        self.value = value
    }

    public func field(_ tag: UInt8) -> TLVValue? { value[context: tag] }

    /// An unsigned field; nil when absent, null or of another type.
    public func unsigned(_ tag: UInt8) -> UInt64? { field(tag)?.unsignedValue }

    public func isNull(_ tag: UInt8) -> Bool { field(tag)?.isNull ?? false }
}
