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

    /// Combines the connectivity of parts (traits into a device type, device types into a device).
    static func combining(_ parts: [SourceConnectivity]) -> SourceConnectivity {
        guard let first = parts.first else { return SourceConnectivity(connectivityState: .unknown, dataSourceLocality: .unspecified) }
        let states = Set(parts.map(\.connectivityState))
        let state: ConnectivityState
        if states.count == 1 {
            state = first.connectivityState
        } else if states.contains(.online) || states.contains(.partiallyOnline) {
            state = .partiallyOnline
        } else {
            state = states.contains(.offline) ? .offline : .unknown
        }
        let localities = Set(parts.map(\.dataSourceLocality)).subtracting([.unspecified])
        let locality: LocalityType = localities.isEmpty ? .unspecified : (localities.count == 1 ? localities.first! : .mixed)
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
