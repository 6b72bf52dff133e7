// Setup passcode and discriminator rules (Core spec 5.1.7.1 "Invalid Passcodes" and
// 5.1.1.5 "Discriminator value"), and the stable per-device values a profile gets when
// it gives none.

public enum CommissioningCodes {
    /// The spec's setup passcode range: 27 bits, at most 99999998.
    public static let passcodeRange: ClosedRange<UInt32> = 1...99_999_998
    /// A 12-bit discriminator.
    public static let discriminatorRange: ClosedRange<UInt16> = 0...4095

    /// Passcodes the spec forbids because they are trivially guessable.
    public static let invalidPasscodes: Set<UInt32> = [
        0, 11_111_111, 22_222_222, 33_333_333, 44_444_444, 55_555_555,
        66_666_666, 77_777_777, 88_888_888, 99_999_999, 12_345_678, 87_654_321,
    ]

    public static func isValidPasscode(_ passcode: UInt32) -> Bool {
        passcodeRange.contains(passcode) && !invalidPasscodes.contains(passcode)
    }

    /// Why a passcode is rejected, or nil when it is valid.
    public static func passcodeProblem(_ passcode: Int64) -> String? {
        if passcode < 1 || passcode > Int64(passcodeRange.upperBound) {
            return "expected a setup passcode in 1...99999998, got \(passcode)"
        }
        if invalidPasscodes.contains(UInt32(passcode)) {
            return "setup passcode \(passcode) is one the spec forbids (00000000, 11111111, …, 99999999, 12345678, 87654321)"
        }
        return nil
    }

    /// A valid passcode and a discriminator derived from the device's identity: the same
    /// serial number (and vendor/product) always yields the same pair, so a restarted
    /// device keeps the setup code printed for it.
    public static func generated(serialNumber: String, vendorID: UInt16, productID: UInt16) -> (passcode: UInt32, discriminator: UInt16) {
        var rng = SplitMix64(seed: fnv1a64("\(vendorID):\(productID):\(serialNumber)"))
        var passcode: UInt32 = 0
        repeat {
            passcode = UInt32(rng.next() % UInt64(passcodeRange.upperBound)) + 1
        } while !isValidPasscode(passcode)
        let discriminator = UInt16(rng.next() % 4096)
        return (passcode, discriminator)
    }
}

extension CommissioningCodes {
    /// A manual pairing code carries only the discriminator's top 4 bits (the short
    /// discriminator, Core spec 5.1.1.5), so devices of one home that share them are twins
    /// to a controller given a manual code: it tries the passcode on each, and each wrong try
    /// counts toward closing that twin's window (5.4.2.5). Worse, one Avahi daemon answers
    /// for the whole home in one mDNS packet, and connectedhomeip takes only a few SRV
    /// records from a packet (CHIP_CONFIG_MINMDNS_MAX_PARALLEL_RESOLVES): with four twins,
    /// one was never found. So a home spreads its generated discriminators over the 16 short
    /// values: each keeps its low 8 bits and takes the least-used short value, its own when
    /// that is among the least used. Given discriminators stay as written and count first.
    /// Deterministic in file order, so every process of a home agrees.
    public static func spreadShortDiscriminators(_ entries: [(discriminator: UInt16, generated: Bool)]) -> [UInt16] {
        var uses = [Int](repeating: 0, count: 16)
        var taken = Set<UInt16>()
        for entry in entries where !entry.generated {
            uses[Int(entry.discriminator >> 8) & 0xF] += 1
            taken.insert(entry.discriminator)
        }
        return entries.map { entry in
            guard entry.generated else { return entry.discriminator }
            let fewest = uses.min() ?? 0
            let own = Int(entry.discriminator >> 8) & 0xF
            let short = uses[own] == fewest ? own : uses.firstIndex(of: fewest) ?? own
            let own12 = UInt16(short << 8) | (entry.discriminator & 0xFF)
            // The long discriminator (QR codes, the _L subtype) stays unique too, while the short
            // value has a free one: past 4,096 devices some must share (a fleet of 10,000 looped
            // here for ever before, issue #43), and then the device keeps its own low 8 bits.
            let free = (0..<256).lazy.map { UInt16(short << 8) | ((own12 &+ UInt16($0)) & 0xFF) }.first { !taken.contains($0) }
            let discriminator = free ?? own12
            uses[short] += 1
            taken.insert(discriminator)
            return discriminator
        }
    }
}

/// FNV-1a, 64-bit: a stable hash of text (Swift's `Hasher` is seeded per process).
public func fnv1a64(_ text: String) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in text.utf8 {
        hash ^= UInt64(byte)
        hash = hash &* 0x100_0000_01b3
    }
    return hash
}

/// SplitMix64: a tiny deterministic generator for values derived from a seed (setup codes,
/// a soak run's choices).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state = state &+ 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
