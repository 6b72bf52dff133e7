import Foundation
import Logging
import MatterCrypto
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
import NIOCore
import TestWaiting

// Test-only glue: a MatterNode served on loopback UDP through MatterProtocol's
// responders (SecureChannelServer for PASE/CASE, InteractionServer for the IM), so the
// controller under test speaks real Matter to a real node. It stands in until
// MatterDevice ships its own node server.

/// One simulated device on 127.0.0.1, commissionable with `passcode`.
package final class TestDevice: Sendable {
    package let node: MatterNode
    package let transport: UDPTransport
    /// The device's LAN cable: `lanDown()` drops its datagrams both ways.
    package let lan: SwitchedTransport
    package let manager: ExchangeManager
    package let secureChannel: SecureChannelServer
    package let passcode: UInt32
    package let discriminator: UInt16
    private let tasks: NIOLockedValueBox<[Task<Void, Never>]>
    private let servers: SessionServers

    package var port: Int { transport.port }
    package var address: SocketAddress { try! SocketAddress(ipAddress: "127.0.0.1", port: transport.port) }

    package static func start(
        _ description: NodeDescription, passcode: UInt32 = 20202021, discriminator: UInt16 = 3840,
        vendorID: UInt16 = 0xFFF1, productID: UInt16 = 0x8001, deviceTypeID: UInt32 = 0x0100,
        stateDirectory: URL? = nil, port: Int = 0, cloudOnly: Set<ClusterID> = []
    ) async throws -> TestDevice {
        let store = try stateDirectory.map { try NodeStateStore(directory: $0) }
        let credentials = try DeviceAttestationProvisioning.loadOrMint(
            store: store, vendorID: vendorID, productID: productID, deviceTypeID: deviceTypeID, authority: testAuthority)
        let configuration = CommissioningConfiguration(stateStore: store, attestation: credentials)
        var logger = Logger(label: "test.device")
        logger.logLevel = .critical
        let node = try MatterNode(description: description, logger: logger, commissioning: configuration)
        let transport = try await UDPTransport.bind(.init(port: port, binding: .addresses(["127.0.0.1"])))
        let lan = SwitchedTransport(transport)
        let manager = ExchangeManager(transport: lan, logger: logger)
        let secureChannel = SecureChannelServer(manager: manager, fabrics: NodeFabrics(node: node), logger: logger)
        await manager.register(secureChannel, for: .secureChannel)
        let servers = SessionServers(node: node, logger: logger, lanHidden: cloudOnly)
        await manager.register(servers, for: .interactionModel)
        let device = TestDevice(
            node: node, transport: transport, lan: lan, manager: manager, secureChannel: secureChannel,
            passcode: passcode, discriminator: discriminator, servers: servers)
        try await device.startTasks()
        if await node.fabrics.isEmpty { await node.openCommissioningWindow(timeout: nil) }
        return device
    }

    private init(
        node: MatterNode, transport: UDPTransport, lan: SwitchedTransport, manager: ExchangeManager, secureChannel: SecureChannelServer,
        passcode: UInt32, discriminator: UInt16, servers: SessionServers
    ) {
        self.node = node
        self.transport = transport
        self.lan = lan
        self.manager = manager
        self.secureChannel = secureChannel
        self.passcode = passcode
        self.discriminator = discriminator
        self.servers = servers
        self.tasks = NIOLockedValueBox([])
    }

    private func startTasks() async throws {
        let verifier = try PASEVerifierParameters(passcode: passcode, salt: Array("SPAKE2P Key Salt".utf8))
        let events = node.commissioningEvents
        let sessionEvents = manager.sessionEvents()
        let manager = self.manager, node = self.node, secureChannel = self.secureChannel, servers = self.servers
        let run = Task { await manager.run() }
        let commissioning = Task {
            for await event in events {
                switch event {
                case .commissioningWindowOpened:
                    await secureChannel.openCommissioningWindow(verifier)
                case .commissioningWindowClosed:
                    await secureChannel.closeCommissioningWindow()
                case .paseSessionAdoptedFabric(let session, let fabricIndex):
                    if let handle = servers.handle(for: session) {
                        await manager.bindFabric(fabricIndex, toSession: handle)
                    }
                case .closePASESessions:
                    for info in await manager.allSessions() where info.kind == .pase {
                        await manager.closeSession(info.handle, notifyPeer: true)
                    }
                case .closeSessions(let fabricIndex, _):
                    await manager.closeSessions(fabricIndex: fabricIndex, notifyPeer: true)
                default:
                    break
                }
            }
        }
        let sessions = Task {
            for await event in sessionEvents {
                switch event {
                case .established(let info) where info.kind == .pase:
                    await node.paseSessionEstablished(servers.context(for: info))
                case .closed(let info, _):
                    if let id = servers.forget(info.handle) { await node.sessionClosed(id) }
                default:
                    break
                }
            }
        }
        tasks.withLockedValue { $0 = [run, commissioning, sessions] }
        // The window-opened event of the node's boot was published before we listened.
        if await node.commissioningWindow != nil { await secureChannel.openCommissioningWindow(verifier) }
    }

    /// Powers the device off: the socket closes, nothing answers any more.
    package func stop() async {
        for t in tasks.withLockedValue({ $0 }) { t.cancel() }
        servers.stopAll()
        await transport.close()
        await node.stop()
    }

    /// Changes an attribute from the device's side (as a person at the device would).
    package func set(_ path: AttributePath, _ value: TLVValue) async -> InteractionStatus {
        await node.write(path, value: value, session: nil)
    }

    package func value(_ path: AttributePath) async -> TLVValue? {
        try? await node.read(path).get().value
    }
}

/// The node's fabrics, for CASE.
package struct NodeFabrics: FabricProvider {
    package let node: MatterNode

    package init(node: MatterNode) { self.node = node }

    package func operationalFabrics() async -> [OperationalFabric] {
        await node.fabrics.compactMap { f in
            guard let key = try? P256KeyPair(rawPrivateKey: [UInt8](f.operationalPrivateKey)) else { return nil }
            return try? OperationalFabric(
                fabricIndex: f.index, nodeID: f.nodeID, rootCertificate: [UInt8](f.rootCertificate),
                noc: [UInt8](f.nodeOperationalCertificate),
                icac: f.intermediateCertificate.map { [UInt8]($0) },
                ipkEpochKey: [UInt8](f.ipkEpochKey), operationalKey: key)
        }
    }
}

/// One InteractionServer per secure session, so the node sees each request's session
/// (its ID and attestation challenge), which the provider protocol does not carry.
package final class SessionServers: ProtocolHandler {
    package struct Entry {
        let id: SessionID
        let server: InteractionServer
        let runner: Task<Void, Never>
    }
    package let node: MatterNode
    package let logger: Logger
    /// Cloud-only clusters, which the LAN view of the node hides.
    package let lanHidden: Set<ClusterID>
    private let state = NIOLockedValueBox<(next: UInt64, entries: [SessionHandle: Entry], contexts: [SessionHandle: SessionID])>(
        (1, [:], [:]))
    /// SubscribeRequests answered so far (priming report and SubscribeResponse sent).
    package let subscribeRequests = Watched(0)

    package init(node: MatterNode, logger: Logger, lanHidden: Set<ClusterID> = []) {
        self.node = node
        self.logger = logger
        self.lanHidden = lanHidden
    }

    package func sessionID(_ handle: SessionHandle) -> SessionID {
        state.withLockedValue { s in
            if let id = s.contexts[handle] { return id }
            let id = SessionID(s.next)
            s.next += 1
            s.contexts[handle] = id
            return id
        }
    }

    package func handle(for id: SessionID) -> SessionHandle? {
        state.withLockedValue { s in s.contexts.first { $0.value == id }?.key }
    }

    package func context(for info: SessionInfo) -> SessionContext {
        let subject: SubjectDescriptor =
            info.kind == .case
            ? SubjectDescriptor(
                authMode: .case, fabricIndex: info.fabricIndex, subject: info.peerNodeID, caseAuthenticatedTags: info.caseAuthenticatedTags)
            : .pase(fabricIndex: info.fabricIndex)
        return SessionContext(id: sessionID(info.handle), subject: subject, attestationChallenge: info.attestationChallenge)
    }

    package func forget(_ handle: SessionHandle) -> SessionID? {
        state.withLockedValue { s in
            if let e = s.entries.removeValue(forKey: handle) { e.runner.cancel() }
            return s.contexts.removeValue(forKey: handle)
        }
    }

    package func stopAll() {
        state.withLockedValue { s in
            for e in s.entries.values { e.runner.cancel() }
            s.entries = [:]
        }
    }

    package func handle(exchange: Exchange, first message: Message) async {
        guard message.session.isSecure else { return }
        // Re-read the session: AddNOC may have bound a fabric to it since it was made.
        let info = await exchange.manager.sessionInfo(exchange.session.handle) ?? exchange.session
        let base = NodeSessionProvider(node: node, context: context(for: info))
        let provider: any InteractionDataProvider = lanHidden.isEmpty ? base : LANViewProvider(base: base, hidden: lanHidden)
        // A fresh server per exchange keeps the session's current context; subscriptions
        // are served by the runner of the server that accepted them.
        let server = InteractionServer(provider: provider, logger: logger)
        let runner = Task { await server.run() }
        await server.handle(opcode: message.opcode, payload: message.payload, on: exchange)
        if message.opcode == InteractionOpcode.subscribeRequest.rawValue {
            let id = sessionID(info.handle)
            state.withLockedValue { s in
                s.entries[info.handle]?.runner.cancel()
                s.entries[info.handle] = Entry(id: id, server: server, runner: runner)
            }
            subscribeRequests.update { $0 += 1 }
        } else {
            runner.cancel()
        }
    }
}

/// The node as the Interaction Model sees it, for one session.
package struct NodeSessionProvider: InteractionDataProvider {
    package let node: MatterNode
    package let context: SessionContext

    package init(node: MatterNode, context: SessionContext) {
        self.node = node
        self.context = context
    }

    package func endpoints() async -> [EndpointNumber] { node.composition.endpoints }
    package func clusters(on endpoint: EndpointNumber) async -> [ClusterID] { node.composition.clusters(on: endpoint) }

    package func attributes(of cluster: ClusterPath) async -> [AttributeMetadata] {
        let definition = node.composition.definition(of: cluster)
        return node.composition.attributes(of: cluster).map { id in
            let a = definition?.attribute(id)
            return AttributeMetadata(
                id: id, readPrivilege: a?.readPrivilege ?? .view, writePrivilege: a?.writePrivilege,
                requiresTimedWrite: a?.timedWrite ?? false, isFabricScoped: a?.fabricScoped ?? false)
        }
    }

    package func commands(of cluster: ClusterPath) async -> [CommandMetadata] {
        let definition = node.composition.definition(of: cluster)
        return node.composition.acceptedCommands(of: cluster).map { id in
            let c = definition?.command(id)
            return CommandMetadata(
                id: id, invokePrivilege: c?.invokePrivilege ?? .operate,
                requiresTimedInvoke: c?.timed ?? false, isFabricScoped: c?.fabricScoped ?? false)
        }
    }

    package func dataVersion(of cluster: ClusterPath) async -> DataVersion? { await node.dataVersion(of: cluster) }

    package func checkAccess(_ subject: SubjectDescriptor, to cluster: ClusterPath, privilege: Privilege) async -> Bool {
        await node.canAccess(context.subject, cluster, privilege: privilege)
    }

    package func read(
        _ path: AttributePath, context readContext: AttributeReadContext
    ) async -> Result<VersionedAttributeValue, InteractionStatus> {
        await node.read(path, session: context, fabricFiltered: readContext.isFabricFiltered)
            .map { VersionedAttributeValue($0.value, dataVersion: $0.dataVersion) }
    }

    package func write(
        _ path: AttributePath, _ operation: AttributeWriteOperation, context writeContext: InteractionContext
    ) async -> InteractionStatus {
        switch operation {
        case .replace(let value): await node.write(path, value: value, session: context, timed: writeContext.isTimed)
        case .appendItem: InteractionStatus(.unsupportedWrite)
        }
    }

    package func invoke(_ path: ConcreteCommandPath, fields: TLVValue?, context invokeContext: InteractionContext) async -> CommandOutcome {
        let result = await node.invoke(
            CommandPath(endpoint: path.endpoint, cluster: path.cluster, command: path.command),
            fields: fields ?? .structure([]), session: context, timed: invokeContext.isTimed)
        switch result {
        case .status(let s): return .status(s)
        case .response(let id, let value): return .response(id, value)
        }
    }

    package func events(matching paths: [EventPathIB], minimumEventNumber: UInt64?, subject: SubjectDescriptor) async -> [EventReportIB] {
        await node.events(matching: paths, from: minimumEventNumber ?? 0).map { .data($0.dataIB) }
    }

    package func recordedEvents() -> AsyncStream<EventPathIB> {
        let recorded = node.recordedEvents
        return AsyncStream { continuation in
            let task = Task {
                for await event in recorded { continuation.yield(event.path) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    package func attributeChanges() -> AsyncStream<AttributePath> {
        let changes = node.changes
        return AsyncStream { continuation in
            let task = Task {
                for await change in changes { continuation.yield(change.path) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}

extension TestDevice {
    /// The node's attribute changes from now on: a test waits on them for a value to show.
    package func attributeChanges() -> AsyncStream<AttributeChange> { node.changes }

    /// Waits (bounded by `limit` of real time) until the device has answered `count`
    /// SubscribeRequests: a controller's subscription is primed and established.
    package func untilSubscribed(_ count: Int = 1, within limit: Duration = .seconds(10)) async -> Bool {
        await servers.subscribeRequests.until(within: limit) { $0 >= count }
    }

    /// Invokes a command from the device's own side (a button on the device).
    package func press(
        _ cluster: ClusterID, _ command: UInt32, endpoint: EndpointNumber = 1, fields: TLVValue = .structure([])
    ) async -> InvokeResult {
        await node.invoke(CommandPath(endpoint: endpoint, cluster: cluster, command: CommandID(command)), fields: fields, session: nil)
    }
}

/// Records everything an async sequence yields, so a test can wait (boundedly) for an
/// element without cancelling the sequence.
package final class EventLog<Element: Sendable>: Sendable {
    private let items = Watched<[Element]>([])
    private let task: Task<Void, Never>

    package init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        let items = self.items
        task = Task {
            do {
                for try await element in sequence { items.update { $0.append(element) } }
            } catch {}
        }
    }

    package var all: [Element] { items.value }

    /// The first recorded element at or after index `from` matching `predicate`, waiting (woken
    /// by each new element) up to `limit` of real time.
    package func waitFor(from: Int = 0, within limit: Duration = .seconds(10), _ predicate: (Element) -> Bool) async -> Element? {
        func hit() -> Element? {
            let snapshot = all
            return from < snapshot.count ? snapshot[from...].first(where: predicate) : nil
        }
        _ = await items.until(within: limit) { _ in hit() != nil }
        return hit()
    }

    package func stop() { task.cancel() }
}
