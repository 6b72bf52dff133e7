import MatterTLV

/// Octets from a hex string; spaces are ignored ("0c 06 48").
func hex(_ text: String) -> [UInt8] {
    let digits = text.filter { !$0.isWhitespace }
    var out: [UInt8] = []
    var index = digits.startIndex
    while index < digits.endIndex {
        let next = digits.index(index, offsetBy: 2)
        out.append(UInt8(digits[index..<next], radix: 16)!)
        index = next
    }
    return out
}

func hexString(_ bytes: [UInt8]) -> String {
    bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
}

/// SplitMix64: a small seeded generator, so every run sees the same cases.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A name per error case, for counting outcomes. The switch is exhaustive so a
/// new error case forces the tests to account for it.
func kindName(_ error: TLVError) -> String {
    switch error {
    case .truncated: "truncated"
    case .badControlOctet: "badControlOctet"
    case .lengthPastEnd: "lengthPastEnd"
    case .nestingTooDeep: "nestingTooDeep"
    case .invalidUTF8: "invalidUTF8"
    case .unexpectedEndOfContainer: "unexpectedEndOfContainer"
    case .missingEndOfContainer: "missingEndOfContainer"
    case .trailingBytes: "trailingBytes"
    case .invalidTagInContainer: "invalidTagInContainer"
    case .duplicateTag: "duplicateTag"
    case .noCurrentElement: "noCurrentElement"
    case .notAContainer: "notAContainer"
    case .noOpenContainer: "noOpenContainer"
    }
}

/// The error kinds that malformed input alone can cause through `decode`.
let inputErrorKinds: Set<String> = [
    "truncated", "badControlOctet", "lengthPastEnd", "nestingTooDeep", "invalidUTF8",
    "unexpectedEndOfContainer", "missingEndOfContainer", "trailingBytes",
    "invalidTagInContainer", "duplicateTag",
]

/// Runs `decode` and reports the error instead of throwing.
func decodeResult(_ bytes: [UInt8], maxDepth: Int = 16) -> Result<TLVElement, TLVError> {
    do throws(TLVError) {
        return .success(try TLVElement.decode(bytes, maxDepth: maxDepth))
    } catch {
        return .failure(error)
    }
}
