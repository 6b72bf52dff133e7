// The values `matter-sim act` (and a scenario's act step, and the dashboard's buttons) may
// give, taken from the data model: the type and constraint of the attribute each act sets.
// Checked before a request reaches a node, so no value a person types can overflow a
// conversion there (`dial 1e300` trapped the whole `matter-sim home`). A device's own
// limits (its setpoint limits, MultiPressMax) are narrower and are checked by the node.
import Foundation
import MatterDevice
import MatterModel

enum ActRanges {
    /// The dial sets OccupiedHeatingSetpoint or OccupiedCoolingSetpoint: a temperature in °C.
    static let dial = celsius(cluster: "Thermostat", attribute: "OccupiedHeatingSetpoint", fallback: -27_315...32_767)
    /// A reading is MeasuredValue.
    static let temperature = celsius(cluster: "TemperatureMeasurement", attribute: "MeasuredValue", fallback: -27_315...32_767)
    /// Presses in a row: MultiPressMax (momentary) and NumberOfPositions (latching) bound
    /// them on a device; both are uint8, so no switch counts more.
    static let presses: ClosedRange<Int> = {
        let most = integerRange(cluster: "Switch", attribute: "MultiPressMax")?.upperBound ?? 255
        return 1...Int(clamping: most)
    }()

    /// A sensor's reading (`act NODE humidity 55`), checked against the widest value its
    /// MeasuredValue can stand for; the sensor's own MinMeasuredValue…MaxMeasuredValue is the
    /// node's to check.
    static func measurement(_ name: PhysicalActionName, value: String?) -> Result<PhysicalAction, ControlSocketError> {
        let (range, unit, make): (ClosedRange<Double>, String, (Double) -> PhysicalAction) =
            switch name {
            case .humidity: (0...100, "%", { .humidity($0) })
            // MeasuredValue = 10,000 × log10(lux) + 1, at most 65,534.
            case .light: (0...3_576_000_000, "lx", { .illuminance($0) })
            case .pressure: (scaled("PressureMeasurement", 10, fallback: -32_767...32_767), "kPa", { .pressure($0) })
            case .flow: (scaled("FlowMeasurement", 10, fallback: 0...65_534), "m³/h", { .flow($0) })
            case .co2: (0...1_000_000, "ppm", { .concentration(.co2, $0) })
            case .pm25: (0...1_000_000, "µg/m³", { .concentration(.pm25, $0) })
            case .pm10: (0...1_000_000, "µg/m³", { .concentration(.pm10, $0) })
            default: (0...1_000_000, "ppb", { .concentration(.tvoc, $0) })
            }
        guard let value, let number = Double(value), number.isFinite, range.contains(number) else {
            return .failure(
                ControlSocketError(
                    description: "'\(name.rawValue)' needs a reading from \(text(range)) \(unit); got \(value.map { "'\($0)'" } ?? "none")")
            )
        }
        return .success(make(number))
    }

    /// MinMeasuredValue's and MaxMeasuredValue's type over `divisor`: the quantities MeasuredValue holds.
    private static func scaled(_ cluster: String, _ divisor: Double, fallback: ClosedRange<Int64>) -> ClosedRange<Double> {
        let low = integerRange(cluster: cluster, attribute: "MinMeasuredValue")?.lowerBound ?? fallback.lowerBound
        let high = integerRange(cluster: cluster, attribute: "MaxMeasuredValue")?.upperBound ?? fallback.upperBound
        return Double(low) / divisor...Double(high) / divisor
    }

    /// An enum case's name as a person types it: veryPoor → very-poor.
    static func spoken(_ name: String) -> String {
        name.reduce(into: "") { text, character in
            if character.isUppercase { text += "-" + character.lowercased() } else { text.append(character) }
        }
    }

    /// Hundredths of a degree in the model, as °C.
    private static func celsius(cluster: String, attribute: String, fallback: ClosedRange<Int64>) -> ClosedRange<Double> {
        let hundredths = integerRange(cluster: cluster, attribute: attribute) ?? fallback
        return Double(hundredths.lowerBound) / 100...Double(hundredths.upperBound) / 100
    }

    /// The integers an attribute holds: its type's width, the semantic type's bounds and
    /// its own numeric constraint (bounds naming other attributes are the device's).
    static func integerRange(cluster: String, attribute: String, model: MatterModel = .standard) -> ClosedRange<Int64>? {
        guard let definition = model.cluster(named: cluster)?.attribute(named: attribute) else { return nil }
        var low: Int64, high: Int64
        switch definition.type.base {
        case .uint(let bits): (low, high) = (0, bits >= 63 ? .max : (1 << Int64(bits)) - 1)
        case .int(let bits): (low, high) = bits >= 64 ? (.min, .max) : (-(1 << Int64(bits - 1)), (1 << Int64(bits - 1)) - 1)
        default: return nil
        }
        var constraints: [Constraint] = []
        if case .semantic(let semantic) = definition.type, let implicit = semantic.implicitConstraint { constraints.append(implicit) }
        if let own = definition.constraint { constraints.append(own) }
        for case .range(let min, let max) in constraints {
            if let min { low = Swift.max(low, min) }
            if let max { high = Swift.min(high, max) }
        }
        return low <= high ? low...high : nil
    }

    /// "-273.15 to 327.67" for messages.
    static func text(_ range: ClosedRange<Double>) -> String {
        "\(format(range.lowerBound)) to \(format(range.upperBound))"
    }

    private static func format(_ value: Double) -> String { String(format: "%g", value) }
}
