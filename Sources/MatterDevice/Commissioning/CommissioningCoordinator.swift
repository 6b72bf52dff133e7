import Foundation
import Logging
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV

/// CommissioningErrorEnum (Core spec 11.10.5.1).
typealias CommissioningError = Clusters.GeneralCommissioning.CommissioningErrorEnum

/// NodeOperationalCertStatusEnum (Core spec 11.18.4.3), the generated one.
typealias NodeOperationalCertStatus = Clusters.OperationalCredentials.NodeOperationalCertStatusEnum

extension Clusters.OperationalCredentials.NodeOperationalCertStatusEnum: Error {}

/// The outcome of a command answered with NOCResponse: the response, or a plain status
/// when a precondition of the command itself failed.
enum NOCOutcome: Equatable {
    case response(NodeOperationalCertStatus, FabricIndex?)
    case status(InteractionStatus)
}

/// The commissioning state the root node's clusters share: fabrics, the ACL, group keys,
/// the fail-safe and the commissioning window. It is the one owner of that state; the
/// clusters' attributes are derived from it (`publish…`) and the snapshot is what persists.
///
/// Owned by the node runtime and only touched on the node actor.
final class CommissioningCoordinator {
    /// Timer owner for the coordinator's own timers (no cluster has this path).
    static let timerOwner = ClusterPath(endpoint: .max, cluster: ClusterID(.max))
    static let failSafeTimer = "fail-safe"
    static let windowTimer = "commissioning-window"
    static let rootEndpoint: EndpointNumber = 0

    let configuration: CommissioningConfiguration
    let events: Broadcaster<CommissioningEvent>
    unowned let runtime: NodeRuntime
    private var logger: Logger { runtime.logger }

    private(set) var fabrics: FabricTable
    /// The ACL: the only list access checks use, and what the ACL attribute shows.
    private(set) var accessControlEntries: [AccessControlEntry] = []
    private(set) var groupKeySets: [GroupKeySet] = []
    private(set) var groupKeyMap: [GroupKeyMapEntry] = []
    /// Group membership of the node's endpoints, per fabric (Groups cluster).
    private(set) var groupTable: [GroupTableEntry] = []
    private(set) var failSafe: FailSafeContext?
    private(set) var window: CommissioningWindowInfo?
    private(set) var pendingKey: PendingOperationalKey?
    /// The root added by AddTrustedRootCertificate, TLV as received, until AddNOC uses it.
    private(set) var pendingRoot: (certificate: MatterCertificate, tlv: [UInt8])?
    /// PASE sessions that AddNOC bound to a fabric (Core spec 11.18.6.8).
    private var adoptedFabrics: [SessionID: FabricIndex] = [:]

    init(configuration: CommissioningConfiguration, runtime: NodeRuntime, events: Broadcaster<CommissioningEvent>) {
        self.configuration = configuration
        self.runtime = runtime
        self.events = events
        self.fabrics = FabricTable(capacity: Int(max(configuration.supportedFabrics, 1)))
    }

    /// Restores the state saved at the last commit.
    func restore(_ snapshot: CommissioningSnapshot) {
        var table = FabricTable(capacity: fabrics.capacity)
        for fabric in snapshot.fabrics.fabrics { table.upsert(fabric) }
        table.lastAllocatedIndex = snapshot.fabrics.lastAllocatedIndex ?? table.lastAllocatedIndex
        fabrics = table
        let known = Set(table.fabrics.map(\.index))
        accessControlEntries = snapshot.accessControlEntries.filter { known.contains($0.fabricIndex) }
        groupKeySets = snapshot.groupKeySets.filter { known.contains($0.fabricIndex) }
        groupKeyMap = snapshot.groupKeyMap.filter { known.contains($0.fabricIndex) }
        groupTable = snapshot.groupTable.filter { known.contains($0.fabricIndex) }
    }

    // MARK: Sessions

    /// The session as the node sees it: a PASE session that adopted a fabric carries it.
    func effective(_ session: SessionContext?) -> SessionContext? {
        guard var session, session.subject.authMode == .pase, session.subject.fabricIndex == 0,
            let id = session.id, let fabric = adoptedFabrics[id]
        else { return session }
        session.subject.fabricIndex = fabric
        return session
    }

    /// Core spec 5.5 step 6: a new PASE session arms the fail-safe (if nobody has) so a
    /// commissioner that vanishes cannot leave the node half-configured.
    func paseSessionEstablished(_ session: SessionContext) {
        guard failSafe == nil else { return }
        arm(seconds: configuration.failSafeExpiryLengthSeconds, fabricIndex: 0, session: session.id)
    }

    func sessionClosed(_ id: SessionID) {
        adoptedFabrics.removeValue(forKey: id)
    }

    // MARK: Fail-safe (Core spec 11.10.7.2)

    func armFailSafe(expiryLengthSeconds: UInt16, breadcrumb: UInt64, session: SessionContext) -> CommissioningError {
        let fabric = session.fabricIndex
        if let failSafe, !failSafe.belongs(to: fabric, session: session.id) { return .busyWithOtherAdmin }
        // A CASE session may not take the fail-safe while a window is open for a commissioner.
        if failSafe == nil, window != nil, session.subject.authMode == .case { return .busyWithOtherAdmin }
        if expiryLengthSeconds == 0 {
            // Disarm: the cleanup of an expiry, at once; the breadcrumb resets with it.
            if failSafe != nil { expireFailSafe() }
            return .ok
        }
        arm(seconds: expiryLengthSeconds, fabricIndex: fabric, session: session.id)
        setBreadcrumb(breadcrumb)
        return .ok
    }

    private func arm(seconds: UInt16, fabricIndex: FabricIndex, session: SessionID?) {
        let now = runtime.clock.now
        var context = failSafe ?? FailSafeContext(fabricIndex: fabricIndex, session: session, createdAt: now, expiresAt: now)
        let cumulativeLimit = context.createdAt + .seconds(Int64(configuration.maxCumulativeFailsafeSeconds))
        context.expiresAt = min(now + .seconds(Int64(seconds)), cumulativeLimit)
        failSafe = context
        runtime.startTimer(TimerKey(cluster: Self.timerOwner, name: Self.failSafeTimer), at: context.expiresAt)
    }

    func isArmed(for session: SessionContext) -> Bool {
        failSafe?.belongs(to: session.fabricIndex, session: session.id) ?? false
    }

    /// Fail-safe expiry cleanup (Core spec 11.10.7.2.2), in the spec's order.
    func expireFailSafe() {
        guard let context = failSafe else { return }
        failSafe = nil
        runtime.cancelTimer(TimerKey(cluster: Self.timerOwner, name: Self.failSafeTimer))
        logger.notice("fail-safe expired; rolling back commissioning changes")
        // PASE sessions lose their temporary administrator rights.
        events.publish(.closePASESessions)
        adoptedFabrics.removeAll()
        if context.nocCommandInvoked {
            events.publish(.closeSessions(fabricIndex: context.fabricIndex, except: nil))
        }
        // Networks: the one Ethernet network cannot be changed, so there is nothing to restore.
        if context.updateNOCInvoked, let previous = context.fabricBeforeUpdate {
            fabrics.upsert(previous)
            events.publish(.fabricUpdated(previous.index))
        }
        if context.addNOCInvoked {
            removeFabricState(context.fabricIndex)
        }
        pendingKey = nil
        pendingRoot = nil
        setBreadcrumb(0)
        publishFabrics()
        saveSnapshot()
        events.publish(.failSafeExpired)
    }

    // MARK: CommissioningComplete (Core spec 11.10.7.6)

    func completeCommissioning(session: SessionContext) throws -> CommissioningError {
        guard let context = failSafe else { return .noFailSafe }
        // Only over CASE, on the fabric the fail-safe is for.
        guard session.subject.authMode == .case, session.fabricIndex != 0, context.fabricIndex == session.fabricIndex else {
            return .invalidAuthentication
        }
        // Saved before anything is disarmed: a commit that cannot be saved would be lost at
        // the next restart, so the commissioner hears a failure and the fail-safe stays armed
        // (its expiry rolls the fabric back, or a retry commits it).
        failSafe = nil
        do {
            try saveCommittedSnapshot()
        } catch {
            failSafe = context
            logger.error("CommissioningComplete failed: cannot save commissioning state: \(error)")
            throw error
        }
        runtime.cancelTimer(TimerKey(cluster: Self.timerOwner, name: Self.failSafeTimer))
        pendingKey = nil
        pendingRoot = nil
        setBreadcrumb(0)
        closeWindow()
        adoptedFabrics.removeAll()
        events.publish(.closePASESessions)
        if context.nocCommandInvoked { events.publish(.fabricCommitted(context.fabricIndex)) }
        events.publish(.commissioningComplete(fabricIndex: session.fabricIndex, nodeID: session.subject.subject))
        logger.notice("commissioning complete on fabric \(session.fabricIndex)")
        return .ok
    }

    func setBreadcrumb(_ value: UInt64) {
        runtime.store.update(
            rootPath(GeneralCommissioningServer.clusterID, GeneralCommissioningServer.Attribute.breadcrumb),
            to: .unsigned(value))
    }

    // MARK: Operational credentials (Core spec 11.18.6)

    func addTrustedRoot(_ tlv: [UInt8], session: SessionContext) -> InteractionStatus {
        guard var context = failSafe, context.belongs(to: session.fabricIndex, session: session.id) else {
            return InteractionStatus(.failsafeRequired)
        }
        // One root per fail-safe, and none after the NOC that would have used it.
        guard !context.addTrustedRootInvoked, !context.nocCommandInvoked else { return InteractionStatus(.constraintError) }
        guard let root = try? MatterCertificate(tlv: tlv), Self.isValidRoot(root) else {
            return InteractionStatus(.invalidCommand)
        }
        pendingRoot = (root, tlv)
        context.addTrustedRootInvoked = true
        failSafe = context
        publishFabrics()
        return .success
    }

    /// A root CA certificate: rcac-id subject, self-issued, CA with keyCertSign, self-signed.
    static func isValidRoot(_ root: MatterCertificate) -> Bool {
        guard (try? root.certificateType()) == .root, root.issuer == root.subject, root.isCA,
            root.keyUsage?.contains(.keyCertSign) == true
        else { return false }
        return (try? root.verifySignature(issuerPublicKey: root.publicKey)) != nil
    }

    /// CSRRequest: a fresh operational key pair and its CSR (11.18.6.5).
    func requestCSR(
        nonce: [UInt8], forUpdateNOC: Bool, session: SessionContext
    ) -> Result<(elements: [UInt8], signature: [UInt8]), InteractionStatus> {
        if forUpdateNOC && fabrics[session.fabricIndex] == nil { return .failure(InteractionStatus(.invalidCommand)) }
        guard isArmed(for: session) else { return .failure(InteractionStatus(.failsafeRequired)) }
        guard failSafe?.nocCommandInvoked == false else { return .failure(InteractionStatus(.constraintError)) }
        guard let attestation = configuration.attestation else { return .failure(InteractionStatus(.failure)) }
        let keyPair = P256KeyPair()
        do {
            let csr = try CertificateSigningRequest.create(key: keyPair)
            let elements = try DeviceAttestation.nocsrElements(csr: csr.der, csrNonce: nonce)
            let signature = try DeviceAttestation.sign(
                elements: elements, attestationChallenge: session.attestationChallenge,
                dacKey: attestation.dacKey)
            pendingKey = PendingOperationalKey(keyPair: keyPair, forUpdateNOC: forUpdateNOC)
            return .success((elements, signature))
        } catch {
            logger.error("CSRRequest failed: \(error)")
            return .failure(InteractionStatus(.failure))
        }
    }

    struct NOCRequest {
        var noc: [UInt8]
        var icac: [UInt8]?
        var ipk: [UInt8]
        var caseAdminSubject: UInt64
        var adminVendorID: VendorID
    }

    /// AddNOC (11.18.6.8): checks in the order the reference implementation does, then
    /// installs the fabric, its IPK and its first administrator.
    func addNOC(_ request: NOCRequest, session: SessionContext) -> NOCOutcome {
        guard request.ipk.count == GroupKeySet.epochKeyLength, Self.isOperationalVendorID(request.adminVendorID) else {
            return .status(InteractionStatus(.invalidCommand))
        }
        guard var context = failSafe, context.belongs(to: session.fabricIndex, session: session.id) else {
            return .status(InteractionStatus(.failsafeRequired))
        }
        guard !context.nocCommandInvoked else { return .status(InteractionStatus(.constraintError)) }
        guard let pending = pendingKey else { return .response(.missingCsr, nil) }
        guard !pending.forUpdateNOC else { return .status(InteractionStatus(.constraintError)) }
        guard context.addTrustedRootInvoked, let root = pendingRoot else { return .response(.invalidNOC, nil) }
        guard Self.isValidAdminSubject(request.caseAdminSubject) else { return .response(.invalidAdminSubject, nil) }
        guard !fabrics.isFull, let index = fabrics.nextIndex() else { return .response(.tableFull, nil) }

        let identity: OperationalIdentity
        switch Self.validate(noc: request.noc, icac: request.icac, root: root.certificate) {
        case .success(let validated): identity = validated
        case .failure(let status): return .response(status, nil)
        }
        guard identity.nodePublicKey == pending.keyPair.publicKey.uncompressed else { return .response(.invalidPublicKey, nil) }
        let rootKey = Data(identity.rootPublicKey)
        guard !fabrics.conflicts(rootPublicKey: rootKey, fabricID: identity.fabricID) else {
            return .response(.fabricConflict, nil)
        }
        guard
            let compressed = try? FabricKeys.compressedFabricIDValue(
                rootPublicKey: identity.rootPublicKey,
                fabricID: identity.fabricID)
        else {
            return .response(.invalidNOC, nil)
        }
        let fabric = FabricInfo(
            index: index, rootCertificate: Data(root.tlv), intermediateCertificate: request.icac.map { Data($0) },
            nodeOperationalCertificate: Data(request.noc), operationalPrivateKey: Data(pending.keyPair.rawPrivateKey),
            ipkEpochKey: Data(request.ipk), adminVendorID: request.adminVendorID, fabricID: identity.fabricID,
            nodeID: identity.nodeID, rootPublicKey: rootKey, compressedFabricID: compressed,
            cats: identity.caseAuthenticatedTags)
        fabrics.upsert(fabric)
        groupKeySets.append(.identityProtection(fabricIndex: index, epochKey: Data(request.ipk)))
        if session.subject.authMode == .pase, let id = session.id {
            adoptedFabrics[id] = index
            events.publish(.paseSessionAdoptedFabric(session: id, fabricIndex: index))
        }
        accessControlEntries.append(.administrator(fabricIndex: index, subject: request.caseAdminSubject))
        context.fabricIndex = index
        context.addNOCInvoked = true
        failSafe = context
        pendingKey = nil
        pendingRoot = nil
        publishFabrics()
        publishAccessControl()
        events.publish(.fabricAdded(index))
        logger.notice(
            "AddNOC: fabric \(index) (fabric ID 0x\(String(identity.fabricID, radix: 16)), node ID 0x\(String(identity.nodeID, radix: 16)))"
        )
        return .response(.ok, index)
    }

    /// UpdateNOC (11.18.6.9): a new NOC (and key) for the accessing fabric, same root and fabric ID.
    func updateNOC(noc: [UInt8], icac: [UInt8]?, session: SessionContext) -> NOCOutcome {
        guard var context = failSafe, context.belongs(to: session.fabricIndex, session: session.id) else {
            return .status(InteractionStatus(.failsafeRequired))
        }
        guard !context.nocCommandInvoked else { return .status(InteractionStatus(.constraintError)) }
        // A trusted root added under this fail-safe is for a new fabric (AddNOC), not this
        // one's update: the CSR is not for it (TC-OPCREDS-3.4 step 20, as connectedhomeip answers).
        guard let pending = pendingKey, pendingRoot == nil else { return .response(.missingCsr, nil) }
        guard pending.forUpdateNOC else { return .status(InteractionStatus(.constraintError)) }
        guard var fabric = fabrics[session.fabricIndex],
            let root = try? MatterCertificate(tlv: [UInt8](fabric.rootCertificate))
        else {
            return .response(.invalidNOC, nil)
        }
        let identity: OperationalIdentity
        switch Self.validate(noc: noc, icac: icac, root: root) {
        case .success(let validated): identity = validated
        case .failure(let status): return .response(status, nil)
        }
        guard identity.fabricID == fabric.fabricID else { return .response(.invalidNOC, nil) }
        guard identity.nodePublicKey == pending.keyPair.publicKey.uncompressed else { return .response(.invalidPublicKey, nil) }
        context.fabricBeforeUpdate = fabric
        context.updateNOCInvoked = true
        failSafe = context
        fabric.nodeOperationalCertificate = Data(noc)
        fabric.intermediateCertificate = icac.map { Data($0) }
        fabric.operationalPrivateKey = Data(pending.keyPair.rawPrivateKey)
        fabric.nodeID = identity.nodeID
        fabric.cats = identity.caseAuthenticatedTags
        fabrics.upsert(fabric)
        pendingKey = nil
        publishFabrics()
        events.publish(.fabricUpdated(fabric.index))
        // The prior identity is gone: every other session on the fabric ends.
        events.publish(.closeSessions(fabricIndex: fabric.index, except: session.id))
        return .response(.ok, fabric.index)
    }

    /// UpdateFabricLabel (11.18.6.11): labels are unique among the node's fabrics.
    func updateFabricLabel(_ label: String, session: SessionContext) -> NOCOutcome {
        guard var fabric = fabrics[session.fabricIndex] else { return .status(InteractionStatus(.unsupportedAccess)) }
        if !label.isEmpty, fabrics.fabrics.contains(where: { $0.index != fabric.index && $0.label == label }) {
            return .response(.labelConflict, nil)
        }
        fabric.label = label
        fabrics.upsert(fabric)
        // A label change under UpdateNOC belongs to the pending state, as the reference does it.
        if var context = failSafe, context.updateNOCInvoked, context.fabricIndex == fabric.index {
            context.fabricBeforeUpdate?.label = label
            failSafe = context
        }
        publishFabrics()
        saveSnapshot()
        events.publish(.fabricUpdated(fabric.index))
        return .response(.ok, fabric.index)
    }

    /// RemoveFabric (11.18.6.12).
    func removeFabric(_ index: FabricIndex) -> NOCOutcome {
        guard fabrics[index] != nil else { return .response(.invalidFabricIndex, nil) }
        if var context = failSafe, context.fabricIndex == index {
            // Nothing of this fabric is left for the fail-safe to roll back.
            context.addNOCInvoked = false
            context.updateNOCInvoked = false
            context.fabricBeforeUpdate = nil
            failSafe = context
        }
        // BasicInformation Leave (11.1.6.3), before the fabric's state goes.
        let basic = ClusterPath(endpoint: 0, cluster: Clusters.BasicInformation.id)
        if runtime.composition.clusters(on: 0).contains(basic.cluster) {
            runtime.recordEvent(
                basic, Clusters.BasicInformation.Event.leave, priority: .info,
                data: .structure([TLVElement(tag: .context(0), .unsigned(UInt64(index)))]))
        }
        removeFabricState(index)
        publishFabrics()
        saveSnapshot()
        events.publish(.closeSessions(fabricIndex: index, except: nil))
        logger.notice("fabric \(index) removed")
        return .response(.ok, index)
    }

    /// Everything that belongs to a fabric goes with it: ACL entries, keys, group mappings,
    /// a PASE session bound to it, and its claim on the commissioning window.
    private func removeFabricState(_ index: FabricIndex) {
        guard fabrics.remove(index) != nil else { return }
        accessControlEntries.removeAll { $0.fabricIndex == index }
        groupKeySets.removeAll { $0.fabricIndex == index }
        groupKeyMap.removeAll { $0.fabricIndex == index }
        groupTable.removeAll { $0.fabricIndex == index }
        adoptedFabrics = adoptedFabrics.filter { $0.value != index }
        if window?.openedBy == index {
            // AdminFabricIndex becomes null; the window stays open (11.19.7.2).
            window?.openedBy = nil
            publishWindow()
        }
        publishAccessControl()
        publishGroupKeyMap()
        publishGroupTable()
        events.publish(.fabricRemoved(index))
    }

    private static func validate(
        noc: [UInt8], icac: [UInt8]?, root: MatterCertificate
    ) -> Result<OperationalIdentity, NodeOperationalCertStatus> {
        do throws(CertificateError) {
            let nocCertificate = try MatterCertificate(tlv: noc)
            let icacCertificate = try icac.map { bytes throws(CertificateError) in try MatterCertificate(tlv: bytes) }
            // No trusted wall clock: validity periods are not checked (Core spec 6.5.1, last known good time).
            return .success(try CertificateChain.validate(noc: nocCertificate, icac: icacCertificate, rcac: root, at: nil))
        } catch .invalidIdentifier(let what) where what.contains("node ID") {
            return .failure(.invalidNodeOpId)
        } catch {
            return .failure(.invalidNOC)
        }
    }

    /// CaseAdminSubject: an operational node ID or a CASE Authenticated Tag with a version.
    static func isValidAdminSubject(_ subject: UInt64) -> Bool {
        if OperationalIdentifiers.isOperationalNodeID(subject) { return true }
        return AccessControl.isCATSubject(subject) && subject & 0xFFFF != 0
    }

    /// Vendor IDs usable on a fabric: a manufacturer's or a test vendor's, not the standard's (0)
    /// nor one above the test range.
    static func isOperationalVendorID(_ vendor: VendorID) -> Bool {
        IDSpace.Prefix.manufacturer.contains(vendor) || IDSpace.Prefix.test.contains(vendor)
    }

    // MARK: Access control (Core spec 9.10)

    /// Replaces one fabric's entries (a write of the fabric-scoped ACL attribute).
    func replaceAccessControlEntries(of fabric: FabricIndex, with entries: [AccessControlEntry]) {
        accessControlEntries = accessControlEntries.filter { $0.fabricIndex != fabric } + entries
        publishAccessControl()
        saveSnapshot()
    }

    func isGranted(_ subject: SubjectDescriptor, _ request: AccessRequest) -> Bool {
        AccessControl.check(subject, request, entries: accessControlEntries)
    }

    // MARK: Group keys (Core spec 11.2)

    func writeKeySet(_ set: GroupKeySet) -> InteractionStatus {
        let existing = groupKeySets.firstIndex { $0.fabricIndex == set.fabricIndex && $0.id == set.id }
        if existing == nil {
            let count = groupKeySets.filter { $0.fabricIndex == set.fabricIndex }.count
            if count >= Int(configuration.maxGroupKeysPerFabric) { return InteractionStatus(.resourceExhausted) }
        }
        if let existing { groupKeySets[existing] = set } else { groupKeySets.append(set) }
        saveSnapshot()
        return .success
    }

    func keySet(_ id: UInt16, fabric: FabricIndex) -> GroupKeySet? {
        groupKeySets.first { $0.fabricIndex == fabric && $0.id == id }
    }

    func removeKeySet(_ id: UInt16, fabric: FabricIndex) -> InteractionStatus {
        guard id != GroupKeySet.identityProtectionKeySetID else { return InteractionStatus(.invalidCommand) }
        guard keySet(id, fabric: fabric) != nil else { return InteractionStatus(.notFound) }
        groupKeySets.removeAll { $0.fabricIndex == fabric && $0.id == id }
        // Groups mapped to the removed key set lose their mapping (11.2.7.4).
        groupKeyMap.removeAll { $0.fabricIndex == fabric && $0.keySetID == id }
        publishGroupKeyMap()
        saveSnapshot()
        return .success
    }

    func keySetIDs(fabric: FabricIndex) -> [UInt16] {
        groupKeySets.filter { $0.fabricIndex == fabric }.map(\.id).sorted()
    }

    func replaceGroupKeyMap(of fabric: FabricIndex, with entries: [GroupKeyMapEntry]) {
        groupKeyMap = groupKeyMap.filter { $0.fabricIndex != fabric } + entries
        publishGroupKeyMap()
        saveSnapshot()
    }

    // MARK: Commissioning window (Core spec 5.4.2.3, 11.19)

    func openWindow(_ kind: CommissioningWindowKind, timeout: Duration?, openedBy fabric: FabricIndex?) {
        let closesAt = timeout.map { runtime.clock.now + $0 }
        let info = CommissioningWindowInfo(
            kind: kind, closesAt: closesAt, openedBy: fabric,
            openerVendorID: fabric.flatMap { fabrics[$0]?.adminVendorID })
        window = info
        let key = TimerKey(cluster: Self.timerOwner, name: Self.windowTimer)
        if let closesAt { runtime.startTimer(key, at: closesAt) } else { runtime.cancelTimer(key) }
        publishWindow()
        events.publish(.commissioningWindowOpened(info))
        logger.info("commissioning window open (\(kind.isEnhanced ? "enhanced" : "basic"))")
    }

    func closeWindow() {
        guard window != nil else { return }
        window = nil
        runtime.cancelTimer(TimerKey(cluster: Self.timerOwner, name: Self.windowTimer))
        publishWindow()
        events.publish(.commissioningWindowClosed)
        logger.info("commissioning window closed")
    }

    // MARK: Timers

    func timerFired(_ name: String) {
        switch name {
        case Self.failSafeTimer: expireFailSafe()
        case Self.windowTimer: closeWindow()
        default: break
        }
    }

    // MARK: Derived attributes

    private func rootPath(_ cluster: ClusterID, _ attribute: AttributeID) -> AttributePath {
        AttributePath(endpoint: Self.rootEndpoint, cluster: cluster, attribute: attribute)
    }

    /// Writes every derived attribute; run once at start-up after the clusters exist.
    func publishAll() {
        publishFabrics()
        publishAccessControl()
        publishGroupKeyMap()
        publishGroupTable()
        publishWindow()
    }

    func publishFabrics() {
        typealias A = OperationalCredentialsServer.Attribute
        let cluster = OperationalCredentialsServer.clusterID
        let all = fabrics.fabrics
        runtime.store.update(rootPath(cluster, A.nocs), to: .arrayOf(all.map(\.nocTLV)))
        runtime.store.update(rootPath(cluster, A.fabrics), to: .arrayOf(all.map(\.descriptorTLV)))
        runtime.store.update(rootPath(cluster, A.commissionedFabrics), to: .uint(all.count))
        var roots = all.map { TLVValue.bytes([UInt8]($0.rootCertificate)) }
        if let pendingRoot { roots.append(.bytes(pendingRoot.tlv)) }
        runtime.store.update(rootPath(cluster, A.trustedRootCertificates), to: .arrayOf(roots))
    }

    func publishAccessControl() {
        let ordered = accessControlEntries.enumerated()
            .sorted { ($0.element.fabricIndex, $0.offset) < ($1.element.fabricIndex, $1.offset) }
            .map(\.element.tlv)
        runtime.store.update(rootPath(AccessControlServer.clusterID, AccessControlServer.Attribute.acl), to: .arrayOf(ordered))
    }

    func publishGroupKeyMap() {
        let ordered = groupKeyMap.enumerated()
            .sorted { ($0.element.fabricIndex, $0.offset) < ($1.element.fabricIndex, $1.offset) }
            .map(\.element.tlv)
        runtime.store.update(
            rootPath(GroupKeyManagementServer.clusterID, GroupKeyManagementServer.Attribute.groupKeyMap),
            to: .arrayOf(ordered))
    }

    func publishGroupTable() {
        let ordered = groupTable.sorted { ($0.fabricIndex, $0.groupID) < ($1.fabricIndex, $1.groupID) }.map(\.tlv)
        runtime.store.update(
            rootPath(GroupKeyManagementServer.clusterID, GroupKeyManagementServer.Attribute.groupTable),
            to: .arrayOf(ordered))
    }

    // MARK: Groups (Application Cluster spec 1.3)

    func group(_ id: UInt16, fabric: FabricIndex) -> GroupTableEntry? {
        groupTable.first { $0.fabricIndex == fabric && $0.groupID == id }
    }

    /// The groups of the fabric an endpoint is in, ascending.
    func groups(on endpoint: EndpointNumber, fabric: FabricIndex) -> [UInt16] {
        groupTable.filter { $0.fabricIndex == fabric && $0.endpoints.contains(endpoint) }.map(\.groupID).sorted()
    }

    /// How many more groups the fabric may have.
    func groupCapacity(fabric: FabricIndex) -> Int {
        max(0, Int(configuration.maxGroupsPerFabric) - groupTable.filter { $0.fabricIndex == fabric }.count)
    }

    /// AddGroup (1.3.7.1): the group must have a key set in the fabric's GroupKeyMap; a new
    /// group takes a place in the fabric's table; an existing one gains the endpoint and the name.
    func addGroup(_ id: UInt16, name: String, endpoint: EndpointNumber, fabric: FabricIndex) -> InteractionStatus {
        guard groupKeyMap.contains(where: { $0.fabricIndex == fabric && $0.groupID == id }) else {
            return InteractionStatus(.unsupportedAccess)
        }
        if let i = groupTable.firstIndex(where: { $0.fabricIndex == fabric && $0.groupID == id }) {
            if !groupTable[i].endpoints.contains(endpoint) { groupTable[i].endpoints.append(endpoint) }
            groupTable[i].endpoints.sort()
            groupTable[i].name = name
        } else {
            guard groupCapacity(fabric: fabric) > 0 else { return InteractionStatus(.resourceExhausted) }
            groupTable.append(GroupTableEntry(fabricIndex: fabric, groupID: id, endpoints: [endpoint], name: name))
        }
        groupsChanged()
        return InteractionStatus(.success)
    }

    /// RemoveGroup (1.3.7.4): NOT_FOUND unless the endpoint is in the group.
    func removeGroup(_ id: UInt16, endpoint: EndpointNumber, fabric: FabricIndex) -> InteractionStatus {
        guard let i = groupTable.firstIndex(where: { $0.fabricIndex == fabric && $0.groupID == id && $0.endpoints.contains(endpoint) })
        else { return InteractionStatus(.notFound) }
        groupTable[i].endpoints.removeAll { $0 == endpoint }
        if groupTable[i].endpoints.isEmpty { groupTable.remove(at: i) }
        groupsChanged()
        return InteractionStatus(.success)
    }

    /// RemoveAllGroups (1.3.7.5): the endpoint leaves every group of the fabric.
    func removeAllGroups(endpoint: EndpointNumber, fabric: FabricIndex) {
        for i in groupTable.indices where groupTable[i].fabricIndex == fabric { groupTable[i].endpoints.removeAll { $0 == endpoint } }
        groupTable.removeAll { $0.endpoints.isEmpty }
        groupsChanged()
    }

    private func groupsChanged() {
        publishGroupTable()
        saveSnapshot()
    }

    func publishWindow() {
        typealias A = AdministratorCommissioningServer.Attribute
        let cluster = AdministratorCommissioningServer.clusterID
        // Only windows an administrator opened show up (the boot window reads as closed).
        let status: UInt8
        switch window {
        case .some(let info) where info.openerVendorID != nil:
            status = info.kind.isEnhanced ? 1 : 2
        default:
            status = 0
        }
        let adminFabric: TLVValue = status == 0 ? .null : (window?.openedBy.map { .uint($0) } ?? .null)
        let adminVendor: TLVValue = status == 0 ? .null : (window?.openerVendorID.map { .uint($0) } ?? .null)
        runtime.store.update(rootPath(cluster, A.windowStatus), to: .uint(status))
        runtime.store.update(rootPath(cluster, A.adminFabricIndex), to: adminFabric)
        runtime.store.update(rootPath(cluster, A.adminVendorId), to: adminVendor)
    }

    // MARK: Persistence

    /// The committed state: a fabric AddNOC added under the armed fail-safe, and a NOC
    /// UpdateNOC replaced, stay out until CommissioningComplete.
    var committedSnapshot: CommissioningSnapshot {
        var table = fabrics
        var excluded: Set<FabricIndex> = []
        if let context = failSafe {
            if context.addNOCInvoked {
                excluded.insert(context.fabricIndex)
                table.remove(context.fabricIndex)
            }
            if context.updateNOCInvoked, let previous = context.fabricBeforeUpdate { table.upsert(previous) }
        }
        return CommissioningSnapshot(
            fabrics: table,
            accessControlEntries: accessControlEntries.filter { !excluded.contains($0.fabricIndex) },
            groupKeySets: groupKeySets.filter { !excluded.contains($0.fabricIndex) },
            groupKeyMap: groupKeyMap.filter { !excluded.contains($0.fabricIndex) },
            groupTable: groupTable.filter { !excluded.contains($0.fabricIndex) })
    }

    /// Saves the committed state; a failure is logged (CommissioningComplete, which must not
    /// succeed unsaved, calls `saveCommittedSnapshot` itself).
    func saveSnapshot() {
        do {
            try saveCommittedSnapshot()
        } catch {
            logger.error("cannot save commissioning state: \(error)")
        }
    }

    func saveCommittedSnapshot() throws {
        try runtime.persistence.saveCommissioning(committedSnapshot)
        events.publish(.committedStateSaved)
    }
}

extension CommissioningWindowKind {
    var isEnhanced: Bool {
        if case .enhanced = self { return true }
        return false
    }
}
