import MatterModel
import MatterTLV

/// Temperature Measurement cluster (Application Cluster spec 2.3): MeasuredValue in
/// hundredths of a degree Celsius, kept within MinMeasuredValue…MaxMeasuredValue when
/// those are known (2.3.5.1: a reading outside them cannot be reported). The reading stays
/// as set, follows the profile's schedule, or takes a bounded random walk (`SensorReading`).
final class TemperatureMeasurementServer: PhysicallyOperated {
    static let clusterID = Clusters.TemperatureMeasurement.id

    typealias Attribute = Clusters.TemperatureMeasurement.Attribute

    private static let readingTimer = "reading"
    private let reading: SensorReading?
    /// The walk's generator state (SplitMix64): the same seed gives the same walk.
    private var randomState: UInt64

    init(reading: SensorReading? = nil) {
        self.reading = reading
        if case .randomWalk(_, _, _, let seed) = reading { randomState = seed } else { randomState = 0 }
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.measuredValue: .signed(2_000)
        case Attribute.minMeasuredValue: .signed(-2_000)
        case Attribute.maxMeasuredValue: .signed(5_000)
        default: nil
        }
    }

    func startUp(_ context: ClusterContext) {
        switch reading {
        case .schedule(let points, let period)?:
            guard let now = Self.scheduled(points, period: period, at: context.now) else { break }
            setReading(now.value, context)
            if let next = now.next { context.startTimer(Self.readingTimer, at: next) }
        case .randomWalk(let every, _, _, _)?:
            context.startTimer(Self.readingTimer, after: every)
        case nil:
            break
        }
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard name == Self.readingTimer else { return }
        switch reading {
        case .schedule(let points, let period)?:
            guard let now = Self.scheduled(points, period: period, at: context.now) else { return }
            setReading(now.value, context)
            if let next = now.next { context.startTimer(Self.readingTimer, at: next) }
        case .randomWalk(let every, let step, let range, _)?:
            let current = Double(context.value(Attribute.measuredValue)?.intValue ?? 0) / 100
            let move = (nextUnit() * 2 - 1) * step
            setReading(min(max(current + move, range.lowerBound), range.upperBound), context)
            context.startTimer(Self.readingTimer, after: every)
        case nil:
            break
        }
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .temperature(let celsius) = action else { throw PhysicalActionError("Temperature Measurement cannot \(action)") }
        guard celsius.isFinite else { throw PhysicalActionError("the temperature must be a number, not \(celsius)") }
        let hundredths = (celsius * 100).rounded()
        let (low, high) = bounds(context)
        guard hundredths >= Double(low), hundredths <= Double(high) else {
            throw PhysicalActionError(
                "\(celsius) °C is outside what this sensor measures (\(Double(low) / 100) to \(Double(high) / 100) °C)")
        }
        context.set(Attribute.measuredValue, .signed(Int64(hundredths)))
        // A forced reading holds for one full step of the walk, which then goes on from it.
        if case .randomWalk(let every, _, _, _)? = reading { context.startTimer(Self.readingTimer, after: every) }
    }

    private func bounds(_ context: ClusterContext) -> (Int64, Int64) {
        (context.value(Attribute.minMeasuredValue)?.intValue ?? -27_315, context.value(Attribute.maxMeasuredValue)?.intValue ?? 32_767)
    }

    /// Sets the reading in hundredths, within what the sensor measures.
    private func setReading(_ celsius: Double, _ context: ClusterContext) {
        let (low, high) = bounds(context)
        context.set(Attribute.measuredValue, .signed(min(max(Int64((celsius * 100).rounded()), low), high)))
    }

    /// The value the schedule gives at `time` (the last point at or before it; before the
    /// first point, the last one of the previous round when it repeats, else the first) and
    /// when the next point comes, if one does.
    static func scheduled(
        _ points: [SensorReading.SchedulePoint], period: Duration?, at time: Duration
    )
        -> (value: Double, next: Duration?)?
    {
        let sorted = points.sorted { $0.at < $1.at }
        guard let first = sorted.first, let last = sorted.last else { return nil }
        var roundStart = Duration.zero
        if let period, period > .zero {
            let rounds = time.totalMilliseconds / period.totalMilliseconds
            roundStart = period * Int(rounds)
        }
        let offset = time - roundStart
        let current = sorted.last { $0.at <= offset } ?? (period != nil ? last : first)
        if let upcoming = sorted.first(where: { $0.at > offset }) {
            return (current.value, roundStart + upcoming.at)
        }
        guard let period, period > .zero else { return (current.value, nil) }
        return (current.value, roundStart + period + first.at)
    }

    /// A uniform number in 0..<1 (SplitMix64).
    private func nextUnit() -> Double {
        randomState &+= 0x9E37_79B9_7F4A_7C15
        var z = randomState
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 53)
    }
}
