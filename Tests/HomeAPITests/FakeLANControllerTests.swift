#if canImport(Glibc)
import Foundation
import Glibc
import MatterProtocol
import TestDevices
import Testing
#endif

/// The controller library against real `matter-sim run` processes on a private fake LAN
/// (scripts/fakelan.sh): three device hosts and a controller host, each with its own Avahi.
/// homectl runs on the controller host, finds each device by its discriminator over
/// commissionable DNS-SD (_matterc._udp), commissions it through HomeAPI with the PAA trust
/// store, controls every cluster and reads the state back; then one device restarts on
/// another port and homectl reaches it again through operational DNS-SD (_matter._tcp).
/// All mDNS stays inside the namespaces this test creates.
@Suite("controller on a fake LAN", .serialized)
struct FakeLANControllerTests {
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fakelan = packageRoot.appendingPathComponent("scripts/fakelan.sh").path
    static let buildDirectory: URL = {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // Inside an .xctest bundle on Linux the runner is the bundle itself, next to the products.
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir
    }()
    static let homectl = buildDirectory.appendingPathComponent("homectl").path
    static let matterSim = buildDirectory.appendingPathComponent("matter-sim").path
    static let canRun = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/avahi-daemon")

    struct Device {
        var host: String
        var profile: String
        var name: String
        var passcode: UInt32
        var discriminator: UInt16
        var productID: UInt16
    }

    static let devices = [
        Device(host: "d1", profile: "dimmable-light", name: "Lamp", passcode: 20202021, discriminator: 3001, productID: 0x8002),
        Device(host: "d2", profile: "on-off-plug", name: "Plug", passcode: 20202022, discriminator: 3002, productID: 0x8003),
        Device(host: "d3", profile: "window-covering", name: "Blind", passcode: 20202023, discriminator: 3003, productID: 0x8004),
    ]

    /// One fake LAN and the device processes on it; `down()` removes everything.
    final class Lab {
        let lan: String
        let work: URL
        var nodes: [String: LANProcess] = [:]
        var logs: [String: LANPipeCollector] = [:]

        init(hosts: [String], tag: String) async throws {
            lan = "flh" + tag + String(getpid(), radix: 36)
            work = FileManager.default.temporaryDirectory.appendingPathComponent("homeapi-fakelan-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
            _ = try? await LANCommand.runOffPool([FakeLANControllerTests.fakelan, "down", lan])
            let up = try await LANCommand.runOffPool([FakeLANControllerTests.fakelan, "up", lan] + hosts)
            guard up.status == 0 else { await down(); throw LANSpawnError(description: "fakelan up: \(up.errors)") }
            let avahi = try await LANCommand.runOffPool([FakeLANControllerTests.fakelan, "avahi", lan] + hosts, timeout: 90)
            guard avahi.status == 0 else { await down(); throw LANSpawnError(description: "fakelan avahi: \(avahi.errors)") }
        }

        func start(_ d: Device, port: Int) throws {
            let profile = FakeLANControllerTests.packageRoot.appendingPathComponent("DeviceProfiles/devices/\(d.profile).yaml").path
            let process = try LANProcess([
                FakeLANControllerTests.fakelan, "exec", lan, d.host, "--", FakeLANControllerTests.matterSim, "run", profile,
                "--passcode", "\(d.passcode)", "--discriminator", "\(d.discriminator)", "--port", "\(port)",
                "--state-dir", work.appendingPathComponent(d.host).path,
            ])
            process.closeInput()
            logs[d.host] = LANPipeCollector(process.errors)
            _ = LANPipeCollector(process.output)
            nodes[d.host] = process
        }

        /// Device attestation for homectl: the published test PAA plus the test CD signing
        /// certificate (matter-sim signs its Certification Declaration with it).
        func trustStore() throws -> URL {
            let trust = work.appendingPathComponent("trust")
            try FileManager.default.createDirectory(at: trust, withIntermediateDirectories: true)
            let credentials = FakeLANControllerTests.packageRoot.appendingPathComponent("DeviceProfiles/credentials")
            try FileManager.default.copyItem(
                at: credentials.appendingPathComponent("paa/Chip-Test-PAA-NoVID-Cert.pem"),
                to: trust.appendingPathComponent("paa.pem"))
            try FileManager.default.copyItem(
                at: credentials.appendingPathComponent("Chip-Test-CD-Signing-Cert.pem"),
                to: trust.appendingPathComponent("cd-signer.pem"))
            return trust
        }

        /// Turns IPv6 off on `host`, as Docker does in a container on a network without IPv6:
        /// the host keeps only its IPv4 address, and resolving `::` fails (EAI_ADDRFAMILY).
        func disableIPv6(on host: String) async throws {
            let result = try await LANCommand.runOffPool([
                FakeLANControllerTests.fakelan, "exec", lan, host, "--",
                "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1",
                "net.ipv6.conf.eth0.disable_ipv6=1", "net.ipv6.conf.lo.disable_ipv6=1",
            ])
            guard result.status == 0 else { throw LANSpawnError(description: "sysctl on \(host): \(result.errors)") }
        }

        /// A command on `host` that runs in the background until `down()`.
        func startProcess(_ key: String, on host: String, _ arguments: [String]) throws -> LANPipeCollector {
            let process = try LANProcess([FakeLANControllerTests.fakelan, "exec", lan, host, "--"] + arguments)
            process.closeInput()
            logs[key] = LANPipeCollector(process.errors)
            nodes[key] = process
            return LANPipeCollector(process.output)
        }

        func stop(_ d: Device) async {
            guard let process = nodes.removeValue(forKey: d.host) else { return }
            kill(process.pid, SIGTERM)
            await process.waitOffPool(timeout: 10)
        }

        /// homectl on the controller host, on this lab's home database.
        func homectl(_ arguments: [String], timeout: TimeInterval = 60) async throws -> LANCommandResult {
            try await LANCommand.runOffPool(
                [FakeLANControllerTests.fakelan, "exec", lan, "c", "--", FakeLANControllerTests.homectl]
                    + arguments + ["--home", work.appendingPathComponent("home.sqlite").path, "--timeout", "8"], timeout: timeout)
        }

        func state(of name: String) async throws -> [String: String] {
            let result = try await homectl(["get", name, "--json"])
            struct Summary: Decodable { var state: [String: String]; var connectivity: String }
            guard result.status == 0, let summary = try? JSONDecoder().decode(Summary.self, from: Data(result.output.utf8)) else {
                Issue.record("homectl get \(name) failed (\(result.status)): \(result.errors)")
                return [:]
            }
            return summary.state
        }

        private var isDown = false

        func down() async {
            guard !isDown else { return }
            isDown = true
            for (_, process) in nodes { kill(process.pid, SIGTERM) }
            for (_, process) in nodes { await process.waitOffPool(timeout: 5) }
            nodes = [:]
            _ = try? await LANCommand.runOffPool([FakeLANControllerTests.fakelan, "down", lan])
            try? FileManager.default.removeItem(at: work)
        }

        /// Last resort when a test left without `down()`: blocking, but nothing is leaked.
        deinit {
            guard !isDown else { return }
            for (_, process) in nodes { kill(process.pid, SIGKILL) }
            _ = try? LANCommand.run([FakeLANControllerTests.fakelan, "down", lan])
            try? FileManager.default.removeItem(at: work)
        }
    }

    /// Runs `body` on a new lab, and takes the lab down afterwards whatever happened.
    static func withLab(hosts: [String], tag: String, _ body: (Lab) async throws -> Void) async throws {
        let lab = try await Lab(hosts: hosts, tag: tag)
        do { try await body(lab) } catch {
            await lab.down()
            throw error
        }
        await lab.down()
    }

    @Test(.enabled(if: canRun, "needs root and avahi-daemon for network namespaces"), .timeLimit(.minutes(5)))
    func discoverCommissionControlAndReconnect() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.homectl), "homectl is not built at \(Self.homectl)")
        #expect(FileManager.default.isExecutableFile(atPath: Self.matterSim), "matter-sim is not built at \(Self.matterSim)")
        try await Self.withLab(hosts: Self.devices.map(\.host) + ["c"], tag: "a") { lab in
            let trust = try lab.trustStore()
            for d in Self.devices { try lab.start(d, port: 5540) }

            // All three answer commissionable browsing on the controller host.
            struct Row: Decodable { var discriminator: UInt16; var addresses: [String] }
            var seen: Set<UInt16> = []
            for _ in 0..<10 where seen.count < Self.devices.count {
                let found = try await lab.homectl(["discover", "--json", "--seconds", "2"])
                if let rows = try? JSONDecoder().decode([Row].self, from: Data(found.output.utf8)) {
                    seen.formUnion(rows.map(\.discriminator))
                }
            }
            #expect(seen.isSuperset(of: Self.devices.map(\.discriminator)), "discovered \(seen.sorted())")

            // Commission each by its QR payload (full discriminator), no address given: HomeAPI
            // finds it over _matterc._udp.
            for d in Self.devices {
                let qr = try OnboardingPayload(
                    vendorID: 0xFFF1, productID: d.productID, discriminator: d.discriminator,
                    passcode: d.passcode
                ).qrCode()
                let result = try await lab.homectl(
                    [
                        "commission", "--code", qr, "--name", d.name,
                        "--paa-trust-store", trust.path, "--json",
                    ], timeout: 90)
                #expect(result.status == 0, "commission \(d.name): \(result.errors)")
            }
            let listed = try await lab.homectl(["devices", "--json"])
            for d in Self.devices { #expect(listed.output.contains("\"\(d.name)\""), "\(d.name) not listed: \(listed.output)") }

            // On/Off and Level on the light.
            #expect(try await lab.homectl(["level", "Lamp", "180"]).status == 0)
            var lamp = try await lab.state(of: "Lamp")
            #expect(lamp["level"] == "180")
            #expect(lamp["onOff"] == "on")
            #expect(try await lab.homectl(["off", "Lamp"]).status == 0)
            lamp = try await lab.state(of: "Lamp")
            #expect(lamp["onOff"] == "off")

            // On/Off on the plug.
            #expect(try await lab.homectl(["on", "Plug"]).status == 0)
            #expect(try await lab.state(of: "Plug")["onOff"] == "on")
            #expect(try await lab.homectl(["off", "Plug"]).status == 0)
            #expect(try await lab.state(of: "Plug")["onOff"] == "off")

            // The covering moves to 30 % closed at its own speed; read until it gets there (bounded).
            #expect(try await lab.homectl(["cover", "Blind", "30"]).status == 0)
            var lift = ""
            for _ in 0..<30 {
                lift = try await lab.state(of: "Blind")["lift"] ?? ""
                if lift == "30.00%" { break }
                // real time: external: matter-sim processes in the fake LAN.
                try await Task.sleep(for: .milliseconds(500))
            }
            #expect(lift == "30.00%")

            // The plug restarts on another port with its state: the stored address is stale, and
            // homectl finds the node again by its operational name (_matter._tcp).
            let plug = Self.devices[1]
            await lab.stop(plug)
            try lab.start(plug, port: 5600)
            var reconnected = false
            var movedLogged = false
            for _ in 0..<10 where !reconnected {
                let on = try await lab.homectl(["on", "Plug"])
                reconnected = on.status == 0
                movedLogged = movedLogged || on.errors.contains("moved from")
                // real time: external: matter-sim processes in the fake LAN.
                if !reconnected { try await Task.sleep(for: .milliseconds(500)) }
            }
            #expect(reconnected, "plug log: \(lab.logs[plug.host]?.text.suffix(2000) ?? "")")
            // It got there by resolving the node again, not through the stored (stale) address.
            #expect(movedLogged)
            #expect(try await lab.state(of: "Plug")["onOff"] == "on")
        }
    }

    /// A manual pairing code names only 4 bits of the discriminator: the three devices of this
    /// lab (3001, 3002, 3003) all have short discriminator 11. homectl commissions each by its
    /// manual code all the same, trying every match until one accepts the passcode.
    @Test(.enabled(if: canRun, "needs root and avahi-daemon for network namespaces"), .timeLimit(.minutes(3)))
    func manualCodesThatShareAShortDiscriminator() async throws {
        #expect(Set(Self.devices.map { $0.discriminator >> 8 }).count == 1)
        try await Self.withLab(hosts: Self.devices.map(\.host) + ["c"], tag: "m") { lab in
            let trust = try lab.trustStore()
            for d in Self.devices { try lab.start(d, port: 5540) }
            for d in Self.devices {
                let code = try OnboardingPayload(
                    vendorID: 0xFFF1, productID: d.productID, discriminator: d.discriminator,
                    passcode: d.passcode
                ).manualPairingCode()
                // Retried only while no node answers yet: a wrong match must fail the test.
                var result: LANCommandResult?
                for _ in 0..<10 where result == nil || result!.errors.contains("no commissionable device") {
                    result = try await lab.homectl(
                        [
                            "commission", "--code", code, "--name", d.name,
                            "--paa-trust-store", trust.path,
                        ], timeout: 90)
                }
                #expect(result?.status == 0, "commission \(d.name) by \(code): \(result?.errors ?? "")")
            }
            #expect(try await lab.homectl(["on", "Plug"]).status == 0)
            #expect(try await lab.state(of: "Plug")["onOff"] == "on")
        }
    }

    /// A device host without IPv6 (a container on a network without it): the node falls back
    /// to IPv4 with one log line instead of exiting, and a controller commissions and drives it.
    @Test(.enabled(if: canRun, "needs root and avahi-daemon for network namespaces"), .timeLimit(.minutes(3)))
    func ipv4OnlyHostServesTheNode() async throws {
        try await Self.withLab(
            hosts: ["d4", "c"], tag: "v",
            { lab in
                let trust = try lab.trustStore()
                try await lab.disableIPv6(on: "d4")
                let plug = Device(
                    host: "d4", profile: "on-off-plug", name: "V4 Plug", passcode: 20202024, discriminator: 3004,
                    productID: 0x8003)
                try lab.start(plug, port: 5540)
                let qr = try OnboardingPayload(
                    vendorID: 0xFFF1, productID: plug.productID, discriminator: plug.discriminator,
                    passcode: plug.passcode
                ).qrCode()
                var commissioned = false
                for _ in 0..<20 where !commissioned {  // until the node has announced itself
                    let result = try await lab.homectl(
                        [
                            "commission", "--code", qr, "--name", plug.name,
                            "--paa-trust-store", trust.path,
                        ], timeout: 90)
                    commissioned = result.status == 0
                    // real time: external: matter-sim processes in the fake LAN.
                    if !commissioned { try await Task.sleep(for: .milliseconds(500)) }
                }
                let log = lab.logs["d4"]?.text ?? ""
                #expect(commissioned, "device log: \(log.suffix(2000))")
                #expect(try await lab.homectl(["on", plug.name]).status == 0)
                #expect(try await lab.state(of: plug.name)["onOff"] == "on")
                let fallback = (lab.logs["d4"]?.text ?? "").split(separator: "\n").filter { $0.contains("IPv6 is unavailable") }
                #expect(fallback.count == 1, "expected one fallback line: \(log.suffix(2000))")
                #expect(fallback.first?.contains("serves IPv4 only") == true)
            })
    }

    /// A third-party device: CircuitMatter (Adafruit's Python Matter implementation, from
    /// PyPI), an on/off light that advertises through avahi-publish-service. It signs its
    /// attestation with a PAA of its own making, so homectl commissions it with
    /// --allow-untrusted (the device-attestation waiver, as chip-tool's test mode).
    @Test(.enabled(if: canRun, "needs root and avahi-daemon for network namespaces"), .timeLimit(.minutes(5)))
    func commissionAndControlCircuitMatterLight() async throws {
        let venvs = Self.packageRoot.appendingPathComponent("scripts/lib/venvs.sh").path
        let setup = try await LANCommand.runOffPool([venvs, "circuitmatter"], timeout: 280)
        try #require(setup.status == 0, "venvs.sh circuitmatter: \(setup.errors)")
        let python = setup.output.trimmingCharacters(in: .whitespacesAndNewlines) + "/bin/python"
        let script = Self.packageRoot.appendingPathComponent("Tests/HomeAPITests/Support/circuitmatter_light.py").path

        try await Self.withLab(hosts: ["cm", "c"], tag: "b") { lab in
            let deviceDir = lab.work.appendingPathComponent("circuitmatter")
            try FileManager.default.createDirectory(at: deviceDir, withIntermediateDirectories: true)
            let output = try lab.startProcess(
                "circuitmatter", on: "cm",
                [
                    "/bin/sh", "-c", "cd \"$0\" && exec \"$1\" -u \"$2\"", deviceDir.path, python, script,
                ])

            // Its setup code is random, chosen at first start and kept in its state file.
            struct State: Decodable { var manual_code: String }
            let stateFile = deviceDir.appendingPathComponent("matter-device-state.json")
            var code: String?
            for _ in 0..<60 where code == nil {
                if output.text.contains("ready"), let data = FileManager.default.contents(atPath: stateFile.path) {
                    code = (try? JSONDecoder().decode(State.self, from: data))?.manual_code.filter(\.isNumber)
                }
                // real time: external: matter-sim processes in the fake LAN.
                if code == nil { try await Task.sleep(for: .milliseconds(250)) }
            }
            let manualCode = try #require(code, "circuitmatter did not start: \(lab.logs["circuitmatter"]?.text ?? "")")

            let commissioned = try await lab.homectl(
                [
                    "commission", "--code", manualCode, "--name", "CircuitLight",
                    "--allow-untrusted", "--json",
                ], timeout: 120)
            #expect(commissioned.status == 0, "commission: \(commissioned.errors.suffix(2000))")
            #expect(commissioned.output.contains("OnOffLight"))

            #expect(try await lab.homectl(["on", "CircuitLight"]).status == 0)
            #expect(try await lab.state(of: "CircuitLight")["onOff"] == "on")
            #expect(try await lab.homectl(["off", "CircuitLight"]).status == 0)
            #expect(try await lab.state(of: "CircuitLight")["onOff"] == "off")
            // The device itself saw both commands.
            #expect(output.text.contains("light on"))
            #expect(output.text.contains("light off"))
        }
    }
}
