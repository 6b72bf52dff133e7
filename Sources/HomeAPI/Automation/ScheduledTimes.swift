import Foundation

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
