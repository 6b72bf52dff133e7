import MatterCrypto
import MatterModel

/// The Fail-Safe Context (Core spec 11.10.7.2.1): who armed the fail-safe, until when,
/// and which commissioning steps ran under it, so expiry can undo exactly those.
struct FailSafeContext {
    /// The accessing fabric when armed (0 over a PASE session before AddNOC); AddNOC
    /// moves it to the new fabric.
    var fabricIndex: FabricIndex
    /// The session that armed it, which is what ties a fabric-less (PASE) fail-safe to one commissioner.
    var session: SessionID?
    /// When the context was created: MaxCumulativeFailsafeSeconds counts from here and
    /// is never extended (11.10.7.2).
    let createdAt: Duration
    var expiresAt: Duration

    var addTrustedRootInvoked = false
    var addNOCInvoked = false
    var updateNOCInvoked = false
    /// The fabric as it was before UpdateNOC, restored on expiry.
    var fabricBeforeUpdate: FabricInfo?

    var nocCommandInvoked: Bool { addNOCInvoked || updateNOCInvoked }

    /// Whether a request from this fabric and session may use (re-arm, complete) this
    /// fail-safe: the same accessing fabric and, without a fabric, the same session.
    func belongs(to fabric: FabricIndex, session: SessionID?) -> Bool {
        guard fabric == fabricIndex else { return false }
        return fabric != 0 || self.session == nil || self.session == session
    }
}

/// The operational key pair a CSRRequest generated, waiting for AddNOC or UpdateNOC.
struct PendingOperationalKey {
    let keyPair: P256KeyPair
    /// IsForUpdateNOC of the CSRRequest.
    let forUpdateNOC: Bool
}
