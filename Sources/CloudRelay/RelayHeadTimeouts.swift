import Logging
import MatterProtocol
import NIOConcurrencyHelpers

/// Connections closed by the request-head timeout: every one counted in the metrics
/// (`relay_request_head_timeouts_total`), and logged as at most one summary line per
/// interval. Issue #37 item 11: a line each let silent sockets flood the log (1,580 lines
/// in 25 s).
final class RequestHeadTimeoutLog: Sendable {
    let interval: Duration
    let clock: any MatterClock
    let metrics: RelayMetrics
    let logger: Logger

    private struct State {
        var unreported = 0
        var lastLine: Duration?
    }

    // The lock guards the count since the last line.
    private let state = NIOLockedValueBox(State())

    init(interval: Duration, clock: any MatterClock, metrics: RelayMetrics, logger: Logger) {
        self.interval = interval
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// One more connection timed out: counted; logged with those before it once an interval has passed.
    func record() {
        metrics.requestHeadTimedOut()
        let now = clock.now
        let report = state.withLockedValue { s -> Int? in
            s.unreported += 1
            if let last = s.lastLine, now - last < interval { return nil }
            s.lastLine = now
            defer { s.unreported = 0 }
            return s.unreported
        }
        if let report {
            logger.notice(
                "closed \(report) connection(s) that sent no whole request head in time (relay_request_head_timeouts_total counts them all; one line per \(interval) at most)"
            )
        }
    }
}

/// The logger the HTTP server is given for one connection: silent once the request-head
/// timeout closed that connection, whose end the server would otherwise log as an error.
struct TimedOutConnectionLogHandler: LogHandler {
    var base: any LogHandler
    let connection: ConnectionTraffic

    func log(event: LogEvent) {
        guard !connection.timedOut else { return }
        base.log(event: event)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { base[metadataKey: key] }
        set { base[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { base.metadata }
        set { base.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { base.logLevel }
        set { base.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { base.metadataProvider }
        set { base.metadataProvider = newValue }
    }
}

extension Logger {
    /// This logger, silenced once `connection` timed out.
    func silencedAfterTimeout(of connection: ConnectionTraffic) -> Logger {
        var silenced = self
        silenced.handler = TimedOutConnectionLogHandler(base: handler, connection: connection)
        return silenced
    }
}
