import MatterModel

/// Why a relay client operation failed.
public enum RelayError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing came back in time; the operation named is abandoned.
    case timeout(String)
    /// No connection to the relay is up (and none came up in time).
    case notConnected
    /// The connection to the relay dropped while the operation ran.
    case connectionLost
    /// The relay refused the credential or token (HTTP 401).
    case unauthorized
    /// The token is valid but not for this home (HTTP 403).
    case forbidden
    /// The relay knows no such device in this home.
    case unknownDevice(String)
    /// The device is registered but not connected to the relay.
    case deviceOffline(String)
    /// The relay could not deliver for another reason.
    case undeliverable(RelayFailureReason)
    /// The device answered with an Interaction Model status instead of the expected message.
    case status(StatusCode)
    /// The answer was not the Interaction Model message expected, or did not decode.
    case invalidResponse(String)
    /// The WebSocket upgrade was refused for a reason other than the credential.
    case upgradeFailed(String)
    /// An HTTP request to the relay answered with this status.
    case http(status: Int, body: String)
    /// The argument cannot be sent (e.g. an invalid device ID).
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .timeout(let what): "timed out: \(what)"
        case .notConnected: "not connected to the relay"
        case .connectionLost: "connection to the relay lost"
        case .unauthorized: "relay refused the credential (401)"
        case .forbidden: "token not valid for this home (403)"
        case .unknownDevice(let d): "unknown device \(d)"
        case .deviceOffline(let d): "device \(d) is offline"
        case .undeliverable(let r): "relay could not deliver: \(r)"
        case .status(let s): "device answered \(s)"
        case .invalidResponse(let why): "invalid response: \(why)"
        case .upgradeFailed(let why): "WebSocket upgrade failed: \(why)"
        case .http(let status, let body): "HTTP \(status): \(body)"
        case .invalidArgument(let why): "invalid argument: \(why)"
        }
    }

    /// The client-facing error for a relay delivery failure about a device.
    package static func from(_ reason: RelayFailureReason, deviceID: String?) -> RelayError {
        switch reason {
        case .unknownDevice: .unknownDevice(deviceID ?? "?")
        case .deviceOffline: .deviceOffline(deviceID ?? "?")
        case .sessionGone, .overloaded: .undeliverable(reason)
        }
    }
}
