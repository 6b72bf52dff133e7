/// Which secure sessions are serving an interaction right now, so a session the node
/// asks to close (a PASE session when commissioning ends, a fabric's sessions when it is
/// removed) goes only after the response that caused it has reached the peer (Core spec
/// 11.18.6.12: RemoveFabric answers before its sessions close).
actor SessionActivity {
    private var inFlight: [UInt64: Int] = [:]
    /// Sessions to close once idle, each with whether the peer gets a CloseSession.
    private var closeWhenIdle: [UInt64: Bool] = [:]

    /// An interaction started on the session.
    func begin(_ session: UInt64) {
        inFlight[session, default: 0] += 1
    }

    /// An interaction ended (its last message acknowledged or given up). Returns whether to
    /// notify the peer when the session was waiting for this to close, else nil.
    func end(_ session: UInt64) -> Bool? {
        let remaining = (inFlight[session] ?? 1) - 1
        if remaining > 0 {
            inFlight[session] = remaining
            return nil
        }
        inFlight[session] = nil
        return closeWhenIdle.removeValue(forKey: session)
    }

    /// Asks for a session to close: true when it may close at once, false when it closes
    /// as its last running interaction ends.
    func requestClose(_ session: UInt64, notifyPeer: Bool = true) -> Bool {
        guard inFlight[session] != nil else { return true }
        closeWhenIdle[session] = notifyPeer
        return false
    }

    /// The session is gone.
    func forget(_ session: UInt64) {
        inFlight[session] = nil
        closeWhenIdle.removeValue(forKey: session)
    }
}
