import Logging
import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore

/// What the relay knows of one TCP connection outside its pipeline: its client address,
/// the home it authenticated for (set when its WebSocket upgrade is granted), and whether
/// the request-head timeout closed it.
final class ConnectionTraffic: Sendable {
    let address: String
    // The locks guard single values, set once and read per read.
    private let homeBox = NIOLockedValueBox<String?>(nil)
    private let timedOutBox = NIOLockedValueBox(false)

    init(address: String) { self.address = address }

    var home: String? {
        get { homeBox.withLockedValue { $0 } }
        set { homeBox.withLockedValue { $0 = newValue } }
    }

    var timedOut: Bool {
        get { timedOutBox.withLockedValue { $0 } }
        set { timedOutBox.withLockedValue { $0 = newValue } }
    }
}

/// The relay's frame limits counted where frames arrive, before any of them is decoded
/// (issue #37 item 7): one connection's bucket and flood rule, and buckets shared by a home's
/// connections and by one address's, so many connections each under its own limit cannot
/// together take the relay from other homes. Plus the open connections by channel, so a
/// route can tell the guard which home a connection belongs to.
final class RelayTraffic: Sendable {
    let framesPerSecond: Int
    let frameBurst: Int
    let homes: SharedFrameBuckets
    let addresses: SharedFrameBuckets
    /// Bytes and frames that arrived, shed or not, per home and per address.
    let homeBytes: SharedBudgets
    let addressBytes: SharedBudgets
    let homeArrivals: SharedBudgets
    let addressArrivals: SharedBudgets
    let overLimitCloseAfter: Duration
    let clock: any MatterClock
    let metrics: RelayMetrics
    let logger: Logger
    let headTimeouts: RequestHeadTimeoutLog
    // The lock guards the table of open connections.
    private let open = NIOLockedValueBox<[ObjectIdentifier: ConnectionTraffic]>([:])

    /// `sharedAcrossInstances`: other instances share the home and address budgets, of frames let
    /// through and of bytes and frames read (`RelayLimitSharing`).
    init(_ configuration: RelayServerConfiguration, metrics: RelayMetrics, logger: Logger, sharedAcrossInstances: Bool = false) {
        framesPerSecond = configuration.maxFramesPerSecond
        frameBurst = configuration.frameBurst
        homes = SharedFrameBuckets(
            framesPerSecond: configuration.maxFramesPerSecondPerHome, burst: configuration.homeFrameBurst,
            sharedAcrossInstances: sharedAcrossInstances)
        addresses = SharedFrameBuckets(
            framesPerSecond: configuration.maxFramesPerSecondPerAddress, burst: configuration.addressFrameBurst,
            sharedAcrossInstances: sharedAcrossInstances)
        let shared = sharedAcrossInstances
        homeBytes = SharedBudgets(
            perSecond: configuration.maxBytesPerSecondPerHome, burst: configuration.homeByteBurst, sharedAcrossInstances: shared)
        addressBytes = SharedBudgets(
            perSecond: configuration.maxBytesPerSecondPerAddress, burst: configuration.addressByteBurst, sharedAcrossInstances: shared)
        homeArrivals = SharedBudgets(
            perSecond: configuration.maxFramesPerSecondPerHome, burst: configuration.homeFrameBurst, sharedAcrossInstances: shared)
        addressArrivals = SharedBudgets(
            perSecond: configuration.maxFramesPerSecondPerAddress, burst: configuration.addressFrameBurst, sharedAcrossInstances: shared)
        overLimitCloseAfter = configuration.overLimitCloseAfter
        clock = configuration.clock
        self.metrics = metrics
        self.logger = logger
        headTimeouts = RequestHeadTimeoutLog(
            interval: configuration.requestHeadTimeoutLogInterval, clock: configuration.clock, metrics: metrics, logger: logger)
    }

    func opened(_ channel: any Channel, address: String) -> ConnectionTraffic {
        let connection = ConnectionTraffic(address: address)
        open.withLockedValue { $0[ObjectIdentifier(channel)] = connection }
        return connection
    }

    func closed(_ channel: any Channel) {
        _ = open.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(channel)) }
    }

    func connection(_ channel: any Channel) -> ConnectionTraffic? {
        open.withLockedValue { $0[ObjectIdentifier(channel)] }
    }

    /// Charges what was read from `connection` (bytes, and the data frames that began in
    /// them, shed or not) to its address and its home, as it arrives.
    func arrived(bytes: Int, frames: Int, on connection: ConnectionTraffic, at now: Duration) {
        addressBytes.charge(connection.address, bytes, at: now)
        if frames > 0 { addressArrivals.charge(connection.address, frames, at: now) }
        guard let home = connection.home else { return }
        homeBytes.charge(home, bytes, at: now)
        if frames > 0 { homeArrivals.charge(home, frames, at: now) }
    }

    /// Whether `connection` must wait before its next read, for which limit and how long:
    /// its address or its home has sent more bytes or frames than it may.
    func holdOff(_ connection: ConnectionTraffic, at now: Duration) -> (RelaySharedLimit, Duration)? {
        let address = [addressBytes.debt(connection.address, at: now), addressArrivals.debt(connection.address, at: now)]
        if let wait = address.compactMap({ $0 }).max() { return (.address, wait) }
        guard let home = connection.home else { return nil }
        if let wait = [homeBytes.debt(home, at: now), homeArrivals.debt(home, at: now)].compactMap({ $0 }).max() {
            return (.home, wait)
        }
        return nil
    }

    /// The connection authenticated for `home`: its frames count against the home's bucket too.
    func assign(_ channel: any Channel, home: String) {
        connection(channel)?.home = home
    }
}
