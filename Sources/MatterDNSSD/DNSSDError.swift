/// What can go wrong when publishing or browsing DNS-SD services.
public enum DNSSDError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A service name, type, subtype, domain or host name that DNS-SD cannot carry.
    case invalidName(field: String, value: String, reason: String)
    /// A TXT entry that cannot be encoded (RFC 6763 §6).
    case invalidTXT(key: String, reason: String)
    /// A Matter record parameter outside the range the specification allows.
    case invalidParameter(name: String, reason: String)
    /// A received record that is not a well-formed Matter advertisement.
    case malformedRecord(field: String, reason: String)
    /// The Avahi client library or daemon refused an operation.
    case avahi(operation: String, code: Int32, message: String)
    /// No connection to the system D-Bus could be made at all.
    case noSystemBus(message: String)
    /// The registration was withdrawn before (or while) it was being established.
    case withdrawn
    /// The publisher or browser has been shut down.
    case shutDown
    /// Nothing matching was found in time.
    case timedOut

    public var description: String {
        switch self {
        case let .invalidName(field, value, reason): "invalid \(field) '\(value)': \(reason)"
        case let .invalidTXT(key, reason): "invalid TXT entry '\(key)': \(reason)"
        case let .invalidParameter(name, reason): "invalid \(name): \(reason)"
        case let .malformedRecord(field, reason): "malformed \(field): \(reason)"
        case let .avahi(operation, code, message): "\(operation) failed: \(message) (\(code))"
        case let .noSystemBus(message): "no system D-Bus: \(message)"
        case .withdrawn: "the registration was withdrawn"
        case .shutDown: "DNS-SD has been shut down"
        case .timedOut: "timed out"
        }
    }
}
