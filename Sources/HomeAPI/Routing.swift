import MatterController
import MatterModel
import MatterProtocol
import MatterTLV
import RelayProtocol

/// A relay (or a hub speaking the relay's controller protocol) and the home token the
/// controller presents to it.
public struct RelayEndpoint: Sendable, Hashable {
    /// Base URL, e.g. `ws://127.0.0.1:8080`.
    public var url: String
    public var homeToken: String

    public init(url: String, homeToken: String) {
        self.url = url
        self.homeToken = homeToken
    }
}

/// Which paths a Home may use to reach its devices.
public enum RoutingPolicy: String, Sendable, Hashable, CaseIterable, Codable {
    /// The LAN session when it works, else the hub, else the cloud relay.
    case preferLocal
    /// Only the LAN session and the hub; cloud-only traits are offline.
    case localOnly
    /// Only the cloud relay.
    case cloudOnly
}

/// One way to reach a device, in order of preference.
enum RouteKind: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// The controller's own CASE session over the LAN.
    case direct
    /// A hub on the LAN (relay protocol, Matter to the device).
    case hub
    /// The cloud relay.
    case relay

    static func < (a: RouteKind, b: RouteKind) -> Bool { a.rawValue < b.rawValue }

    var locality: LocalityType {
        switch self {
        case .direct: .direct
        case .hub: .localPeer
        case .relay: .remote
        }
    }

    var description: String {
        switch self {
        case .direct: "LAN"
        case .hub: "hub"
        case .relay: "relay"
        }
    }
}

/// Whether a route works: `unknown` until its first attempt ends.
enum RouteHealth: Sendable, Hashable {
    case unknown, up, down
}

/// What one route knows of a node: its health and the attributes reported through it.
struct RouteState: Sendable, Hashable {
    var health: RouteHealth = .unknown
    var attributes: [AttributePath: TLVValue] = [:]
    var lastError: String?

    /// Whether this route reported anything of the cluster on the endpoint.
    func has(endpoint: EndpointNumber, cluster: ClusterID) -> Bool {
        attributes.keys.contains { $0.endpoint == endpoint && $0.cluster == cluster }
    }
}

/// Clusters of one endpoint that the device serves only through the cloud relay.
struct CloudOnlyClusters: Sendable, Hashable, Codable {
    var endpoint: UInt16
    var clusters: [UInt32]
}

/// Descriptor (0x001D) ServerList (0x0001) per endpoint, from a report.
func serverLists(_ reports: [AttributeReport]) -> [EndpointNumber: Set<UInt32>] {
    var lists: [EndpointNumber: Set<UInt32>] = [:]
    for r in reports where r.path.cluster == Clusters.Descriptor.id && r.path.attribute == Clusters.Descriptor.Attribute.serverList {
        let clusters = (r.value?.members ?? []).compactMap { $0.value.uintValue }.compactMap { UInt32(exactly: $0) }
        lists[r.path.endpoint, default: []].formUnion(clusters)
    }
    return lists
}

/// Descriptor DeviceTypeList per endpoint, from reports (DeviceTypeStruct: DeviceType is field 0).
func deviceTypeLists(_ reports: [AttributeReport]) -> [EndpointNumber: [UInt32]] {
    var lists: [EndpointNumber: [UInt32]] = [:]
    for r in reports where r.path.cluster == Clusters.Descriptor.id && r.path.attribute == Clusters.Descriptor.Attribute.deviceTypeList {
        let types = (r.value?.members ?? []).compactMap { $0.value[context: 0]?.uintValue }.compactMap { UInt32(exactly: $0) }
        lists[r.path.endpoint, default: []].append(contentsOf: types)
    }
    return lists
}

/// The device's endpoints with the device types the relay lists where they differ from the
/// LAN's: over the LAN an endpoint claims only the types its LAN clusters conform to (a
/// Dimmable Light whose Level Control is cloud-only is an On/Off Light there), the relay
/// sees the whole device.
func endpoints(_ endpoints: [EndpointRecord], withRelayTypes relay: [EndpointNumber: [UInt32]]) -> [EndpointRecord] {
    endpoints.map { endpoint in
        guard let types = relay[endpoint.endpoint], !types.isEmpty else { return endpoint }
        return EndpointRecord(endpoint: endpoint.endpoint, deviceTypes: types)
    }
}

/// Cloud-only clusters: what the relay lists minus what the LAN lists, per endpoint.
func cloudOnlyClusters(relay: [EndpointNumber: Set<UInt32>], lan: [EndpointNumber: Set<UInt32>]) -> [CloudOnlyClusters] {
    relay.keys.sorted().compactMap { endpoint in
        let extra = (relay[endpoint] ?? []).subtracting(lan[endpoint] ?? [])
        return extra.isEmpty ? nil : CloudOnlyClusters(endpoint: endpoint, clusters: extra.sorted())
    }
}

/// Commands whose second arrival leaves the device as the first did (set a state, go to a
/// position). Only these are sent again after a route failed with no answer: the first may
/// have been applied, and a repeated Toggle or SetpointRaiseLower would show. Timed
/// invokes are never repeated (their window has passed).
enum IdempotentCommands {
    static let all: Set<[UInt32]> = {
        typealias OnOff = Clusters.OnOff.Command
        typealias Level = Clusters.LevelControl.Command
        typealias Covering = Clusters.WindowCovering.Command
        typealias Color = Clusters.ColorControl.Command
        let commands: [(ClusterID, [CommandID])] = [
            (Clusters.OnOff.id, [OnOff.off, OnOff.on]),
            (Clusters.LevelControl.id, [Level.moveToLevel, Level.stop, Level.moveToLevelWithOnOff, Level.stopWithOnOff]),
            (
                Clusters.WindowCovering.id,
                [
                    Covering.upOrOpen, Covering.downOrClose, Covering.stopMotion, Covering.goToLiftValue,
                    Covering.goToLiftPercentage, Covering.goToTiltValue, Covering.goToTiltPercentage,
                ]
            ),
            (
                Clusters.ColorControl.id,
                [
                    Color.moveToHue, Color.moveToSaturation, Color.moveToHueAndSaturation, Color.moveToColor,
                    Color.moveToColorTemperature, Color.enhancedMoveToHue, Color.enhancedMoveToHueAndSaturation,
                ]
            ),
        ]
        return Set(commands.flatMap { cluster, ids in ids.map { [cluster.rawValue, $0.rawValue] } })
    }()

    static func contains(_ path: ConcreteCommandPath) -> Bool {
        all.contains([path.cluster.rawValue, path.command.rawValue])
    }
}
