import Logging
import MatterProtocol
import NIOCore
import Synchronization

/// `--trace`: a commissioning's phases as the device sees them, each with the monotonic time
/// since the commissioner's first PBKDFParamRequest, e.g.
///
///     commissioning +0.0 ms: PBKDFParamRequest from [fe80::1]:51000
///     commissioning +41.2 ms: PASE session established
///     commissioning +55.0 ms: invoke GeneralCommissioning.ArmFailSafe
///     …
///     commissioning +138.4 ms: operational record of fabric 1 on the daemon
///     commissioning +362.0 ms: Sigma1 from [fe80::1]:51000
///     commissioning +401.9 ms: GeneralCommissioning.CommissioningComplete answered
///
/// Set beside the controller's own log this shows where a commissioning's time goes, and
/// which part of it is the device's (Core spec 5.5 lists the steps).
final class CommissioningTrace: Sendable {
    private let logger: Logger
    private let clock: any MatterClock
    /// The first PBKDFParamRequest's time; nil outside a commissioning.
    private let start = Mutex<Duration?>(nil)

    init(clock: any MatterClock, logger: Logger) {
        self.clock = clock
        self.logger = logger
    }

    /// A new commissioning: a PBKDFParamRequest opens the timeline (again, if one was open).
    func begin(_ phase: String) {
        start.withLock { $0 = clock.now }
        log(phase, at: .zero)
    }

    /// A phase of the commissioning under way; nothing outside one.
    func mark(_ phase: String) {
        guard let since = start.withLock({ $0.map { clock.now - $0 } }) else { return }
        log(phase, at: since)
    }

    /// The last phase: the timeline closes.
    func end(_ phase: String) {
        guard
            let since = start.withLock({ value -> Duration? in
                defer { value = nil }
                return value.map { clock.now - $0 }
            })
        else { return }
        log(phase, at: since)
    }

    private func log(_ phase: String, at since: Duration) {
        let ms = Double(since.components.seconds) * 1000 + Double(since.components.attoseconds) / 1e15
        logger.notice("commissioning +\((ms * 10).rounded() / 10) ms: \(phase)")
    }
}
