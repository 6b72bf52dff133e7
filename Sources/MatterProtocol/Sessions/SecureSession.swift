import MatterCrypto
import MatterModel
import NIOCore

/// Parameters for installing a newly established secure session.
public struct SecureSessionParameters: Sendable {
    public var kind: SessionKind
    public var role: SessionRole
    public var localSessionID: UInt16
    public var peerSessionID: UInt16
    public var keys: SessionKeys
    public var localNodeID: NodeID
    public var peerNodeID: NodeID
    public var fabricIndex: FabricIndex
    public var caseAuthenticatedTags: [UInt32]
    public var peerAddress: SocketAddress
    public var peerParameters: SessionParameters
    /// CASE: the resumption ID and shared secret, so a later Sigma1 can resume it.
    public var resumption: CASEResumptionRecord?

    public init(
        kind: SessionKind, role: SessionRole, localSessionID: UInt16, peerSessionID: UInt16, keys: SessionKeys,
        localNodeID: NodeID = 0, peerNodeID: NodeID = 0, fabricIndex: FabricIndex = 0,
        caseAuthenticatedTags: [UInt32] = [], peerAddress: SocketAddress,
        peerParameters: SessionParameters = .default, resumption: CASEResumptionRecord? = nil
    ) {
        self.kind = kind
        self.role = role
        self.localSessionID = localSessionID
        self.peerSessionID = peerSessionID
        self.keys = keys
        self.localNodeID = localNodeID
        self.peerNodeID = peerNodeID
        self.fabricIndex = fabricIndex
        self.caseAuthenticatedTags = caseAuthenticatedTags
        self.peerAddress = peerAddress
        self.peerParameters = peerParameters
        self.resumption = resumption
    }
}

/// What a CASE responder keeps to accept Sigma1 with resumption (spec 4.14.2.2.1).
public struct CASEResumptionRecord: Sendable, Hashable {
    public var resumptionID: [UInt8]
    public var sharedSecret: [UInt8]
    public var peerNodeID: NodeID
    public var fabricIndex: FabricIndex
    public var caseAuthenticatedTags: [UInt32]

    public init(
        resumptionID: [UInt8], sharedSecret: [UInt8], peerNodeID: NodeID, fabricIndex: FabricIndex,
        caseAuthenticatedTags: [UInt32]
    ) {
        self.resumptionID = resumptionID
        self.sharedSecret = sharedSecret
        self.peerNodeID = peerNodeID
        self.fabricIndex = fabricIndex
        self.caseAuthenticatedTags = caseAuthenticatedTags
    }
}

/// A secure unicast session (PASE or CASE) as the message layer keeps it.
struct SecureSession {
    let handle: SessionHandle
    let kind: SessionKind
    let role: SessionRole
    let localSessionID: UInt16
    let peerSessionID: UInt16
    let cipher: SessionCipher
    let attestationChallenge: [UInt8]
    let localNodeID: NodeID
    let peerNodeID: NodeID
    var fabricIndex: FabricIndex
    let caseAuthenticatedTags: [UInt32]
    var peerAddress: SocketAddress
    var peerParameters: SessionParameters
    var localCounter = MessageCounter(allowsRollover: false)
    /// Secure unicast sessions start synchronised at 0 (spec 4.6.5.1).
    var peerCounter = PeerMessageCounter(synchronizedAt: 0)
    /// Last time anything was sent or received (for eviction order).
    var lastActivity: Duration
    /// Last time a message from the peer was accepted (decides SAI vs SII, spec 4.12.2.1).
    var lastPeerActivity: Duration?

    var info: SessionInfo {
        SessionInfo(
            handle: handle, kind: kind, role: role, localSessionID: localSessionID, peerSessionID: peerSessionID,
            localNodeID: localNodeID, peerNodeID: peerNodeID, fabricIndex: fabricIndex,
            caseAuthenticatedTags: caseAuthenticatedTags, attestationChallenge: attestationChallenge,
            peerAddress: peerAddress, peerParameters: peerParameters)
    }
}

/// The unsecured session with one peer for one ephemeral initiator node ID (spec 4.13.2.1).
struct UnsecuredSession {
    struct Key: Hashable {
        /// The responder keys sessions by address too: initiators pick their node IDs at random.
        var peerAddress: SocketAddress?
        var ephemeralInitiatorNodeID: UInt64
        var role: SessionRole
    }

    let handle: SessionHandle
    let key: Key
    var peerAddress: SocketAddress
    var peerParameters: SessionParameters = .default
    var peerCounter = PeerMessageCounter()
    var lastActivity: Duration
    var lastPeerActivity: Duration?

    var info: SessionInfo {
        SessionInfo(
            handle: handle, kind: .unsecured, role: key.role, localSessionID: 0, peerSessionID: 0,
            localNodeID: key.role == .initiator ? key.ephemeralInitiatorNodeID : 0,
            peerNodeID: key.role == .responder ? key.ephemeralInitiatorNodeID : 0,
            fabricIndex: 0, caseAuthenticatedTags: [], attestationChallenge: [],
            peerAddress: peerAddress, peerParameters: peerParameters)
    }
}
