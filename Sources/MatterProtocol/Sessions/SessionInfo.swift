import MatterModel
import NIOCore

/// Identifies one session object for its whole life. Secure session IDs are
/// reused after a session closes; handles never are.
public struct SessionHandle: Hashable, Sendable, CustomStringConvertible {
    /// Unique for the exchange manager's lifetime: the layers above key per-session state on it.
    public let serial: UInt64
    public var description: String { "session#\(serial)" }
}

/// How a session was established.
public enum SessionKind: Sendable, Hashable {
    /// The unsecured session used for PASE/CASE handshakes (spec 4.13.2.1).
    case unsecured
    /// Passcode-authenticated (commissioning).
    case pase
    /// Certificate-authenticated (operational).
    case `case`
    /// One received group message (spec 4.16): no session state, never answered.
    case group
}

/// A snapshot of a session as the layers above see it (e.g. for access control).
public struct SessionInfo: Sendable, Hashable {
    public let handle: SessionHandle
    public let kind: SessionKind
    public let role: SessionRole
    /// Our session ID (0 for unsecured sessions): peers address messages to it.
    public let localSessionID: UInt16
    /// The peer's session ID, put in the header of messages we send.
    public let peerSessionID: UInt16
    /// Our operational node ID on the fabric (CASE); 0 otherwise.
    public let localNodeID: NodeID
    /// The peer's operational node ID (CASE), or its ephemeral initiator node ID (unsecured); 0 for PASE.
    public let peerNodeID: NodeID
    /// Fabric of a CASE session, or the fabric a PASE session was bound to by AddNOC; 0 = none.
    public let fabricIndex: FabricIndex
    /// CASE Authenticated Tags from the peer's NOC (spec 6.6.2.1.2).
    public let caseAuthenticatedTags: [UInt32]
    /// Signed over by attestation and CSR responses (spec 11.18.5); empty for unsecured sessions.
    public let attestationChallenge: [UInt8]
    /// Where the peer's last authenticated message came from.
    public let peerAddress: SocketAddress
    /// The peer's MRP parameters.
    public let peerParameters: SessionParameters
    /// The destination group of a group message (kind `.group`); nil otherwise.
    public var groupID: UInt16? = nil

    public var isSecure: Bool { kind != .unsecured }
}

/// Why a session ended.
public enum SessionCloseReason: Sendable, Hashable {
    /// The peer sent CloseSession.
    case closedByPeer
    /// Closed by a local call (e.g. its fabric was removed).
    case closedLocally
    /// Evicted to make room for a new session.
    case evicted
    /// The message counter ran out.
    case counterExhausted
}

/// Session lifecycle notifications for the device layer.
public enum SessionEvent: Sendable, Hashable {
    /// A PASE or CASE session was installed.
    case established(SessionInfo)
    case closed(SessionInfo, SessionCloseReason)
    /// A PASE or CASE establishment attempt failed.
    case establishmentFailed(EstablishmentFailure)
    /// The commissioning window was closed because PASE failed too often (spec 5.4.2.5: 20 attempts).
    case commissioningWindowClosedAfterFailures(failures: Int)
}

/// One failed PASE/CASE attempt.
public struct EstablishmentFailure: Sendable, Hashable {
    public let kind: SessionKind
    public let peerAddress: SocketAddress
    public let reason: String
    /// PASE: failed attempts since the commissioning window opened.
    public let failureCount: Int
}
