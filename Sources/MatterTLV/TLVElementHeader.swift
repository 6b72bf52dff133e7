/// The kind of a TLV element, as announced by its control octet.
public enum TLVElementType: Hashable, Sendable {
    case signedInteger, unsignedInteger, boolean, float, double
    case utf8String, octetString, null
    case structure, array, list

    public var isContainer: Bool {
        switch self {
        case .structure, .array, .list: true
        default: false
        }
    }
}

/// What `TLVReader.next()` found: the element's tag and type. Its value is
/// read with `readValue()`, entered with `enterContainer()`, or skipped.
public struct TLVElementHeader: Hashable, Sendable {
    public var tag: TLVTag
    public var type: TLVElementType

    public init(tag: TLVTag, type: TLVElementType) {
        self.tag = tag
        self.type = type
    }
}
