import MatterModel

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
