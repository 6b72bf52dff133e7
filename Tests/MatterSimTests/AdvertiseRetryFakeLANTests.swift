import ChildProcess
import Foundation
import Testing
@testable import matter_sim

#if canImport(Glibc)
import Glibc
#endif

/// A node whose publication the Avahi daemon did not answer in time (D-Bus gives up after
/// 25 s: a daemon busy with a fleet's 5,000 services, issue #43, where 158 nodes gave up and
/// were never discoverable) asks again and is advertised once the daemon answers. Takes
/// about 90 s, most of it D-Bus's own timeout, so it runs with MATTERSIM_SLOW_TESTS=1 only
/// (`scripts/slow-tests.sh`), not in the test command.
@Suite("Advertising retried on a fake LAN", .serialized)
struct AdvertiseRetryFakeLANTests {
    static let enabled = FaultFakeLANTests.canRun && ProcessInfo.processInfo.environment["MATTERSIM_SLOW_TESTS"] == "1"

    @Test(.enabled(if: enabled, "needs root, avahi-daemon and MATTERSIM_SLOW_TESTS=1"))
    func aPublicationTheDaemonDidNotAnswerIsTriedAgain() async throws {
        let lan = "flmar" + String(getpid(), radix: 36)
        let work = try FaultControlTests.socketDirectory()
        _ = try? await FaultControlTests.run([FaultFakeLANTests.fakelan, "down", lan])
        var node: Subprocess?
        defer {
            if let node { kill(node.pid, SIGKILL) }
            _ = try? Command.run([FaultFakeLANTests.fakelan, "down", lan])
            try? FileManager.default.removeItem(at: work)
        }
        #expect(try await FaultControlTests.run([FaultFakeLANTests.fakelan, "up", lan, "dev", "ph"]).status == 0)
        #expect(try await FaultControlTests.run([FaultFakeLANTests.fakelan, "avahi", lan, "dev", "ph"]).status == 0)
        let profile = FaultFakeLANTests.packageRoot.appendingPathComponent("DeviceProfiles/devices/on-off-light.yaml").path
        let control = work.appendingPathComponent("control.sock").path
        let process = try Subprocess([
            FaultFakeLANTests.fakelan, "exec", lan, "dev", "--", FaultControlTests.matterSim, "run", profile, "--port", "5540",
            "--discriminator", "321", "--state-dir", work.appendingPathComponent("state").path, "--control", control,
        ])
        node = process
        process.closeInput()
        let errors = PipeCollector(process.errors)
        _ = PipeCollector(process.output)
        func advertised() -> Int { errors.text.components(separatedBy: "advertising ").count - 1 }
        func waitFor(_ what: String, seconds: Int, _ done: () -> Bool) async throws {
            for _ in 0..<seconds where !done() {
                // real time: external: the node's Avahi client and D-Bus's timeout.
                try await Task.sleep(for: .seconds(1))
            }
            #expect(done(), "\(what): \(errors.text.suffix(3000))")
        }
        try await waitFor("first advertised", seconds: 30) { advertised() == 1 }

        // The daemon stops answering; the node's LAN goes down and up, so the node withdraws
        // its record and publishes it again: each call waits out D-Bus's 25 s.
        #expect(try await FaultControlTests.run([FaultFakeLANTests.fakelan, "avahi-pause", lan, "dev"]).status == 0)
        for action in ["lan-down", "lan-up"] {
            let result = try await FaultControlTests.run([FaultControlTests.matterSim, "fault", "--control", control, "all", action])
            #expect(result.status == 0, "\(action): \(result.output) \(result.errors)")
        }
        try await waitFor("no retry announced", seconds: 90) { errors.text.contains("trying again in") }
        #expect(try await FaultControlTests.run([FaultFakeLANTests.fakelan, "avahi-resume", lan, "dev"]).status == 0)
        // Once the daemon answers, the retry publishes the record.
        try await waitFor("never advertised again", seconds: 60) { advertised() == 2 }
    }
}
