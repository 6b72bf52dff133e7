import MatterCrypto
import MatterModel
import MatterProtocol

/// Why a controller operation failed. Every failure of the controller ends here,
/// with enough detail for a person to act on it.
public enum ControllerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The node did not answer in time (MRP gave up, or no response arrived).
    case timeout(String)
    /// No session could be established with the node (unreachable, refused, wrong fabric).
    case unreachable(String)
    /// The node answered an action with a non-success Interaction Model status.
    case status(InteractionStatus, String)
    /// The node's answer could not be understood.
    case invalidResponse(String)
    /// Device attestation failed; `allowUntrustedAttestation` was not set.
    case attestationFailed(String)
    /// A commissioning step failed.
    case commissioningFailed(step: String, reason: String)
    /// PASE failed (wrong passcode, no commissioning window, ...).
    case paseFailed(String)
    /// The onboarding payload could not be parsed.
    case invalidSetupCode(String)
    /// No commissionable or operational node matched.
    case notFound(String)
    /// The controller is shut down or was cancelled.
    case cancelled
    /// Bad input from the caller.
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .timeout(let s): "timed out: \(s)"
        case .unreachable(let s): "unreachable: \(s)"
        case .status(let status, let s): "\(s) answered \(status)"
        case .invalidResponse(let s): "invalid response: \(s)"
        case .attestationFailed(let s): "device attestation failed: \(s)"
        case .commissioningFailed(let step, let reason): "commissioning failed at \(step): \(reason)"
        case .paseFailed(let s): "PASE failed: \(s)"
        case .invalidSetupCode(let s): "invalid setup code: \(s)"
        case .notFound(let s): "not found: \(s)"
        case .cancelled: "cancelled"
        case .invalidArgument(let s): "invalid argument: \(s)"
        }
    }

    /// Whether the failure says the session or path to the node is gone, so a fresh
    /// session may succeed.
    public var isConnectivityFailure: Bool {
        switch self {
        case .timeout, .unreachable: true
        default: false
        }
    }

    /// Maps a transport failure during `what`.
    static func transport(_ error: any Error, _ what: String) -> ControllerError {
        if let e = error as? ControllerError { return e }
        if error is CancellationError { return .cancelled }
        if let t = error as? TransportError {
            switch t {
            case .timeout: return .timeout("\(what): no response")
            case .deliveryFailed: return .timeout("\(what): the node did not acknowledge")
            case .sessionClosed, .exchangeClosed: return .unreachable("\(what): session closed")
            case .notRunning: return .cancelled
            default: return .unreachable("\(what): \(t)")
            }
        }
        if let s = error as? SecureChannelError {
            switch s {
            case .transport(let t): return transport(t, what)
            case .cancelled: return .cancelled
            default: return .unreachable("\(what): \(s)")
            }
        }
        return .unreachable("\(what): \(error)")
    }
}
