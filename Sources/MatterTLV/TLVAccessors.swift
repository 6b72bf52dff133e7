// Typed views of TLV values for the layers above. Integer accessors keep the
// spec's signedness (A.11.1): a signed element is not an unsigned value, even
// when non-negative, as connectedhomeip's reader also insists.

extension TLVValue {
    /// The value of an unsigned integer element.
    public var uintValue: UInt64? {
        if case .unsigned(let v) = self { return v }
        return nil
    }

    /// The value of a signed integer element.
    public var intValue: Int64? {
        if case .signed(let v) = self { return v }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let v) = self { return v }
        return nil
    }

    /// The value of a single-precision element.
    public var floatValue: Float? {
        if case .float(let v) = self { return v }
        return nil
    }

    /// The value of a double-precision element, or a single-precision one widened.
    public var doubleValue: Double? {
        switch self {
        case .double(let v): v
        case .float(let v): Double(v)
        default: nil
        }
    }

    public var stringValue: String? {
        if case .utf8(let v) = self { return v }
        return nil
    }

    public var bytesValue: [UInt8]? {
        if case .bytes(let v) = self { return v }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The members of a structure, array or list; nil for other values.
    public var members: [TLVElement]? {
        switch self {
        case .structure(let m), .array(let m), .list(let m): m
        default: nil
        }
    }

    /// The first member of a structure or list with this tag.
    public subscript(tag: TLVTag) -> TLVValue? {
        switch self {
        case .structure(let m), .list(let m): m.first { $0.tag == tag }?.value
        default: nil
        }
    }

    /// The first member of a structure or list with this context-specific tag.
    public subscript(context tag: UInt8) -> TLVValue? {
        self[.context(tag)]
    }
}

extension TLVElement {
    /// An element with a context-specific tag, the common case inside structures.
    public static func context(_ tag: UInt8, _ value: TLVValue) -> TLVElement {
        TLVElement(tag: .context(tag), value)
    }

    /// The first member of this structure or list with this tag.
    public subscript(tag: TLVTag) -> TLVValue? { value[tag] }

    /// The first member of this structure or list with this context-specific tag.
    public subscript(context tag: UInt8) -> TLVValue? { value[context: tag] }
}

extension TLVTag {
    /// The profile-specific tag an implicit-profile tag stands for, given the
    /// profile in force (vendor ID in the upper 16 bits, profile number in the
    /// lower, spec A.2). Other tags are returned unchanged.
    public func resolvingImplicitProfile(_ profile: UInt32) -> TLVTag {
        guard case .implicitProfile(let number) = self else { return self }
        return .fullyQualified(
            vendorID: UInt16(truncatingIfNeeded: profile >> 16),
            profileNumber: UInt16(truncatingIfNeeded: profile),
            tagNumber: number)
    }

    /// The context-specific tag number, if this is one.
    public var contextNumber: UInt8? {
        if case .context(let n) = self { return n }
        return nil
    }
}

// Literals for the unambiguous cases; integers are left out on purpose since a
// literal cannot say whether it is signed or unsigned.
extension TLVValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .utf8(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
