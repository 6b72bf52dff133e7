import ChildProcess
import Foundation
import Testing
@testable import matter_sim

#if canImport(Glibc)
import Glibc
#endif

/// Each node advertises on a host name of its own (Core spec 4.3.1, 4.3.2: a link-layer address
/// in 12 or 16 capital hex digits, TC-SC-4.3 step 9), with its own address records, not on the
/// Avahi daemon's host name; two nodes of one host get two names and both resolve. Seen from
/// another host of a private fake LAN (network namespaces with their own Avahi daemons).
@Suite("Node host names on a fake LAN", .serialized)
struct NodeHostFakeLANTests {
    @Test(.enabled(if: FaultFakeLANTests.canRun, "needs root and avahi-daemon for private network namespaces"))
    func eachNodeAdvertisesOnAHostNameOfItsOwnThatResolves() async throws {
        let lan = "flmsh" + String(getpid(), radix: 36)
        let work = try FaultControlTests.socketDirectory()
        _ = try? await FaultControlTests.run([FaultFakeLANTests.fakelan, "down", lan])
        var nodes: [Subprocess] = []
        defer {
            for node in nodes { kill(node.pid, SIGKILL) }
            _ = try? Command.run([FaultFakeLANTests.fakelan, "down", lan])
            try? FileManager.default.removeItem(at: work)
        }
        #expect(try await FaultControlTests.run([FaultFakeLANTests.fakelan, "up", lan, "dev", "ph"]).status == 0)
        #expect(try await FaultControlTests.run([FaultFakeLANTests.fakelan, "avahi", lan, "dev", "ph"]).status == 0)
        let profile = FaultFakeLANTests.packageRoot.appendingPathComponent("DeviceProfiles/devices/on-off-light.yaml").path
        var errors: [PipeCollector] = []
        for (index, port) in ["5540", "5541"].enumerated() {
            let process = try Subprocess([
                FaultFakeLANTests.fakelan, "exec", lan, "dev", "--", FaultControlTests.matterSim, "run", profile, "--port", port,
                "--discriminator", "\(100 + index)", "--state-dir", work.appendingPathComponent("state\(index)").path,
            ])
            nodes.append(process)
            process.closeInput()
            errors.append(PipeCollector(process.errors))
            _ = PipeCollector(process.output)
        }

        // avahi-browse -prt: =;interface;protocol;name;type;domain;host;address;port;txt
        var resolved: [[String]] = []
        for _ in 0..<30 {
            let result = try await FaultControlTests.run(
                [FaultFakeLANTests.fakelan, "exec", lan, "ph", "--", "avahi-browse", "-prt", "_matterc._udp"])
            resolved = result.output.split(separator: "\n").filter { $0.hasPrefix("=;") }
                .map { $0.split(separator: ";", maxSplits: 9, omittingEmptySubsequences: false).map(String.init) }
            if Set(resolved.map { $0[3] }).count == 2 { break }
            // real time: external: the Avahi daemons in the fake LAN.
            try await Task.sleep(for: .seconds(1))
        }
        #expect(Set(resolved.map { $0[3] }).count == 2, "both nodes resolve: \(resolved) \(errors.map(\.text))")
        let hosts = Set(resolved.map { $0[6] })
        #expect(hosts.count == 2, "a host name each: \(hosts)")
        for host in hosts {
            #expect(host.range(of: #"^[0-9A-F]{12}\.local$"#, options: .regularExpression) != nil, "\(host)")
        }
        #expect(!hosts.contains("\(lan)-dev.local"))
        // Each name resolves to the device host's addresses (its own A/AAAA records).
        let dev = try await FaultControlTests.run([FaultFakeLANTests.fakelan, "exec", lan, "dev", "--", "ip", "-o", "addr"])
        for line in resolved {
            #expect(!line[7].isEmpty && dev.output.contains(line[7]), "\(line[6]) at \(line[7]): \(dev.output)")
        }
    }
}
