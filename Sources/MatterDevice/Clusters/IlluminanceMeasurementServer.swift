import Foundation
import MatterModel
import MatterTLV

/// Illuminance Measurement cluster (Application Cluster spec 2.2): MeasuredValue is
/// 10,000 × log10(lux) + 1 (2.2.5.1), so 1 is 1 lx and 40,001 is 10,000 lx; 0 means too dark to
/// measure. Driven by the profile's reading in lux (`SensorWalk`) and `act NODE light 350`.
final class IlluminanceMeasurementServer: MeasuredQuantityServer {
    static let clusterID = Clusters.IlluminanceMeasurement.id

    typealias Attribute = Clusters.IlluminanceMeasurement.Attribute
    static let measuredValue = Attribute.measuredValue
    static let minMeasuredValue = Attribute.minMeasuredValue
    static let maxMeasuredValue = Attribute.maxMeasuredValue
    static let quantity = (name: "illuminance", unit: "lx")
    static let encodable: ClosedRange<Int64> = 0...65_534
    static let isSigned = false

    let walk: SensorWalk

    init(reading: SensorReading? = nil) {
        walk = SensorWalk(reading)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.measuredValue: .unsigned(UInt64(Self.encode(300).rounded()))
        case Attribute.minMeasuredValue: .unsigned(1)
        case Attribute.maxMeasuredValue: .unsigned(UInt64(Self.encode(100_000).rounded()))
        default: nil
        }
    }

    static func reading(of action: PhysicalAction) -> Double? {
        if case .illuminance(let lux) = action { lux } else { nil }
    }

    /// Below 1 lx the log goes negative: the sensor reads 0, "too low to be measured".
    static func encode(_ lux: Double) -> Double { lux < 1 ? 0 : 10_000 * log10(lux) + 1 }
    static func decode(_ measured: Int64) -> Double { measured <= 0 ? 0 : pow(10, Double(measured - 1) / 10_000) }
}
