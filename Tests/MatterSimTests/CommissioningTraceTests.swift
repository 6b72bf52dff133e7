import Foundation
import Logging
import MatterDevice
import MatterModel
import MatterProtocol
import Synchronization
import Testing

/// Keeps every message logged through it.
final class LogCapture: Sendable {
    let lines = Mutex<[String]>([])

    var logger: Logger {
        var logger = Logger(label: "matter.test.capture") { _ in CapturingHandler(capture: self) }
        logger.logLevel = .notice
        return logger
    }

    struct CapturingHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .notice
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(
            level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
            file: String, function: String, line: UInt
        ) {
            capture.lines.withLock { $0.append("\(message)") }
        }
    }
}

@Suite("Commissioning trace (matter-sim run --trace)")
struct CommissioningTraceTests {
    @Test func eachPhaseOfACommissioningIsLoggedInOrderWithItsTime() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = LogCapture()
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory, logger: capture.logger) {
            $0.traceCommissioning = true
        }
        #expect(await running.commissionable())
        let commissioned = try await commissioner.commission(try running.address, passcode: testPasscode)
        // After CommissioningComplete the timeline is closed: an ordinary command is not traced.
        #expect(try await commissioner.status(commissioned.caseSession, 1, ClusterIDs.onOff, 0x01) == .success)
        await running.stop()
        await commissioner.stop()

        let traced = capture.lines.withLock { $0 }.filter { $0.hasPrefix("commissioning +") }
        let phases = [
            "PBKDFParamRequest from 127.0.0.1:", "PASE session established", "invoke GeneralCommissioning.ArmFailSafe",
            "OperationalCredentials.CSRRequest answered", "OperationalCredentials.AddNOC answered",
            "Sigma1 from 127.0.0.1:", "CASE session established", "GeneralCommissioning.CommissioningComplete answered",
        ]
        var at = traced.startIndex
        for phase in phases {
            let found = traced[at...].firstIndex { $0.contains(phase) }
            #expect(found != nil, "no '\(phase)' after line \(at) in \(traced)")
            at = found.map { $0 + 1 } ?? at
        }
        #expect(traced.first?.hasPrefix("commissioning +0.0 ms: PBKDFParamRequest") == true)
        #expect(traced.last?.contains("CommissioningComplete answered") == true)
        #expect(!traced.contains { $0.contains("OnOff") })
        // Times are milliseconds since the PBKDFParamRequest, never going back.
        let times = traced.compactMap { line in
            line.dropFirst("commissioning +".count).split(separator: " ").first.flatMap { Double($0) }
        }
        #expect(times.count == traced.count)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
        // No DNS-SD here: no operational record is claimed.
        #expect(!traced.contains { $0.contains("operational record") })
    }

    @Test func withoutTheOptionNothingIsTraced() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let capture = LogCapture()
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory, logger: capture.logger)
        #expect(await running.commissionable())
        _ = try await commissioner.commission(try running.address, passcode: testPasscode)
        await running.stop()
        await commissioner.stop()
        #expect(!capture.lines.withLock { $0 }.contains { $0.hasPrefix("commissioning +") })
        #expect(capture.lines.withLock { $0 }.contains { $0.contains("serving on UDP port") })
    }
}
