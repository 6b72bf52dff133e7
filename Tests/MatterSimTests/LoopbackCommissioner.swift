import Foundation
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore
import Synchronization

// A commissioner on loopback UDP built only from the protocol stack's own pieces:
// PASEInitiator and CASEInitiator for sessions, Interaction Model messages on exchanges,
// and MatterCrypto for its fabric's root CA (RCAC) and the NOCs it issues from CSRs.

/// A UDP transport that remembers every datagram it sent (a corpus for the fuzz test).
final class RecordingTransport: DatagramTransport {
    let udp: UDPTransport
    private let log = Mutex<[[UInt8]]>([])

    init(_ udp: UDPTransport) { self.udp = udp }

    var inbound: AsyncStream<InboundDatagram> { udp.inbound }
    var inboundOverflowCount: UInt64 { udp.inboundOverflowCount }
    var sent: [[UInt8]] { log.withLock { $0 } }

    func send(_ bytes: [UInt8], to address: SocketAddress) {
        log.withLock { $0.append(bytes) }
        udp.send(bytes, to: address)
    }
}

struct CommissionerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Context-tagged command fields.
func fields(_ members: (UInt8, TLVValue)...) -> TLVValue {
    .structure(members.map { TLVElement(tag: .context($0.0), $0.1) })
}

func u(_ value: some BinaryInteger) -> TLVValue { .unsigned(UInt64(value)) }

/// A KeySetWrite GroupKeySetStruct with one epoch key (TrustFirst), the other two slots null.
func groupKeySet(_ id: UInt16, epochKey: [UInt8], startTime: UInt64) -> TLVValue {
    .structure([
        TLVElement(tag: .context(0), .unsigned(UInt64(id))), TLVElement(tag: .context(1), .unsigned(0)),
        TLVElement(tag: .context(2), .bytes(epochKey)), TLVElement(tag: .context(3), .unsigned(startTime)),
        TLVElement(tag: .context(4), .null), TLVElement(tag: .context(5), .null),
        TLVElement(tag: .context(6), .null), TLVElement(tag: .context(7), .null),
    ])
}

/// GroupKeyManagement's GroupKeyMap (root endpoint) written with one group → key set entry.
func groupKeyMapWrite(group: UInt16, keySet: UInt16) -> AttributeDataIB {
    let map = AttributePath(endpoint: 0, cluster: ClusterID(0x003F), attribute: AttributeID(0x0000))
    let entry = TLVValue.array([
        TLVElement(
            .structure([
                TLVElement(tag: .context(1), .unsigned(UInt64(group))), TLVElement(tag: .context(2), .unsigned(UInt64(keySet))),
            ]))
    ])
    return AttributeDataIB(path: AttributePathIB(map), data: entry)
}

enum ClusterIDs {
    static let onOff = ClusterID(0x0006)
    static let levelControl = ClusterID(0x0008)
    static let basicInformation = ClusterID(0x0028)
    static let accessControl = ClusterID(0x001F)
    static let generalCommissioning = ClusterID(0x0030)
    static let administratorCommissioning = ClusterID(0x003C)
    static let operationalCredentials = ClusterID(0x003E)
}

final class LoopbackCommissioner: Sendable {
    let transport: RecordingTransport
    let manager: ExchangeManager
    private let runner: Task<Void, Never>

    let fabricID: UInt64 = 0x2906_C908_D115_D362
    let adminNodeID: NodeID = 0x0000_0000_1122_3344
    let vendorID: UInt16 = 0xFFF1
    let rootKey = P256KeyPair()
    let root: MatterCertificate
    let adminKey = P256KeyPair()
    let adminNOC: MatterCertificate
    let ipkEpochKey = SecureRandom.bytes(16)

    private init(transport: RecordingTransport, manager: ExchangeManager, runner: Task<Void, Never>) throws {
        self.transport = transport
        self.manager = manager
        self.runner = runner
        root = try MatterCertificateIssuer.issueRoot(key: rootKey, rcacID: 1, fabricID: fabricID, notBefore: 0)
        adminNOC = try MatterCertificateIssuer.issueNode(
            publicKey: adminKey.publicKey, nodeID: adminNodeID, fabricID: fabricID,
            issuer: root, issuerKey: rootKey, notBefore: 0)
    }

    static func start() async throws -> LoopbackCommissioner {
        let udp = try await UDPTransport.bind(UDPTransport.Configuration(port: 0, binding: .addresses(["127.0.0.1"])))
        let transport = RecordingTransport(udp)
        let manager = ExchangeManager(transport: transport)
        let runner = Task { await manager.run() }
        return try LoopbackCommissioner(transport: transport, manager: manager, runner: runner)
    }

    func stop() async {
        runner.cancel()
        await transport.udp.close()
    }

    /// Our side of the fabric, as CASE needs it.
    func operationalFabric(fabricIndex: FabricIndex = 1) throws -> OperationalFabric {
        try OperationalFabric(
            fabricIndex: fabricIndex, nodeID: adminNodeID, rootCertificate: root.tlvEncoded,
            noc: adminNOC.tlvEncoded, icac: nil, ipkEpochKey: ipkEpochKey, operationalKey: adminKey)
    }

    func pase(_ address: SocketAddress, passcode: UInt32, stepTimeout: Duration = .seconds(10)) async throws -> SessionInfo {
        try await PASEInitiator(manager: manager, stepTimeout: stepTimeout).establish(with: address, passcode: passcode)
    }

    func caseSession(_ address: SocketAddress, deviceNodeID: NodeID) async throws -> SessionInfo {
        try await CASEInitiator(manager: manager, stepTimeout: .seconds(10))
            .establish(with: address, peerNodeID: deviceNodeID, fabric: try operationalFabric()).session
    }

    // MARK: Interaction Model client

    /// One command; the InvokeResponseIB the node answered with. `timed` sends a Timed
    /// Request first, on the same exchange.
    func invoke(
        _ session: SessionInfo, _ endpoint: EndpointNumber, _ cluster: ClusterID, _ command: UInt32,
        _ commandFields: TLVValue = .structure([]), timed: Bool = false
    ) async throws -> InvokeResponseIB {
        let request = InvokeRequestMessage(
            timedRequest: timed,
            invokeRequests: [
                CommandDataIB(
                    path: CommandPathIB(endpoint: endpoint, cluster: cluster, command: CommandID(command)), fields: commandFields)
            ])
        let exchange = try await manager.openExchange(session: session.handle, protocolID: .interactionModel)
        do {
            if timed {
                let answer = try await exchange.request(
                    opcode: InteractionOpcode.timedRequest.rawValue,
                    payload: TimedRequestMessage(timeout: 2000).encoded(), timeout: .seconds(10))
                let status = try StatusResponseMessage(payload: answer.payload).status
                guard status == .success else { throw CommissionerError("TimedRequest answered \(status)") }
            }
            let reply = try await exchange.request(
                opcode: InteractionOpcode.invokeRequest.rawValue, payload: request.encoded(),
                timeout: .seconds(10))
            await exchange.close()
            guard reply.opcode == InteractionOpcode.invokeResponse.rawValue else {
                throw CommissionerError("invoke \(cluster)/\(command): answered opcode \(reply.opcode)")
            }
            let response = try InvokeResponseMessage(payload: reply.payload)
            guard let first = response.invokeResponses.first else { throw CommissionerError("empty InvokeResponse") }
            return first
        } catch {
            await exchange.close()
            throw error
        }
    }

    /// A command that must answer with a response command: its fields.
    func call(
        _ session: SessionInfo, _ endpoint: EndpointNumber, _ cluster: ClusterID, _ command: UInt32,
        _ commandFields: TLVValue = .structure([])
    ) async throws -> TLVValue {
        switch try await invoke(session, endpoint, cluster, command, commandFields) {
        case .command(let data): return data.fields ?? .structure([])
        case .status(let status): throw CommissionerError("\(cluster)/\(command) answered \(status.status)")
        }
    }

    /// A command that must answer with a status: that status.
    func status(
        _ session: SessionInfo, _ endpoint: EndpointNumber, _ cluster: ClusterID, _ command: UInt32,
        _ commandFields: TLVValue = .structure([]), timed: Bool = false
    ) async throws -> InteractionStatus {
        switch try await invoke(session, endpoint, cluster, command, commandFields, timed: timed) {
        case .command(let data): throw CommissionerError("\(cluster)/\(command) answered a command \(data.path.command)")
        case .status(let status): return status.status.status
        }
    }

    /// Reads one attribute: its value, or the status the node reported for it.
    func read(
        _ session: SessionInfo, _ endpoint: EndpointNumber, _ cluster: ClusterID, _ attribute: UInt32
    ) async throws
        -> Result<TLVValue, InteractionStatus>
    {
        let path = AttributePath(endpoint: endpoint, cluster: cluster, attribute: AttributeID(attribute))
        let reports = try await readReports(session, ReadRequestMessage(attributeRequests: [AttributePathIB(path)]), "read \(path)")
            .flatMap(\.attributeReports)
        for report in reports {
            switch report {
            case .data(let data) where data.path.concretePath == path: return .success(data.data)
            case .status(let status) where status.path.concretePath == path: return .failure(status.status.status)
            default: continue
            }
        }
        throw CommissionerError("read \(path): no report for it")
    }

    /// One read interaction: every ReportData of it, each chunk acknowledged.
    private func readReports(_ session: SessionInfo, _ request: ReadRequestMessage, _ what: String) async throws -> [ReportDataMessage] {
        let exchange = try await manager.openExchange(session: session.handle, protocolID: .interactionModel)
        do {
            var reports: [ReportDataMessage] = []
            var reply = try await exchange.request(
                opcode: InteractionOpcode.readRequest.rawValue, payload: request.encoded(),
                timeout: .seconds(10))
            while true {
                guard reply.opcode == InteractionOpcode.reportData.rawValue else {
                    throw CommissionerError("\(what): answered opcode \(reply.opcode)")
                }
                let report = try ReportDataMessage(payload: reply.payload)
                reports.append(report)
                guard report.moreChunkedMessages else { break }
                reply = try await exchange.request(
                    opcode: InteractionOpcode.statusResponse.rawValue,
                    payload: StatusResponseMessage(status: .success).encoded(), timeout: .seconds(10))
            }
            await exchange.close()
            return reports
        } catch {
            await exchange.close()
            throw error
        }
    }

    /// Reads events (EventMin when given); every event report of every chunk.
    func readEvents(_ session: SessionInfo, _ paths: [EventPathIB], eventMin: UInt64? = nil) async throws -> [EventReportIB] {
        let request = ReadRequestMessage(eventRequests: paths, eventFilters: eventMin.map { [EventFilterIB(eventMin: $0)] } ?? [])
        return try await readReports(session, request, "read events").flatMap(\.eventReports)
    }

    /// One WriteRequest; the status of each write, in order.
    func write(_ session: SessionInfo, _ writes: [AttributeDataIB]) async throws -> [InteractionStatus] {
        let request = WriteRequestMessage(writeRequests: writes)
        let exchange = try await manager.openExchange(session: session.handle, protocolID: .interactionModel)
        do {
            let reply = try await exchange.request(
                opcode: InteractionOpcode.writeRequest.rawValue, payload: request.encoded(),
                timeout: .seconds(10))
            await exchange.close()
            guard reply.opcode == InteractionOpcode.writeResponse.rawValue else {
                throw CommissionerError("write: answered opcode \(reply.opcode)")
            }
            return try WriteResponseMessage(payload: reply.payload).writeResponses.map(\.status.status)
        } catch {
            await exchange.close()
            throw error
        }
    }

    /// Subscribes to one attribute: waits for the priming report and the SubscribeResponse.
    /// Later reports arrive on exchanges the node opens; see `ReportCollector`.
    func subscribe(
        _ session: SessionInfo, _ path: AttributePath, minInterval: UInt16, maxInterval: UInt16
    ) async throws
        -> (subscriptionID: UInt32, priming: [AttributeReportIB])
    {
        try await subscribe(session, [AttributePathIB(path)], minInterval: minInterval, maxInterval: maxInterval)
    }

    func subscribe(
        _ session: SessionInfo, _ paths: [AttributePathIB], minInterval: UInt16, maxInterval: UInt16
    ) async throws
        -> (subscriptionID: UInt32, priming: [AttributeReportIB])
    {
        let (id, priming) = try await subscribe(
            session,
            SubscribeRequestMessage(
                keepSubscriptions: true, minIntervalFloor: minInterval, maxIntervalCeiling: maxInterval, attributeRequests: paths))
        return (id, priming.attributeReports)
    }

    /// Subscribes to events: the priming report's events and the subscription ID.
    func subscribeEvents(
        _ session: SessionInfo, _ paths: [EventPathIB], minInterval: UInt16, maxInterval: UInt16
    ) async throws
        -> (subscriptionID: UInt32, priming: [EventReportIB])
    {
        let (id, priming) = try await subscribe(
            session,
            SubscribeRequestMessage(
                keepSubscriptions: true, minIntervalFloor: minInterval, maxIntervalCeiling: maxInterval, eventRequests: paths))
        return (id, priming.eventReports)
    }

    /// One Subscribe interaction: the priming report (acknowledged) and the SubscribeResponse's ID.
    private func subscribe(_ session: SessionInfo, _ request: SubscribeRequestMessage) async throws -> (UInt32, ReportDataMessage) {
        let exchange = try await manager.openExchange(session: session.handle, protocolID: .interactionModel)
        do {
            let priming = try await exchange.request(
                opcode: InteractionOpcode.subscribeRequest.rawValue, payload: request.encoded(),
                timeout: .seconds(10))
            guard priming.opcode == InteractionOpcode.reportData.rawValue else {
                throw CommissionerError("subscribe: answered opcode \(priming.opcode)")
            }
            let report = try ReportDataMessage(payload: priming.payload)
            let answer = try await exchange.request(
                opcode: InteractionOpcode.statusResponse.rawValue,
                payload: StatusResponseMessage(status: .success).encoded(), timeout: .seconds(10))
            guard answer.opcode == InteractionOpcode.subscribeResponse.rawValue else {
                throw CommissionerError("subscribe: answered opcode \(answer.opcode) instead of SubscribeResponse")
            }
            let response = try SubscribeResponseMessage(payload: answer.payload)
            await exchange.close()
            return (response.subscriptionID, report)
        } catch {
            await exchange.close()
            throw error
        }
    }

    // MARK: Commissioning (Core spec 5.5)

    struct Commissioned {
        var fabricIndex: FabricIndex
        var deviceNodeID: NodeID
        var caseSession: SessionInfo
        /// The commissioner's end of the PASE session (it stays open here until closed).
        var paseSession: SessionInfo
    }

    /// PASE, ArmFailSafe, attestation of the CSR with the DAC, AddTrustedRootCertificate,
    /// AddNOC, CASE, CommissioningComplete.
    func commission(_ address: SocketAddress, passcode: UInt32, deviceNodeID: NodeID = 0x4D0A) async throws -> Commissioned {
        let pase = try await pase(address, passcode: passcode)
        let gc = ClusterIDs.generalCommissioning, opCreds = ClusterIDs.operationalCredentials

        let armed = try await call(pase, 0, gc, 0x00, fields((0, u(60)), (1, u(1))))
        guard armed[context: 0]?.uintValue == 0 else { throw CommissionerError("ArmFailSafe: \(armed)") }

        // The DAC, to check the CSR response is signed over this session's attestation challenge.
        let chain = try await call(pase, 0, opCreds, 0x02, fields((0, u(1))))
        guard let dacDER = chain[context: 0]?.bytesValue else { throw CommissionerError("CertificateChainResponse: \(chain)") }
        let dac = try AttestationCertificate(der: dacDER)
        let nonce = SecureRandom.bytes(32)
        let csrResponse = try await call(pase, 0, opCreds, 0x04, fields((0, .bytes(nonce))))
        guard let elements = csrResponse[context: 0]?.bytesValue, let signature = csrResponse[context: 1]?.bytesValue else {
            throw CommissionerError("CSRResponse: \(csrResponse)")
        }
        guard
            DeviceAttestation.verify(
                elements: elements, attestationChallenge: pase.attestationChallenge, signature: signature,
                dacPublicKey: dac.publicKey)
        else {
            throw CommissionerError("CSRResponse is not signed by the DAC over the PASE attestation challenge")
        }
        let nocsr = try DeviceAttestation.parseNOCSRElements(elements)
        guard nocsr.csrNonce == nonce else { throw CommissionerError("CSRResponse carries another nonce") }

        let rootStatus = try await status(pase, 0, opCreds, 0x0B, fields((0, .bytes(root.tlvEncoded))))
        guard rootStatus == .success else { throw CommissionerError("AddTrustedRootCertificate: \(rootStatus)") }
        let noc = try MatterCertificateIssuer.issueNode(
            csr: nocsr.csr, nodeID: deviceNodeID, fabricID: fabricID,
            issuer: root, issuerKey: rootKey, notBefore: 0)
        let nocResponse = try await call(
            pase, 0, opCreds, 0x06,
            fields(
                (0, .bytes(noc.tlvEncoded)), (2, .bytes(ipkEpochKey)), (3, u(adminNodeID)), (4, u(vendorID))))
        guard nocResponse[context: 0]?.uintValue == 0, let index = nocResponse[context: 1]?.uintValue,
            let fabricIndex = FabricIndex(exactly: index)
        else {
            throw CommissionerError("NOCResponse: \(nocResponse)")
        }

        let operational = try await caseSession(address, deviceNodeID: deviceNodeID)
        let complete = try await call(operational, 0, gc, 0x04)
        guard complete[context: 0]?.uintValue == 0 else { throw CommissionerError("CommissioningComplete: \(complete)") }
        return Commissioned(fabricIndex: fabricIndex, deviceNodeID: deviceNodeID, caseSession: operational, paseSession: pase)
    }
}

/// Receives the reports a node sends for subscriptions (each on an exchange the node
/// opens) and acknowledges them with a SUCCESS StatusResponse.
final class ReportCollector: ProtocolHandler {
    let reports: AsyncStream<ReportDataMessage>
    private let sink: AsyncStream<ReportDataMessage>.Continuation

    init() {
        (reports, sink) = AsyncStream.makeStream(of: ReportDataMessage.self)
    }

    /// The next report, or nil when none arrives within `timeout` of real time (a bound on a
    /// broken run; a wait that ran out ends the collector's stream).
    func next(within timeout: Duration) async -> ReportDataMessage? {
        let reports = self.reports
        let next = try? await withTimeLimit(timeout, on: SystemClock(), orThrow: { CancellationError() }) {
            for await report in reports { return report }
            return nil
        }
        return next ?? nil
    }

    func handle(exchange: Exchange, first message: Message) async {
        guard message.opcode == InteractionOpcode.reportData.rawValue,
            let report = try? ReportDataMessage(payload: message.payload)
        else { return }
        sink.yield(report)
        if !report.suppressResponse {
            try? await exchange.send(
                opcode: InteractionOpcode.statusResponse.rawValue,
                payload: StatusResponseMessage(status: .success).encoded())
        }
    }
}
