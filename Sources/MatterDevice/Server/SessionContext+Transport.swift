import MatterModel
import MatterProtocol

// How the transport's view of a session (SessionInfo, the IM's SubjectDescriptor and
// session identity) becomes the node's SessionContext and AccessSubject.

extension AccessSubject {
    /// The Incoming Subject Descriptor of the Interaction Model (Core spec 6.6.2.1).
    init(_ subject: SubjectDescriptor) {
        let mode: AuthMode
        switch subject.authMode {
        case .pase: mode = .pase
        case .caseSession: mode = .case
        case .group: mode = .group
        }
        self.init(authMode: mode, fabricIndex: subject.fabricIndex, subject: subject.nodeID, cats: subject.caseAuthenticatedTags)
    }
}

extension SessionID {
    /// The node's name for a transport session: its handle's serial, never reused.
    init(_ handle: SessionHandle) {
        self.init(handle.serial)
    }
}

extension SessionContext {
    /// The session of one interaction, as the InteractionServer passes it on.
    init(subject: SubjectDescriptor, session: InteractionSessionIdentity?) {
        self.init(id: session.map { SessionID($0.id) }, subject: AccessSubject(subject),
                  attestationChallenge: session?.attestationChallenge ?? [])
    }

    /// A secure session as the exchange manager reports it; nil for unsecured sessions and
    /// group messages (which have no session to track).
    init?(_ info: SessionInfo) {
        let subject: AccessSubject
        switch info.kind {
        case .unsecured, .group:
            return nil
        case .pase:
            subject = AccessSubject(authMode: .pase, fabricIndex: info.fabricIndex, subject: 0)
        case .case:
            subject = AccessSubject(authMode: .case, fabricIndex: info.fabricIndex, subject: info.peerNodeID,
                                    cats: info.caseAuthenticatedTags)
        }
        self.init(id: SessionID(info.handle), subject: subject, attestationChallenge: info.attestationChallenge)
    }
}
