// Small byte helpers shared by the module.

extension Array where Element == UInt8 {
    /// Parses a hexadecimal string (whitespace, ':' and '-' ignored). Returns nil on any other character
    /// or an odd digit count.
    public init?(hexString: String) {
        var out: [UInt8] = []
        out.reserveCapacity(hexString.utf8.count / 2)
        var high: UInt8? = nil
        for c in hexString.utf8 {
            let nibble: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): nibble = c - UInt8(ascii: "A") + 10
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\t"), UInt8(ascii: ":"), UInt8(ascii: "-"):
                continue
            default: return nil
            }
            if let h = high {
                out.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        guard high == nil else { return nil }
        self = out
    }

    /// Lower-case hexadecimal, no separators.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var chars: [UInt8] = []
        chars.reserveCapacity(count * 2)
        for b in self {
            chars.append(digits[Int(b >> 4)])
            chars.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: chars, as: UTF8.self)
    }
}

/// Compares two byte strings without an early exit, so timing does not reveal
/// how many leading bytes of a MAC matched.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    var diff: UInt8 = 0
    for i in 0..<a.count { diff |= a[i] ^ b[i] }
    return diff == 0
}

@inline(__always)
func littleEndianBytes(_ v: UInt64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }
}

@inline(__always)
func bigEndianBytes(_ v: UInt64) -> [UInt8] {
    (0..<8).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * UInt64($0))) }
}

@inline(__always)
func requireLength(_ bytes: [UInt8], _ expected: Int, _ what: String) throws(MatterCryptoError) {
    guard bytes.count == expected else {
        throw .invalidLength(what: what, expected: expected, actual: bytes.count)
    }
}
