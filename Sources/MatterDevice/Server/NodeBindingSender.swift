import Logging
import MatterCrypto
import MatterDNSSD
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore

/// Where a node on a fabric listens: (compressed fabric ID, node ID) → address, or nil.
public typealias OperationalAddressLookup = @Sendable (_ compressedFabricID: UInt64, _ node: NodeID) async -> SocketAddress?

/// Sends the node's bound commands (a light switch's press, `MatterNode.boundCommands`) to their
/// targets as a real switch does (Core spec 9.6): the node is the CASE initiator
/// (`CASEInitiator`, the controller's) on the fabric that wrote the binding, keeps the session
/// per target node, and sends one Invoke on it. The target's address comes from `lookup`, or
/// from its operational DNS-SD record (`_matter._tcp`, `<compressed fabric ID>-<node ID>`).
actor NodeBindingSender {
    /// How long the target may take to answer the Invoke, and each CASE step.
    static let responseTimeout = Duration.seconds(8)

    private struct Peer: Hashable {
        var fabric: FabricIndex
        var node: NodeID
    }

    private let manager: ExchangeManager
    private let fabrics: NodeFabricProvider
    private let lookup: OperationalAddressLookup?
    private let logger: Logger
    private var sessions: [Peer: SessionHandle] = [:]
    private var resumptions: [Peer: CASEInitiator.Resumption] = [:]
    private var browser: DNSSDBrowser?

    init(manager: ExchangeManager, fabrics: NodeFabricProvider, lookup: OperationalAddressLookup?, logger: Logger) {
        self.manager = manager
        self.fabrics = fabrics
        self.lookup = lookup
        self.logger = logger
    }

    /// Sends one bound command; the target's status, or why it could not be sent.
    func send(_ command: BoundCommand) async -> Result<InteractionStatus, BindingSendError> {
        let peer = Peer(fabric: command.fabricIndex, node: command.node)
        // A session that turned out dead is dropped and the command goes once more on a new one.
        for attempt in 0..<2 {
            let session: SessionHandle
            switch await self.session(peer) {
            case .success(let s): session = s
            case .failure(let error): return .failure(error)
            }
            do {
                return .success(try await invoke(command, on: session))
            } catch {
                sessions[peer] = nil
                if attempt == 1 { return .failure(BindingSendError("\(command): \(error)")) }
            }
        }
        return .failure(BindingSendError("\(command): not sent"))
    }

    private func session(_ peer: Peer) async -> Result<SessionHandle, BindingSendError> {
        if let known = sessions[peer], await manager.sessionInfo(known) != nil { return .success(known) }
        guard let fabric = await fabrics.operationalFabrics().first(where: { $0.fabricIndex == peer.fabric }) else {
            return .failure(BindingSendError("fabric \(peer.fabric) of the binding is not on this node any more"))
        }
        let compressed: UInt64
        do {
            compressed = try FabricKeys.compressedFabricIDValue(rootPublicKey: fabric.rootPublicKey, fabricID: fabric.fabricID)
        } catch {
            return .failure(BindingSendError("fabric \(peer.fabric): \(error)"))
        }
        guard let address = await address(compressed, peer.node) else {
            return .failure(BindingSendError("node 0x\(String(peer.node, radix: 16)) was not found on the network"))
        }
        let initiator = CASEInitiator(manager: manager, stepTimeout: Self.responseTimeout)
        if let resumption = resumptions[peer],
            let resumed = try? await initiator.establish(with: address, peerNodeID: peer.node, fabric: fabric, resumption: resumption)
        {
            return .success(keep(resumed, for: peer))
        }
        do {
            let result = try await initiator.establish(with: address, peerNodeID: peer.node, fabric: fabric)
            return .success(keep(result, for: peer))
        } catch {
            return .failure(BindingSendError("CASE with node 0x\(String(peer.node, radix: 16)) at \(address): \(error)"))
        }
    }

    private func keep(_ result: CASEInitiator.Result, for peer: Peer) -> SessionHandle {
        sessions[peer] = result.session.handle
        resumptions[peer] = result.resumption
        return result.session.handle
    }

    private func address(_ compressed: UInt64, _ node: NodeID) async -> SocketAddress? {
        if let lookup { return await lookup(compressed, node) }
        do {
            if browser == nil { browser = try DNSSDBrowser(logger: logger) }
            guard let browser else { return nil }
            let name = MatterOperationalRecord.instanceName(compressedFabricID: compressed, nodeID: node)
            let service = try await browser.resolve(instanceName: name, type: MatterOperationalRecord.serviceType, timeout: .seconds(5))
            return service.addresses.sorted().lazy.compactMap { try? SocketAddress(ipAddress: $0.text, port: Int(service.port)) }.first
        } catch {
            logger.info("bound node 0x\(String(node, radix: 16)): no operational record (\(error))")
            return nil
        }
    }

    /// One Invoke and its response (Core spec 8.8): the command's status, or the response's.
    private func invoke(_ command: BoundCommand, on session: SessionHandle) async throws -> InteractionStatus {
        let exchange = try await SessionChannel(manager: manager, session: session).openExchange()
        defer { Task { await exchange.close() } }
        let request = InvokeRequestMessage(invokeRequests: [CommandDataIB(path: CommandPathIB(command.path), fields: command.fields)])
        try await exchange.send(request)
        let answer = try await exchange.receive(within: Self.responseTimeout)
        if answer.opcode == InteractionOpcode.statusResponse.rawValue {
            return InteractionStatus((try? StatusResponseMessage(payload: answer.payload))?.status ?? .failure)
        }
        let response = try InvokeResponseMessage(payload: answer.payload)
        switch response.invokeResponses.first {
        case .status(let status): return status.status.status
        case .command: return InteractionStatus(.success)
        case nil: return InteractionStatus(.failure)
        }
    }
}

/// Why a bound command was not delivered.
public struct BindingSendError: Error, Sendable, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
