import ChildProcess
import DeviceProfile
import Foundation
import MatterDevice
import MatterModel
import MatterTLV
import Testing
@testable import matter_sim

#if canImport(Glibc)
import Glibc
#endif

/// Issue #37: what a security probe of a running home found in the control socket and in
/// the values `act`, the dashboard and scenarios hand to it.
@Suite("Control socket security", .serialized)
struct ControlSocketSecurityTests {
    static let thermostat = ClusterID(0x0201)

    /// A thermostat that heats, at the model's default limits (7 to 30 °C).
    static func thermostatDescription() -> NodeDescription {
        var description = lightDescription()
        description.endpoints[1] = EndpointDescription(
            number: 1, deviceTypes: [DeviceTypeInstance(id: DeviceTypeID(0x0301), revision: 3)],
            serverClusters: [
                ClusterInstanceDescription(id: ClusterID(0x0003)),
                ClusterInstanceDescription(id: Self.thermostat, features: ["HEAT"]),
            ])
        return description
    }

    /// Item 2 (and 10): values are checked against the data model before they reach a node:
    /// `dial 1e17` and `dial 1e300` trapped the Int64 conversion in the node, `press
    /// 100000000` spun a latching switch's loop.
    @Test func actValuesAreCheckedAgainstTheDataModel() throws {
        for value in ["1e17", "1e300", "-1e300", "327.68"] {
            guard case .failure(let error) = PhysicalActionName.parse("dial", value: value) else {
                Issue.record("dial \(value) was accepted")
                continue
            }
            #expect(error.description.contains("from -273.15 to 327.67 °C"), "\(error.description)")
        }
        guard case .failure(let temperature) = PhysicalActionName.parse("temperature", value: "1e300") else {
            Issue.record("temperature 1e300 was accepted")
            return
        }
        #expect(temperature.description.contains("from -273.15 to 327.67 °C"), "\(temperature.description)")
        for value in ["100000000", "256", "0", "99999999999999999999"] {
            guard case .failure(let error) = PhysicalActionName.parse("press", value: value) else {
                Issue.record("press \(value) was accepted")
                continue
            }
            #expect(error.description.contains("from 1 to 255"), "\(error.description)")
        }
        guard case .success(.dial(let celsius)) = PhysicalActionName.parse("dial", value: "21.5") else {
            Issue.record("dial 21.5 was refused")
            return
        }
        #expect(celsius == 21.5)
        #expect(ActRanges.presses == 1...255)
    }

    /// Item 2 end to end: the dashboard's and `act`'s path, the control socket's queue.
    @Test func aDialOf1e300IsAnErrorAndTheNodeGoesOn() async throws {
        let directory = try FaultControlTests.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let running = try await RunningNode.start(
            stateDirectory: directory.appendingPathComponent("thermostat"), description: Self.thermostatDescription())
        let control = try await NodeControlServer.bind(
            path: directory.appendingPathComponent("control.sock").path,
            nodes: [SimulatedNode(name: "Hall", serialNumber: "SER-T", server: running.server, cloud: nil)], logger: quietLogger)
        let serving = Task { await control.run() }
        for value in ["1e300", "1e17"] {
            let refused = await control.submit(ControlRequest(node: "SER-T", action: "dial", value: value))
            #expect(refused.error?.contains("from -273.15 to 327.67 °C") == true, "\(refused.error ?? "accepted")")
        }
        let outside = await control.submit(ControlRequest(node: "SER-T", action: "dial", value: "45"))
        #expect(outside.error?.contains("the heating setpoint goes from 7.0 to 30.0 °C") == true, "\(outside.error ?? "accepted")")
        let dialled = await control.submit(ControlRequest(node: "SER-T", action: "dial", value: "21"))
        #expect(dialled.error == nil, "\(dialled.error ?? "")")
        let setpoint = AttributePath(endpoint: 1, cluster: Self.thermostat, attribute: AttributeID(0x0012))
        #expect(await running.node.read(setpoint, session: nil, fabricFiltered: false).map(\.value) == .success(.signed(2100)))
        serving.cancel()
        await serving.value
        await running.stop()
    }

    /// Item 2: `matter-sim validate` accepted a scenario that `home` then ran into the trap.
    @Test func validateRejectsAnActValueOutsideTheModelsRange() async throws {
        let directory = try FaultControlTests.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("dial.yaml").path
        try """
        name: dial far out
        steps:
          - at: 0
            node: Hall
            act: dial 1e300
          - at: 1s
            node: Rocker
            act: press 100000000
          - at: 2s
            node: Hall
            act: dial 21
        """.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await FaultControlTests.run([FaultControlTests.matterSim, "validate", file])
        #expect(result.status == 1, "\(result.output)\(result.errors)")
        #expect(result.output.contains("\(file): steps[0].act: 'dial' takes a setpoint from -273.15 to 327.67 °C"), "\(result.output)")
        #expect(result.output.contains("\(file): steps[1].act: 'press' takes"), "\(result.output)")
        #expect(!result.output.contains("steps[2]"), "\(result.output)")
        #expect(result.output.contains("1 file, 2 errors"), "\(result.output)")
    }

    /// Item 9: with umask 000 the socket was 0777 and the directories made for it 0755.
    @Test func theSocketIsOwnerOnlyWhateverTheUmask() async throws {
        let directory = try FaultControlTests.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("made/for/control.sock").path
        let old = umask(0)
        let control: NodeControlServer
        do {
            defer { umask(old) }
            control = try await NodeControlServer.bind(path: socket, nodes: [], logger: quietLogger)
        }
        let serving = Task { await control.run() }
        func mode(_ path: String) -> mode_t {
            var status = stat()
            return lstat(path, &status) == 0 ? status.st_mode & 0o7777 : 0o7777
        }
        #expect(mode(socket) == 0o600)
        #expect(mode(directory.appendingPathComponent("made/for").path) == 0o700)
        #expect(mode(directory.appendingPathComponent("made").path) == 0o700)
        // The owner (this process) is still answered.
        let answer = try await ControlClient.send(ControlRequest(node: "all", action: "lan-down"), to: socket)
        #expect(answer.error == nil && answer.results.isEmpty)
        #expect(control.refusals.total == 0)
        serving.cancel()
        await serving.value
    }

    /// Item 9: only the socket's owner and root may send commands.
    @Test func thePeerPolicyAllowsTheOwnerAndRootOnly() {
        let policy = ControlPeerPolicy(owner: 1000)
        #expect(policy.allows(ControlPeer(uid: 1000, pid: 1)))
        #expect(policy.allows(ControlPeer(uid: 0, pid: 1)))
        #expect(!policy.allows(ControlPeer(uid: 65534, pid: 1)))
        #expect(policy.refusal(ControlPeer(uid: 65534, pid: 1)).contains("uid 65534"))
    }

    /// Item 9 end to end: `nobody` powered the node off through a socket it could reach. Made
    /// reachable on purpose here (as a shared directory or umask 000 did), the peer check
    /// still refuses it, and counts it. Needs root (to run the client as nobody).
    @Test(.enabled(if: geteuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func anotherUsersCommandIsRefused() async throws {
        let directory = try FaultControlTests.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let running = try await RunningNode.start(stateDirectory: directory.appendingPathComponent("lamp"))
        let socket = directory.appendingPathComponent("control.sock").path
        let control = try await NodeControlServer.bind(
            path: socket, nodes: [SimulatedNode(name: "Lamp", serialNumber: "SER-LAMP", server: running.server, cloud: nil)],
            logger: quietLogger)
        let serving = Task { await control.run() }
        #expect(chmod(directory.path, 0o755) == 0 && chmod(socket, 0o666) == 0)
        let result = try await FaultControlTests.run([
            "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
            FaultControlTests.matterSim, "fault", "--control", socket, "all", "power-off",
        ])
        #expect(result.status != 0)
        #expect(result.errors.contains("refused: uid 65534 may not use this control socket"), "\(result.output)\(result.errors)")
        #expect(running.server.isPoweredOn)
        #expect(control.refusals.total == 1)
        serving.cancel()
        await serving.value
        await running.stop()
    }
}
