@testable import CloudRelay
import Foundation
import Logging
import NIOConcurrencyHelpers
@testable import RelayClients
import TestWaiting
import Testing

/// Issue #37 item 11: connections closed by the request-head timeout no longer log an
/// error line each; they are counted, and summarized in at most one line per interval.
@Suite struct RelayHeadTimeoutLogTests {
    @Test func timedOutConnectionsAreCountedAndSummarizedNotLoggedEach() async throws {
        let lines = NIOLockedValueBox<[(Logger.Level, String)]>([])
        var logger = Logger(label: "relay-capture") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .debug
        var configuration = RelayServerConfiguration()
        configuration.requestHeadTimeout = .milliseconds(200)
        configuration.requestHeadTimeoutLogInterval = .seconds(3600)
        let silent = 40
        try await withRelay(configuration: configuration, logger: logger) { relay in
            let sockets = try (0..<silent).map { _ in try RawConnection(port: relay.port) }
            #expect(await poll(within: .seconds(15)) { sockets.allSatisfy(\.isClosedNow) }, "every silent socket was closed")
            let metrics = relay.server.metrics
            #expect(await until(metrics.changes()) { metrics.snapshot.requestHeadTimeouts == silent })
            let text = try await RelayHTTP.request("GET", relay.httpURL + "/metrics").text
            #expect(text.contains("relay_request_head_timeouts_total \(silent)\n"))
        }
        let logged = lines.withLockedValue { $0 }
        let errors = logged.filter { $0.0 >= .error }
        #expect(errors.isEmpty, "error lines: \(errors.prefix(3).map(\.1))")
        let summaries = logged.filter { $0.1.contains("no whole request head") }
        #expect(summaries.count == 1, "\(summaries.count) summary lines for \(silent) timeouts")
        #expect(logged.count < silent / 2, "\(logged.count) lines logged: \(logged.prefix(5).map(\.1))")
    }
}

/// Keeps every line logged through it.
struct CapturingLogHandler: LogHandler {
    let lines: NIOLockedValueBox<[(Logger.Level, String)]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.withLockedValue { $0.append((event.level, "\(event.message)")) }
    }
}
