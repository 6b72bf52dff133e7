import MatterModel
import MatterTLV

/// What a concentration cluster measures (Application Cluster spec 2.10: one cluster
/// definition, one cluster ID per substance) and how air of that concentration is graded.
public enum Substance: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case co2, pm25, pm10, tvoc

    public var description: String { rawValue }

    var clusterID: ClusterID {
        switch self {
        case .co2: Clusters.CarbonDioxideConcentrationMeasurement.id
        case .pm25: Clusters.Pm25ConcentrationMeasurement.id
        case .pm10: Clusters.Pm10ConcentrationMeasurement.id
        case .tvoc: Clusters.TotalVolatileOrganicCompoundsConcentrationMeasurement.id
        }
    }

    /// The unit readings, grades and `act` use (MeasurementUnit: ppm, µg/m³, ppb).
    var unit: Clusters.Pm25ConcentrationMeasurement.MeasurementUnitEnum {
        switch self {
        case .co2: .ppm
        case .pm25, .pm10: .ugm3
        case .tvoc: .ppb
        }
    }

    var unitName: String { unit == .ppm ? "ppm" : unit == .ppb ? "ppb" : "µg/m³" }

    /// The upper bounds of Good, Fair, Moderate, Poor and VeryPoor air (above the last:
    /// ExtremelyPoor): PM from the US EPA's AQI breakpoints, CO2 and TVOC from indoor-air
    /// guidance (the spec leaves the grading to the device).
    var gradeBounds: [Double] {
        switch self {
        case .co2: [800, 1_000, 1_200, 1_500, 2_000]
        case .pm25: [12, 25, 35.4, 55.4, 150.4]
        case .pm10: [54, 100, 154, 254, 354]
        case .tvoc: [220, 440, 660, 1_430, 2_200]
        }
    }

    /// The air's grade at a concentration in `unit`.
    func grade(_ value: Double) -> AirQualityServer.Grade {
        let index = gradeBounds.firstIndex { value <= $0 } ?? gradeBounds.count
        return AirQualityServer.Grade(rawValue: UInt8(index + 1)) ?? .extremelyPoor
    }

    init?(clusterID: ClusterID) {
        guard let found = Self.allCases.first(where: { $0.clusterID == clusterID }) else { return nil }
        self = found
    }
}

/// A Concentration Measurement cluster (Application Cluster spec 2.10) for one substance:
/// with NumericMeasurement, MeasuredValue (single, in MeasurementUnit) from the profile's
/// reading (`SensorWalk`) or `act NODE co2 1200`, with PeakMeasurement and AverageMeasurement
/// the peak and mean over their windows on the node clock; with LevelIndication, LevelValue
/// from the substance's grades (Low: good or fair air, Medium: moderate, High: poor or very
/// poor, Critical: extremely poor; a level the features lack counts as High). Each change
/// tells the endpoint's Air Quality cluster, which grades the air from all of them.
final class ConcentrationMeasurementServer: PhysicallyOperable {
    // One cluster definition serves every substance (so no one static cluster ID); every concentration cluster has these attribute IDs and enums (2.10.6).
    typealias Attribute = Clusters.Pm25ConcentrationMeasurement.Attribute
    typealias Feature = Clusters.Pm25ConcentrationMeasurement.Feature
    typealias Level = Clusters.Pm25ConcentrationMeasurement.LevelValueEnum

    let substance: Substance
    private let features: Set<String>
    private let walk: SensorWalk
    /// Readings within the longer of the peak and average windows: (when, value).
    private var samples: [(at: Duration, value: Double)] = []
    private static let maxSamples = 10_000

    init(substance: Substance, features: Set<String>, reading: SensorReading?) {
        self.substance = substance
        self.features = features
        walk = SensorWalk(reading)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        let typical = substance.gradeBounds[0] / 2
        switch attribute {
        case Attribute.measuredValue, Attribute.peakMeasuredValue, Attribute.averageMeasuredValue: return .float(Float(typical))
        case Attribute.minMeasuredValue: return .float(0)
        case Attribute.maxMeasuredValue: return .float(Float(substance.gradeBounds[4] * 5))
        case Attribute.peakMeasuredValueWindow, Attribute.averageMeasuredValueWindow: return .uint(3_600)
        case Attribute.measurementUnit: return .uint(substance.unit.rawValue)
        case Attribute.measurementMedium: return .uint(Clusters.Pm25ConcentrationMeasurement.MeasurementMediumEnum.air.rawValue)
        case Attribute.levelValue: return .uint(level(for: substance.grade(typical)).rawValue)
        default: return nil
        }
    }

    func startUp(_ context: ClusterContext) {
        if let value = measured(context) { record(value, context) }
        walk.start(context) { setReading($0, context) }
        gradeChanged(context)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        walk.fired(name, context, current: measured(context) ?? 0) { setReading($0, context) }
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .concentration(let substance, let value) = action, substance == self.substance else {
            throw PhysicalActionError("\(substance) concentration measurement cannot \(action)")
        }
        guard features.contains(Feature.numericMeasurement) else {
            throw PhysicalActionError("this \(substance) sensor indicates levels only (no NumericMeasurement feature)")
        }
        let range = bounds(context)
        guard value.isFinite, range.contains(value) else {
            throw PhysicalActionError(
                "\(value) \(substance.unitName) is outside what this sensor measures (\(range.lowerBound) to \(range.upperBound) \(substance.unitName))"
            )
        }
        setReading(value, context)
        walk.forced(context)
    }

    /// The air's grade at the current reading, nil without one.
    func grade(_ context: ClusterContext) -> AirQualityServer.Grade? {
        measured(context).map(substance.grade)
    }

    private func measured(_ context: ClusterContext) -> Double? {
        guard features.contains(Feature.numericMeasurement) else { return nil }
        return context.value(Attribute.measuredValue)?.doubleValue
    }

    private func bounds(_ context: ClusterContext) -> ClosedRange<Double> {
        func bound(_ attribute: AttributeID) -> Double? { context.value(attribute)?.doubleValue }
        let low = bound(Attribute.minMeasuredValue) ?? 0
        let high = bound(Attribute.maxMeasuredValue) ?? Double(Float.greatestFiniteMagnitude)
        return low <= high ? low...high : low...low
    }

    private func setReading(_ value: Double, _ context: ClusterContext) {
        guard features.contains(Feature.numericMeasurement), value.isFinite else { return }
        let clamped = bounds(context).clamping(value)
        context.set(Attribute.measuredValue, .float(Float(clamped)))
        record(clamped, context)
        gradeChanged(context)
    }

    /// Keeps the reading for PeakMeasuredValue and AverageMeasuredValue over their windows.
    private func record(_ value: Double, _ context: ClusterContext) {
        let peakWindow = features.contains(Feature.peakMeasurement) ? context.unsigned(Attribute.peakMeasuredValueWindow) ?? 0 : 0
        let averageWindow =
            features.contains(Feature.averageMeasurement) ? context.unsigned(Attribute.averageMeasuredValueWindow) ?? 0 : 0
        guard peakWindow > 0 || averageWindow > 0 else { return }
        let now = context.now
        samples.append((now, value))
        let longest = Duration.seconds(Int64(clamping: max(peakWindow, averageWindow)))
        samples.removeAll { $0.at < now - longest }
        if samples.count > Self.maxSamples { samples.removeFirst(samples.count - Self.maxSamples) }
        func within(_ window: UInt64) -> [Double] {
            let start = now - .seconds(Int64(clamping: window))
            return samples.filter { $0.at >= start }.map(\.value)
        }
        if peakWindow > 0, let peak = within(peakWindow).max() { context.set(Attribute.peakMeasuredValue, .float(Float(peak))) }
        if averageWindow > 0 {
            let values = within(averageWindow)
            if !values.isEmpty {
                context.set(Attribute.averageMeasuredValue, .float(Float(values.reduce(0, +) / Double(values.count))))
            }
        }
    }

    /// LevelValue from the grade, and the endpoint's Air Quality told.
    private func gradeChanged(_ context: ClusterContext) {
        if features.contains(Feature.levelIndication), let grade = grade(context) {
            context.set(Attribute.levelValue, .uint(level(for: grade).rawValue))
        }
        if let airQuality = context.peer(AirQualityServer.self) { airQuality.server.update(airQuality.context) }
    }

    private func level(for grade: AirQualityServer.Grade) -> Level {
        let level: Level =
            switch grade {
            case .unknown: .unknown
            case .good, .fair: .low
            case .moderate: .medium
            case .poor, .veryPoor: .high
            case .extremelyPoor: .critical
            }
        if level == .medium, !features.contains(Feature.mediumLevel) { return .high }
        if level == .critical, !features.contains(Feature.criticalLevel) { return .high }
        return level
    }
}

extension ClosedRange where Bound == Double {
    func clamping(_ value: Double) -> Double { Swift.min(Swift.max(value, lowerBound), upperBound) }
}
