import MatterModel

/// Identifies one secure session for its whole life. The protocol layer picks the
/// numbers (e.g. from its session handles) and never reuses one for another session.
public struct SessionID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    public var description: String { "session#\(rawValue)" }
}

/// What the node knows about the session a read, write or invoke arrived on.
///
/// The Interaction Model layer builds one per request from its session. `nil` in the
/// node's API means an internal request (the simulator itself), which bypasses access control.
public struct SessionContext: Sendable, Hashable {
    /// The session, to tie the fail-safe and a PASE session's adopted fabric to it.
    public var id: SessionID?
    /// Who is asking (auth mode, accessing fabric, node ID, CATs).
    public var subject: SubjectDescriptor
    /// The session's attestation challenge (16 bytes from the PASE/CASE session keys,
    /// Core spec 4.14.1.3 / 4.14.2.6); AttestationResponse and CSRResponse sign over it.
    public var attestationChallenge: [UInt8]

    public init(id: SessionID? = nil, subject: SubjectDescriptor, attestationChallenge: [UInt8] = []) {
        self.id = id
        self.subject = subject
        self.attestationChallenge = attestationChallenge
    }

    /// The accessing fabric (Core spec 7.5.2); 0 when the session has none.
    public var fabricIndex: FabricIndex { subject.fabricIndex }
}
