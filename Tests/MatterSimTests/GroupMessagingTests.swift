import Foundation
import MatterCrypto
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore
import TestWaiting
import Testing

/// Issue #21: group messages (Core spec 4.16). The administrator installs a key set, maps a
/// group to it, puts endpoint 1 in the group and grants the group Operate; a group message
/// sealed with the derived operational group key then switches the light, with no answer;
/// a replayed counter, a group the light is not in and a wrong key change nothing.
@Suite("Group messages: a groupcast On/Off acts on the group's members")
struct GroupMessagingTests {
    static let groups = ClusterID(0x0004)
    static let groupKeyManagement = ClusterID(0x003F)
    static let accessControl = ClusterID(0x001F)
    static let onOff = ClusterID(0x0006)
    static let hall: UInt16 = 0x0101
    static let epochKey: [UInt8] = Array(0xA0...0xAF)

    @Test func aGroupcastOnOffSwitchesTheMemberAndNothingElseGetsIn() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        let running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let commissioned = try await commissioner.commission(try running.address, passcode: testPasscode)
        let session = commissioned.caseSession

        try await Self.putEndpointOneInHall(commissioner, session)

        // The node listens for the group at its multicast address once the change is saved.
        let fabric = try #require(await running.node.fabrics.first)
        let multicast = GroupMulticast.addressString(fabricID: fabric.fabricID, groupID: Self.hall)
        #expect(multicast.hasPrefix("ff35:40:fd"))

        let key = try await Self.hallKey(running.node)
        let sender = try await GroupSender.open(key: key, sourceNodeID: commissioner.adminNodeID, to: try running.address)
        defer { PendingCleanups.run { await sender.close() } }

        // Without an ACL entry for the group: the message is opened, the command refused.
        try await sender.send(group: Self.hall, command: 0x01, counter: 100)
        let server = running.server.interactionServer
        #expect(await until(server.groupInvokesChanges()) { server.groupInvokes.messagesHandled == 1 })
        #expect(server.groupInvokes.commandsRun == 0)
        #expect(try await onOffValue(commissioner, session) == false)

        try await Self.grantHallOperate(commissioner, session)

        try await sender.send(group: Self.hall, command: 0x01, counter: 101)  // On
        #expect(await until(running.node.changes) { (try? await onOffValue(commissioner, session)) == true })

        // A replay of that message after an Off: a duplicate, dropped.
        #expect(try await commissioner.status(session, 1, Self.onOff, 0x00) == .success)
        try await sender.send(group: Self.hall, command: 0x01, counter: 101)
        // Another group (the light is not in it), and the right group under another key.
        try await sender.send(group: 0x0102, command: 0x01, counter: 102)
        let stranger = try GroupOperationalKey(
            fabricIndex: fabric.index, keySetID: 0x01A1, groupIDs: [Self.hall],
            epochKey: Array(repeating: 0x11, count: 16),
            compressedFabricID: fabric.compressedFabricID)
        try await sender.send(group: Self.hall, command: 0x01, counter: 103, key: stranger)
        // All three are dropped by the message layer (each counted when it is dropped).
        let manager = running.server.exchangeManager
        #expect(
            await until(manager.metricsChanges()) {
                let metrics = await manager.metrics()
                // No key for 0x0102; the stranger's session ID.
                return metrics.droppedDuplicate >= 1 && metrics.droppedUnknownSession >= 2
            })
        #expect(server.groupInvokes.messagesHandled == 2)
        #expect(try await onOffValue(commissioner, session) == false)

        // A fresh counter works again; Toggle too (the group acts once per message).
        try await sender.send(group: Self.hall, command: 0x02, counter: 104)  // Toggle
        #expect(await until(running.node.changes) { (try? await onOffValue(commissioner, session)) == true })
        // No datagram ever went back to the sender: group messages are neither acked nor answered.
        #expect(await sender.received == 0)

        await running.stop()
        await commissioner.stop()
    }

    /// Key set 0x01A1 (TrustFirst, one epoch key), GroupKeyMap hall → 0x01A1, AddGroup on ep 1.
    static func putEndpointOneInHall(_ commissioner: LoopbackCommissioner, _ session: SessionInfo) async throws {
        let keySet = groupKeySet(0x01A1, epochKey: Self.epochKey, startTime: 1_110_000)
        #expect(try await commissioner.status(session, 0, Self.groupKeyManagement, 0x00, fields((0, keySet))) == .success)
        #expect(try await commissioner.write(session, [groupKeyMapWrite(group: Self.hall, keySet: 0x01A1)]) == [.success])
        let added = try await commissioner.call(session, 1, Self.groups, 0x00, fields((0, u(Self.hall)), (1, .utf8("Hall"))))
        #expect(added[context: 0]?.uintValue == 0)
    }

    /// Grants the group Operate (Group auth mode, subject = group ID), keeping the admin entry.
    static func grantHallOperate(_ commissioner: LoopbackCommissioner, _ session: SessionInfo) async throws {
        let acl = AttributePath(endpoint: 0, cluster: Self.accessControl, attribute: AttributeID(0x0000))
        let entries = TLVValue.array([
            TLVElement(
                .structure([
                    TLVElement(tag: .context(1), .unsigned(5)), TLVElement(tag: .context(2), .unsigned(2)),
                    TLVElement(tag: .context(3), .array([TLVElement(.unsigned(commissioner.adminNodeID))])),
                    TLVElement(tag: .context(4), .null),
                ])),
            TLVElement(
                .structure([
                    TLVElement(tag: .context(1), .unsigned(3)), TLVElement(tag: .context(2), .unsigned(3)),
                    TLVElement(tag: .context(3), .array([TLVElement(.unsigned(UInt64(Self.hall)))])),
                    TLVElement(tag: .context(4), .null),
                ])),
        ])
        #expect(try await commissioner.write(session, [AttributeDataIB(path: AttributePathIB(acl), data: entries)]) == [.success])
    }

    /// The hall's operational group key on the node's (first) fabric.
    static func hallKey(_ node: MatterNode) async throws -> GroupOperationalKey {
        let fabric = try #require(await node.fabrics.first)
        return try GroupOperationalKey(
            fabricIndex: fabric.index, keySetID: 0x01A1, groupIDs: [Self.hall],
            epochKey: Self.epochKey, compressedFabricID: fabric.compressedFabricID)
    }

    /// Issue #37 item 5: group counters are trust-first, and were kept only in memory: after a
    /// restart one captured group "On" switched the light on again. The node now keeps each
    /// sender's counter in its state directory: the same bytes after a restart are a duplicate,
    /// dropped and counted, and the sender's next counter acts.
    @Test func aGroupMessageCapturedBeforeARestartIsADuplicateAfterIt() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        var running = try await RunningNode.start(stateDirectory: directory)
        #expect(await running.commissionable())
        let commissioned = try await commissioner.commission(try running.address, passcode: testPasscode)
        var session = commissioned.caseSession
        try await Self.putEndpointOneInHall(commissioner, session)
        try await Self.grantHallOperate(commissioner, session)

        let key = try await Self.hallKey(running.node)
        let sender = try await GroupSender.open(key: key, sourceNodeID: commissioner.adminNodeID, to: try running.address)
        try await sender.send(group: Self.hall, command: 0x01, counter: 500)  // On: the message captured
        #expect(await until(running.node.changes) { (try? await onOffValue(commissioner, session)) == true })
        #expect(try await commissioner.status(session, 1, Self.onOff, 0x00) == .success)  // Off
        await sender.close()

        await running.stop()
        running = try await RunningNode.start(stateDirectory: directory)
        session = try await commissioner.caseSession(try running.address, deviceNodeID: commissioned.deviceNodeID)
        #expect(try await onOffValue(commissioner, session) == false)

        let manager = running.server.exchangeManager
        let duplicatesBefore = await manager.metrics().droppedDuplicate
        let replayer = try await GroupSender.open(key: key, sourceNodeID: commissioner.adminNodeID, to: try running.address)
        defer { PendingCleanups.run { await replayer.close() } }
        try await replayer.send(group: Self.hall, command: 0x01, counter: 500)
        #expect(
            await until(manager.metricsChanges()) { await manager.metrics().droppedDuplicate > duplicatesBefore },
            "the replay was not dropped as a duplicate")
        let server = running.server.interactionServer
        #expect(server.groupInvokes.messagesHandled == 0)
        #expect(try await onOffValue(commissioner, session) == false)

        try await replayer.send(group: Self.hall, command: 0x02, counter: 501)  // Toggle
        #expect(await until(running.node.changes) { (try? await onOffValue(commissioner, session)) == true })
        #expect(server.groupInvokes.messagesHandled == 1)

        await running.stop()
        await commissioner.stop()
    }

    /// Issue #37, the groupcast port: group messages go to port 5540 (spec 4.16), and with no
    /// node of the process on 5540 (`matter-sim home --base-port 5600`) one sent there by
    /// unicast, as a sender on loopback does, reached no node. Each node off 5540 now listens
    /// there too, and the one the kernel hands the datagram to passes it to the others.
    @Test func nodesOffPort5540ActOnAGroupMessageSentTo5540() async throws {
        let host = "127.0.0.37"
        let commissioner = try await LoopbackCommissioner.start()
        var lights: [(running: RunningNode, session: SessionInfo, directory: URL)] = []
        for deviceNodeID: NodeID in [0x4D0A, 0x4D0B] {
            let directory = temporaryDirectory()
            let running = try await RunningNode.start(stateDirectory: directory) { $0.binding = .addresses([host]) }
            #expect(running.server.port != GroupMulticast.port)
            #expect(await running.commissionable())
            let address = try SocketAddress(ipAddress: host, port: running.server.port)
            let session = try await commissioner.commission(address, passcode: testPasscode, deviceNodeID: deviceNodeID).caseSession
            try await Self.putEndpointOneInHall(commissioner, session)
            try await Self.grantHallOperate(commissioner, session)
            lights.append((running, session, directory))
        }
        defer { for light in lights { try? FileManager.default.removeItem(at: light.directory) } }

        let key = try await Self.hallKey(lights[0].running.node)
        let sender = try await GroupSender.open(
            key: key, sourceNodeID: commissioner.adminNodeID, to: try SocketAddress(ipAddress: host, port: GroupMulticast.port))
        defer { PendingCleanups.run { await sender.close() } }
        try await sender.send(group: Self.hall, command: 0x01, counter: 700)  // On
        for light in lights {
            #expect(await until(light.running.node.changes) { (try? await onOffValue(commissioner, light.session)) == true })
        }

        for light in lights { await light.running.stop() }
        await commissioner.stop()
    }

    private func onOffValue(_ commissioner: LoopbackCommissioner, _ session: SessionInfo) async throws -> Bool? {
        guard case .success(let value) = try await commissioner.read(session, 1, Self.onOff, 0x0000) else { return nil }
        return value.boolValue
    }
}

/// Sends group messages to one node over UDP, as a controller's groupcast would arrive
/// (unicast here: the node's receive path does not depend on the destination address).
actor GroupSender {
    let key: GroupOperationalKey
    let sourceNodeID: NodeID
    let destination: SocketAddress
    let udp: UDPTransport
    private var reader: Task<Int, Never>?

    init(key: GroupOperationalKey, sourceNodeID: NodeID, destination: SocketAddress, udp: UDPTransport) {
        self.key = key
        self.sourceNodeID = sourceNodeID
        self.destination = destination
        self.udp = udp
    }

    static func open(key: GroupOperationalKey, sourceNodeID: NodeID, to destination: SocketAddress) async throws -> GroupSender {
        let udp = try await UDPTransport.bind(UDPTransport.Configuration(port: 0, binding: .addresses(["127.0.0.1"])))
        let sender = GroupSender(key: key, sourceNodeID: sourceNodeID, destination: destination, udp: udp)
        await sender.startReading()
        return sender
    }

    private func startReading() {
        let inbound = udp.inbound
        reader = Task {
            var count = 0; for await _ in inbound { count += 1 }; return count
        }
    }

    /// Datagrams that came back (read after `close`).
    var received: Int {
        get async {
            await udp.close()
            return await reader?.value ?? 0
        }
    }

    func send(group: UInt16, command: UInt32, counter: UInt32, key other: GroupOperationalKey? = nil) throws {
        let key = other ?? self.key
        let invoke = InvokeRequestMessage(
            suppressResponse: true,
            invokeRequests: [
                CommandDataIB(
                    path: CommandPathIB(endpoint: nil, cluster: ClusterID(0x0006), command: CommandID(command)), fields: .structure([]))
            ])
        let protocolHeader = ProtocolHeader(
            isInitiator: true, opcode: InteractionOpcode.invokeRequest.rawValue,
            exchangeID: UInt16(truncatingIfNeeded: counter), protocolID: .interactionModel)
        let header = MessageHeader(
            sessionID: key.sessionID, messageCounter: counter, sourceNodeID: sourceNodeID,
            destination: .group(group), sessionType: .group)
        udp.send(
            try key.seal(header: header, protocolMessage: try protocolHeader.encoded(payload: try invoke.encoded())),
            to: destination)
    }

    func close() async { await udp.close() }
}
