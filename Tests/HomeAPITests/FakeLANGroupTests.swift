import Foundation
import MatterProtocol
import Testing

/// Issue #21 through HomeAPI on a private fake LAN: homectl (a HomeAPI program) on the
/// controller host commissions a light and a plug that run as `matter-sim run` processes on
/// two other hosts, makes them a device group, and switches both with one group message:
/// an IPv6 multicast to the group's address, which each device joined on its own host. No
/// member is sent the command by unicast (the JSON says how the command went out).
@Suite("device groups on a fake LAN", .serialized)
struct FakeLANGroupTests {
    typealias Lab = FakeLANControllerTests.Lab

    @Test(
        .enabled(if: FakeLANControllerTests.canRun, "needs root and avahi-daemon for network namespaces"),
        .timeLimit(.minutes(5)))
    func oneGroupMessageSwitchesALightAndAPlug() async throws {
        let members = Array(FakeLANControllerTests.devices.prefix(2))  // Lamp (dimmable light), Plug
        try await FakeLANControllerTests.withLab(hosts: members.map(\.host) + ["c"], tag: "g") { lab in
            let trust = try lab.trustStore()
            for d in members { try lab.start(d, port: 5540) }
            for d in members {
                let qr = try OnboardingPayload(
                    vendorID: 0xFFF1, productID: d.productID, discriminator: d.discriminator,
                    passcode: d.passcode
                ).qrCode()
                var result: LANCommandResult?
                for _ in 0..<10 where result == nil || result!.errors.contains("no commissionable device") {
                    result = try await lab.homectl(
                        ["commission", "--code", qr, "--name", d.name, "--paa-trust-store", trust.path],
                        timeout: 90)
                }
                #expect(result?.status == 0, "commission \(d.name): \(result?.errors ?? "")")
            }

            let created = try await lab.homectl(["group", "create", "Hall", "Lamp", "Plug", "--json"])
            #expect(created.status == 0, "group create: \(created.errors)")
            struct Group: Decodable { var name: String; var members: [String] }
            let group = try? JSONDecoder().decode(Group.self, from: Data(created.output.utf8))
            #expect(group?.members.sorted() == ["Lamp", "Plug"], "\(created.output)")

            struct Sent: Decodable { var result: String; var groupcastInterfaces: [String]; var unicastMembers: [String] }
            for (command, wanted) in [("on", "on"), ("off", "off"), ("toggle", "on")] {
                let run = try await lab.homectl(["group", command, "Hall", "--json"])
                #expect(run.status == 0, "group \(command): \(run.errors)")
                let sent = try? JSONDecoder().decode(Sent.self, from: Data(run.output.utf8))
                #expect(sent?.groupcastInterfaces.isEmpty == false, "group \(command) sent no group message: \(run.output)")
                #expect(sent?.unicastMembers == [], "group \(command) went member by member: \(run.output)")
                for name in ["Lamp", "Plug"] {
                    var state = ""
                    for _ in 0..<20 {
                        state = try await lab.state(of: name)["onOff"] ?? ""
                        if state == wanted { break }
                        // real time: external: matter-sim processes in the fake LAN.
                        try await Task.sleep(for: .milliseconds(250))
                    }
                    #expect(state == wanted, "\(name) after group \(command): \(state)")
                }
            }

            let deleted = try await lab.homectl(["group", "delete", "Hall"])
            #expect(deleted.status == 0, "group delete: \(deleted.errors)")
            let listed = try await lab.homectl(["group", "list", "--json"])
            #expect(
                listed.output.trimmingCharacters(in: .whitespacesAndNewlines) == "[\n\n]"
                    || listed.output.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(listed.output)")
        }
    }

    /// Issue #37, the groupcast port: with `matter-sim home --base-port 5600` no node of the home
    /// listens on 5540, where every group message goes (spec 4.16), and neither light acted on
    /// one. Each node now takes the group's messages on 5540 wherever its unicast port is.
    @Test(
        .enabled(if: FakeLANControllerTests.canRun, "needs root and avahi-daemon for network namespaces"),
        .timeLimit(.minutes(5)))
    func aHomeOffPort5540StillActsOnGroupMessages() async throws {
        try await FakeLANControllerTests.withLab(hosts: ["h", "c"], tag: "q") { lab in
            let trust = try HomeCommissionFakeLANTests.trustStore(in: lab)
            let devices = FakeLANControllerTests.packageRoot.appendingPathComponent("DeviceProfiles/devices").path
            let home = lab.work.appendingPathComponent("two-lights.yaml")
            try """
            name: Two Lights
            structures:
              - name: Flat
                groups:
                  - { name: Hall, devices: [Hall Light, Hall Lamp] }
                rooms:
                  - name: Hall
                    devices:
                      - { name: Hall Light, profile: \(devices)/dimmable-light.yaml }
                      - { name: Hall Lamp, profile: \(devices)/dimmable-light.yaml }
            """.write(to: home, atomically: true, encoding: .utf8)
            let output = try lab.startProcess(
                "home", on: "h",
                [
                    FakeLANControllerTests.matterSim, "home", home.path, "--base-port", "5600",
                    "--state-root", lab.work.appendingPathComponent("state").path,
                ])
            try #require(
                try await HomeCommissionFakeLANTests.waitFor("2 devices running", in: output, seconds: 120),
                "matter-sim home: \(output.text.suffix(1000)) \(lab.logs["home"]?.text.suffix(2000) ?? "")")
            let commissioned = try await HomeCommissionFakeLANTests.homectl(
                lab, ["commission", "--home", home.path, "--base-port", "5600", "--host", "10.77.0.2", "--paa-trust-store", trust])
            #expect(commissioned.status == 0, "\(commissioned.output.suffix(2000)) \(commissioned.errors.suffix(2000))")
            #expect(commissioned.output.contains("groups: 1 created"), "\(commissioned.output.suffix(2000))")

            struct Sent: Decodable { var groupcastInterfaces: [String]; var unicastMembers: [String] }
            struct Summary: Decodable { var state: [String: String] }
            for (command, wanted) in [("on", "on"), ("off", "off")] {
                let run = try await HomeCommissionFakeLANTests.homectl(lab, ["group", command, "Hall", "--json"])
                let sent = try? JSONDecoder().decode(Sent.self, from: Data(run.output.utf8))
                #expect(
                    run.status == 0 && sent?.groupcastInterfaces.isEmpty == false && sent?.unicastMembers == [],
                    "group \(command): \(run.output) \(run.errors.suffix(1000))")
                for name in ["Hall Light", "Hall Lamp"] {
                    var state = ""
                    for _ in 0..<20 {
                        let got = try await HomeCommissionFakeLANTests.homectl(lab, ["get", name, "--json"])
                        state = (try? JSONDecoder().decode(Summary.self, from: Data(got.output.utf8)))?.state["onOff"] ?? ""
                        if state == wanted { break }
                        // real time: external: homectl processes in the fake LAN.
                        try await Task.sleep(for: .milliseconds(250))
                    }
                    #expect(state == wanted, "\(name) after group \(command): \(state)")
                }
            }
        }
    }
}
