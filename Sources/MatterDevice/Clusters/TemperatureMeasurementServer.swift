import MatterModel
import MatterTLV

/// Temperature Measurement cluster (Application Cluster spec 2.3): MeasuredValue in
/// hundredths of a degree Celsius, kept within MinMeasuredValue…MaxMeasuredValue when
/// those are known (2.3.5.1: a reading outside them cannot be reported). The reading stays
/// as set, follows the profile's schedule, or takes a bounded random walk (`SensorWalk`).
final class TemperatureMeasurementServer: MeasuredQuantityServer {
    static let clusterID = Clusters.TemperatureMeasurement.id

    typealias Attribute = Clusters.TemperatureMeasurement.Attribute
    static let measuredValue = Attribute.measuredValue
    static let minMeasuredValue = Attribute.minMeasuredValue
    static let maxMeasuredValue = Attribute.maxMeasuredValue
    static let quantity = (name: "temperature", unit: "°C")
    static let encodable: ClosedRange<Int64> = -27_315...32_767
    static let isSigned = true

    let walk: SensorWalk

    init(reading: SensorReading? = nil) {
        walk = SensorWalk(reading)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.measuredValue: .signed(2_000)
        case Attribute.minMeasuredValue: .signed(-2_000)
        case Attribute.maxMeasuredValue: .signed(5_000)
        default: nil
        }
    }

    static func reading(of action: PhysicalAction) -> Double? {
        if case .temperature(let celsius) = action { celsius } else { nil }
    }

    static func encode(_ celsius: Double) -> Double { celsius * 100 }
    static func decode(_ measured: Int64) -> Double { Double(measured) / 100 }
}
