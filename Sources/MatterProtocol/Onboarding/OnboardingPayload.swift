// Onboarding payloads (Matter Core spec 5.1): the QR code payload ("MT:" + Base38) and the
// 11-digit manual pairing code with its Verhoeff check digit. The device prints both; the
// controller parses both.

/// How a commissioner can reach the device (spec 5.1.1.4 "Discovery Capabilities Bitmask").
public struct DiscoveryCapabilities: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let softAP = DiscoveryCapabilities(rawValue: 1 << 0)
    public static let ble = DiscoveryCapabilities(rawValue: 1 << 1)
    public static let onNetwork = DiscoveryCapabilities(rawValue: 1 << 2)
}

public enum OnboardingPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidPasscode(UInt32)
    case invalidDiscriminator(UInt16)
    case badPrefix
    case badCharacter(Character)
    case badLength
    case badCheckDigit
    case unsupportedVersion(UInt8)

    public var description: String {
        switch self {
        case .invalidPasscode(let p): "passcode \(p) is not allowed (1...99999998, not a trivial value)"
        case .invalidDiscriminator(let d): "discriminator \(d) is out of range 0...4095"
        case .badPrefix: "a QR payload starts with \"MT:\""
        case .badCharacter(let c): "'\(c)' is not a Base38 character"
        case .badLength: "the payload has the wrong length"
        case .badCheckDigit: "the check digit does not match"
        case .unsupportedVersion(let v): "payload version \(v) is not supported"
        }
    }
}

public struct OnboardingPayload: Sendable, Hashable {
    public var version: UInt8 = 0
    public var vendorID: UInt16
    public var productID: UInt16
    /// 0 standard, 1 user-intent, 2 custom (spec 5.1.1.3).
    public var commissioningFlow: UInt8 = 0
    public var discoveryCapabilities: DiscoveryCapabilities
    /// The long (12-bit) discriminator; a manual code carries only the short (upper 4 bits).
    public var discriminator: UInt16
    /// True when parsed from a manual code, where only the short discriminator is known.
    public var hasShortDiscriminatorOnly: Bool = false
    public var passcode: UInt32

    public init(
        vendorID: UInt16, productID: UInt16, discriminator: UInt16, passcode: UInt32,
        discoveryCapabilities: DiscoveryCapabilities = .onNetwork, commissioningFlow: UInt8 = 0
    ) {
        self.vendorID = vendorID
        self.productID = productID
        self.discriminator = discriminator
        self.passcode = passcode
        self.discoveryCapabilities = discoveryCapabilities
        self.commissioningFlow = commissioningFlow
    }

    public var shortDiscriminator: UInt8 { UInt8(truncatingIfNeeded: discriminator >> 8) }

    /// Spec 5.1.7.1: passcodes 00000000, 11111111 ... 99999999, 12345678 and 87654321 are invalid,
    /// and a passcode fits in 27 bits below 99999999.
    public static func isValidPasscode(_ passcode: UInt32) -> Bool {
        guard passcode >= 1, passcode <= 99_999_998 else { return false }
        if [12_345_678, 87_654_321].contains(passcode) { return false }
        return !(0...9).contains { passcode == UInt32($0) * 11_111_111 }
    }

    func validate() throws(OnboardingPayloadError) {
        guard Self.isValidPasscode(passcode) else { throw .invalidPasscode(passcode) }
        guard discriminator <= 0xFFF else { throw .invalidDiscriminator(discriminator) }
    }

    // MARK: Manual pairing code (spec 5.1.4)

    /// The 11-digit manual pairing code (no vendor/product ID, standard flow).
    public func manualPairingCode() throws(OnboardingPayloadError) -> String {
        try validate()
        let short = UInt32(shortDiscriminator)
        let chunk1 = short >> 2  // VID_PID_PRESENT = 0
        let chunk2 = ((short & 0x3) << 14) | (passcode & 0x3FFF)
        let chunk3 = passcode >> 14
        let digits = String(chunk1) + pad(chunk2, 5) + pad(chunk3, 4)
        return digits + String(Verhoeff.checkDigit(for: digits))
    }

    /// Formats a manual code for people: `3497-011-2332`.
    public static func grouped(_ code: String) -> String {
        guard code.count == 11 else { return code }
        let c = Array(code)
        return String(c[0..<4]) + "-" + String(c[4..<7]) + "-" + String(c[7..<11])
    }

    /// Parses an 11- or 21-digit manual pairing code; dashes and spaces are ignored.
    public static func parseManualCode(_ text: String) throws(OnboardingPayloadError) -> OnboardingPayload {
        let digits = text.filter { $0 != "-" && $0 != " " }
        guard digits.count == 11 || digits.count == 21 else { throw .badLength }
        if let bad = digits.first(where: { !("0"..."9").contains($0) }) { throw .badCharacter(bad) }
        let d = digits.compactMap { $0.wholeNumberValue.map(UInt32.init) }
        guard Verhoeff.checkDigit(for: String(digits.dropLast())) == Int(d[d.count - 1]) else { throw .badCheckDigit }
        func number(_ range: Range<Int>) -> UInt32 { d[range].reduce(0) { $0 * 10 + $1 } }
        let chunk1 = number(0..<1), chunk2 = number(1..<6), chunk3 = number(6..<10)
        let vidPidPresent = (chunk1 >> 2) & 1 == 1
        guard vidPidPresent == (digits.count == 21) else { throw .badLength }
        let short = UInt16(((chunk1 & 0x3) << 2) | (chunk2 >> 14))
        let passcode = (chunk2 & 0x3FFF) | (chunk3 << 14)
        var vendor: UInt16 = 0, product: UInt16 = 0
        if vidPidPresent {
            guard let v = UInt16(exactly: number(10..<15)), let p = UInt16(exactly: number(15..<20)) else { throw .badLength }
            vendor = v
            product = p
        }
        var payload = OnboardingPayload(
            vendorID: vendor, productID: product, discriminator: short << 8,
            passcode: passcode, discoveryCapabilities: [])
        payload.hasShortDiscriminatorOnly = true
        payload.commissioningFlow = vidPidPresent ? 2 : 0
        try payload.validate()
        return payload
    }

    // MARK: QR code payload (spec 5.1.3)

    /// `MT:` followed by the Base38 form of the 88-bit packed payload.
    public func qrCode() throws(OnboardingPayloadError) -> String {
        try validate()
        var bits = BitPacker()
        bits.append(UInt64(version), width: 3)
        bits.append(UInt64(vendorID), width: 16)
        bits.append(UInt64(productID), width: 16)
        bits.append(UInt64(commissioningFlow), width: 2)
        bits.append(UInt64(discoveryCapabilities.rawValue), width: 8)
        bits.append(UInt64(discriminator), width: 12)
        bits.append(UInt64(passcode), width: 27)
        bits.append(0, width: 4)  // padding
        return "MT:" + Base38.encode(bits.bytes)
    }

    public static func parseQRCode(_ text: String) throws(OnboardingPayloadError) -> OnboardingPayload {
        guard text.hasPrefix("MT:") else { throw .badPrefix }
        let bytes = try Base38.decode(String(text.dropFirst(3)))
        guard bytes.count >= 11 else { throw .badLength }
        var reader = BitReader(bytes: bytes)
        let version = UInt8(reader.read(width: 3))
        guard version == 0 else { throw .unsupportedVersion(version) }
        let vendor = UInt16(reader.read(width: 16))
        let product = UInt16(reader.read(width: 16))
        let flow = UInt8(reader.read(width: 2))
        let caps = DiscoveryCapabilities(rawValue: UInt8(reader.read(width: 8)))
        let discriminator = UInt16(reader.read(width: 12))
        let passcode = UInt32(reader.read(width: 27))
        let payload = OnboardingPayload(
            vendorID: vendor, productID: product, discriminator: discriminator,
            passcode: passcode, discoveryCapabilities: caps, commissioningFlow: flow)
        try payload.validate()
        return payload
    }

    /// Parses either form.
    public static func parse(_ text: String) throws(OnboardingPayloadError) -> OnboardingPayload {
        text.hasPrefix("MT:") ? try parseQRCode(text) : try parseManualCode(text)
    }
}

private func pad(_ value: UInt32, _ width: Int) -> String {
    let s = String(value)
    return String(repeating: "0", count: max(0, width - s.count)) + s
}

/// Packs fields least-significant bit first, as the QR payload does (spec 5.1.3.1).
struct BitPacker {
    private(set) var bytes: [UInt8] = []
    private var bitCount = 0

    mutating func append(_ value: UInt64, width: Int) {
        for i in 0..<width {
            if bitCount % 8 == 0 { bytes.append(0) }
            if (value >> UInt64(i)) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(1 << (bitCount % 8)) }
            bitCount += 1
        }
    }
}

struct BitReader {
    let bytes: [UInt8]
    private var position = 0
    init(bytes: [UInt8]) { self.bytes = bytes }

    mutating func read(width: Int) -> UInt64 {
        var value: UInt64 = 0
        for i in 0..<width {
            let byte = position / 8
            if byte < bytes.count, (bytes[byte] >> UInt8(position % 8)) & 1 == 1 { value |= 1 << UInt64(i) }
            position += 1
        }
        return value
    }
}

/// Base38 (spec 5.1.3.1): 3 bytes → 5 characters, a trailing 2 → 4, a trailing 1 → 2, little-endian.
enum Base38 {
    static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-.")

    static func encode(_ bytes: [UInt8]) -> String {
        var out = ""
        var i = 0
        while i < bytes.count {
            let n = min(3, bytes.count - i)
            var value: UInt32 = 0
            for j in 0..<n { value |= UInt32(bytes[i + j]) << (8 * UInt32(j)) }
            let chars = [0, 2, 4, 5][n]
            for _ in 0..<chars {
                out.append(alphabet[Int(value % 38)])
                value /= 38
            }
            i += n
        }
        return out
    }

    static func decode(_ text: String) throws(OnboardingPayloadError) -> [UInt8] {
        let chars = Array(text)
        var out: [UInt8] = []
        var i = 0
        while i < chars.count {
            let n = min(5, chars.count - i)
            let byteCount: Int
            switch n {
            case 5: byteCount = 3
            case 4: byteCount = 2
            case 2: byteCount = 1
            default: throw .badLength
            }
            var value: UInt64 = 0
            for j in stride(from: n - 1, through: 0, by: -1) {
                guard let digit = alphabet.firstIndex(of: chars[i + j]) else { throw .badCharacter(chars[i + j]) }
                value = value * 38 + UInt64(digit)
            }
            guard value < (1 << (8 * UInt64(byteCount))) else { throw .badLength }
            for j in 0..<byteCount { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(j)))) }
            i += n
        }
        return out
    }
}

/// The Verhoeff check digit (dihedral group D5), as the manual pairing code uses it.
enum Verhoeff {
    private static let d: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
        [2, 3, 4, 0, 1, 7, 8, 9, 5, 6], [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
        [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
        [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
        [8, 7, 6, 5, 9, 3, 2, 1, 0, 4], [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    ]
    private static let p: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
        [5, 8, 0, 3, 7, 9, 6, 1, 4, 2], [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
        [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
        [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
    ]
    private static let inverse = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]

    static func checkDigit(for digits: String) -> Int {
        var c = 0
        for (i, ch) in digits.reversed().enumerated() {
            let digit = Int(ch.asciiValue ?? 48) - 48
            c = d[c][p[(i + 1) % 8][digit]]
        }
        return inverse[c]
    }
}
