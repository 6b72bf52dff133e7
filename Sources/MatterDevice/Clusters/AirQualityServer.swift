import MatterModel
import MatterTLV

/// Air Quality cluster (Application Cluster spec 2.9): AirQuality grades the air. The device
/// derives it from the concentration clusters on its endpoint, as the worst of their grades
/// (`Substance.grade`); a grade the features lack (Fair, Moderate, VeryPoor, ExtremelyPoor)
/// counts as the nearest one toward Poor, which every server has. Without concentration
/// clusters it stays as set, and `act NODE air good|fair|moderate|poor|very-poor|extremely-poor`
/// sets it.
final class AirQualityServer: PhysicallyOperated {
    static let clusterID = Clusters.AirQuality.id

    typealias Attribute = Clusters.AirQuality.Attribute
    typealias Feature = Clusters.AirQuality.Feature
    typealias Grade = Clusters.AirQuality.AirQualityEnum

    private let features: Set<String>

    init(features: Set<String>) {
        self.features = features
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        attribute == Attribute.airQuality ? .uint(Grade.good.rawValue) : nil
    }

    func startUp(_ context: ClusterContext) {
        update(context)
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .airQuality(let grade) = action else { throw PhysicalActionError("Air Quality cannot \(action)") }
        guard concentrations(context).isEmpty else {
            throw PhysicalActionError("this sensor grades the air from its concentrations; set those (e.g. co2 1200)")
        }
        context.set(Attribute.airQuality, .uint(supported(grade).rawValue))
        update(context)
    }

    /// AirQuality from the endpoint's concentration readings, when it has any.
    func update(_ context: ClusterContext) {
        let grades = concentrations(context).compactMap { $0.server.grade($0.context) }
        if let worst = grades.max(by: { $0.rawValue < $1.rawValue }) {
            context.set(Attribute.airQuality, .uint(supported(worst).rawValue))
        }
        if let fan = context.nodePeer(FanControlServer.self) { fan.server.airQualityChanged(fan.context) }
    }

    /// The grade itself when the features allow it, else the nearest one toward Poor.
    func supported(_ grade: Grade) -> Grade {
        switch grade {
        case .fair where !features.contains(Feature.fair): supported(.moderate)
        case .moderate where !features.contains(Feature.moderate): .poor
        case .extremelyPoor where !features.contains(Feature.extremelyPoor): supported(.veryPoor)
        case .veryPoor where !features.contains(Feature.veryPoor): .poor
        default: grade
        }
    }

    private func concentrations(_ context: ClusterContext) -> [(server: ConcentrationMeasurementServer, context: ClusterContext)] {
        context.runtime.servers.compactMap { path, server in
            guard path.endpoint == context.endpoint, let concentration = server as? ConcentrationMeasurementServer else { return nil }
            return (concentration, ClusterContext(cluster: path, runtime: context.runtime, session: context.session))
        }
    }
}
