import Foundation
import MatterProtocol
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue #6's acceptance table with real processes on a private fake LAN: `matter-relay`
/// on a "cloud" host, two `matter-sim run` devices that keep a relay link (a dimmer whose
/// LevelControl is cloud-only, and a plug with no cloud-only trait), a hub
/// (`matter-relay serve --mode hub`) and homectl on the controller host. Faults come from
/// `matter-sim fault` through each simulator's control socket; a controller cut off from a
/// device is a bogus neighbour entry on the controller host. Connectivity and locality are
/// read from `homectl devices --json`, per device, per device type and per trait.
@Suite("cloud relay, hub and connectivity on a fake LAN", .serialized)
struct CloudFakeLANTests {
    typealias Lab = FakeLANControllerTests.Lab
    static let matterRelay = FakeLANControllerTests.buildDirectory.appendingPathComponent("matter-relay").path
    static let matterSim = FakeLANControllerTests.matterSim
    static let profiles = FakeLANControllerTests.packageRoot.appendingPathComponent("DeviceProfiles/devices")

    // fakelan numbers hosts in creation order: the i-th gets 10.77.0.(i+1).
    static let hosts = ["d1", "d2", "cloud", "hub", "c"]
    static let dimmerIP = "10.77.0.2", plugIP = "10.77.0.3", cloudIP = "10.77.0.4", hubIP = "10.77.0.5"
    static let dimmerSerial = "SIM-CD-0001"

    struct Trait: Decodable { var trait: String; var connectivity: String; var locality: String }
    struct TypeSummary: Decodable { var type: String; var connectivity: String; var locality: String; var traits: [Trait] }
    struct Summary: Decodable {
        var name: String
        var connectivity: String
        var locality: String
        var deviceTypes: [TypeSummary]
        func trait(_ name: String) -> Trait? { deviceTypes.lazy.flatMap(\.traits).first { $0.trait == name } }
    }

    /// `homectl devices --json` until `accept` holds for the named device (bounded); the
    /// last summary either way.
    static func settle(
        _ lab: Lab, _ routes: [String], _ name: String, tries: Int = 8,
        until accept: (Summary) -> Bool
    ) async throws -> Summary? {
        var last: Summary?
        for _ in 0..<tries {
            let listed = try await lab.homectl(["devices", "--json", "--settle", "3"] + routes)
            if let all = try? JSONDecoder().decode([Summary].self, from: Data(listed.output.utf8)),
                let device = all.first(where: { $0.name == name })
            {
                last = device
                if accept(device) { return device }
            }
            // real time: external: homectl and matter-sim processes in the fake LAN.
            try await Task.sleep(for: .milliseconds(500))
        }
        return last
    }

    static func fault(_ lab: Lab, _ host: String, _ node: String, _ action: String) async throws {
        let socket = lab.work.appendingPathComponent("\(host).sock").path
        let result = try await LANCommand.runOffPool([matterSim, "fault", "--control", socket, node, action], timeout: 20)
        #expect(result.status == 0, "fault \(node) \(action): \(result.errors)")
    }

    @Test(
        .enabled(if: FakeLANControllerTests.canRun, "needs root and avahi-daemon for network namespaces"),
        .timeLimit(.minutes(6)))
    func connectivityAndLocalityThroughRelayHubAndFaults() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.matterRelay), "matter-relay is not built")
        try await FakeLANControllerTests.withLab(hosts: Self.hosts, tag: "r") { lab in
            // The relay on the cloud host, with a home whose token the devices register with.
            let relayDB = lab.work.appendingPathComponent("relay.sqlite").path
            let added = try await LANCommand.runOffPool([Self.matterRelay, "home", "add", "Lab", "--database", relayDB])
            let token = try #require(
                added.output.split(separator: "\n").first { $0.hasPrefix("token ") }.map { String($0.dropFirst(6)) },
                "matter-relay home add: \(added.output) \(added.errors)")
            _ = try lab.startProcess(
                "relay", on: "cloud",
                [
                    Self.matterRelay, "serve", "--host", "0.0.0.0", "--port", "8080",
                    "--database", relayDB,
                ])
            let relayURL = "ws://\(Self.cloudIP):8080"
            func device(_ host: String, _ profile: String, passcode: UInt32, discriminator: UInt16) throws {
                _ = try lab.startProcess(
                    host, on: host,
                    [
                        Self.matterSim, "run", Self.profiles.appendingPathComponent(profile).path,
                        "--passcode", "\(passcode)", "--discriminator", "\(discriminator)", "--port", "5540",
                        "--state-dir", lab.work.appendingPathComponent(host).path,
                        "--relay", relayURL, "--relay-home-token", token,
                        "--control", lab.work.appendingPathComponent("\(host).sock").path,
                    ])
            }
            try device("d1", "cloud-dimmer.yaml", passcode: 20202031, discriminator: 3101)
            try device("d2", "on-off-plug.yaml", passcode: 20202032, discriminator: 3102)

            // Commission both over the LAN (attestation against the published test PAA and CD signer).
            let trust = try lab.trustStore()
            for (name, ip, passcode, discriminator) in [
                ("Dimmer", Self.dimmerIP, UInt32(20202031), UInt16(3101)),
                ("Plug", Self.plugIP, UInt32(20202032), UInt16(3102)),
            ] {
                let code = try OnboardingPayload(
                    vendorID: 0xFFF1, productID: 0x8000, discriminator: discriminator,
                    passcode: passcode
                ).manualPairingCode()
                var result: LANCommandResult?
                for _ in 0..<10 where result?.status != 0 {  // the process may still be starting
                    result = try await lab.homectl(
                        [
                            "commission", "--code", code, "--address", "\(ip):5540", "--name", name,
                            "--paa-trust-store", trust.path, "--no-dnssd",
                        ], timeout: 90)
                    // real time: external: homectl and matter-sim processes in the fake LAN.
                    if result?.status != 0 { try await Task.sleep(for: .milliseconds(500)) }
                }
                #expect(result?.status == 0, "commission \(name): \(result?.errors ?? "")")
            }
            let routes = ["--relay", relayURL, "--relay-token", token, "--no-dnssd"]

            // LAN and cloud up: the dimmer mixes direct (OnOff) and remote (cloud-only LevelControl).
            var dimmer = try await Self.settle(lab, routes, "Dimmer") { $0.connectivity == "online" && $0.locality == "mixed" }
            #expect(dimmer?.connectivity == "online")
            #expect(dimmer?.locality == "mixed")
            #expect(dimmer?.trait("OnOff")?.locality == "direct")
            #expect(dimmer?.trait("LevelControl")?.locality == "remote")
            #expect(dimmer?.trait("LevelControl")?.connectivity == "online")
            // The cloud-only trait works (through the relay).
            #expect(try await lab.homectl(["level", "Dimmer", "77"] + routes).status == 0)

            // Cloud down: partiallyOnline / direct; the plug (no cloud-only trait) stays online / direct.
            try await Self.fault(lab, "d1", Self.dimmerSerial, "cloud-down")
            try await Self.fault(lab, "d2", "all", "cloud-down")
            dimmer = try await Self.settle(lab, routes, "Dimmer") { $0.connectivity == "partiallyOnline" }
            #expect(dimmer?.connectivity == "partiallyOnline")
            #expect(dimmer?.locality == "direct")
            #expect(dimmer?.trait("LevelControl")?.connectivity == "offline")
            let plug = try await Self.settle(lab, routes, "Plug") { $0.connectivity == "online" && $0.locality == "direct" }
            #expect(plug?.connectivity == "online")
            #expect(plug?.locality == "direct")
            try await Self.fault(lab, "d1", Self.dimmerSerial, "cloud-up")
            try await Self.fault(lab, "d2", "all", "cloud-up")

            // LAN down: everything through the relay (online / remote), and commands still work.
            try await Self.fault(lab, "d1", Self.dimmerSerial, "lan-down")
            dimmer = try await Self.settle(lab, routes, "Dimmer") { $0.connectivity == "online" && $0.locality == "remote" }
            #expect(dimmer?.connectivity == "online")
            #expect(dimmer?.locality == "remote")
            #expect(dimmer?.trait("OnOff")?.locality == "remote")
            let on = try await lab.homectl(["on", "Dimmer"] + routes)
            #expect(on.status == 0, "on through the relay: \(on.errors)")
            let level = try await lab.homectl(["level", "Dimmer", "140"] + routes)
            #expect(level.status == 0, "level through the relay: \(level.errors)")

            // Both down: offline / unspecified, and a command fails with a HomeError, not a hang.
            try await Self.fault(lab, "d1", Self.dimmerSerial, "cloud-down")
            dimmer = try await Self.settle(lab, routes, "Dimmer") { $0.connectivity == "offline" }
            #expect(dimmer?.connectivity == "offline")
            #expect(dimmer?.locality == "unspecified")
            // real time: external: how long the homectl process took to fail.
            let started = ContinuousClock.now
            let failed = try await lab.homectl(["off", "Dimmer"] + routes)
            let took = ContinuousClock.now - started
            #expect(failed.status != 0)
            #expect(
                failed.errors.contains("Dimmer") || failed.errors.lowercased().contains("unavailable")
                    || failed.errors.lowercased().contains("deadline"), "\(failed.errors)")
            // homectl's own start-up (opening the home, its relay link) is in this figure too.
            #expect(took < .seconds(5), "a command with every route down took \(took)")
            print("cloud-fakelan: a command with every route down failed after \(took) (whole homectl process)")
            try await Self.fault(lab, "d1", Self.dimmerSerial, "lan-up")
            try await Self.fault(lab, "d1", Self.dimmerSerial, "cloud-up")

            // A hub on the LAN: the controller issues its credentials, the hub reaches the
            // devices over CASE. With the controller cut off from the dimmer, its Matter
            // traits come through the hub (localPeer); the cloud-only one stays remote.
            let hubFile = lab.work.appendingPathComponent("hub.json").path
            let issued = try await lab.homectl(["hub", "credentials", "--out", hubFile, "--home-token", "hub-lab-token-1234567890"])
            #expect(issued.status == 0, "hub credentials: \(issued.errors)")
            _ = try lab.startProcess(
                "hub", on: "hub",
                [
                    Self.matterRelay, "serve", "--mode", "hub", "--credentials", hubFile,
                    "--host", "0.0.0.0", "--port", "8081", "--no-dnssd",
                    "--database", lab.work.appendingPathComponent("hub.sqlite").path,
                ])
            let cut = try await LANCommand.runOffPool([
                FakeLANControllerTests.fakelan, "exec", lab.lan, "c", "--",
                "ip", "neigh", "replace", Self.dimmerIP, "lladdr", "02:00:00:00:00:01",
                "nud", "permanent", "dev", "eth0",
            ])
            #expect(cut.status == 0, "cutting the controller off: \(cut.errors)")
            let withHub = routes + ["--hub", "ws://\(Self.hubIP):8081", "--hub-token", "hub-lab-token-1234567890"]
            dimmer = try await Self.settle(lab, withHub, "Dimmer", tries: 12) { $0.trait("OnOff")?.locality == "localPeer" }
            #expect(dimmer?.trait("OnOff")?.locality == "localPeer")
            #expect(dimmer?.trait("OnOff")?.connectivity == "online")
            #expect(dimmer?.trait("LevelControl")?.locality == "remote")
            #expect(dimmer?.locality == "mixed")
            let viaHub = try await lab.homectl(["off", "Dimmer"] + withHub)
            #expect(viaHub.status == 0, "off through the hub: \(viaHub.errors)")
        }
    }
}
