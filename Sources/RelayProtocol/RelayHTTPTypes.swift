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

/// A node waiting to be commissioned, as a fleet replica reports it through the relay to its
/// home's controllers (`PUT /v1/onboarding/{source}`): its onboarding payload and where it
/// listens, so a controller that cannot browse the replica's network still finds it.
public struct RelayOnboardingNode: Sendable, Hashable, Codable {
    public var name: String
    public var structure: String?
    public var room: String?
    /// The node's onboarding payload: an `MT:` QR payload or an 11- or 21-digit manual code.
    public var setupCode: String
    /// An IPv4 or IPv6 address, and the UDP port, the node answers on.
    public var host: String
    public var port: Int

    public init(name: String, structure: String? = nil, room: String? = nil, setupCode: String, host: String, port: Int) {
        self.name = name
        self.structure = structure
        self.room = room
        self.setupCode = setupCode
        self.host = host
        self.port = port
    }
}

/// What one source (a fleet replica) reported last; a new report replaces it whole.
public struct RelayOnboardingReport: Sendable, Hashable, Codable {
    public var source: String
    /// The device ID whose credential reported it; nil when the home's token did.
    public var reportedBy: String?
    public var nodes: [RelayOnboardingNode]

    public init(source: String, reportedBy: String? = nil, nodes: [RelayOnboardingNode]) {
        self.source = source
        self.reportedBy = reportedBy
        self.nodes = nodes
    }
}

/// `GET /v1/onboarding`: every report of the caller's home, by source.
public struct RelayOnboardingList: Sendable, Hashable, Codable {
    public var homeID: String
    public var reports: [RelayOnboardingReport]

    public init(homeID: String, reports: [RelayOnboardingReport]) {
        self.homeID = homeID
        self.reports = reports
    }
}
