import MatterModel
import MatterTLV

/// Temperature Measurement cluster (Application Cluster spec 2.3): MeasuredValue in
/// hundredths of a degree Celsius, kept within MinMeasuredValue…MaxMeasuredValue when
/// those are known (2.3.5.1: a reading outside them cannot be reported).
final class TemperatureMeasurementServer: PhysicallyOperated {
    static let clusterID = ClusterID(0x0402)

    enum Attribute {
        static let measuredValue = AttributeID(0x0000)
        static let minMeasuredValue = AttributeID(0x0001)
        static let maxMeasuredValue = AttributeID(0x0002)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.measuredValue: .signed(2_000)
        case Attribute.minMeasuredValue: .signed(-2_000)
        case Attribute.maxMeasuredValue: .signed(5_000)
        default: nil
        }
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .temperature(let celsius) = action else { throw PhysicalActionError("Temperature Measurement cannot \(action)") }
        guard celsius.isFinite else { throw PhysicalActionError("the temperature must be a number, not \(celsius)") }
        let hundredths = (celsius * 100).rounded()
        let low = context.value(Attribute.minMeasuredValue)?.intValue ?? -27_315
        let high = context.value(Attribute.maxMeasuredValue)?.intValue ?? 32_767
        guard hundredths >= Double(low), hundredths <= Double(high) else {
            throw PhysicalActionError(
                "\(celsius) °C is outside what this sensor measures (\(Double(low) / 100) to \(Double(high) / 100) °C)")
        }
        context.set(Attribute.measuredValue, .signed(Int64(hundredths)))
    }
}
