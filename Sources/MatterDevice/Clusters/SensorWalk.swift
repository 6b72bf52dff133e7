import MatterModel
import MatterTLV

/// A sensor's reading on the node clock, from the profile (`SensorReading`): it stays as set,
/// follows a schedule, or takes a bounded, seeded random walk, in the unit the profile and
/// `act` speak (°C, %, lux, ppm, …). Every measurement cluster server owns one; the server
/// turns the unit into its MeasuredValue.
final class SensorWalk {
    static let timer = "reading"
    let reading: SensorReading?
    /// The walk's generator state (SplitMix64): the same seed gives the same walk.
    private var randomState: UInt64

    init(_ reading: SensorReading?) {
        self.reading = reading
        if case .randomWalk(_, _, _, let seed) = reading { randomState = seed } else { randomState = 0 }
    }

    /// At start-up a schedule sets its current point; a walk moves after its first step.
    func start(_ context: ClusterContext, set: (Double) -> Void) {
        switch reading {
        case .schedule(let points, let period)?:
            guard let now = Self.scheduled(points, period: period, at: context.now) else { break }
            set(now.value)
            if let next = now.next { context.startTimer(Self.timer, at: next) }
        case .randomWalk(let every, _, _, _)?:
            context.startTimer(Self.timer, after: every)
        case nil:
            break
        }
    }

    /// The timer ran out: the next point of the schedule, or a step of the walk from `current`.
    func fired(_ name: String, _ context: ClusterContext, current: Double, set: (Double) -> Void) {
        guard name == Self.timer else { return }
        switch reading {
        case .schedule(let points, let period)?:
            guard let now = Self.scheduled(points, period: period, at: context.now) else { return }
            set(now.value)
            if let next = now.next { context.startTimer(Self.timer, at: next) }
        case .randomWalk(let every, let step, let range, _)?:
            let move = (nextUnit() * 2 - 1) * step
            set(min(max(current + move, range.lowerBound), range.upperBound))
            context.startTimer(Self.timer, after: every)
        case nil:
            break
        }
    }

    /// A forced reading (`act`) holds for one full step of the walk, which then goes on from
    /// it; a schedule's next point replaces it.
    func forced(_ context: ClusterContext) {
        if case .randomWalk(let every, _, _, _)? = reading { context.startTimer(Self.timer, after: every) }
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

/// A measurement cluster whose MeasuredValue is an integer standing for a quantity
/// (Application Cluster spec 2.x: Temperature, Relative Humidity, Illuminance, Pressure and
/// Flow Measurement): MeasuredValue within MinMeasuredValue…MaxMeasuredValue (a reading outside
/// them cannot be reported), driven by its `SensorWalk` and by `act`. A conforming server
/// gives its attributes, its encoding and the act it takes; the behaviour is shared.
protocol MeasuredQuantityServer: PhysicallyOperated {
    var walk: SensorWalk { get }
    static var measuredValue: AttributeID { get }
    static var minMeasuredValue: AttributeID { get }
    static var maxMeasuredValue: AttributeID { get }
    /// What the cluster measures and in what unit, for messages ("temperature", "°C").
    static var quantity: (name: String, unit: String) { get }
    /// MeasuredValue's widest range (the type's, when Min/MaxMeasuredValue are null).
    static var encodable: ClosedRange<Int64> { get }
    /// MeasuredValue of signed type (int16).
    static var isSigned: Bool { get }
    /// The reading an action sets, nil when the action is not this cluster's.
    static func reading(of action: PhysicalAction) -> Double?
    /// The quantity as MeasuredValue (before bounds), and back.
    static func encode(_ value: Double) -> Double
    static func decode(_ measured: Int64) -> Double
}

extension MeasuredQuantityServer {
    func startUp(_ context: ClusterContext) {
        walk.start(context) { setReading($0, context) }
    }

    func timerFired(_ name: String, context: ClusterContext) {
        guard let measured = context.value(Self.measuredValue)?.integerValue else {
            walk.fired(name, context, current: Self.decode(bounds(context).lowerBound)) { setReading($0, context) }
            return
        }
        walk.fired(name, context, current: Self.decode(measured)) { setReading($0, context) }
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard let value = Self.reading(of: action) else { throw PhysicalActionError("\(Self.quantity.name) measurement cannot \(action)") }
        guard value.isFinite else { throw PhysicalActionError("the \(Self.quantity.name) must be a number, not \(value)") }
        let encoded = Self.encode(value).rounded()
        let range = bounds(context)
        guard encoded.isFinite, encoded >= Double(range.lowerBound), encoded <= Double(range.upperBound) else {
            throw PhysicalActionError(
                "\(value) \(Self.quantity.unit) is outside what this sensor measures "
                    + "(\(Self.shown(Self.decode(range.lowerBound))) to \(Self.shown(Self.decode(range.upperBound))) \(Self.quantity.unit))"
            )
        }
        context.set(Self.measuredValue, Self.tlv(Int64(encoded)))
        walk.forced(context)
    }

    /// MinMeasuredValue…MaxMeasuredValue, each the type's end when null or absent.
    func bounds(_ context: ClusterContext) -> ClosedRange<Int64> {
        let low = context.value(Self.minMeasuredValue)?.integerValue ?? Self.encodable.lowerBound
        let high = context.value(Self.maxMeasuredValue)?.integerValue ?? Self.encodable.upperBound
        return low <= high ? low...high : low...low
    }

    /// Sets MeasuredValue from a reading in the quantity's unit, within what the sensor measures.
    func setReading(_ value: Double, _ context: ClusterContext) {
        let range = bounds(context)
        let encoded = Self.encode(value).rounded()
        let clamped = encoded.isNaN ? range.lowerBound : Int64(min(max(encoded, Double(range.lowerBound)), Double(range.upperBound)))
        context.set(Self.measuredValue, Self.tlv(clamped))
    }

    static func tlv(_ measured: Int64) -> TLVValue { isSigned ? .signed(measured) : .unsigned(UInt64(max(0, measured))) }

    private static func shown(_ value: Double) -> String {
        let rounded = (value * 100).rounded() / 100
        return rounded == rounded.rounded() ? String(Int64(rounded)) : String(rounded)
    }
}
