// The control octet (Matter Core spec A.7): the upper 3 bits select the tag
// control (A.7.2), the lower 5 bits the element type (A.7.1).

/// Element type field, the low 5 bits of the control octet (spec A.7.1).
enum TLVElementTypeCode {
    static let mask: UInt8 = 0x1F

    static let signedInt1: UInt8 = 0x00  // 0x00...0x03: 1, 2, 4, 8 octets
    static let unsignedInt1: UInt8 = 0x04  // 0x04...0x07: 1, 2, 4, 8 octets
    static let booleanFalse: UInt8 = 0x08
    static let booleanTrue: UInt8 = 0x09
    static let float32: UInt8 = 0x0A
    static let float64: UInt8 = 0x0B
    static let utf8Length1: UInt8 = 0x0C  // 0x0C...0x0F: 1, 2, 4, 8 octet length field
    static let octetsLength1: UInt8 = 0x10  // 0x10...0x13: 1, 2, 4, 8 octet length field
    static let null: UInt8 = 0x14
    static let structure: UInt8 = 0x15
    static let array: UInt8 = 0x16
    static let list: UInt8 = 0x17
    static let endOfContainer: UInt8 = 0x18
    // 0x19...0x1F are reserved.

    /// The types that come in four widths (1, 2, 4, 8 octets of value or of length field).
    static let signedInts = widths(signedInt1)
    static let unsignedInts = widths(unsignedInt1)
    static let utf8Strings = widths(utf8Length1)
    static let octetStrings = widths(octetsLength1)
    private static func widths(_ first: UInt8) -> ClosedRange<UInt8> { first...first + 3 }

    /// The width code (0...3 for 1, 2, 4, 8 octets) of the element types that
    /// come in four widths; it is the low two bits of the type.
    static func widthCode(_ type: UInt8) -> UInt8 { type & 0x03 }
}

/// Tag control field, the high 3 bits of the control octet (spec A.7.2).
/// All eight values are assigned, so no tag form is reserved on its own; only
/// End of Container must carry the anonymous form.
enum TLVTagControl {
    static let mask: UInt8 = 0xE0

    static let anonymous: UInt8 = 0x00
    static let contextSpecific: UInt8 = 0x20
    static let commonProfile2: UInt8 = 0x40
    static let commonProfile4: UInt8 = 0x60
    static let implicitProfile2: UInt8 = 0x80
    static let implicitProfile4: UInt8 = 0xA0
    static let fullyQualified6: UInt8 = 0xC0
    static let fullyQualified8: UInt8 = 0xE0

    /// Octets that follow the control octet for this tag control.
    static func tagLength(_ control: UInt8) -> Int {
        switch control & mask {
        case anonymous: 0
        case contextSpecific: 1
        case commonProfile2, implicitProfile2: 2
        case commonProfile4, implicitProfile4: 4
        case fullyQualified6: 6
        default: 8  // fullyQualified8
        }
    }
}

/// Octets needed for a value in 1/2/4/8 steps, as the width code 0...3.
/// Used for unsigned integers and for string length fields.
@inline(__always)
func tlvWidthCode(unsigned value: UInt64) -> UInt8 {
    if value <= UInt64(UInt8.max) { return 0 }
    if value <= UInt64(UInt16.max) { return 1 }
    if value <= UInt64(UInt32.max) { return 2 }
    return 3
}

/// Shortest two's-complement width code (0...3) that holds `value`.
@inline(__always)
func tlvWidthCode(signed value: Int64) -> UInt8 {
    if Int64(Int8.min)...Int64(Int8.max) ~= value { return 0 }
    if Int64(Int16.min)...Int64(Int16.max) ~= value { return 1 }
    if Int64(Int32.min)...Int64(Int32.max) ~= value { return 2 }
    return 3
}
