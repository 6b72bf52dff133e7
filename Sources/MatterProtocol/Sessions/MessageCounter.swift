import MatterCrypto

/// A node's outgoing message counter (Matter Core spec 4.6.1): the global
/// unencrypted counter, or the counter of one secure session.
struct MessageCounter: Sendable {
    /// The value the next message will carry.
    private(set) var nextValue: UInt32
    /// Secure unicast counters must not roll over (spec 4.6.1.2); unencrypted ones may.
    let allowsRollover: Bool
    private var exhausted = false

    /// Spec 4.6.1.1: initialised to a random number in [1, 2^28].
    static func randomInitialValue() -> UInt32 {
        let r = SecureRandom.bytes(4)
        let raw = UInt32(r[0]) | UInt32(r[1]) << 8 | UInt32(r[2]) << 16 | UInt32(r[3]) << 24
        return (raw & 0x0FFF_FFFF) + 1
    }

    init(allowsRollover: Bool, initialValue: UInt32 = MessageCounter.randomInitialValue()) {
        self.nextValue = initialValue
        self.allowsRollover = allowsRollover
    }

    /// Returns the counter for the next message, or nil when a session counter is used up
    /// (the session must then be re-established).
    mutating func take() -> UInt32? {
        guard !exhausted else { return nil }
        let value = nextValue
        if nextValue == UInt32.max {
            if allowsRollover { nextValue = 0 } else { exhausted = true }
        } else {
            nextValue += 1
        }
        return value
    }
}
