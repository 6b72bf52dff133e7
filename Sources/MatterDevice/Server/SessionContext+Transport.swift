import MatterModel
import MatterProtocol

// How the transport's view of a session (SessionInfo, the IM's SubjectDescriptor and
// session identity) becomes the node's SessionContext.

extension SessionID {
    /// The node's name for a transport session: its handle's serial, never reused.
    init(_ handle: SessionHandle) {
        self.init(handle.serial)
    }
}

extension SessionContext {
    /// The session of one interaction, as the InteractionServer passes it on.
    init(subject: SubjectDescriptor, session: InteractionSessionIdentity?) {
        self.init(
            id: session.map { SessionID($0.id) }, subject: subject,
            attestationChallenge: session?.attestationChallenge ?? [])
    }

    /// A secure session as the exchange manager reports it; nil for unsecured sessions and
    /// group messages (which have no session to track).
    init?(_ info: SessionInfo) {
        let subject: SubjectDescriptor
        switch info.kind {
        case .unsecured, .group:
            return nil
        case .pase:
            subject = SubjectDescriptor(authMode: .pase, fabricIndex: info.fabricIndex, subject: 0)
        case .case:
            subject = SubjectDescriptor(
                authMode: .case, fabricIndex: info.fabricIndex, subject: info.peerNodeID,
                caseAuthenticatedTags: info.caseAuthenticatedTags)
        }
        self.init(id: SessionID(info.handle), subject: subject, attestationChallenge: info.attestationChallenge)
    }
}
