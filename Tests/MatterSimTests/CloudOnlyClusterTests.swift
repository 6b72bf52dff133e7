import Foundation
import MatterController
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import RelayProtocol
import RelayTestClient
import TestWaiting
import Testing
@testable import matter_sim

/// A node from the shipped cloud dimmer profile (LevelControl cloud-only), commissioned
/// over loopback UDP, connected to a real relay server: over UDP LevelControl does not
/// exist, through the relay the node is whole.
@Suite("Cloud-only clusters: absent over UDP, served through the relay", .serialized)
struct CloudOnlyClusterTests {
    @Test func theLANViewWithholdsLevelControlAndTheRelayServesIt() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withRelay { url, store in
            let (_, homeToken) = try await store.addHome(name: "Test Home")
            // Only the home token: the device registers itself under its serial number.
            let node = try await ProfileNode.start(
                profile: "devices/cloud-dimmer.yaml", stateDirectory: directory,
                relay: CloudEndpoint(relay: url, credential: nil, homeToken: homeToken))
            let commissioner = try await LoopbackCommissioner.start()

            try await withRelayController(url: url, homeToken: homeToken) { controller in
                #expect(await until(node.cloudChanges()) { node.cloud?.isConnected == true }, "\(node.cloud?.status ?? "")")
                #expect(try await controller.devices().map(\.deviceID) == [node.serialNumber])

                // On no fabric yet, nobody may act through the relay.
                await #expect(throws: ControllerError.status(InteractionStatus(.unsupportedAccess), "Read")) {
                    _ = try await controller.read(node.serialNumber, paths: [AttributePathIB(Level.serverList)])
                }

                let commissioned = try await commissioner.commission(try node.address, passcode: node.passcode)
                let session = commissioned.caseSession

                // Over UDP: not in the ServerList, UNSUPPORTED_CLUSTER for concrete paths,
                // skipped by wildcards; the rest of the light is there.
                let lanServers = try await commissioner.read(session, 1, Level.descriptor, 0x0001).get()
                #expect(clusterIDs(lanServers).contains(ClusterIDs.onOff.rawValue))
                #expect(!clusterIDs(lanServers).contains(Level.cluster.rawValue))
                #expect(try await commissioner.read(session, 1, Level.cluster, 0x0000) == .failure(InteractionStatus(.unsupportedCluster)))
                let moveOverLAN = try await commissioner.status(
                    session, 1, Level.cluster, Level.moveToLevel,
                    fields((0, u(50)), (1, u(0)), (2, u(0)), (3, u(0))))
                #expect(moveOverLAN == InteractionStatus(.unsupportedCluster))
                // Over UDP the endpoint claims the device type its clusters conform to: without
                // Level Control a Dimmable Light (0x0101) is an On/Off Light (0x0100), which the
                // data-model validator checks; the relay's view is the whole Dimmable Light.
                let lanTypes = try await commissioner.read(session, 1, Level.descriptor, 0x0000).get()
                #expect((lanTypes.members ?? []).compactMap { $0.value[context: 0]?.uintValue } == [0x0100])
                let relayTypes = try await controller.read(node.serialNumber, paths: [AttributePathIB(Level.deviceTypeList)])
                #expect(
                    (try relayTypes.result(Level.deviceTypeList)?.get().members ?? []).compactMap { $0.value[context: 0]?.uintValue } == [
                        0x0101
                    ])
                let wildcard = try await commissioner.read(session, paths: [AttributePathIB(endpoint: 1)])
                #expect(wildcard.reportedClusters.contains(ClusterPath(endpoint: 1, cluster: ClusterIDs.onOff)))
                #expect(!wildcard.reportedClusters.contains(ClusterPath(endpoint: 1, cluster: Level.cluster)))
                #expect(wildcard.attributeReports.allSatisfy { if case .status = $0 { false } else { true } })

                // Through the relay, as the commissioner's Administer subject: the whole node.
                let relayServers = try await controller.read(node.serialNumber, paths: [AttributePathIB(Level.serverList)])
                #expect(
                    Set(clusterIDs(try relayServers.result(Level.serverList)?.get()))
                        == Set(clusterIDs(lanServers)).union([Level.cluster.rawValue]))
                #expect(
                    try await controller.read(node.serialNumber, paths: [AttributePathIB(Level.currentLevel)])
                        .result(Level.currentLevel) == .success(.unsigned(100)))
                let moved = try await controller.invoke(node.serialNumber, Level.moveToLevel(42))
                #expect(moved.firstStatus == .success)
                #expect(
                    try await controller.read(node.serialNumber, paths: [AttributePathIB(Level.currentLevel)])
                        .result(Level.currentLevel) == .success(.unsigned(42)))
                #expect(try await commissioner.read(session, 1, ClusterIDs.onOff, 0x0000) == .success(.bool(true)))
                let whole = try await controller.read(node.serialNumber, paths: [AttributePathIB(endpoint: 1)])
                #expect(whole.reportedClusters.contains(ClusterPath(endpoint: 1, cluster: Level.cluster)))
                // Matter clusters answer both ways.
                #expect(try await commissioner.status(session, 1, ClusterIDs.onOff, 0x00) == .success)  // Off
                #expect(
                    try await controller.read(node.serialNumber, paths: [AttributePathIB(Level.onOff)])
                        .result(Level.onOff) == .success(.bool(false)))
            }

            await commissioner.stop()
            // The credential the device was issued is kept in its state directory.
            let kept = directory.appendingPathComponent(StoredRelayCredential.fileName)
            let stored = try JSONDecoder().decode(StoredRelayCredential.self, from: Data(contentsOf: kept))
            #expect(stored.deviceID == node.serialNumber && stored.relay == url && stored.credential.hasPrefix("mrd_"))
            let permissions = try FileManager.default.attributesOfItem(atPath: kept.path)[.posixPermissions] as? Int
            #expect(permissions == 0o600)
            await node.stop()
        }
    }

    @Test func theRelaySubjectFollowsTheFirstFabricsAdministerEntry() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try await ProfileNode.start(profile: "devices/cloud-dimmer.yaml", stateDirectory: directory)
        let commissioner = try await LoopbackCommissioner.start()
        #expect(await node.server.cloudSubject() == nil)
        let commissioned = try await commissioner.commission(try node.address, passcode: node.passcode)
        let subject = try #require(await node.server.cloudSubject())
        #expect(subject.fabricIndex == commissioned.fabricIndex)
        #expect(subject.subject == commissioner.adminNodeID)
        #expect(subject.authMode == .case)
        await commissioner.stop()
        await node.stop()
    }

    @Test func aRelayNobodyRunsDoesNotStopTheDevice() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A port nothing listens on (bound and released at once).
        let port = try await UDPTransport.bind(UDPTransport.Configuration(port: 0, binding: .addresses(["127.0.0.1"])))
        let unused = port.port
        await port.close()
        let node = try await ProfileNode.start(
            profile: "devices/cloud-dimmer.yaml", stateDirectory: directory,
            relay: CloudEndpoint(relay: "ws://127.0.0.1:\(unused)", credential: nil, homeToken: "mrh_nobody"))
        #expect(
            await until(node.cloudChanges()) { node.cloud?.status.hasPrefix("cloud registering (") == true }, "\(node.cloud?.status ?? "")")
        // The node still serves over UDP meanwhile.
        let commissioner = try await LoopbackCommissioner.start()
        let commissioned = try await commissioner.commission(try node.address, passcode: node.passcode)
        #expect(try await commissioner.read(commissioned.caseSession, 1, ClusterIDs.onOff, 0x0000) == .success(.bool(false)))
        await commissioner.stop()
        await node.stop()
    }

    @Test func aGivenCredentialConnectsAndAForgottenRegistrationIsMadeAgain() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withRelay { url, store in
            let (home, homeToken) = try await store.addHome(name: "Test Home")
            // A credential from `matter-relay device add`, given as is.
            let credential = try await store.registerDevice(homeID: home.id, deviceID: "SIM-DL-0001")
            let light = try await ProfileNode.start(
                profile: "devices/dimmable-light.yaml", stateDirectory: directory.appendingPathComponent("light"),
                relay: CloudEndpoint(relay: url, credential: credential, homeToken: nil))
            #expect(await until(light.cloudChanges()) { light.cloud?.isConnected == true }, "\(light.cloud?.status ?? "")")

            // A device that registered itself with the home token...
            let dimmerState = directory.appendingPathComponent("dimmer")
            let dimmer = try await ProfileNode.start(
                profile: "devices/cloud-dimmer.yaml", stateDirectory: dimmerState,
                relay: CloudEndpoint(relay: url, credential: nil, homeToken: homeToken))
            #expect(await until(dimmer.cloudChanges()) { dimmer.cloud?.isConnected == true })
            let kept = dimmerState.appendingPathComponent(StoredRelayCredential.fileName)
            let first = try JSONDecoder().decode(StoredRelayCredential.self, from: Data(contentsOf: kept)).credential
            // ...and that the relay then forgot registers again when it next connects.
            try await store.removeDevice(homeID: home.id, deviceID: dimmer.serialNumber)
            dimmer.cloud?.setConnected(false)
            #expect(await until(dimmer.cloudChanges()) { dimmer.cloud?.isConnected == false })
            dimmer.cloud?.setConnected(true)
            #expect(await until(dimmer.cloudChanges()) { dimmer.cloud?.isConnected == true }, "\(dimmer.cloud?.status ?? "")")
            let second = try JSONDecoder().decode(StoredRelayCredential.self, from: Data(contentsOf: kept)).credential
            #expect(second != first)
            #expect(Set(try await store.devices(homeID: home.id).map(\.deviceID)) == ["SIM-DL-0001", dimmer.serialNumber])
            await dimmer.stop()
            await light.stop()
        }
    }
}
