import MatterCrypto
import MatterModel

/// How a commissioning window lets a commissioner in (Core spec 5.4.2.3, 11.19).
public enum CommissioningWindowKind: Sendable, Hashable {
    /// The device's own onboarding passcode and discriminator (the boot window, or
    /// OpenBasicCommissioningWindow).
    case basic
    /// A verifier an administrator supplied with OpenCommissioningWindow.
    case enhanced(verifier: Spake2pVerifier, discriminator: UInt16, iterations: UInt32, salt: [UInt8])
}

/// An open commissioning window.
public struct CommissioningWindowInfo: Sendable, Hashable {
    public var kind: CommissioningWindowKind
    /// When the window closes by itself; nil keeps it open until commissioning completes.
    public var closesAt: Duration?
    /// The fabric whose administrator opened it through the Administrator
    /// Commissioning cluster; nil for a window the device opened itself.
    public var openedBy: FabricIndex?
    /// The vendor ID of that administrator's fabric.
    public var openerVendorID: VendorID?

    public init(kind: CommissioningWindowKind, closesAt: Duration?, openedBy: FabricIndex? = nil, openerVendorID: VendorID? = nil) {
        self.kind = kind
        self.closesAt = closesAt
        self.openedBy = openedBy
        self.openerVendorID = openerVendorID
    }
}

/// What the node asks of the world around it while it is commissioned, updated or
/// removed from fabrics. The runtime consumes `MatterNode.commissioningEvents` and acts:
/// advertising (`_matterc._udp` while a window is open, `_matter._tcp` per fabric),
/// PASE verifiers, and closing sessions in the session manager.
public enum CommissioningEvent: Sendable, Hashable {
    /// Advertise `_matterc._udp` and accept PASE with the window's verifier.
    case commissioningWindowOpened(CommissioningWindowInfo)
    /// Withdraw `_matterc._udp` and stop accepting new PASE sessions.
    case commissioningWindowClosed
    /// The fail-safe expired (or was disarmed with 0) and its changes were rolled back
    /// (Core spec 11.10.7.2.2).
    case failSafeExpired
    /// AddNOC over PASE bound that session to the new fabric (Core spec 11.18.6.8): its
    /// later requests carry this accessing fabric.
    case paseSessionAdoptedFabric(session: SessionID, fabricIndex: FabricIndex)
    /// AddNOC installed a fabric; it is usable for CASE (and may be advertised) but is
    /// rolled back unless commissioning completes.
    case fabricAdded(FabricIndex)
    /// UpdateNOC or UpdateFabricLabel changed a fabric.
    case fabricUpdated(FabricIndex)
    /// CommissioningComplete made a fabric's state permanent.
    case fabricCommitted(FabricIndex)
    /// RemoveFabric (or a rollback) removed a fabric: withdraw its `_matter._tcp` record.
    case fabricRemoved(FabricIndex)
    /// CommissioningComplete succeeded over CASE from `nodeID` on `fabricIndex`.
    case commissioningComplete(fabricIndex: FabricIndex, nodeID: NodeID)
    /// Close every PASE session (commissioning ended, or the fail-safe expired).
    case closePASESessions
    /// Close the fabric's CASE sessions; `except` stays open until its response is
    /// delivered (UpdateNOC). Sessions are closed after the triggering response is sent.
    case closeSessions(fabricIndex: FabricIndex, except: SessionID?)
    /// Stored state changed (key sets, GroupKeyMap, group table or fabrics, among others):
    /// the group keys and multicast groups the node listens on may have to follow.
    case committedStateSaved
}
