// The value tree of the Matter TLV format (Matter Core spec, Appendix A).
// Readers and writers in this module convert between bytes and these values;
// everything above this layer (attribute store, Interaction Model, certificates)
// speaks in TLVElement / TLVValue.

/// A TLV tag (spec A.2 "Tags"). The tag form on the wire is derived from the case
/// and, for profile tags, from the size of the tag number.
public enum TLVTag: Hashable, Sendable {
    case anonymous
    /// Context-specific tag, one octet.
    case context(UInt8)
    /// Common profile tag: 2 octets when the number fits in UInt16, else 4.
    case commonProfile(UInt32)
    /// Implicit profile tag: 2 octets when the number fits in UInt16, else 4.
    case implicitProfile(UInt32)
    /// Fully qualified tag: 6 octets when the number fits in UInt16, else 8.
    case fullyQualified(vendorID: UInt16, profileNumber: UInt16, tagNumber: UInt32)
}

/// A TLV value. Integers keep their signedness; width is chosen by the writer
/// (the shortest form that holds the value).
public indirect enum TLVValue: Hashable, Sendable {
    case signed(Int64)
    case unsigned(UInt64)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case utf8(String)
    case bytes([UInt8])
    case null
    /// Members of a structure; tags must be unique and non-anonymous.
    case structure([TLVElement])
    /// Members of an array; all anonymous.
    case array([TLVElement])
    /// Members of a list; tags may repeat and may be anonymous.
    case list([TLVElement])
}

/// One tagged TLV element.
public struct TLVElement: Hashable, Sendable {
    public var tag: TLVTag
    public var value: TLVValue

    public init(tag: TLVTag = .anonymous, _ value: TLVValue) {
        self.tag = tag
        self.value = value
    }
}
