import MatterModel

/// Who is asking: the Incoming Subject Descriptor of Matter Core spec 6.6 (Access Control),
/// as the secure session established it.
public struct SubjectDescriptor: Hashable, Sendable, CustomStringConvertible {
    /// The Access Control cluster's AuthModeEnum values.
    public enum AuthMode: UInt8, Hashable, Sendable {
        case pase = 1
        case caseSession = 2
        case group = 3
    }

    public var authMode: AuthMode
    /// The accessing fabric; 0 when the session has none (a PASE session before AddNOC).
    public var fabricIndex: FabricIndex
    /// The peer's operational node ID (CASE), or 0 for PASE.
    public var nodeID: NodeID
    /// CASE Authenticated Tags from the peer's NOC.
    public var caseAuthenticatedTags: [UInt32]

    public init(authMode: AuthMode, fabricIndex: FabricIndex, nodeID: NodeID, caseAuthenticatedTags: [UInt32] = []) {
        self.authMode = authMode
        self.fabricIndex = fabricIndex
        self.nodeID = nodeID
        self.caseAuthenticatedTags = caseAuthenticatedTags
    }

    public var description: String { "\(authMode) fabric \(fabricIndex) node 0x\(String(nodeID, radix: 16))" }
}

/// Which secure session an interaction arrived on, for the data model's own
/// bookkeeping: the fail-safe and a PASE session's adopted fabric are tied to the
/// session, and attestation and CSR responses sign over its attestation challenge
/// (spec 11.18.5).
public struct InteractionSessionIdentity: Hashable, Sendable {
    /// Never reused for another session while the transport runs.
    public var id: UInt64
    /// The session's attestation challenge (16 bytes for PASE and CASE sessions).
    public var attestationChallenge: [UInt8]

    public init(id: UInt64, attestationChallenge: [UInt8]) {
        self.id = id
        self.attestationChallenge = attestationChallenge
    }
}

/// The seam to the transport: one exchange (Matter Core spec chapter 4) on a secure
/// session, carrying Interaction Model messages (protocol 0x0001). The
/// transport's Exchange conforms to this; MRP, encryption and counters stay
/// below it.
public protocol IMExchange: Sendable {
    /// The session's subject, for access control.
    var subject: SubjectDescriptor { get }

    /// The session itself; nil when the transport does not identify sessions.
    var sessionIdentity: InteractionSessionIdentity? { get }

    /// Sends one IM message on this exchange.
    func send(opcode: UInt8, payload: [UInt8]) async throws

    /// The next IM message the peer sends on this exchange. Throws when the
    /// exchange closes or no message arrives within the exchange's response
    /// timeout: the Interaction Model relies on this to give up on silent peers.
    func receive() async throws -> (opcode: UInt8, payload: [UInt8])

    /// Starts a new exchange, as initiator, on the same secure session: a
    /// subscription's later reports each go on one. Must keep working after
    /// this exchange closed, for as long as the session lives.
    func openExchange() async throws -> any IMExchange

    /// Ends this exchange (a no-op when already closed).
    func close() async
}

extension IMExchange {
    public var sessionIdentity: InteractionSessionIdentity? { nil }

    func send<M: InteractionMessage>(_ message: M) async throws {
        try await send(opcode: M.opcode.rawValue, payload: message.encoded())
    }
}
