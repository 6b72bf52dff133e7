import ChildProcess
import Foundation
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import RelayProtocol
import RelayTestClient
import TestWaiting
import Testing
@testable import matter_sim

/// Faults through the real control socket: a commissioned cloud dimmer with a real relay
/// loses and regains its LAN, its relay connection and its power.
@Suite("Faults through the control socket", .serialized)
struct FaultControlTests {
    static let buildDirectory: URL = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var dir = URL(fileURLWithPath: executable).deletingLastPathComponent()
        if dir.lastPathComponent.hasSuffix(".xctest") { dir = dir.deletingLastPathComponent() }
        return dir
    }()
    static let matterSim = buildDirectory.appendingPathComponent("matter-sim").path

    /// Short socket paths: a Unix socket path holds at most 107 bytes.
    static func socketDirectory() throws -> URL {
        let url = URL(fileURLWithPath: "/tmp/msf-\(UUID().uuidString.prefix(8))", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func fault(_ node: String, _ action: String, at path: String) async throws -> ControlResponse {
        try await ControlClient.send(ControlRequest(node: node, action: action), to: path)
    }

    @Test func lanDownCloudDownAndPowerOffBreakWhatTheySayAndComeBack() async throws {
        let directory = try Self.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("control.sock").path
        try await withRelay { url, store in
            let (_, homeToken) = try await store.addHome(name: "Faults")
            let node = try await ProfileNode.start(
                profile: "devices/cloud-dimmer.yaml", stateDirectory: directory.appendingPathComponent("state"),
                relay: CloudEndpoint(relay: url, credential: nil, homeToken: homeToken))
            let serial = node.serialNumber
            let control = try await NodeControlServer.bind(path: socket, nodes: [node.simulated], logger: quietLogger)
            let controlTask = Task { await control.run() }
            let commissioner = try await LoopbackCommissioner.start()
            let session = try await commissioner.commission(try node.address, passcode: node.passcode).caseSession
            let onOff = [AttributePathIB(Level.onOff)]

            try await withRelayController(url: url, homeToken: homeToken) { controller in
                @Sendable func online() async -> Bool? { try? await controller.devices().first { $0.deviceID == serial }?.online }
                #expect(await until(controller.presenceUpdates()) { await online() == true })

                // lan-down: UDP requests go unanswered, the relay still serves.
                var answer = try await Self.fault(serial, "lan-down", at: socket)
                #expect(answer.error == nil)
                #expect(answer.results.map(\.state) == ["LAN down, cloud connected, power on"])
                #expect(!node.server.isLANUp)
                await #expect(throws: (any Error).self) { _ = try await commissioner.read(session, paths: onOff, timeout: .seconds(3)) }
                #expect(node.server.droppedDatagrams.inbound > 0)
                #expect(
                    try await controller.read(serial, paths: [AttributePathIB(Level.currentLevel)]).result(Level.currentLevel)
                        == .success(.unsigned(100)))

                // lan-up: the same session works again (nobody closed it).
                answer = try await Self.fault("Cloud Dimmer", "lan-up", at: socket)
                #expect(answer.results.first?.state.hasPrefix("LAN up") == true)
                #expect(try await commissioner.read(session, paths: onOff).result(Level.onOff) == .success(.bool(false)))

                // cloud-down: the relay sees the device go, UDP carries on.
                answer = try await Self.fault(serial, "cloud-down", at: socket)
                #expect(answer.results.map(\.state) == ["LAN up, cloud down, power on"])
                #expect(await until(controller.presenceUpdates()) { await online() == false })
                await #expect(throws: RelayError.deviceOffline(serial)) {
                    _ = try await controller.read(serial, paths: onOff)
                }
                #expect(try await commissioner.status(session, 1, ClusterIDs.onOff, 0x01) == .success)
                // It stays down: nothing in the node wants the link back (its reconnection waits
                // for that), and the relay client rests offline, a state it never leaves alone.
                #expect(node.cloud?.isOnlineWanted == false)
                #expect(node.cloud?.status == "cloud down")
                #expect(await online() == false)

                answer = try await Self.fault(serial, "cloud-up", at: socket)
                #expect(answer.error == nil)
                #expect(await until(controller.presenceUpdates()) { await online() == true })
                #expect(try await controller.read(serial, paths: onOff).result(Level.onOff) == .success(.bool(true)))

                // power-off: both ways down; sessions and subscriptions are gone for good.
                _ = try await commissioner.subscribe(session, Level.onOff, minInterval: 0, maxInterval: 60)
                #expect(await within { await node.server.interactionServer.untilActiveSubscriptions(1) })
                answer = try await Self.fault("all", "power-off", at: socket)
                #expect(answer.results.map(\.state) == ["LAN down, cloud off (no power), power off"])
                #expect(await until(controller.presenceUpdates()) { await online() == false })
                #expect(await node.server.interactionServer.activeSubscriptions().isEmpty)
                #expect(await node.server.exchangeManager.allSessions().allSatisfy { !$0.isSecure })
                await #expect(throws: (any Error).self) { _ = try await commissioner.read(session, paths: onOff, timeout: .seconds(2)) }

                // power-on: back on the network and the relay from the state it kept; the
                // old session is unknown to the node, a new CASE session works.
                answer = try await Self.fault(serial, "power-on", at: socket)
                #expect(answer.results.first?.state.hasPrefix("LAN up, cloud") == true)
                #expect(await until(controller.presenceUpdates()) { await online() == true })
                await #expect(throws: (any Error).self) { _ = try await commissioner.read(session, paths: onOff, timeout: .seconds(2)) }
                let fresh = try await commissioner.caseSession(try node.address, deviceNodeID: 0x4D0A)
                #expect(try await commissioner.read(fresh, paths: onOff).result(Level.onOff) == .success(.bool(true)))
                #expect(await node.server.node.fabrics.count == 1)
                #expect(
                    try await controller.read(serial, paths: [AttributePathIB(Level.currentLevel)]).result(Level.currentLevel)
                        == .success(.unsigned(100)))
            }

            // Mistakes are answered, not acted on.
            #expect(
                try await Self.fault("no-such-node", "lan-down", at: socket).error?.hasPrefix(
                    "no node 'no-such-node' in this simulator; it runs: Cloud Dimmer (SIM-CD-0001)") == true)
            #expect(
                try await Self.fault(serial, "juggle", at: socket).error
                    == "unknown action 'juggle'; expected a fault (lan-down, lan-up, cloud-down, cloud-up, power-off, power-on, lan-impair) or an act (\(PhysicalActionName.names))"
            )
            #expect(node.server.isLANUp)

            controlTask.cancel()
            await controlTask.value
            #expect(!FileManager.default.fileExists(atPath: socket))
            await commissioner.stop()
            await node.stop()
        }
    }

    /// Issue #17 item 1: a lossy LAN (`lan-impair`): 20 % loss each way, 30 ± 20 ms. A
    /// commissioning and 21 Toggles still complete (MRP retransmits), and none is applied twice
    /// (21 toggles leave the light the other way round). At 20 % a message lost in all of MRP's
    /// five transmissions comes about once in thirty runs; seed 4 alone (never three losses in a
    /// row) did not prevent it (issue #36): retransmissions of several exchanges interleave, by
    /// timing, and under load a response met five losses with other datagrams between them.
    /// maxlost=2 loses no datagram (a retransmission is the same bytes) a third time, so every
    /// message arrives by its third transmission, in any order; the request it answers is acked
    /// by the answer.
    @Test func aLossyLANLosesDatagramsButNoCommandAndAppliesNoneTwice() async throws {
        let directory = try Self.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("control.sock").path
        let node = try await ProfileNode.start(
            profile: "devices/dimmable-light.yaml", stateDirectory: directory.appendingPathComponent("state"))
        let control = try await NodeControlServer.bind(path: socket, nodes: [node.simulated], logger: quietLogger)
        let controlTask = Task { await control.run() }
        defer { controlTask.cancel() }

        let answer = try await ControlClient.send(
            ControlRequest(node: node.serialNumber, action: "lan-impair", value: "loss=20%,delay=30ms,jitter=20ms,seed=4,maxlost=2"), to: socket)
        #expect(answer.error == nil)
        #expect(
            answer.results.first?.state.hasPrefix(
                "LAN up (impaired: loss=20.0%,delay=30ms,jitter=20ms,duplicate=0.0%,seed=4,maxlost=2; lost 0 in, 0 out)")
                == true)
        #expect(
            try await ControlClient.send(ControlRequest(node: node.serialNumber, action: "lan-impair", value: "loss=120%"), to: socket)
                .error
                == "lan-impair loss=120%: loss=120%: expected a percentage from 0% to 100%")
        #expect(
            try await ControlClient.send(ControlRequest(node: node.serialNumber, action: "lan-impair"), to: socket).error?.hasPrefix(
                "lan-impair needs") == true)

        let commissioner = try await LoopbackCommissioner.start()
        let session = try await commissioner.commission(try node.address, passcode: node.passcode).caseSession
        let onOff = [AttributePathIB(Level.onOff)]
        guard case .success(.bool(let before)) = try await commissioner.read(session, paths: onOff).result(Level.onOff) else {
            Issue.record("no OnOff")
            return
        }
        for _ in 0..<21 {
            let response = try await commissioner.invoke(session, 1, ClusterID(0x0006), 0x02)
            guard case .status(let status) = response, status.status.status == .success else {
                Issue.record("Toggle answered \(response)")
                return
            }
        }
        #expect(try await commissioner.read(session, paths: onOff).result(Level.onOff) == .success(.bool(!before)))
        let lost = node.server.lostDatagrams
        #expect(lost.inbound > 0 && lost.outbound > 0, "the impairment lost nothing one way: \(lost)")
        // Requests were retransmitted, and the node took in copies it had already acted on.
        #expect(await commissioner.manager.metrics().retransmissions > 0)
        #expect(await node.server.exchangeManager.metrics().droppedDuplicate > 0)

        // none: a clean LAN again.
        _ = try await ControlClient.send(ControlRequest(node: node.serialNumber, action: "lan-impair", value: "none"), to: socket)
        #expect(node.server.lanImpairment == .none)
        await commissioner.stop()
        await node.stop()
    }

    @Test func theFaultCommandReportsEachNodeAndExplainsMistakes() async throws {
        let directory = try Self.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("control.sock").path
        let matterSim = Self.matterSim

        // Nobody listening yet.
        var result = try await Self.run([matterSim, "fault", "--control", socket, "all", "lan-down"])
        #expect(result.status == 1)
        #expect(result.errors.contains("no running simulator at \(socket)"), "\(result.errors)")
        result = try await Self.run([matterSim, "fault", "--control", socket, "all", "unplug"])
        #expect(result.status != 0)
        #expect(
            result.errors.contains("unknown action 'unplug'; expected one of: lan-down, lan-up, cloud-down, cloud-up, power-off, power-on"),
            "\(result.errors)")

        let lamp = try await RunningNode.start(stateDirectory: directory.appendingPathComponent("lamp"))
        let spare = try await RunningNode.start(stateDirectory: directory.appendingPathComponent("spare"))
        let nodes = [
            SimulatedNode(name: "Lamp", serialNumber: "SER-LAMP", server: lamp.server, cloud: nil),
            SimulatedNode(name: "Lamp", serialNumber: "SER-SPARE", server: spare.server, cloud: nil),
        ]
        let control = try await NodeControlServer.bind(path: socket, nodes: nodes, logger: quietLogger)
        let controlTask = Task { await control.run() }
        // A second simulator cannot take a live socket.
        await #expect(throws: ControlSocketError.self) {
            _ = try await NodeControlServer.bind(path: socket, nodes: nodes, logger: quietLogger)
        }

        result = try await Self.run([matterSim, "fault", "--control", socket, "SER-LAMP", "lan-down"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output == "[1/1] Lamp (SER-LAMP): LAN down, no cloud relay, power on\nlan-down: 1 node\n")
        #expect(!lamp.server.isLANUp && spare.server.isLANUp)

        result = try await Self.run([matterSim, "fault", "--control", socket, "Lamp", "lan-up"])
        #expect(result.status == 1)
        #expect(result.errors.contains("'Lamp' names 2 devices (serial numbers SER-LAMP, SER-SPARE); give a serial number"))

        result = try await Self.run([matterSim, "fault", "--control", socket, "all", "cloud-down"])
        #expect(result.status == 0)
        #expect(
            result.output.contains(
                "[2/2] Lamp (SER-SPARE): LAN up, no cloud relay, power on (skipped: no cloud relay (the profile names none))"))
        #expect(result.output.hasSuffix("cloud-down: 0 nodes, 2 skipped\n"))

        result = try await Self.run([matterSim, "fault", "--control", socket, "SER-SPARE", "cloud-down"])
        #expect(result.status == 1)
        #expect(result.errors.contains("Lamp (SER-SPARE): cannot cloud-down: no cloud relay"))

        result = try await Self.run([matterSim, "fault", "--control", socket, "all", "lan-up"])
        #expect(result.output.hasSuffix("lan-up: 2 nodes\n"))
        #expect(lamp.server.isLANUp)

        controlTask.cancel()
        await controlTask.value
        await lamp.stop()
        await spare.stop()
    }

    @Test func theActCommandDoesWhatAPersonDoesAtTheDeviceAndExplainsMistakes() async throws {
        let directory = try Self.socketDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let socket = directory.appendingPathComponent("control.sock").path
        let matterSim = Self.matterSim
        let door = try await RunningNode.start(
            stateDirectory: directory.appendingPathComponent("door"), description: contactSensorDescription())
        let lamp = try await RunningNode.start(stateDirectory: directory.appendingPathComponent("lamp"))
        let nodes = [
            SimulatedNode(name: "Front Door", serialNumber: "SER-DOOR", server: door.server, cloud: nil),
            SimulatedNode(name: "Lamp", serialNumber: "SER-LAMP", server: lamp.server, cloud: nil),
        ]
        let control = try await NodeControlServer.bind(path: socket, nodes: nodes, logger: quietLogger)
        let controlTask = Task { await control.run() }
        let stateValue = AttributePath(endpoint: 1, cluster: ClusterID(0x0045), attribute: AttributeID(0))

        var result = try await Self.run([matterSim, "act", "--control", socket, "Front Door", "open"])
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.output.hasSuffix("open: 1 node\n"), "\(result.output)")
        #expect(await door.node.read(stateValue, session: nil, fabricFiltered: false).map(\.value) == .success(.bool(false)))
        #expect(await door.node.events().contains { $0.cluster == ClusterID(0x0045) && $0.data == .structure([.context(0, .bool(false))]) })

        // A lamp has no door: the one node asked for is an error, `all` skips it.
        result = try await Self.run([matterSim, "act", "--control", socket, "SER-LAMP", "close"])
        #expect(result.status == 1)
        #expect(result.errors.contains("Lamp (SER-LAMP): cannot close (contact): no endpoint has a cluster that can"), "\(result.errors)")
        result = try await Self.run([matterSim, "act", "--control", socket, "all", "close"])
        #expect(result.status == 0)
        #expect(result.output.hasSuffix("close: 1 node, 1 skipped\n"), "\(result.output)")
        #expect(await door.node.read(stateValue, session: nil, fabricFiltered: false).map(\.value) == .success(.bool(true)))

        // Values are checked before anything is sent; a powered-off device does nothing.
        result = try await Self.run([matterSim, "act", "--control", socket, "SER-DOOR", "temperature", "warm"])
        #expect(result.status != 0)
        #expect(result.errors.contains("'temperature' needs a reading in °C, e.g. 21.5; got 'warm'"), "\(result.errors)")
        result = try await Self.run([matterSim, "act", "--control", socket, "SER-DOOR", "open", "wide"])
        #expect(result.errors.contains("'open' takes no value, but 'wide' was given"), "\(result.errors)")
        await door.server.powerOff()
        result = try await Self.run([matterSim, "act", "--control", socket, "SER-DOOR", "open"])
        #expect(result.status == 1)
        #expect(result.errors.contains("cannot open (no contact): the power is off"), "\(result.errors)")

        controlTask.cancel()
        await controlTask.value
        await door.stop()
        await lamp.stop()
    }

    /// Runs a command on a thread of its own (the wait blocks).
    static func run(_ arguments: [String]) async throws -> CommandResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try Command.run(arguments, timeout: 60) }) }.start()
        }
    }
}
