import Logging
import NIOCore

/// The responder side of the Secure Channel protocol (Matter Core spec 4.11, 4.14):
/// answers PBKDFParamRequest with PASE while a commissioning window is open, and
/// Sigma1 with CASE for the fabrics the `FabricProvider` lists. Register it with
/// the exchange manager for `.secureChannel`. Standalone acks and CloseSession are
/// handled by the exchange manager itself.
public actor SecureChannelServer: ProtocolHandler {
    public struct Configuration: Sendable {
        /// Failed PASE attempts after which the commissioning window closes (spec 5.4.2.5: 20).
        public var maxPASEFailures: Int
        /// How long to wait for each next handshake message.
        public var stepTimeout: Duration
        /// Wait time announced in a BUSY StatusReport.
        public var busyRetryDelay: Duration
        /// How long an admitted initiator may take to send Pake1 before a request from another
        /// host may take the PASE slot over. In between it derives w0 and w1 from the passcode
        /// (PBKDF2, spec 3.9: at most 100 000 iterations, well under a second on a phone);
        /// a holder that stays silent longer keeps nobody else out (issue #37 item 3).
        /// The spec's per-step wait (`stepTimeout`, kExpectedHighProcessingTime: 30 s) still
        /// applies while no one else asks.
        public var pake1Grace: Duration
        /// How long a host that was given the slot counts as having had its turn: it cannot take
        /// a stalled attempt over in that time, so two addresses cannot hand the slot back and
        /// forth past a commissioner. One PASE establishment's bound (spec 5.5: 60 s).
        public var turnMemory: Duration

        public init(
            maxPASEFailures: Int = 20, stepTimeout: Duration = .seconds(30),
            busyRetryDelay: Duration = .milliseconds(500), pake1Grace: Duration = .seconds(3),
            turnMemory: Duration = .seconds(60)
        ) {
            self.maxPASEFailures = maxPASEFailures
            self.stepTimeout = stepTimeout
            self.busyRetryDelay = busyRetryDelay
            self.pake1Grace = pake1Grace
            self.turnMemory = turnMemory
        }
    }

    struct PASEWindow {
        var parameters: PASEVerifierParameters
        var failures = 0
    }

    struct ActivePASE {
        let attempt: UInt64
        let exchange: Exchange
        let peerHost: String?
        /// When the host was given the slot; a restart keeps it, so restarting never renews
        /// the grace before Pake1.
        let since: Duration
        /// Pake1 arrived: the attempt is under way and no longer taken over.
        var sentPake1 = false
    }

    public nonisolated let manager: ExchangeManager
    public nonisolated let fabrics: (any FabricProvider)?
    public nonisolated let configuration: Configuration
    nonisolated let logger: Logger
    var window: PASEWindow?
    var activePASE: ActivePASE?
    var nextAttempt: UInt64 = 0
    /// When each host was last given the slot (at most `maxTurnsKept`, within `turnMemory`).
    var turns: [String?: Duration] = [:]
    static let maxTurnsKept = 64

    public init(
        manager: ExchangeManager, fabrics: (any FabricProvider)? = nil,
        configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "matter.securechannel")
    ) {
        self.manager = manager
        self.fabrics = fabrics
        self.configuration = configuration
        self.logger = logger
    }

    // MARK: Commissioning window

    /// Accepts PASE with this verifier until closed (or until too many failures).
    public func openCommissioningWindow(_ parameters: PASEVerifierParameters) {
        window = PASEWindow(parameters: parameters)
    }

    /// Stops accepting PASE. A PASE handshake in progress is aborted.
    public func closeCommissioningWindow() async {
        window = nil
        if let active = activePASE {
            activePASE = nil
            await active.exchange.close()
        }
    }

    public var isCommissioningWindowOpen: Bool { window != nil }

    /// Failed PASE attempts since the window opened.
    public var paseFailureCount: Int { window?.failures ?? 0 }
    /// Stalled PASE attempts (no Pake1 within `pake1Grace`) another host's request took over.
    public private(set) var paseTakeovers = 0
    /// PBKDFParamRequests whose admission is decided (admitted, BUSY or window closed), so a
    /// test knows when a burst of them has stopped competing for the slot.
    public private(set) var paseRequestsDecided = 0

    // MARK: Dispatch

    public nonisolated func handle(exchange: Exchange, first message: Message) async {
        switch SecureChannelOpcode(rawValue: message.opcode) {
        case .pbkdfParamRequest:
            await respondPASE(exchange: exchange, request: message)
        case .sigma1:
            await respondCASE(exchange: exchange, sigma1: message)
        default:
            // Nothing else starts an exchange on this protocol; closing acks it.
            break
        }
    }

    // MARK: PASE bookkeeping (used by PASEResponder)

    enum PASEAdmission {
        case admitted(UInt64, PASEVerifierParameters)
        case windowClosed
        case busy
    }

    /// Admits one PASE at a time, reserving nothing for anyone. A new request from the host
    /// of the attempt in progress replaces it (the initiator restarted) but keeps its start.
    /// A request from another host gets BUSY, unless the attempt has not sent Pake1 within
    /// `pake1Grace` and the requester has not had its turn lately: then it takes the slot over.
    /// A silent holder thus delays a commissioner by the grace, not by `stepTimeout`, and any
    /// number of requests from one or two addresses cannot outrun a new one.
    func admitPASE(exchange: Exchange, peer: SocketAddress) async -> PASEAdmission {
        defer { paseRequestsDecided += 1 }
        guard let window else { return .windowClosed }
        let host = peer.ipAddress
        let now = manager.clock.now
        var since = now
        if let active = activePASE {
            if active.peerHost == host {
                since = active.since
            } else {
                guard !active.sentPake1, now >= active.since + configuration.pake1Grace, hadNoTurnLately(host, now: now) else {
                    return .busy
                }
                paseTakeovers += 1
                logger.info(
                    "PASE slot taken over from a holder silent since its PBKDFParamResponse",
                    metadata: ["holder": "\(active.peerHost ?? "?")", "requester": "\(host ?? "?")"])
            }
            activePASE = nil
            await active.exchange.close()
            // The window, or the slot, may have changed while closing.
            guard activePASE == nil, self.window != nil else { return .busy }
        }
        nextAttempt += 1
        activePASE = ActivePASE(attempt: nextAttempt, exchange: exchange, peerHost: host, since: since)
        recordTurn(host, now: now)
        return .admitted(nextAttempt, window.parameters)
    }

    private func hadNoTurnLately(_ host: String?, now: Duration) -> Bool {
        guard let last = turns[host] else { return true }
        return now >= last + configuration.turnMemory
    }

    private func recordTurn(_ host: String?, now: Duration) {
        turns = turns.filter { now < $0.value + configuration.turnMemory }
        if turns[host] == nil, turns.count >= Self.maxTurnsKept, let oldest = turns.min(by: { $0.value < $1.value }) {
            turns.removeValue(forKey: oldest.key)
        }
        turns[host] = now
    }

    /// Pake1 arrived on this attempt: it is under way.
    func pake1Received(attempt: UInt64) {
        guard activePASE?.attempt == attempt else { return }
        activePASE?.sentPake1 = true
    }

    func finishPASE(attempt: UInt64) {
        guard activePASE?.attempt == attempt else { return }
        activePASE = nil
    }

    /// Counts a failed attempt; closes the window at the limit. Returns the count.
    func recordPASEFailure() -> (count: Int, windowClosed: Bool) {
        guard var w = window else { return (0, false) }
        w.failures += 1
        if w.failures >= configuration.maxPASEFailures {
            window = nil
            return (w.failures, true)
        }
        window = w
        return (w.failures, false)
    }
}
