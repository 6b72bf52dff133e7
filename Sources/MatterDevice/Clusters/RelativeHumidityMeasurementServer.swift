import MatterModel
import MatterTLV

/// Relative Humidity Measurement cluster (Application Cluster spec 2.6): MeasuredValue is 100
/// times the relative humidity in percent (0 to 10000), within MinMeasuredValue…MaxMeasuredValue;
/// driven by the profile's reading (`SensorWalk`) and `act NODE humidity 55`.
final class RelativeHumidityMeasurementServer: MeasuredQuantityServer {
    static let clusterID = Clusters.RelativeHumidityMeasurement.id

    typealias Attribute = Clusters.RelativeHumidityMeasurement.Attribute
    static let measuredValue = Attribute.measuredValue
    static let minMeasuredValue = Attribute.minMeasuredValue
    static let maxMeasuredValue = Attribute.maxMeasuredValue
    static let quantity = (name: "humidity", unit: "%")
    static let encodable: ClosedRange<Int64> = 0...10_000
    static let isSigned = false

    let walk: SensorWalk

    init(reading: SensorReading? = nil) {
        walk = SensorWalk(reading)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.measuredValue: .unsigned(4_500)
        case Attribute.minMeasuredValue: .unsigned(0)
        case Attribute.maxMeasuredValue: .unsigned(10_000)
        default: nil
        }
    }

    static func reading(of action: PhysicalAction) -> Double? {
        if case .humidity(let percent) = action { percent } else { nil }
    }

    static func encode(_ percent: Double) -> Double { percent * 100 }
    static func decode(_ measured: Int64) -> Double { Double(measured) / 100 }
}
