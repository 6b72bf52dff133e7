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
}
