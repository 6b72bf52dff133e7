// Duplicate detection of received messages (Matter Core spec 4.6.5): the largest
// counter seen from a peer plus a bitmap of the MSG_COUNTER_WINDOW_SIZE (32)
// counters just below it.

/// Verdict on a received message counter.
public enum CounterVerdict: Sendable, Equatable {
    case new
    case duplicate
}

/// The receive-side state for one peer's counter.
public struct PeerMessageCounter: Sendable, Hashable {
    public static let windowSize: UInt32 = 32

    /// Largest counter accepted so far; nil until the first message (unencrypted) fixes it.
    public private(set) var maxCounter: UInt32?
    /// Bit i set: counter maxCounter - (i + 1) has been received.
    private var window: UInt32 = 0

    /// Unsynchronised: the first unencrypted message sets the counter.
    public init() {}

    /// Synchronised at `value` (secure unicast sessions start at 0, spec 4.6.5.1).
    public init(synchronizedAt value: UInt32) {
        maxCounter = value
    }

    /// Restored at `value` from storage, which keeps no window: every counter up to it counts
    /// as received (a message just below it that never arrived is lost, never replayed).
    public init(restoredAt value: UInt32) {
        maxCounter = value
        window = .max
    }

    private enum Position { case future, max, inWindow(UInt32), beforeWindow }

    private func position(_ counter: UInt32, rollover: Bool, max: UInt32) -> Position {
        if rollover {
            let increase = counter &- max
            if increase >= 1 && increase <= UInt32(Int32.max) { return .future }
        } else if counter > max {
            return .future
        }
        if counter == max { return .max }
        let offset = max &- counter
        return offset <= Self.windowSize ? .inWindow(offset) : .beforeWindow
    }

    /// Encrypted unicast messages (spec 4.6.5.2.1): no rollover; anything at or before
    /// the window's start, or already marked in it, is a duplicate. Commits new counters.
    public mutating func acceptEncryptedUnicast(_ counter: UInt32) -> CounterVerdict {
        let max = maxCounter ?? 0
        switch position(counter, rollover: false, max: max) {
        case .future:
            commitFuture(counter, max: max)
            return .new
        case .inWindow(let offset):
            return markInWindow(offset)
        case .max, .beforeWindow:
            return .duplicate
        }
    }

    /// Unencrypted messages (spec 4.6.5.2.2): the counter may roll over, and one from
    /// before the window is taken as new because the peer may have restarted.
    public mutating func acceptUnencrypted(_ counter: UInt32) -> CounterVerdict {
        guard let max = maxCounter else {
            maxCounter = counter
            window = 0
            return .new
        }
        switch position(counter, rollover: true, max: max) {
        case .future, .beforeWindow:
            commitFuture(counter, max: max)
            return .new
        case .inWindow(let offset):
            return markInWindow(offset)
        case .max:
            return .duplicate
        }
    }

    private mutating func markInWindow(_ offset: UInt32) -> CounterVerdict {
        let bit: UInt32 = 1 << (offset - 1)
        if window & bit != 0 { return .duplicate }
        window |= bit
        return .new
    }

    private mutating func commitFuture(_ counter: UInt32, max: UInt32) {
        let shift = counter &- max
        maxCounter = counter
        if shift > Self.windowSize || shift == 0 {
            window = 0
        } else {
            // The old max moves into the window at offset `shift`.
            window = shift == 32 ? 0 : window << shift
            window |= 1 << (shift - 1)
        }
    }
}
