import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `matter-sim home` and `homectl commission --home` on a private fake LAN: the demo home's
/// 29 nodes run in one process on host "h"; homectl on host "c" finds each by its
/// commissionable record (discriminator and port from the home profile), commissions it and
/// lays the home out in its structures and rooms, makes its group and writes its switch
/// binding (a press at the switch then toggles the light). A second run changes nothing. Then a
/// small home runs one process per device with the relay it names (`--start-relay`): same
/// codes and ports, commissioned by address, reachable through the relay, and SIGTERM to the
/// parent stops every child and the relay and withdraws every record.
@Suite("homes on a fake LAN", .serialized)
struct HomeCommissionFakeLANTests {
    typealias Lab = FakeLANControllerTests.Lab
    static let root = FakeLANControllerTests.packageRoot
    static let demoHome = root.appendingPathComponent("DeviceProfiles/homes/demo-home.yaml").path
    static let dnssdProbe = FakeLANControllerTests.buildDirectory.appendingPathComponent("dnssd-probe").path

    static func trustStore(in lab: Lab) throws -> String {
        let trust = lab.work.appendingPathComponent("trust")
        try FileManager.default.createDirectory(at: trust, withIntermediateDirectories: true)
        let credentials = root.appendingPathComponent("DeviceProfiles/credentials")
        try FileManager.default.copyItem(
            at: credentials.appendingPathComponent("paa/Chip-Test-PAA-NoVID-Cert.pem"),
            to: trust.appendingPathComponent("paa.pem"))
        try FileManager.default.copyItem(
            at: credentials.appendingPathComponent("Chip-Test-CD-Signing-Cert.pem"),
            to: trust.appendingPathComponent("cd-signer.pem"))
        return trust.path
    }

    /// homectl on host "c" with this lab's database (`--home` may then name a home profile).
    static func homectl(_ lab: Lab, _ arguments: [String], timeout: TimeInterval = 120) async throws -> LANCommandResult {
        try await LANCommand.runOffPool(
            [FakeLANControllerTests.fakelan, "exec", lab.lan, "c", "--", FakeLANControllerTests.homectl]
                + arguments + ["--database", lab.work.appendingPathComponent("home.sqlite").path, "--timeout", "8"], timeout: timeout)
    }

    /// Waits (bounded) until `collector` has printed `marker`.
    static func waitFor(_ marker: String, in collector: LANPipeCollector, seconds: Int) async throws -> Bool {
        for _ in 0..<seconds * 10 {
            if collector.text.contains(marker) { return true }
            // real time: external: homectl and matter-sim processes in the fake LAN.
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    struct Summary: Decodable { var name: String; var structure: String?; var room: String?; var state: [String: String] }
    struct Place: Decodable { var name: String; var structure: String }

    @Test(.enabled(if: FakeLANControllerTests.canRun, "needs root and avahi-daemon for network namespaces"), .timeLimit(.minutes(6)))
    func commissionTheDemoHomeIntoItsRooms() async throws {
        try await FakeLANControllerTests.withLab(hosts: ["h", "c"], tag: "h") { lab in
            let trust = try Self.trustStore(in: lab)
            let output = try lab.startProcess(
                "home", on: "h",
                [
                    FakeLANControllerTests.matterSim, "home", Self.demoHome, "--state-root", lab.work.appendingPathComponent("state").path,
                ])
            try #require(
                try await Self.waitFor("29 devices running", in: output, seconds: 120),
                "matter-sim home: \(lab.logs["home"]?.text.suffix(2000) ?? "")")

            // Found over DNS-SD by discriminator and port, commissioned, placed.
            let first = try await Self.homectl(lab, ["commission", "--home", Self.demoHome, "--paa-trust-store", trust], timeout: 300)
            #expect(first.status == 0, "commission --home: \(first.output.suffix(3000)) \(first.errors.suffix(2000))")
            #expect(first.output.contains("29 commissioned, 0 already present, 0 failed"), "\(first.output.suffix(2000))")
            // The group the home declares (issue #21), made once its members were in.
            #expect(first.output.contains("groups: 1 created, 0 already present, 0 failed"), "\(first.output.suffix(2000))")
            // The switch binding the home declares (issue #40): the light's ACL and the switch's Binding.
            #expect(first.output.contains("binding Living Room Switch → Ceiling Light (Main House): bound"), "\(first.output.suffix(2000))")
            #expect(first.output.contains("bindings: 1 written, 0 failed"), "\(first.output.suffix(2000))")

            let listed = try await Self.homectl(lab, ["devices", "--json"])
            let devices = try JSONDecoder().decode([Summary].self, from: Data(listed.output.utf8))
            let places = Dictionary(devices.map { ($0.name, ($0.structure ?? "", $0.room ?? "-")) }, uniquingKeysWith: { a, _ in a })
            #expect(devices.count == 29)
            #expect(places["Ceiling Light"]?.0 == "Main House" && places["Ceiling Light"]?.1 == "Living Room")
            #expect(places["Office Blind"]?.0 == "Main House" && places["Office Blind"]?.1 == "Office")
            #expect(places["Guest Light"]?.0 == "Guest Cottage" && places["Guest Light"]?.1 == "Guest Bedroom")
            // In the structure, in no room.
            #expect(places["Porch Light"]?.0 == "Guest Cottage" && places["Porch Light"]?.1 == "-")

            // Idempotent: nothing commissioned twice, no structure or room made twice.
            let again = try await Self.homectl(lab, ["commission", "--home", Self.demoHome, "--paa-trust-store", trust], timeout: 120)
            #expect(again.status == 0, "\(again.errors.suffix(2000))")
            #expect(again.output.contains("0 commissioned, 29 already present, 0 failed"), "\(again.output.suffix(2000))")
            #expect(again.output.contains("groups: 0 created, 1 already present, 0 failed"), "\(again.output.suffix(2000))")
            #expect(again.output.contains("bindings: 1 written, 0 failed"), "\(again.output.suffix(2000))")
            let rooms = try JSONDecoder().decode([Place].self, from: Data(try await Self.homectl(lab, ["rooms", "--json"]).output.utf8))
            #expect(rooms.count == 7, "\(rooms.map(\.name))")
            #expect(Set(rooms.map(\.structure)) == ["Main House", "Guest Cottage"])

            // One group message from host c reaches the three lights of the one process on host h
            // (one holds port 5540, the others hear it through their own group sockets or the
            // process's fan-out), and no member is sent the command by unicast.
            struct Sent: Decodable { var groupcastInterfaces: [String]; var unicastMembers: [String] }
            let lights = ["Ceiling Light", "Kitchen Pendant", "Counter Lights"]
            for (command, wanted) in [("off", "off"), ("on", "on")] {
                let run = try await Self.homectl(lab, ["group", command, "Downstairs Lights", "--json"])
                let sent = try? JSONDecoder().decode(Sent.self, from: Data(run.output.utf8))
                #expect(
                    run.status == 0 && sent?.groupcastInterfaces.isEmpty == false && sent?.unicastMembers == [],
                    "group \(command): \(run.output) \(run.errors.suffix(1000))")
                for name in lights {
                    var state = ""
                    for _ in 0..<20 {
                        let got = try await Self.homectl(lab, ["get", name, "--json"])
                        state = (try? JSONDecoder().decode(Summary.self, from: Data(got.output.utf8)))?.state["onOff"] ?? ""
                        if state == wanted { break }
                        // real time: external: homectl processes in the fake LAN.
                        try await Task.sleep(for: .milliseconds(250))
                    }
                    #expect(state == wanted, "\(name) after group \(command): \(state)")
                }
            }

            // A press at the wall switch goes to the light it is bound to, over the switch's own
            // CASE session (the group left the Ceiling Light on): the light turns off.
            let press = try await LANCommand.runOffPool(
                [
                    FakeLANControllerTests.matterSim, "act", "--control",
                    lab.work.appendingPathComponent("state/control.sock").path, "Living Room Switch", "press",
                ], timeout: 30)
            #expect(press.status == 0, "act press: \(press.output) \(press.errors)")
            var pressed = ""
            for _ in 0..<20 {
                let got = try await Self.homectl(lab, ["get", "Ceiling Light", "--json"])
                pressed = (try? JSONDecoder().decode(Summary.self, from: Data(got.output.utf8)))?.state["onOff"] ?? ""
                if pressed == "off" { break }
                // real time: external: the switch's CASE session and homectl processes in the fake LAN.
                try await Task.sleep(for: .milliseconds(250))
            }
            #expect(pressed == "off", "Ceiling Light after the switch's press: \(pressed)")

            // The devices answer: the desk plug turns on.
            #expect(try await Self.homectl(lab, ["on", "Desk Plug"]).status == 0)
            let plug = try await Self.homectl(lab, ["get", "Desk Plug", "--json"])
            #expect(plug.output.contains("\"onOff\" : \"on\""), "\(plug.output)")
        }
    }

    @Test(.enabled(if: FakeLANControllerTests.canRun, "needs root and avahi-daemon for network namespaces"), .timeLimit(.minutes(5)))
    func processPerDeviceHomeStopsEveryChild() async throws {
        try await FakeLANControllerTests.withLab(hosts: ["h", "c"], tag: "p") { lab in
            let trust = try Self.trustStore(in: lab)
            let devices = Self.root.appendingPathComponent("DeviceProfiles/devices").path
            let home = lab.work.appendingPathComponent("small-home.yaml")
            try """
            name: Small Home
            cloud: { relay: "ws://10.77.0.2:8099" }
            structures:
              - name: Flat
                rooms:
                  - name: Hall
                    devices:
                      - { name: Hall Light, profile: \(devices)/dimmable-light.yaml }
                      - { name: Hall Plug, profile: \(devices)/on-off-plug.yaml }
                devices:
                  - { name: Balcony Blind, profile: \(devices)/window-covering.yaml }
            """.write(to: home, atomically: true, encoding: .utf8)
            let output = try lab.startProcess(
                "home", on: "h",
                [
                    FakeLANControllerTests.matterSim, "home", home.path, "--process-per-device", "--base-port", "5600",
                    "--state-root", lab.work.appendingPathComponent("state").path, "--start-relay",
                ])
            try #require(
                try await Self.waitFor("3 devices running", in: output, seconds: 120),
                "matter-sim home: \(output.text.suffix(1000)) \(lab.logs["home"]?.text.suffix(2000) ?? "")")
            let parent = try #require(lab.nodes["home"]).pid
            // Three devices and the relay (`--start-relay` runs `matter-relay serve` beside them).
            let children = Self.children(of: parent)
            let commands = children.map { (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8)) ?? "" }
            #expect(commands.filter { $0.hasPrefix("matter-sim") }.count == 3, "children of \(parent): \(children) \(commands)")
            #expect(commands.filter { $0.hasPrefix("matter-relay") }.count == 1, "children of \(parent): \(children) \(commands)")

            // Same plan as in one process: the ports and codes of the home profile.
            let commissioned = try await Self.homectl(
                lab,
                [
                    "commission", "--home", home.path, "--base-port", "5600", "--host", "10.77.0.2", "--paa-trust-store", trust,
                ])
            #expect(commissioned.status == 0, "\(commissioned.output.suffix(2000)) \(commissioned.errors.suffix(2000))")
            #expect(commissioned.output.contains("3 commissioned"), "\(commissioned.output)")
            #expect(try await Self.homectl(lab, ["on", "Hall Plug"]).status == 0)

            // The relay the home names runs beside the devices, and every child reached it with the home's token:
            // the light answers through the relay alone.
            let token = try String(contentsOf: lab.work.appendingPathComponent("state/relay-home-token"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(output.text.contains("cloud relay: ws://10.77.0.2:8099, home \"Small Home\", token \(token)"))
            let cloudOnly = ["--relay", "ws://10.77.0.2:8099", "--relay-token", token, "--policy", "cloudOnly"]
            let on = try await Self.homectl(lab, ["on", "Hall Light"] + cloudOnly)
            #expect(on.status == 0, "on through the relay: \(on.output) \(on.errors.suffix(2000))")
            let light = try await Self.homectl(lab, ["get", "Hall Light", "--json"] + cloudOnly)
            #expect(light.output.contains("\"onOff\" : \"on\""), "\(light.output) \(light.errors.suffix(1000))")

            // Operational records are up on the controller's host; SIGTERM withdraws them all.
            let before = try await LANCommand.runOffPool(
                [
                    FakeLANControllerTests.fakelan, "exec", lab.lan, "c", "--", Self.dnssdProbe,
                    "browse", "--type", "_matter._tcp", "--until-count", "3", "--timeout", "20",
                ],
                timeout: 40)
            #expect(before.status == 0, "operational records before stopping: \(before.output)")
            kill(parent, SIGTERM)
            let status = await lab.nodes["home"]!.waitOffPool(timeout: 30)
            #expect(status == 0)
            for pid in children { #expect(kill(pid, 0) != 0, "child \(pid) still runs") }
            #expect(output.text.contains("3 device processes stopped"))
            #expect(output.text.contains("matter-relay stopped"))
            // A goodbye (TTL 0) leaves a cached record for one more second (RFC 6762 10.1).
            // real time: external: the Avahi daemon's cache keeps a goodbye a second (RFC 6762 10.1).
            try await Task.sleep(for: .seconds(2))
            let after = try await LANCommand.runOffPool(
                [
                    FakeLANControllerTests.fakelan, "exec", lab.lan, "c", "--", Self.dnssdProbe,
                    "browse", "--type", "_matter._tcp", "--until-count", "1", "--timeout", "4",
                ],
                timeout: 30)
            #expect(after.status == 3, "records left after stopping: \(after.output)")
        }
    }

    /// PIDs whose parent is `parent` (from /proc).
    static func children(of parent: pid_t) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && pid_t(fields[1]) == parent
        }
    }
}
