import MatterCrypto
import MatterModel
import NIOCore

/// The session table of one node (Matter Core spec 4.13): allocates secure session
/// IDs, finds sessions by ID or handle, evicts the least recently used session
/// when full, and remembers CASE resumption records.
struct SessionManager {
    let maxSecureSessions: Int
    let maxUnsecuredSessions: Int
    let maxResumptionRecords: Int

    private var nextSerial: UInt64 = 1
    private var pinnedUnsecured: Set<SessionHandle> = []
    /// Unsecured sessions evicted for new ones and not yet told to the exchange layer, whose
    /// exchanges on them must go too (`takeEvictedUnsecured`).
    private var evictedUnsecured: [SessionHandle] = []
    private(set) var secure: [UInt16: SecureSession] = [:]
    private var secureIDByHandle: [SessionHandle: UInt16] = [:]
    private(set) var unsecured: [SessionHandle: UnsecuredSession] = [:]
    private var unsecuredByKey: [UnsecuredSession.Key: SessionHandle] = [:]
    /// IDs handed out to handshakes in progress and not yet installed.
    private var reservedIDs: Set<UInt16> = []
    private var nextSessionID: UInt16
    private var resumptions: [[UInt8]: CASEResumptionRecord] = [:]
    private var resumptionOrder: [[UInt8]] = []

    init(maxSecureSessions: Int, maxUnsecuredSessions: Int, maxResumptionRecords: Int = 32) {
        self.maxSecureSessions = max(1, maxSecureSessions)
        self.maxUnsecuredSessions = max(1, maxUnsecuredSessions)
        self.maxResumptionRecords = max(0, maxResumptionRecords)
        let r = SecureRandom.bytes(2)
        nextSessionID = max(1, UInt16(r[0]) | UInt16(r[1]) << 8)
    }

    /// A handle for one received group message (spec 4.16): it has no session to live in.
    mutating func groupMessageHandle() -> SessionHandle { makeHandle() }

    private mutating func makeHandle() -> SessionHandle {
        defer { nextSerial += 1 }
        return SessionHandle(serial: nextSerial)
    }

    // MARK: Secure sessions

    /// Reserves a fresh local session ID (never 0, never one in use). Nil when all 65535 are taken.
    mutating func allocateSessionID() -> UInt16? {
        for _ in 0..<Int(UInt16.max) {
            let candidate = nextSessionID
            nextSessionID = nextSessionID == UInt16.max ? 1 : nextSessionID + 1
            if secure[candidate] == nil && !reservedIDs.contains(candidate) {
                reservedIDs.insert(candidate)
                return candidate
            }
        }
        return nil
    }

    mutating func releaseSessionID(_ id: UInt16) {
        reservedIDs.remove(id)
    }

    /// Installs a session; evicts the least recently used ones while over capacity.
    /// Returns the new session and the sessions evicted for it.
    mutating func installSecure(
        _ p: SecureSessionParameters, now: Duration
    ) throws(MatterCryptoError) -> (SecureSession, evicted: [SecureSession]) {
        let cipher = try SessionCipher(keys: p.keys, role: p.role, localNodeID: p.localNodeID, peerNodeID: p.peerNodeID)
        reservedIDs.remove(p.localSessionID)
        var evicted: [SecureSession] = []
        if let existing = secure[p.localSessionID] {
            evicted.append(existing)
            removeSecure(existing.handle)
        }
        while secure.count >= maxSecureSessions, let victim = secure.values.min(by: { $0.lastActivity < $1.lastActivity }) {
            evicted.append(victim)
            removeSecure(victim.handle)
        }
        let session = SecureSession(
            handle: makeHandle(), kind: p.kind, role: p.role, localSessionID: p.localSessionID,
            peerSessionID: p.peerSessionID, cipher: cipher, attestationChallenge: p.keys.attestationChallenge,
            localNodeID: p.localNodeID, peerNodeID: p.peerNodeID, fabricIndex: p.fabricIndex,
            caseAuthenticatedTags: p.caseAuthenticatedTags, peerAddress: p.peerAddress, peerParameters: p.peerParameters,
            lastActivity: now, lastPeerActivity: now)
        secure[p.localSessionID] = session
        secureIDByHandle[session.handle] = p.localSessionID
        if let r = p.resumption { storeResumption(r) }
        return (session, evicted)
    }

    func secureSession(localSessionID: UInt16) -> SecureSession? { secure[localSessionID] }

    func secureSession(_ handle: SessionHandle) -> SecureSession? {
        secureIDByHandle[handle].flatMap { secure[$0] }
    }

    mutating func updateSecure(_ handle: SessionHandle, _ body: (inout SecureSession) -> Void) {
        guard let id = secureIDByHandle[handle], var s = secure[id] else { return }
        body(&s)
        secure[id] = s
    }

    @discardableResult
    mutating func removeSecure(_ handle: SessionHandle) -> SecureSession? {
        guard let id = secureIDByHandle.removeValue(forKey: handle) else { return nil }
        return secure.removeValue(forKey: id)
    }

    func secureHandles(fabricIndex: FabricIndex) -> [SessionHandle] {
        secure.values.filter { $0.fabricIndex == fabricIndex }.map(\.handle)
    }

    // MARK: Unsecured sessions

    /// Finds the unsecured session for `key`, creating it (and evicting the least
    /// recently used one when full) if `create` is set.
    mutating func unsecuredSession(
        key: UnsecuredSession.Key, address: SocketAddress, now: Duration,
        create: Bool
    ) -> SessionHandle? {
        if let h = unsecuredByKey[key] { return h }
        guard create else { return nil }
        return makeUnsecuredSession(key: key, address: address, now: now)
    }

    /// Creates a new unsecured session (evicting the least recently used one when full).
    mutating func makeUnsecuredSession(key: UnsecuredSession.Key, address: SocketAddress, now: Duration) -> SessionHandle {
        if let existing = unsecuredByKey[key] { removeUnsecured(existing) }
        // A pinned session (the PASE handshake in progress) is never the victim: otherwise a
        // flood of unauthenticated initiators would evict it and abort the commissioning.
        while unsecured.count >= maxUnsecuredSessions,
            let victim = unsecured.values.filter({ !pinnedUnsecured.contains($0.handle) })
                .min(by: { $0.lastActivity < $1.lastActivity })
        {
            removeUnsecured(victim.handle)
            evictedUnsecured.append(victim.handle)
        }
        let session = UnsecuredSession(handle: makeHandle(), key: key, peerAddress: address, lastActivity: now)
        unsecured[session.handle] = session
        unsecuredByKey[key] = session.handle
        return session.handle
    }

    /// The unsecured sessions evicted since the last call.
    mutating func takeEvictedUnsecured() -> [SessionHandle] {
        defer { evictedUnsecured = [] }
        return evictedUnsecured
    }

    mutating func updateUnsecured(_ handle: SessionHandle, _ body: (inout UnsecuredSession) -> Void) {
        guard var s = unsecured[handle] else { return }
        body(&s)
        unsecured[handle] = s
    }

    @discardableResult
    mutating func removeUnsecured(_ handle: SessionHandle) -> UnsecuredSession? {
        guard let s = unsecured.removeValue(forKey: handle) else { return nil }
        unsecuredByKey.removeValue(forKey: s.key)
        pinnedUnsecured.remove(handle)
        return s
    }

    /// Keeps an unsecured session out of eviction while set (at most a few: one PASE
    /// responder attempt at a time, and our own initiator attempts).
    mutating func setPinned(_ handle: SessionHandle, _ pinned: Bool) {
        if pinned, unsecured[handle] != nil { pinnedUnsecured.insert(handle) } else { pinnedUnsecured.remove(handle) }
    }

    // MARK: Common

    func info(_ handle: SessionHandle) -> SessionInfo? {
        if let s = secureSession(handle) { return s.info }
        return unsecured[handle]?.info
    }

    var allInfos: [SessionInfo] {
        secure.values.map(\.info) + unsecured.values.map(\.info)
    }

    // MARK: CASE resumption

    mutating func storeResumption(_ record: CASEResumptionRecord) {
        guard maxResumptionRecords > 0 else { return }
        if resumptions.updateValue(record, forKey: record.resumptionID) == nil {
            resumptionOrder.append(record.resumptionID)
        }
        while resumptionOrder.count > maxResumptionRecords {
            resumptions.removeValue(forKey: resumptionOrder.removeFirst())
        }
    }

    func resumption(id: [UInt8]) -> CASEResumptionRecord? { resumptions[id] }

    mutating func removeResumption(id: [UInt8]) {
        resumptions.removeValue(forKey: id)
        resumptionOrder.removeAll { $0 == id }
    }

    mutating func removeResumptions(fabricIndex: FabricIndex) {
        let ids = resumptions.values.filter { $0.fabricIndex == fabricIndex }.map(\.resumptionID)
        for id in ids { removeResumption(id: id) }
    }
}
