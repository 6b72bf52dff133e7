import Foundation
import NIOConcurrencyHelpers

/// The clock scheduled starters follow. The runner reads it every poll and fires the
/// clock times it passed since the previous poll, so a clock that jumps still fires each once.
public protocol AutomationClock: Sendable {
    var now: Date { get }
}

/// Wall-clock time.
public struct SystemAutomationClock: AutomationClock {
    public init() {}
    public var now: Date { Date() }
}

/// Time running `factor` times faster than real time from `start` (for demos: a day in minutes).
public struct AcceleratedAutomationClock: AutomationClock {
    public let start: Date
    public let factor: Double
    // real time: clock: the real automation clock.
    private let origin = ContinuousClock.now

    public init(start: Date = Date(), factor: Double) {
        self.start = start
        self.factor = max(factor, 0)
    }

    public var now: Date {
        let elapsed = ContinuousClock.now - origin
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return start.addingTimeInterval(seconds * factor)
    }
}

/// A clock that moves only when told (tests).
public final class ManualAutomationClock: AutomationClock {
    private let current: NIOLockedValueBox<Date>

    public init(now: Date) { current = NIOLockedValueBox(now) }

    public var now: Date { current.withLockedValue { $0 } }

    public func advance(by seconds: TimeInterval) { current.withLockedValue { $0 = $0.addingTimeInterval(seconds) } }
    public func set(_ date: Date) { current.withLockedValue { $0 = date } }
}

/// The clock times of `time` in (from, to], in `timeZone`, at most one per day crossed.
func occurrences(of time: TimeOfDay, after from: Date, upTo to: Date, in timeZone: TimeZone) -> [Date] {
    guard to > from else { return [] }
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = timeZone
    var out: [Date] = []
    // Bounded: a jump of more than a few days fires the last occurrences only.
    var day = calendar.startOfDay(for: max(from, to.addingTimeInterval(-3 * 86_400)))
    while day <= to, out.count < 4 {
        if let t = calendar.date(bySettingHour: time.hours, minute: time.minutes, second: time.seconds, of: day), t > from, t <= to {
            out.append(t)
        }
        guard let next = calendar.date(byAdding: .day, value: 1, to: day) else { break }
        day = next
    }
    return out
}
