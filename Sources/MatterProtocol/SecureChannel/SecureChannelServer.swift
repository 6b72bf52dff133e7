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
        /// How long the PASE slot stays kept for the hosts that were answered BUSY, once the
        /// attempt they waited on ends or restarts.
        public var slotReservation: Duration

        public init(
            maxPASEFailures: Int = 20, stepTimeout: Duration = .seconds(30),
            busyRetryDelay: Duration = .milliseconds(500), slotReservation: Duration = .seconds(10)
        ) {
            self.maxPASEFailures = maxPASEFailures
            self.stepTimeout = stepTimeout
            self.busyRetryDelay = busyRetryDelay
            self.slotReservation = slotReservation
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
    }

    public nonisolated let manager: ExchangeManager
    public nonisolated let fabrics: (any FabricProvider)?
    public nonisolated let configuration: Configuration
    nonisolated let logger: Logger
    var window: PASEWindow?
    var activePASE: ActivePASE?
    var nextAttempt: UInt64 = 0
    /// Hosts answered BUSY during the attempt in progress. While one waits, the slot's holder
    /// may not restart its attempt: the slot goes to the waiting hosts for a while instead.
    var waitingHosts: Set<String?> = []
    var reservation: (hosts: Set<String?>, until: Duration)?

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
    /// Hosts answered BUSY while another held the PASE slot; the slot goes to them next.
    public var hostsWaitingForPASE: Int { waitingHosts.count }
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

    /// Admits one PASE at a time. A new request from the host of the attempt in
    /// progress replaces it (the initiator restarted); others get BUSY.
    func admitPASE(exchange: Exchange, peer: SocketAddress) async -> PASEAdmission {
        defer { paseRequestsDecided += 1 }
        guard let window else { return .windowClosed }
        let host = peer.ipAddress
        if let reserved = reservation {
            if manager.clock.now >= reserved.until {
                reservation = nil
            } else if activePASE == nil, !reserved.hosts.contains(host) {
                return .busy
            }
        }
        if let active = activePASE {
            guard active.peerHost == host else {
                waitingHosts.insert(host)
                return .busy
            }
            activePASE = nil
            await active.exchange.close()
            // Restarting while others wait would hold the slot for ever (a request every few
            // seconds keeps every other commissioner at BUSY): the slot goes to those waiting.
            if !waitingHosts.isEmpty {
                reservation = (waitingHosts, manager.clock.now + configuration.slotReservation)
                waitingHosts = []
                return .busy
            }
            // The window may have changed while closing.
            guard activePASE == nil, self.window != nil else { return .busy }
        }
        nextAttempt += 1
        activePASE = ActivePASE(attempt: nextAttempt, exchange: exchange, peerHost: host)
        if reservation?.hosts.contains(host) == true { reservation = nil }
        return .admitted(nextAttempt, window.parameters)
    }

    func finishPASE(attempt: UInt64) {
        guard activePASE?.attempt == attempt else { return }
        activePASE = nil
        // Those that waited on this attempt get the slot first.
        if !waitingHosts.isEmpty {
            reservation = (waitingHosts, manager.clock.now + configuration.slotReservation)
            waitingHosts = []
        }
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
