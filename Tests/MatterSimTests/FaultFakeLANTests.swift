import ChildProcess
import Foundation
import Testing
@testable import matter_sim

#if canImport(Glibc)
import Glibc
#endif

/// `lan-down` withdraws a node's mDNS records and `lan-up` brings them back, seen from
/// another host of a private fake LAN (network namespaces with their own Avahi daemons;
/// nothing reaches the machine's real interfaces).
@Suite("Faults on a fake LAN", .serialized)
struct FaultFakeLANTests {
    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fakelan = packageRoot.appendingPathComponent("scripts/fakelan.sh").path
    static let canRun =
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/avahi-daemon")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/avahi-browse")

    /// Commissionable services host `ph` resolves right now.
    static func browse(_ lan: String) async throws -> Int {
        let result = try await FaultControlTests.run([fakelan, "exec", lan, "ph", "--", "avahi-browse", "-prt", "_matterc._udp"])
        return Set(result.output.split(separator: "\n").filter { $0.hasPrefix("=;") }.map { $0.split(separator: ";")[3] }).count
    }

    static func eventually(_ lan: String, count expected: Int, within seconds: Int = 30) async throws -> Bool {
        for _ in 0..<seconds {
            if try await browse(lan) == expected { return true }
            // real time: external: the Avahi daemons in the fake LAN.
            try await Task.sleep(for: .seconds(1))
        }
        return false
    }

    @Test(.enabled(if: canRun, "needs root and avahi-daemon for private network namespaces"))
    func lanDownWithdrawsTheRecordsAndLanUpRestoresThem() async throws {
        let lan = "flmsf" + String(getpid(), radix: 36)
        let work = try FaultControlTests.socketDirectory()
        let socket = work.appendingPathComponent("c.sock").path
        _ = try? await FaultControlTests.run([Self.fakelan, "down", lan])
        var node: Subprocess?
        defer {
            if let node { kill(node.pid, SIGKILL) }
            _ = try? Command.run([Self.fakelan, "down", lan])
            try? FileManager.default.removeItem(at: work)
        }
        #expect(try await FaultControlTests.run([Self.fakelan, "up", lan, "dev", "ph"]).status == 0)
        #expect(try await FaultControlTests.run([Self.fakelan, "avahi", lan, "dev", "ph"]).status == 0)
        let profile = Self.packageRoot.appendingPathComponent("DeviceProfiles/devices/on-off-light.yaml").path
        let process = try Subprocess([
            Self.fakelan, "exec", lan, "dev", "--", FaultControlTests.matterSim, "run", profile, "--port", "5540",
            "--state-dir", work.appendingPathComponent("state").path, "--control", socket,
        ])
        node = process
        process.closeInput()
        let errors = PipeCollector(process.errors)
        _ = PipeCollector(process.output)

        #expect(try await Self.eventually(lan, count: 1), "the node never appeared: \(errors.text)")
        var answer = try await ControlClient.send(ControlRequest(node: "all", action: "lan-down"), to: socket)
        #expect(answer.results.first?.state.hasPrefix("LAN down") == true, "\(answer)")
        #expect(try await Self.eventually(lan, count: 0), "the records stayed after lan-down")
        answer = try await ControlClient.send(ControlRequest(node: "all", action: "lan-up"), to: socket)
        #expect(answer.error == nil)
        #expect(try await Self.eventually(lan, count: 1), "the records did not return after lan-up")

        kill(process.pid, SIGTERM)
        let status = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: process.wait(timeout: 10)) }.start()
        }
        #expect(status == 0, "\(errors.text)")
        node = nil
    }
}
