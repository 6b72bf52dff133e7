import MatterModel
import MatterTLV

/// Flow Measurement cluster (Application Cluster spec 2.5): MeasuredValue is 10 times the flow
/// in m³/h, within MinMeasuredValue…MaxMeasuredValue; driven by the profile's reading in m³/h
/// (`SensorWalk`) and `act NODE flow 1.5`.
final class FlowMeasurementServer: MeasuredQuantityServer {
    static let clusterID = Clusters.FlowMeasurement.id

    typealias Attribute = Clusters.FlowMeasurement.Attribute
    static let measuredValue = Attribute.measuredValue
    static let minMeasuredValue = Attribute.minMeasuredValue
    static let maxMeasuredValue = Attribute.maxMeasuredValue
    static let quantity = (name: "flow", unit: "m³/h")
    static let encodable: ClosedRange<Int64> = 0...65_534
    static let isSigned = false

    let walk: SensorWalk

    init(reading: SensorReading? = nil) {
        walk = SensorWalk(reading)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.measuredValue: .unsigned(0)
        case Attribute.minMeasuredValue: .unsigned(0)
        case Attribute.maxMeasuredValue: .unsigned(500)
        default: nil
        }
    }

    static func reading(of action: PhysicalAction) -> Double? {
        if case .flow(let cubicMetresPerHour) = action { cubicMetresPerHour } else { nil }
    }

    static func encode(_ cubicMetresPerHour: Double) -> Double { cubicMetresPerHour * 10 }
    static func decode(_ measured: Int64) -> Double { Double(measured) / 10 }
}
