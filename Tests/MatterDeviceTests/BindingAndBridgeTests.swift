import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// A light switch's Binding (Core spec 9.6): a press becomes commands to the bound targets,
// handed to the node's server as `boundCommands`. A bridge (9.12, 9.13): an Aggregator whose
// PartsList holds its bridged nodes, each with Reachable and ReachableChanged.
@Suite struct BindingAndBridgeTests {
    let clock = ManualClock()
    typealias Binding = Clusters.Binding
    static let bindingPath = AttributePath(endpoint: 1, cluster: Binding.id, attribute: Binding.Attribute.binding)

    func lightSwitch(dimmer: Bool) throws -> MatterNode {
        try makeNode(
            [
                rootEndpoint(),
                EndpointDescription(
                    number: 1, deviceTypes: [deviceType(dimmer ? DeviceTypes.dimmerSwitch : DeviceTypes.onOffLightSwitch)],
                    serverClusters: [ClusterInstanceDescription(id: Clusters.Identify.id), ClusterInstanceDescription(id: Binding.id)],
                    clientClusters: [Clusters.Identify.id, Clusters.OnOff.id] + (dimmer ? [Clusters.LevelControl.id] : [])),
            ], clock: clock)
    }

    /// A TargetStruct entry of fabric `fabric` (9.6.5.1: Node 1, Group 2, Endpoint 3, Cluster 4).
    static func target(
        node: UInt64? = nil, group: UInt64? = nil, endpoint: UInt64? = nil, cluster: ClusterID? = nil, fabric: UInt64 = 1
    )
        -> TLVElement
    {
        var fields: [TLVElement] = []
        if let node { fields.append(TLVElement(tag: .context(1), .unsigned(node))) }
        if let group { fields.append(TLVElement(tag: .context(2), .unsigned(group))) }
        if let endpoint { fields.append(TLVElement(tag: .context(3), .unsigned(endpoint))) }
        if let cluster { fields.append(TLVElement(tag: .context(4), .unsigned(UInt64(cluster.rawValue)))) }
        fields.append(TLVElement(tag: .context(FieldDefinition.fabricIndexTag), .unsigned(fabric)))
        return TLVElement(.structure(fields))
    }

    /// The next `count` bound commands the node hands its server.
    func sent(_ stream: AsyncStream<BoundCommand>, count: Int) async -> [BoundCommand] {
        var out: [BoundCommand] = []
        for await command in stream {
            out.append(command)
            if out.count == count { break }
        }
        return out
    }

    @Test func aPressSendsToggleToEachBoundLightAndADimmerSendsMoveToLevelWithOnOff() async throws {
        let node = try lightSwitch(dimmer: true)
        let commands = node.boundCommands
        // Unbound: nothing to send, and the person is told why.
        await #expect(throws: PhysicalActionError.self) { try await node.act(.press(.single)) }
        let entries = TLVValue.array([
            Self.target(node: 0x11, endpoint: 1), Self.target(node: 0x22, endpoint: 3, cluster: Clusters.LevelControl.id, fabric: 2),
        ])
        #expect(await node.write(Self.bindingPath, value: entries) == InteractionStatus(.success))
        try await node.act(.press(.single))  // the On/Off target only: the other names Level Control
        try await node.act(.dim(percent: 40))  // both: the first names no cluster
        let out = await sent(commands, count: 3)
        #expect(out.map(\.node) == [0x11, 0x11, 0x22])
        #expect(out.map(\.fabricIndex) == [1, 1, 2])
        #expect(out[0].path == ConcreteCommandPath(endpoint: 1, cluster: Clusters.OnOff.id, command: Clusters.OnOff.Command.toggle))
        #expect(
            out[2].path
                == ConcreteCommandPath(
                    endpoint: 3, cluster: Clusters.LevelControl.id, command: Clusters.LevelControl.Command.moveToLevelWithOnOff))
        #expect(out[2].fields[context: 0] == .unsigned(102))  // 40 % of 254
    }

    @Test func anOnOffSwitchDoesNotDimAndABadTargetIsRefused() async throws {
        let node = try lightSwitch(dimmer: false)
        #expect(await node.write(Self.bindingPath, value: .array([Self.target(node: 0x11, endpoint: 1)])) == InteractionStatus(.success))
        await #expect(throws: PhysicalActionError.self) { try await node.act(.dim(percent: 40)) }
        // A node and a group at once, or a node without an endpoint (9.6.5.1).
        for bad in [Self.target(node: 0x11, group: 5, endpoint: 1), Self.target(node: 0x11)] {
            #expect(await node.write(Self.bindingPath, value: .array([bad])) == InteractionStatus(.constraintError))
        }
        #expect(await node.value(1, Binding.id, Binding.Attribute.binding.rawValue)?.members?.count == 1)
    }

    func bridge() throws -> MatterNode {
        let bridged = { (number: EndpointNumber) in
            EndpointDescription(
                number: number, deviceTypes: [deviceType(DeviceTypes.onOffLight), deviceType(DeviceTypes.bridgedNode)],
                serverClusters: [
                    ClusterInstanceDescription(id: Clusters.OnOff.id),
                    ClusterInstanceDescription(id: Clusters.BridgedDeviceBasicInformation.id),
                ], parent: 1)
        }
        return try makeNode(
            [
                rootEndpoint(), EndpointDescription(number: 1, deviceTypes: [deviceType(DeviceTypes.aggregator)], serverClusters: []),
                bridged(2), bridged(3),
            ], clock: clock)
    }

    /// 9.13.5.1: unplugging a bridged device sets its Reachable false with ReachableChanged, on
    /// that endpoint only; plugging it in sets it back.
    @Test func unpluggingABridgedDeviceMakesItUnreachableWithReachableChanged() async throws {
        let node = try bridge()
        let info = Clusters.BridgedDeviceBasicInformation.self
        #expect(uintList(await node.value(1, Clusters.Descriptor.id, Clusters.Descriptor.Attribute.partsList.rawValue)) == [2, 3])
        let from = await node.events().last.map { $0.number + 1 } ?? 0
        #expect(try await node.act(.bridged(endpoint: 3, reachable: false)) == 3)
        #expect(await node.bool(3, info.id, info.Attribute.reachable.rawValue) == false)
        #expect(await node.bool(2, info.id, info.Attribute.reachable.rawValue) == true)
        try await node.act(.bridged(endpoint: 3, reachable: false))  // already unplugged: no event
        try await node.act(.bridged(endpoint: 3, reachable: true))
        let raised = await node.events(from: from).filter { $0.cluster == info.id }
        #expect(raised.map(\.endpoint) == [3, 3])
        #expect(raised.map { $0.data[context: 0] } == [.bool(false), .bool(true)])
        await #expect(throws: PhysicalActionError.self) { try await node.act(.bridged(endpoint: 1, reachable: false)) }
    }

    /// A bridged device removed from the bridge: Leave (9.13.5.3) and Reachable false, its
    /// endpoint gone from the node and from the PartsLists; added back, it is there again.
    @Test func removingABridgedDeviceTakesItsEndpointOutOfThePartsListsAndAddingPutsItBack() async throws {
        let node = try bridge()
        let info = Clusters.BridgedDeviceBasicInformation.self
        let parts = { (endpoint: EndpointNumber) in
            uintList(await node.value(endpoint, Clusters.Descriptor.id, Clusters.Descriptor.Attribute.partsList.rawValue))
        }
        let changes = node.changes
        let from = await node.events().last.map { $0.number + 1 } ?? 0
        try await node.act(.bridgedPresence(endpoint: 3, present: false))
        #expect(await parts(0) == [1, 2])
        #expect(await parts(1) == [2])
        #expect(node.composition.endpoints == [0, 1, 2])
        let onOff3 = AttributePath(endpoint: 3, cluster: Clusters.OnOff.id, attribute: Clusters.OnOff.Attribute.onOff)
        guard case .failure(let status) = await node.read(onOff3) else {
            Issue.record("a removed bridged device's attribute was read")
            return
        }
        #expect(status == InteractionStatus(.unsupportedEndpoint))
        #expect(!node.composition.expand(endpoint: nil, cluster: Clusters.OnOff.id, attribute: nil).contains(onOff3))
        await #expect(throws: PhysicalActionError.self) { try await node.act(.bridged(endpoint: 3, reachable: true)) }
        try await node.act(.bridgedPresence(endpoint: 3, present: true))
        #expect(await parts(0) == [1, 2, 3])
        #expect(await parts(1) == [2, 3])
        #expect(await node.bool(3, info.id, info.Attribute.reachable.rawValue) == true)
        let raised = await node.events(from: from).filter { $0.cluster == info.id }.map(\.event)
        #expect(raised == [info.Event.leave, info.Event.reachableChanged, info.Event.reachableChanged])
        // Only a bridged node's endpoint leaves.
        await #expect(throws: PhysicalActionError.self) { try await node.act(.bridgedPresence(endpoint: 1, present: false)) }
        // The Descriptors report each PartsList change (endpoints 0 and 1, out and back).
        let reported = await drain(changes, stopping: node).filter { $0.path.attribute == Clusters.Descriptor.Attribute.partsList }
        #expect(reported.count == 4)
    }
}
