import MatterModel
import MatterTLV

/// Pressure Measurement cluster (Application Cluster spec 2.4): MeasuredValue is 10 times the
/// pressure in kPa (int16), within MinMeasuredValue…MaxMeasuredValue; driven by the profile's
/// reading in kPa (`SensorWalk`) and `act NODE pressure 101.3`.
final class PressureMeasurementServer: MeasuredQuantityServer {
    static let clusterID = Clusters.PressureMeasurement.id

    typealias Attribute = Clusters.PressureMeasurement.Attribute
    static let measuredValue = Attribute.measuredValue
    static let minMeasuredValue = Attribute.minMeasuredValue
    static let maxMeasuredValue = Attribute.maxMeasuredValue
    static let quantity = (name: "pressure", unit: "kPa")
    static let encodable: ClosedRange<Int64> = -32_767...32_767
    static let isSigned = true

    let walk: SensorWalk

    init(reading: SensorReading? = nil) {
        walk = SensorWalk(reading)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.measuredValue: .signed(1_013)
        case Attribute.minMeasuredValue: .signed(300)
        case Attribute.maxMeasuredValue: .signed(1_100)
        default: nil
        }
    }

    static func reading(of action: PhysicalAction) -> Double? {
        if case .pressure(let kilopascals) = action { kilopascals } else { nil }
    }

    static func encode(_ kilopascals: Double) -> Double { kilopascals * 10 }
    static func decode(_ measured: Int64) -> Double { Double(measured) / 10 }
}
