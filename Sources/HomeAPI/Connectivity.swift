/// Whether the data behind a trait, device type or device can be reached.
public enum ConnectivityState: String, Sendable, Hashable, CaseIterable, Codable {
    case unknown, online, offline, partiallyOnline
}

/// Where the data comes from: straight from the device on the LAN (`direct`), through
/// another local controller (`localPeer`), the cloud (`remote`), or several (`mixed`).
public enum LocalityType: String, Sendable, Hashable, CaseIterable, Codable {
    case unspecified, direct, localPeer, remote, mixed
}

/// How a trait (or device type, or device) is reached right now.
public struct SourceConnectivity: Sendable, Hashable, Codable {
    public var connectivityState: ConnectivityState
    public var dataSourceLocality: LocalityType

    public init(connectivityState: ConnectivityState, dataSourceLocality: LocalityType) {
        self.connectivityState = connectivityState
        self.dataSourceLocality = dataSourceLocality
    }

    /// A device on the direct LAN path, in `state`.
    static func direct(_ state: ConnectivityState) -> SourceConnectivity {
        SourceConnectivity(connectivityState: state, dataSourceLocality: state == .unknown ? .unspecified : .direct)
    }

    /// Combines the connectivity of parts (traits into a device type, traits into a device):
    /// all online → online, all unknown → unknown, some online → partiallyOnline, none
    /// online → offline (so {offline, unknown} is offline). Locality counts the online parts
    /// only: one kind → that kind, several → mixed, none → unspecified. A partiallyOnline
    /// part counts as online for the state's "some" and brings its locality.
    public static func combining(_ parts: [SourceConnectivity]) -> SourceConnectivity {
        guard !parts.isEmpty else { return SourceConnectivity(connectivityState: .unknown, dataSourceLocality: .unspecified) }
        let states = parts.map(\.connectivityState)
        let state: ConnectivityState
        if states.allSatisfy({ $0 == .online }) {
            state = .online
        } else if states.allSatisfy({ $0 == .unknown }) {
            state = .unknown
        } else if states.contains(where: { $0 == .online || $0 == .partiallyOnline }) {
            state = .partiallyOnline
        } else {
            state = .offline
        }
        var kinds = Set<LocalityType>()
        for part in parts where part.connectivityState == .online || part.connectivityState == .partiallyOnline {
            if part.dataSourceLocality != .unspecified { kinds.insert(part.dataSourceLocality) }
        }
        let locality: LocalityType
        if kinds.isEmpty {
            locality = .unspecified
        } else if kinds.count == 1, let only = kinds.first {
            locality = only
        } else {
            locality = .mixed
        }
        return SourceConnectivity(connectivityState: state, dataSourceLocality: locality)
    }
}

/// Metadata every trait carries.
public struct TraitMetadata: Sendable, Hashable {
    public var sourceConnectivity: SourceConnectivity
}

/// Metadata every device type carries.
public struct DeviceTypeMetadata: Sendable, Hashable {
    /// Whether this is the device's main type (the first type of its first application endpoint).
    public var isPrimaryType: Bool
    public var sourceConnectivity: SourceConnectivity
}
