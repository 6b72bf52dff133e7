import MatterModel
import MatterTLV

/// Occupancy Sensing cluster (Application Cluster spec 2.7): the Occupied bit of
/// Occupancy; a change raises OccupancyChanged (2.7.7.1).
final class OccupancySensingServer: PhysicallyOperated {
    static let clusterID = Clusters.OccupancySensing.id

    typealias Feature = Clusters.OccupancySensing.Feature
    typealias Attribute = Clusters.OccupancySensing.Attribute

    /// The sensor type and its bitmap follow the feature the profile declares (2.7.4).
    private let sensorType: (type: UInt64, bitmap: UInt64)

    init(features: Set<String>) {
        sensorType =
            if features.contains(Feature.passiveInfrared) { (0, 0b001) } else if features.contains(Feature.ultrasonic) {
                (1, 0b010)
            } else if features.contains(Feature.physicalContact) {
                (3, 0b100)
            } else { (0, 0b001) }
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.occupancy: .uint(0)
        case Attribute.occupancySensorType: .uint(sensorType.type)
        case Attribute.occupancySensorTypeBitmap: .uint(sensorType.bitmap)
        default: nil
        }
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        guard case .occupancy(let occupied) = action else { throw PhysicalActionError("Occupancy Sensing cannot \(action)") }
        let bitmap: UInt64 = occupied ? 1 : 0
        guard context.unsigned(Attribute.occupancy) != bitmap else { return }
        context.set(Attribute.occupancy, .uint(bitmap))
        context.record(Clusters.OccupancySensing.Events.OccupancyChanged(occupancy: occupied ? .occupied : []))
    }
}
