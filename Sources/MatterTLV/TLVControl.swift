// The control octet (Matter Core spec A.7): the upper 3 bits select the tag
// control (A.7.2), the lower 5 bits the element type (A.7.1).

/// Element type field, the low 5 bits of the control octet (spec A.7.1). The codes are generated
/// (Generated/TLVControlCodes.swift, from the SDK's chip.tlv): signedInt1, unsignedInt1 (then
/// the 2, 4, 8 octet forms), booleanFalse/True, float32, utf8Length1, octetsLength1 (then the
/// 2, 4, 8 octet length fields), null, structure, array, list, endOfContainer; the codes above
/// endOfContainer are reserved.
enum TLVElementTypeCode {
    static let mask: UInt8 = 0x1F

    /// A float's width is its type's low bit, as an integer's width code: 1 is 8 octets.
    static let float64 = float32 + 1

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

/// Tag control field, the high 3 bits of the control octet (spec A.7.2), its eight codes
/// generated (Generated/TLVControlCodes.swift, from chip.tlv). All eight values are assigned,
/// so no tag form is reserved on its own; only End of Container must carry the anonymous form.
enum TLVTagControl {
    static let mask: UInt8 = 0xE0

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
