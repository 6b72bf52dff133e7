// Interaction Model status codes (Matter Core spec 8.10 "Status Code Table").
// Cluster servers return them; the Interaction Model encodes them on the wire.

public enum StatusCode: UInt8, Sendable, Hashable, CaseIterable {
    case success = 0x00
    case failure = 0x01
    case invalidSubscription = 0x7D
    case unsupportedAccess = 0x7E
    case unsupportedEndpoint = 0x7F
    case invalidAction = 0x80
    case unsupportedCommand = 0x81
    case invalidCommand = 0x85
    case unsupportedAttribute = 0x86
    case constraintError = 0x87
    case unsupportedWrite = 0x88
    case resourceExhausted = 0x89
    case notFound = 0x8B
    case unreportableAttribute = 0x8C
    case invalidDataType = 0x8D
    case unsupportedRead = 0x8F
    case dataVersionMismatch = 0x92
    case timeout = 0x94
    case busy = 0x9C
    case accessRestricted = 0x9D
    case unsupportedCluster = 0xC3
    case noUpstreamSubscription = 0xC5
    case needsTimedInteraction = 0xC6
    case unsupportedEvent = 0xC7
    case pathsExhausted = 0xC8
    case timedRequestMismatch = 0xC9
    case failsafeRequired = 0xCA
    case invalidInState = 0xCB
    case noCommandResponse = 0xCC
    case termsAndConditionsChanged = 0xCD
    case maintenanceRequired = 0xCE
    case dynamicConstraintError = 0xCF
    case alreadyExists = 0xD0
    case invalidTransportType = 0xD1
}

/// A status with an optional cluster-specific status (spec 8.10: StatusIB).
public struct InteractionStatus: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: StatusCode
    public var clusterStatus: UInt8?

    public init(_ status: StatusCode, clusterStatus: UInt8? = nil) {
        self.status = status
        self.clusterStatus = clusterStatus
    }

    public static let success = InteractionStatus(.success)

    public var description: String {
        clusterStatus.map { "\(status) (cluster status \($0))" } ?? "\(status)"
    }
}
