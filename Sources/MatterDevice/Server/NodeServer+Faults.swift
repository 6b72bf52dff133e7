import MatterModel
import MatterProtocol
import Synchronization

// Faults injected into a running node (`matter-sim fault`): a pulled LAN cable and a
// power cut. The cloud side (the relay connection) is the caller's; the node only
// reports who relay requests act as.

/// What is broken right now. The LAN works when the cable is in and the power is on.
struct FaultState {
    var cableConnected = true
    var powered = true

    var lanUp: Bool { cableConnected && powered }
}

extension NodeServer {
    /// True while the node's UDP traffic flows (cable in, power on).
    public var isLANUp: Bool { faults.withLock { $0.lanUp } }

    public var isPoweredOn: Bool { faults.withLock { $0.powered } }

    /// Datagrams dropped while the LAN was down: (received, sent).
    public var droppedDatagrams: (inbound: UInt64, outbound: UInt64) { lan.dropped }

    /// A lossy LAN (`.none`: a clean one): loss, delay, jitter and duplication each way.
    public var lanImpairment: LinkImpairment { lan.impairment }

    /// Datagrams the impairment lost: (received, sent).
    public var lostDatagrams: (inbound: UInt64, outbound: UInt64) { lan.lost }

    public func setLANImpairment(_ impairment: LinkImpairment) {
        lan.impairment = impairment
        logger.notice("LAN impairment: \(impairment)")
    }

    /// Pulls (`false`) or plugs back (`true`) the node's LAN cable: while it is out every
    /// datagram is dropped both ways and the mDNS records are withdrawn. Sessions are not
    /// closed (nobody could be told): peers find out by timing out.
    public func setLAN(up: Bool) async {
        faults.withLock { $0.cableConnected = up }
        await applyLANState()
        logger.notice(up ? "LAN cable plugged in" : "LAN cable pulled: UDP dropped both ways, mDNS withdrawn")
    }

    /// Cuts the power: the LAN goes down as with a pulled cable, and everything a node
    /// keeps only in memory is lost: sessions (with their resumption state),
    /// subscriptions, an open commissioning window. Fabrics, ACL and attributes stay on
    /// disk. Take the relay connection down beside it.
    public func powerOff() async {
        let wasOn = faults.withLock { state -> Bool in
            defer { state.powered = false }
            return state.powered
        }
        guard wasOn else { return }
        await applyLANState()
        // No CloseSession goes out: a node without power says nothing.
        for fabric in await node.fabrics {
            await exchangeManager.closeSessions(fabricIndex: fabric.index, notifyPeer: false)
        }
        for session in await exchangeManager.allSessions() where session.isSecure {
            await exchangeManager.closeSession(session.handle, notifyPeer: false)
        }
        await interactionServer.endAllSubscriptions()
        await cloudInteractionServer.endAllSubscriptions()
        if await node.commissioningWindow != nil { await node.closeCommissioningWindow() }
        logger.notice("power off: sessions and subscriptions gone, LAN down")
    }

    /// Restores power: the node boots from what it kept (commissionable again when it is
    /// on no fabric, else advertised on each fabric), and the LAN comes back unless the
    /// cable is still out.
    public func powerOn() async {
        let wasOff = faults.withLock { state -> Bool in
            defer { state.powered = true }
            return !state.powered
        }
        guard wasOff else { return }
        // The clusters start again: StartUpOnOff and the like apply (TC-OO-2.4 reboots this way).
        await node.powerUp()
        await applyLANState()
        await boot()
        logger.notice("power on")
    }

    private func applyLANState() async {
        let up = faults.withLock { $0.lanUp }
        lan.setConnected(up)
        if up { await advertiser.resume() } else { await advertiser.suspend() }
    }

    /// Who an interaction through the cloud relay acts as (contract for issue #6, point 3):
    /// the relay authenticated the home's controller by its token, so the node lets it in
    /// as the Administer subject of its first fabric: the node ID (or, failing one, the
    /// CASE Authenticated Tag) of the first CASE Administer entry in that fabric's ACL,
    /// read now, so a changed ACL counts at once. Nil when the node is on no fabric or
    /// that fabric has no such entry: then nothing may be accessed through the relay.
    public func cloudSubject() async -> SubjectDescriptor? {
        guard let fabric = await node.fabrics.min(by: { $0.index < $1.index }) else { return nil }
        let administrators = await node.accessControlEntries.filter {
            $0.fabricIndex == fabric.index && $0.privilege == .administer && $0.authMode == .case
        }
        // Operational node IDs first: the commissioner's own entry.
        for entry in administrators {
            if let nodeID = (entry.subjects ?? []).first(where: { !Self.isCASEAuthenticatedTag($0) }) {
                return SubjectDescriptor(authMode: .case, fabricIndex: fabric.index, subject: nodeID)
            }
        }
        for entry in administrators {
            if let tag = (entry.subjects ?? []).first(where: Self.isCASEAuthenticatedTag) {
                // A controller holding the tag; its node ID is not in the ACL, and need not be.
                return SubjectDescriptor(
                    authMode: .case, fabricIndex: fabric.index, subject: Self.anyOperationalNodeID,
                    caseAuthenticatedTags: [UInt32(truncatingIfNeeded: tag)])
            }
        }
        // An entry without subjects admits every CASE peer of the fabric.
        if administrators.contains(where: { ($0.subjects ?? []).isEmpty }) {
            return SubjectDescriptor(authMode: .case, fabricIndex: fabric.index, subject: Self.anyOperationalNodeID)
        }
        return nil
    }

    /// CATs occupy 0xFFFF_FFFD_xxxx_xxxx of the node ID space (Core spec 6.6.2.1.2).
    static func isCASEAuthenticatedTag(_ subject: UInt64) -> Bool { AccessControl.isCATSubject(subject) }

    /// The lowest operational node ID, for a subject whose node ID does not matter.
    static let anyOperationalNodeID: NodeID = 1
}
