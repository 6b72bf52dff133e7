import Foundation
import Logging
import MatterDevice
import MatterModel
import MatterProtocol
import NIOCore
import TestWaiting

/// The published connectedhomeip test credentials, as matter-sim embeds them (test only).
let testAuthority = AttestationAuthority.connectedhomeipTest

let testPasscode: UInt32 = 20202021
let testDiscriminator: UInt16 = 3840

/// Tests log only what goes wrong (MATTER_TEST_LOG=debug shows more).
let quietLogger: Logger = {
    var logger = Logger(label: "matter.test")
    logger.logLevel = ProcessInfo.processInfo.environment["MATTER_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .error
    return logger
}()

/// A root node with Basic Information and the commissioning clusters, and an On/Off
/// light on endpoint 1.
func lightDescription() -> NodeDescription {
    let root = EndpointDescription(
        number: 0, deviceTypes: [DeviceTypeInstance(id: DeviceTypeID(0x0016), revision: 3)],
        serverClusters: [
            ClusterInstanceDescription(
                id: ClusterIDs.basicInformation,
                attributes: [
                    AttributeID(0x0002): .unsigned(0xFFF1), AttributeID(0x0004): .unsigned(0x8001),
                ])
        ] + ClusterInstanceDescription.rootNodeCommissioningClusters)
    let light = EndpointDescription(
        number: 1, deviceTypes: [DeviceTypeInstance(id: DeviceTypeID(0x0100), revision: 3)],
        serverClusters: [
            ClusterInstanceDescription(id: ClusterID(0x0003)), ClusterInstanceDescription(id: ClusterID(0x0004)),
            ClusterInstanceDescription(id: ClusterIDs.onOff, features: ["LT"]),
        ])
    return NodeDescription(endpoints: [root, light])
}

/// A contact sensor: Boolean State, closed (in contact).
func contactSensorDescription() -> NodeDescription {
    var description = lightDescription()
    description.endpoints[1] = EndpointDescription(
        number: 1, deviceTypes: [DeviceTypeInstance(id: DeviceTypeID(0x0015), revision: 2)],
        serverClusters: [
            ClusterInstanceDescription(id: ClusterID(0x0003)),
            ClusterInstanceDescription(id: ClusterID(0x0045), attributes: [AttributeID(0): .bool(true)]),
        ])
    return description
}

/// The light with LevelControl coupled to OnOff (a dimmable light), at level 50, off.
func dimmableLightDescription() -> NodeDescription {
    var description = lightDescription()
    description.endpoints[1].deviceTypes = [DeviceTypeInstance(id: DeviceTypeID(0x0101), revision: 3)]
    description.endpoints[1].serverClusters.append(
        ClusterInstanceDescription(
            id: ClusterID(0x0008), features: ["OO", "LT"],
            attributes: [AttributeID(0x0000): .unsigned(50), AttributeID(0x0002): .unsigned(1), AttributeID(0x0003): .unsigned(254)]))
    return description
}

/// A fresh directory under the system's temporary directory.
func temporaryDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("matter-sim-test-\(UUID().uuidString)", isDirectory: true)
}

/// A node whose state lives in `directory`, served on 127.0.0.1 on an ephemeral port,
/// without DNS-SD.
struct RunningNode {
    let node: MatterNode
    let server: NodeServer
    let serving: Task<Void, Never>

    var address: SocketAddress {
        get throws { try SocketAddress(ipAddress: "127.0.0.1", port: server.port) }
    }

    static func start(
        stateDirectory: URL, description: NodeDescription = lightDescription(), logger: Logger = quietLogger,
        configure: (inout NodeServerConfiguration) -> Void = { _ in }
    ) async throws -> RunningNode {
        let store = try NodeStateStore(directory: stateDirectory)
        let attestation = try DeviceAttestationProvisioning.loadOrMint(
            store: store, vendorID: 0xFFF1, productID: 0x8001, deviceTypeID: 0x0100, authority: testAuthority)
        let node = try MatterNode(
            description: description, logger: quietLogger,
            commissioning: CommissioningConfiguration(stateStore: store, attestation: attestation))
        var configuration = NodeServerConfiguration(
            port: 0, binding: .addresses(["127.0.0.1"]), passcode: testPasscode, discriminator: testDiscriminator)
        configure(&configuration)
        let server = try await NodeServer(node: node, configuration: configuration, logger: logger)
        let serving = Task { await server.run() }
        return RunningNode(node: node, server: server, serving: serving)
    }

    /// Waits until PASE is accepted (the window opens as the server boots, or when a
    /// command opened one).
    func commissionable() async -> Bool {
        await until(server.commissioningChanges()) { await server.secureChannel.isCommissioningWindowOpen }
    }

    /// Cancels the server and waits for its clean shutdown (the node saves its state).
    func stop() async {
        serving.cancel()
        await serving.value
    }
}
