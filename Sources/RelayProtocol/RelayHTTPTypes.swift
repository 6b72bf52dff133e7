// The JSON bodies of the relay's HTTP API, as the server writes them and clients read them.

/// A device as a home's controllers see it through the relay.
public struct RelayDeviceStatus: Sendable, Hashable, Codable {
    public var deviceID: String
    public var label: String?
    public var online: Bool

    public init(deviceID: String, label: String? = nil, online: Bool) {
        self.deviceID = deviceID
        self.label = label
        self.online = online
    }
}

/// A device credential as the relay issues it.
public struct RelayDeviceCredential: Sendable, Hashable, Codable {
    public var homeID: String
    public var deviceID: String
    /// Shown once; the relay keeps only its digest.
    public var credential: String

    public init(homeID: String, deviceID: String, credential: String) {
        self.homeID = homeID
        self.deviceID = deviceID
        self.credential = credential
    }
}

/// A home as the admin API creates it.
public struct RelayHomeCredential: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    /// Shown once; the relay keeps only its digest.
    public var token: String

    public init(id: String, name: String, token: String) {
        self.id = id
        self.name = name
        self.token = token
    }
}
