import MatterModel
import MatterTLV
import Testing

@testable import MatterProtocol

/// A small node: BasicInformation and OperationalCredentials on endpoint 0,
/// OnOff, a denied LevelControl, a DoorLock with timed command and attribute,
/// and a writable list on endpoint 1; a big list on endpoint 2.
func makeIMNode() async -> IMFakeNode {
    let node = IMFakeNode()
    await node.addCluster(
        ClusterPath(endpoint: 0, cluster: ClusterID(0x28)),
        attributes: [
            (AttributeMetadata(id: AttributeID(0)), .unsigned(17)),
            (AttributeMetadata(id: AttributeID(1)), .utf8("TEST_VENDOR")),
            (AttributeMetadata(id: AttributeID(5), writePrivilege: .manage), .utf8("")),
            (AttributeMetadata(id: AttributeID(0xFFFD)), .unsigned(3)),
        ])
    await node.validate(ap(0, 0x28, 5)) { value in
        (value.stringValue?.utf8.count ?? 99) <= 32 ? .success : InteractionStatus(.constraintError)
    }
    let fabrics: TLVValue = .array([
        TLVElement(.structure([.context(5, .utf8("home")), .context(0xFE, .unsigned(1))])),
        TLVElement(.structure([.context(5, .utf8("cloud")), .context(0xFE, .unsigned(2))])),
    ])
    await node.addCluster(
        ClusterPath(endpoint: 0, cluster: ClusterID(0x3E)),
        attributes: [(AttributeMetadata(id: AttributeID(1), isFabricScoped: true), fabrics)])
    await node.addCluster(
        ClusterPath(endpoint: 1, cluster: ClusterID(6)), dataVersion: 7,
        attributes: [
            (AttributeMetadata(id: AttributeID(0)), .bool(false)),
            (AttributeMetadata(id: AttributeID(0x4001), writePrivilege: .operate), .unsigned(0)),
        ],
        commands: [CommandMetadata(id: CommandID(0)), CommandMetadata(id: CommandID(1)), CommandMetadata(id: CommandID(2))])
    await node.failReads(ap(1, 6, 0x4001), with: InteractionStatus(.failure))
    await node.addCluster(
        ClusterPath(endpoint: 1, cluster: ClusterID(8)),
        attributes: [(AttributeMetadata(id: AttributeID(0), writePrivilege: .operate), .unsigned(254))])
    await node.deny(ClusterPath(endpoint: 1, cluster: ClusterID(8)))
    await node.addCluster(
        ClusterPath(endpoint: 1, cluster: ClusterID(0x101)),
        attributes: [
            (AttributeMetadata(id: AttributeID(0)), .unsigned(1)),
            (AttributeMetadata(id: AttributeID(0x21), writePrivilege: .manage, requiresTimedWrite: true), .unsigned(0)),
        ],
        commands: [
            CommandMetadata(id: CommandID(0), requiresTimedInvoke: true),
            CommandMetadata(id: CommandID(1), requiresTimedInvoke: true),
        ])
    await node.addCluster(
        ClusterPath(endpoint: 1, cluster: ClusterID(0x1F)),
        attributes: [(AttributeMetadata(id: AttributeID(0), writePrivilege: .administer), .array([]))])
    await node.addCluster(
        ClusterPath(endpoint: 2, cluster: ClusterID(0xFFF1_FC00)),
        attributes: [(AttributeMetadata(id: AttributeID(0)), imBigList)])
    return node
}

/// 80 entries of about 40 bytes: several times one message.
let imBigList: TLVValue = .array(
    (0..<80).map { TLVElement(.utf8("entry \($0 < 10 ? "0" : "")\($0) of a list too long for one message")) })

/// Runs a Read to the end, acknowledging every chunk that asks for it.
func imRead(
    _ server: InteractionServer, _ request: ReadRequestMessage, subject: SubjectDescriptor = imAdmin
) async throws
    -> [ReportDataMessage]
{
    let exchange = IMFakeSession().peerExchange(subject: subject)
    let handling = Task { await server.handle(opcode: 0x02, payload: request.encoded(), on: exchange) }
    var reports: [ReportDataMessage] = []
    while reports.count < 50 {
        let report = try await exchange.nextSent(ReportDataMessage.self)
        reports.append(report)
        if report.suppressResponse { break }
        exchange.deliver(StatusResponseMessage(status: .success))
    }
    try await imFinish(handling)
    return reports
}

/// Sends one request on a fresh exchange and returns the server's first reply.
func imExchangeOnce<M: InteractionMessage>(
    _ server: InteractionServer, _ request: M, subject: SubjectDescriptor = imAdmin
)
    async throws -> IMMessage
{
    let exchange = IMFakeSession().peerExchange(subject: subject)
    let handling = Task { await server.handle(opcode: M.opcode.rawValue, payload: request.encoded(), on: exchange) }
    let reply = try await exchange.nextSent()
    try await imFinish(handling)
    return reply
}

/// Waits for a `handle` call to return.
func imFinish(_ handling: Task<Void, Never>) async throws {
    try await imWithin { await handling.value }
}

func imStatusCode(_ message: IMMessage) throws -> StatusCode {
    #expect(message.opcode == InteractionOpcode.statusResponse.rawValue)
    return try StatusResponseMessage(payload: message.payload).status
}

@Suite("Interaction server: Read")
struct InteractionServerReadTests {
    @Test func wildcardReadSkipsWhatCannotBeRead() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let reports = try await imRead(server, ReadRequestMessage(attributeRequests: [AttributePathIB()]))
        let data = reports.reduce(into: [AttributePath: TLVValue]()) { $0.merge($1.dataByPath) { a, _ in a } }
        // Denied LevelControl and the failing OnOff attribute are silently left out.
        #expect(data[ap(1, 8, 0)] == nil)
        #expect(data[ap(1, 6, 0x4001)] == nil)
        #expect(reports.allSatisfy { $0.statuses.isEmpty })
        #expect(data[ap(0, 0x28, 1)] == .utf8("TEST_VENDOR"))
        #expect(data[ap(1, 6, 0)] == .bool(false))
        #expect(data[ap(0, 0x28, 0xFFFD)] == .unsigned(3))
        #expect(reports.last?.suppressResponse == true)
    }

    @Test func concretePathsReportErrors() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        let request = ReadRequestMessage(attributeRequests: [
            apIB(9, 6, 0), apIB(1, 0x300, 0), apIB(1, 6, 0x9999), apIB(1, 8, 0), apIB(1, 6, 0x4001),
            apIB(1, 6, 0), apIB(nil, 0x300, 0),
        ])
        let reports = try await imRead(server, request)
        #expect(reports.count == 1)
        let report = try #require(reports.first)
        #expect(
            report.statuses == [
                apIB(9, 6, 0): .unsupportedEndpoint, apIB(1, 0x300, 0): .unsupportedCluster,
                apIB(1, 6, 0x9999): .unsupportedAttribute, apIB(1, 8, 0): .unsupportedAccess, apIB(1, 6, 0x4001): .failure,
            ])
        #expect(report.dataByPath == [ap(1, 6, 0): .bool(false)])
        if case .data(let data)? = report.attributeReports.first(where: { if case .data = $0 { true } else { false } }) {
            #expect(data.dataVersion == 7)
        }
    }

    @Test func dataVersionFilterSkipsUnchangedClusters() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        let request = ReadRequestMessage(
            attributeRequests: [apIB(1, 6, nil), apIB(0, 0x28, nil)],
            dataVersionFilters: [
                DataVersionFilterIB(path: ClusterPathIB(endpoint: 1, cluster: ClusterID(6)), dataVersion: 7),
                DataVersionFilterIB(path: ClusterPathIB(endpoint: 0, cluster: ClusterID(0x28)), dataVersion: 999),
            ])
        let data = try #require(try await imRead(server, request).first).dataByPath
        #expect(Set(data.keys) == [ap(0, 0x28, 0), ap(0, 0x28, 1), ap(0, 0x28, 5), ap(0, 0x28, 0xFFFD)])
    }

    @Test func fabricFilteredReadKeepsOwnEntries() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        let filtered = try await imRead(server, ReadRequestMessage(attributeRequests: [apIB(0, 0x3E, 1)], isFabricFiltered: true))
        let all = try await imRead(server, ReadRequestMessage(attributeRequests: [apIB(0, 0x3E, 1)], isFabricFiltered: false))
        #expect(filtered.first?.dataByPath[ap(0, 0x3E, 1)]?.members?.count == 1)
        #expect(filtered.first?.dataByPath[ap(0, 0x3E, 1)]?.members?.first?.value[context: 5] == .utf8("home"))
        #expect(all.first?.dataByPath[ap(0, 0x3E, 1)]?.members?.count == 2)
    }

    @Test func bigReadIsChunkedAndListSplit() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        let request = ReadRequestMessage(attributeRequests: [apIB(0, 0x28, nil), apIB(2, nil, nil), apIB(1, 6, 0)])
        let reports = try await imRead(server, request)
        #expect(reports.count >= 3)
        for report in reports {
            #expect(report.encoded().count <= server.configuration.maxPayloadSize)
        }
        #expect(reports.dropLast().allSatisfy { $0.moreChunkedMessages && !$0.suppressResponse })
        #expect(reports.last.map { !$0.moreChunkedMessages && $0.suppressResponse } == true)

        // Reassemble the list the way a client does: replace-all, then appends.
        var list: [TLVElement]? = nil
        var versions = Set<DataVersion?>()
        for case .data(let data) in reports.flatMap(\.attributeReports) where data.path.concretePath == ap(2, 0xFFF1_FC00, 0) {
            versions.insert(data.dataVersion)
            switch data.path.listIndex {
            case .none: list = data.data.members
            case .append: list?.append(TLVElement(data.data))
            case .index: Issue.record("unexpected list index")
            }
        }
        #expect(list.map { TLVValue.array($0) } == imBigList)
        #expect(versions == [1])
        let all = reports.reduce(into: [AttributePath: TLVValue]()) { $0.merge($1.dataByPath) { a, _ in a } }
        #expect(all[ap(1, 6, 0)] == .bool(false))
        #expect(all[ap(0, 0x28, 1)] == .utf8("TEST_VENDOR"))
    }

    @Test func nextChunkWaitsForAcknowledgement() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        let exchange = IMFakeSession().peerExchange(subject: imAdmin)
        let request = ReadRequestMessage(attributeRequests: [apIB(2, nil, nil)])
        let handling = Task { await server.handle(opcode: 0x02, payload: request.encoded(), on: exchange) }
        let first = try await exchange.nextSent(ReportDataMessage.self)
        #expect(first.moreChunkedMessages)
        #expect(await !exchange.hasPendingSentBeforeWaiting())
        // A client that rejects the chunk ends the read.
        exchange.deliver(StatusResponseMessage(status: .invalidAction))
        try await imFinish(handling)
        #expect(!exchange.hasPendingSent)
    }

    /// Issue #22 item 4: a request naming more paths than the node takes is answered
    /// PATHS_EXHAUSTED, read or subscribe, before anything is expanded.
    @Test func tooManyPathsAreAnsweredPathsExhausted() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let limit = server.configuration.maxPathsPerRequest
        let tooMany = Array(repeating: apIB(nil, nil, nil), count: limit + 1)
        #expect(try imStatusCode(try await imExchangeOnce(server, ReadRequestMessage(attributeRequests: tooMany))) == .pathsExhausted)
        let subscribe = SubscribeRequestMessage(
            keepSubscriptions: true, minIntervalFloor: 0, maxIntervalCeiling: 60,
            attributeRequests: tooMany)
        #expect(try imStatusCode(try await imExchangeOnce(server, subscribe)) == .pathsExhausted)
        #expect(await node.readCount == 0)
        // At the limit the read is served.
        let reports = try await imRead(server, ReadRequestMessage(attributeRequests: Array(repeating: apIB(1, 6, 0), count: limit)))
        #expect(reports.flatMap(\.attributeReports).count == limit)
    }

    /// Issue #22 item 4: reports are produced path by path; a chunk goes out (and waits for
    /// its acknowledgement) before later paths are expanded, so an unacknowledged read
    /// holds one path's reports, not the whole request's.
    @Test func readsAreExpandedPathByPathBehindTheChunks() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let exchange = IMFakeSession().peerExchange(subject: imAdmin)
        // The big list first (several chunks), then every other attribute of the node.
        let request = ReadRequestMessage(attributeRequests: [apIB(2, nil, nil), apIB(0, nil, nil), apIB(1, nil, nil)])
        let handling = Task { await server.handle(opcode: 0x02, payload: request.encoded(), on: exchange) }
        let first = try await exchange.nextSent(ReportDataMessage.self)
        #expect(first.moreChunkedMessages)
        #expect(await node.readCount == 1, "only the first path was read before its first chunk went out")
        exchange.failReceive()
        try await imFinish(handling)
        #expect(await node.readCount == 1)
    }

    @Test func invalidReadsGetInvalidAction() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        #expect(try imStatusCode(try await imExchangeOnce(server, ReadRequestMessage())) == .invalidAction)
        let withIndex = ReadRequestMessage(attributeRequests: [AttributePathIB(ap(1, 6, 0), listIndex: .index(0))])
        #expect(try imStatusCode(try await imExchangeOnce(server, withIndex)) == .invalidAction)
        let wildcardClusterConcreteAttribute = ReadRequestMessage(attributeRequests: [apIB(1, nil, 0)])
        #expect(try imStatusCode(try await imExchangeOnce(server, wildcardClusterConcreteAttribute)) == .invalidAction)

        let exchange = IMFakeSession().peerExchange(subject: imAdmin)
        await server.handle(opcode: 0x02, payload: [0x15, 0x36, 0x00, 0x17, 0x24], on: exchange)
        #expect(try imStatusCode(try await exchange.nextSent()) == .invalidAction)
        await server.handle(opcode: 0x42, payload: [], on: exchange)
        #expect(try imStatusCode(try await exchange.nextSent()) == .invalidAction)
    }

    /// WildcardPathFlags (10.6.2.1): SkipAttributeList (bit 2), SkipEventList (bit 3) and
    /// SkipCommandLists (bit 4) leave those global attributes out of a wildcard's expansion.
    @Test func wildcardPathFlagsSkipTheListAttributes() async throws {
        let node = IMFakeNode()
        let ids: [UInt32] = [0, 0xFFF8, 0xFFF9, 0xFFFA, 0xFFFB, 0xFFFD]
        await node.addCluster(
            ClusterPath(endpoint: 1, cluster: ClusterID(6)), attributes: ids.map { (AttributeMetadata(id: AttributeID($0)), .unsigned(1)) })
        let server = InteractionServer(provider: node, clock: ManualClock())
        func read(flags: UInt32?) async throws -> [UInt32] {
            let path = AttributePathIB(endpoint: 1, cluster: ClusterID(6), wildcardPathFlags: flags)
            let reports = try await imRead(server, ReadRequestMessage(attributeRequests: [path]))
            return reports.flatMap { $0.dataByPath.keys.map(\.attribute.rawValue) }.sorted()
        }
        #expect(try await read(flags: nil) == ids)
        #expect(try await read(flags: 1 << 2) == [0, 0xFFF8, 0xFFF9, 0xFFFA, 0xFFFD])
        #expect(try await read(flags: 1 << 3) == [0, 0xFFF8, 0xFFF9, 0xFFFB, 0xFFFD])
        #expect(try await read(flags: 1 << 4) == [0, 0xFFFA, 0xFFFB, 0xFFFD])
        #expect(try await read(flags: 1 << 2 | 1 << 3 | 1 << 4) == [0, 0xFFFD])
    }

    @Test func globalAttributeUnderWildcardCluster() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        let data = try #require(try await imRead(server, ReadRequestMessage(attributeRequests: [apIB(nil, nil, 0xFFFD)])).first)
            .dataByPath
        #expect(data == [ap(0, 0x28, 0xFFFD): .unsigned(3)])
    }
}

@Suite("Interaction server: Write")
struct InteractionServerWriteTests {
    func write(_ server: InteractionServer, _ writes: [AttributeDataIB]) async throws -> [AttributePathIB: StatusCode] {
        let reply = try await imExchangeOnce(server, WriteRequestMessage(writeRequests: writes))
        #expect(reply.opcode == InteractionOpcode.writeResponse.rawValue)
        let response = try WriteResponseMessage(payload: reply.payload)
        return Dictionary(response.writeResponses.map { ($0.path, $0.status.status.status) }) { a, _ in a }
    }

    @Test func writeStatuses() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let statuses = try await write(
            server,
            [
                AttributeDataIB(path: apIB(0, 0x28, 5), data: .utf8("kitchen")),
                AttributeDataIB(path: apIB(0, 0x28, 1), data: .utf8("ACME")),
                AttributeDataIB(path: apIB(0, 0x28, 0x77), data: .unsigned(1)),
                AttributeDataIB(path: apIB(1, 8, 0), data: .unsigned(3)),
                AttributeDataIB(path: apIB(1, 0x101, 0x21), data: .unsigned(1)),
                AttributeDataIB(dataVersion: 12345, path: apIB(1, 6, 0x4001), data: .unsigned(5)),
            ])
        #expect(
            statuses == [
                apIB(0, 0x28, 5): .success, apIB(0, 0x28, 1): .unsupportedWrite, apIB(0, 0x28, 0x77): .unsupportedAttribute,
                apIB(1, 8, 0): .unsupportedAccess, apIB(1, 0x101, 0x21): .needsTimedInteraction,
                apIB(1, 6, 0x4001): .dataVersionMismatch,
            ])
        #expect(await node.value(ap(0, 0x28, 5)) == .utf8("kitchen"))
    }

    @Test func constraintErrorLeavesValue() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let tooLong = String(repeating: "x", count: 40)
        let statuses = try await write(server, [AttributeDataIB(path: apIB(0, 0x28, 5), data: .utf8(tooLong))])
        #expect(statuses == [apIB(0, 0x28, 5): .constraintError])
        #expect(await node.value(ap(0, 0x28, 5)) == .utf8(""))
    }

    @Test func chunkedListWriteArrivesAsOneReplace() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let entry1 = TLVValue.structure([.context(1, .unsigned(5))])
        let entry2 = TLVValue.structure([.context(1, .unsigned(3))])
        let statuses = try await write(
            server,
            [
                AttributeDataIB(path: apIB(1, 0x1F, 0), data: .array([])),
                AttributeDataIB(path: AttributePathIB(ap(1, 0x1F, 0), listIndex: .append), data: entry1),
                AttributeDataIB(path: AttributePathIB(ap(1, 0x1F, 0), listIndex: .append), data: entry2),
            ])
        #expect(statuses == [apIB(1, 0x1F, 0): .success])
        let writes = await node.writes
        #expect(writes.count == 1)
        #expect(writes.first?.1 == .replace(.array([TLVElement(entry1), TLVElement(entry2)])))

        // A lone append reaches the provider as an append.
        let more = try await write(server, [AttributeDataIB(path: AttributePathIB(ap(1, 0x1F, 0), listIndex: .append), data: entry1)])
        #expect(more == [AttributePathIB(ap(1, 0x1F, 0), listIndex: .append): .success])
        #expect(await node.value(ap(1, 0x1F, 0))?.members?.count == 3)
    }

    @Test func wildcardWriteIsInvalid() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        let reply = try await imExchangeOnce(
            server, WriteRequestMessage(writeRequests: [AttributeDataIB(path: apIB(nil, 6, 0), data: .bool(true))]))
        #expect(try imStatusCode(reply) == .invalidAction)
    }

    @Test func suppressedResponseSendsNothing() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let exchange = IMFakeSession().peerExchange(subject: imAdmin)
        let request = WriteRequestMessage(
            suppressResponse: true, writeRequests: [AttributeDataIB(path: apIB(0, 0x28, 5), data: .utf8("den"))])
        await server.handle(opcode: 0x06, payload: request.encoded(), on: exchange)
        #expect(!exchange.hasPendingSent)
        #expect(await node.value(ap(0, 0x28, 5)) == .utf8("den"))
    }

    @Test func chunkedWriteRequestsEachGetAResponse() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let exchange = IMFakeSession().peerExchange(subject: imAdmin)
        let first = WriteRequestMessage(
            writeRequests: [AttributeDataIB(path: apIB(0, 0x28, 5), data: .utf8("a"))], moreChunkedMessages: true)
        let handling = Task { await server.handle(opcode: 0x06, payload: first.encoded(), on: exchange) }
        #expect(try await exchange.nextSent(WriteResponseMessage.self).writeResponses.count == 1)
        exchange.deliver(WriteRequestMessage(writeRequests: [AttributeDataIB(path: apIB(1, 6, 0x4001), data: .unsigned(9))]))
        let second = try await exchange.nextSent(WriteResponseMessage.self)
        #expect(second.writeResponses == [AttributeStatusIB(path: apIB(1, 6, 0x4001), status: .success)])
        try await imFinish(handling)
    }
}

@Suite("Interaction server: Invoke and timed interactions")
struct InteractionServerInvokeTests {
    func invoke(_ server: InteractionServer, _ request: InvokeRequestMessage) async throws -> IMMessage {
        try await imExchangeOnce(server, request)
    }

    func command(
        _ endpoint: EndpointNumber, _ cluster: UInt32, _ command: UInt32, ref: UInt16? = nil, fields: TLVValue? = .structure([])
    )
        -> CommandDataIB
    {
        CommandDataIB(
            path: CommandPathIB(endpoint: endpoint, cluster: ClusterID(cluster), command: CommandID(command)), fields: fields, ref: ref)
    }

    @Test func invokeAnswersWithStatusOrResponse() async throws {
        let node = await makeIMNode()
        await node.handle(ConcreteCommandPath(endpoint: 1, cluster: ClusterID(6), command: CommandID(2))) { _ in
            .response(CommandID(0x42), .structure([.context(0, .unsigned(1))]))
        }
        let server = InteractionServer(provider: node, clock: ManualClock())
        let toggled = try await invoke(server, InvokeRequestMessage(invokeRequests: [command(1, 6, 2)]))
        let response = try InvokeResponseMessage(payload: toggled.payload)
        #expect(
            response.invokeResponses == [
                .command(
                    CommandDataIB(
                        path: CommandPathIB(endpoint: 1, cluster: ClusterID(6), command: CommandID(0x42)),
                        fields: .structure([.context(0, .unsigned(1))])))
            ])
        let on = try InvokeResponseMessage(
            payload: try await invoke(server, InvokeRequestMessage(invokeRequests: [command(1, 6, 1)])).payload)
        #expect(on.invokeResponses == [.status(CommandStatusIB(path: command(1, 6, 1).path, status: .success))])
        #expect(await node.invocations.count == 2)
    }

    @Test func batchedInvokeKeepsRefsAndOrder() async throws {
        let node = await makeIMNode()
        var configuration = InteractionServerConfiguration()
        configuration.maxPathsPerInvoke = 4
        let server = InteractionServer(provider: node, clock: ManualClock(), configuration: configuration)
        let request = InvokeRequestMessage(invokeRequests: [
            command(1, 6, 1, ref: 10), command(1, 6, 0x55, ref: 11), command(1, 8, 0, ref: 12),
        ])
        let response = try InvokeResponseMessage(payload: try await invoke(server, request).payload)
        #expect(response.invokeResponses.map(\.ref) == [10, 11, 12])
        let codes: [StatusCode] = response.invokeResponses.compactMap {
            if case .status(let s) = $0 { s.status.status.status } else { nil }
        }
        #expect(codes == [.success, .unsupportedCommand, .unsupportedCommand])

        // Without CommandRefs, or beyond MaxPathsPerInvoke, the whole request is invalid.
        let noRefs = InvokeRequestMessage(invokeRequests: [command(1, 6, 1), command(1, 6, 0)])
        #expect(try imStatusCode(try await invoke(server, noRefs)) == .invalidAction)
        let tooMany = InvokeRequestMessage(invokeRequests: (0..<5).map { command(1, 6, 1, ref: UInt16($0)) })
        #expect(try imStatusCode(try await invoke(server, tooMany)) == .invalidAction)
        let defaultServer = InteractionServer(provider: node, clock: ManualClock())
        let two = InvokeRequestMessage(invokeRequests: [command(1, 6, 1, ref: 1), command(1, 6, 0, ref: 2)])
        #expect(try imStatusCode(try await invoke(defaultServer, two)) == .invalidAction)
    }

    @Test func largeInvokeResponsesAreChunked() async throws {
        let node = await makeIMNode()
        let blob = TLVValue.structure([.context(0, .bytes(Array(repeating: 0xAB, count: 500)))])
        for command in 0...2 as ClosedRange<UInt32> {
            await node.handle(ConcreteCommandPath(endpoint: 1, cluster: ClusterID(6), command: CommandID(command))) { _ in
                .response(CommandID(0x80 + command), blob)
            }
        }
        var configuration = InteractionServerConfiguration()
        configuration.maxPathsPerInvoke = 3
        let server = InteractionServer(provider: node, clock: ManualClock(), configuration: configuration)
        let exchange = IMFakeSession().peerExchange(subject: imAdmin)
        let request = InvokeRequestMessage(invokeRequests: (0...2).map { command(1, 6, UInt32($0), ref: UInt16($0)) })
        let handling = Task { await server.handle(opcode: 0x08, payload: request.encoded(), on: exchange) }
        var refs: [UInt16?] = []
        while true {
            let response = try await exchange.nextSent(InvokeResponseMessage.self)
            #expect(response.encoded().count <= configuration.maxPayloadSize)
            refs += response.invokeResponses.map(\.ref)
            guard response.moreChunkedMessages else { break }
            #expect(await !exchange.hasPendingSentBeforeWaiting())
            exchange.deliver(StatusResponseMessage(status: .success))
        }
        try await imFinish(handling)
        #expect(refs == [0, 1, 2])
    }

    @Test func deniedClusterCommandIsUnsupportedAccess() async throws {
        let node = await makeIMNode()
        await node.grant(.view)
        let server = InteractionServer(provider: node, clock: ManualClock())
        let response = try InvokeResponseMessage(
            payload: try await invoke(server, InvokeRequestMessage(invokeRequests: [command(1, 6, 1)])).payload)
        #expect(response.invokeResponses == [.status(CommandStatusIB(path: command(1, 6, 1).path, status: StatusIB(.unsupportedAccess)))])
        #expect(await node.invocations.isEmpty)
    }

    @Test func timedCommandNeedsTimedInteraction() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let untimed = try InvokeResponseMessage(
            payload: try await invoke(server, InvokeRequestMessage(invokeRequests: [command(1, 0x101, 0)])).payload)
        #expect(
            untimed.invokeResponses == [.status(CommandStatusIB(path: command(1, 0x101, 0).path, status: StatusIB(.needsTimedInteraction)))]
        )
        // timedRequest=true with no Timed Request before it.
        let claimed = InvokeRequestMessage(timedRequest: true, invokeRequests: [command(1, 0x101, 0)])
        #expect(try imStatusCode(try await invoke(server, claimed)) == .timedRequestMismatch)
        #expect(await node.invocations.isEmpty)
    }

    /// Opens a timed interaction and returns the exchange after the Timed Request's SUCCESS.
    func startTimed(_ server: InteractionServer, timeout: UInt16) async throws -> (IMFakeExchange, Task<Void, Never>) {
        let exchange = IMFakeSession().peerExchange(subject: imAdmin)
        let payload = TimedRequestMessage(timeout: timeout).encoded()
        let handling = Task { await server.handle(opcode: 0x0A, payload: payload, on: exchange) }
        #expect(try imStatusCode(try await exchange.nextSent()) == .success)
        return (exchange, handling)
    }

    @Test func timedInvokeAndWriteInsideTheWindow() async throws {
        let node = await makeIMNode()
        let clock = ManualClock()
        let server = InteractionServer(provider: node, clock: clock)
        var (exchange, handling) = try await startTimed(server, timeout: 500)
        await clock.advance(by: .milliseconds(400))
        exchange.deliver(InvokeRequestMessage(timedRequest: true, invokeRequests: [command(1, 0x101, 0)]))
        let response = try await exchange.nextSent(InvokeResponseMessage.self)
        #expect(response.invokeResponses == [.status(CommandStatusIB(path: command(1, 0x101, 0).path, status: .success))])
        try await imFinish(handling)

        (exchange, handling) = try await startTimed(server, timeout: 500)
        exchange.deliver(
            WriteRequestMessage(timedRequest: true, writeRequests: [AttributeDataIB(path: apIB(1, 0x101, 0x21), data: .unsigned(2))]))
        let written = try await exchange.nextSent(WriteResponseMessage.self)
        #expect(written.writeResponses == [AttributeStatusIB(path: apIB(1, 0x101, 0x21), status: .success)])
        try await imFinish(handling)
        #expect(await node.value(ap(1, 0x101, 0x21)) == .unsigned(2))
    }

    @Test func timedWindowRules() async throws {
        let node = await makeIMNode()
        let clock = ManualClock()
        let server = InteractionServer(provider: node, clock: clock)

        // Too late: UNSUPPORTED_ACCESS, nothing invoked.
        var (exchange, handling) = try await startTimed(server, timeout: 500)
        await clock.advance(by: .milliseconds(501))
        exchange.deliver(InvokeRequestMessage(timedRequest: true, invokeRequests: [command(1, 0x101, 0)]))
        #expect(try imStatusCode(try await exchange.nextSent()) == .unsupportedAccess)
        try await imFinish(handling)

        // After a Timed Request, a write that does not say it is timed.
        (exchange, handling) = try await startTimed(server, timeout: 500)
        exchange.deliver(
            WriteRequestMessage(timedRequest: false, writeRequests: [AttributeDataIB(path: apIB(1, 0x101, 0x21), data: .unsigned(3))]))
        #expect(try imStatusCode(try await exchange.nextSent()) == .timedRequestMismatch)
        try await imFinish(handling)

        // Neither write nor invoke after the Timed Request.
        (exchange, handling) = try await startTimed(server, timeout: 500)
        exchange.deliver(ReadRequestMessage(attributeRequests: [apIB(1, 6, 0)]))
        #expect(try imStatusCode(try await exchange.nextSent()) == .invalidAction)
        try await imFinish(handling)

        #expect(await node.invocations.isEmpty)
        #expect(await node.value(ap(1, 0x101, 0x21)) == .unsigned(0))
    }
}

@Suite("Interaction server: Subscribe")
struct InteractionServerSubscribeTests {
    struct Established {
        let session: IMFakeSession
        let subscriptionID: UInt32
        let maxInterval: UInt16
        let priming: ReportDataMessage
    }

    func subscribe(
        _ server: InteractionServer, _ request: SubscribeRequestMessage, subject: SubjectDescriptor = imAdmin
    )
        async throws -> Established
    {
        let session = IMFakeSession()
        let exchange = session.peerExchange(subject: subject)
        let handling = Task { await server.handle(opcode: 0x03, payload: request.encoded(), on: exchange) }
        let priming = try await exchange.nextSent(ReportDataMessage.self)
        #expect(!priming.suppressResponse)
        exchange.deliver(StatusResponseMessage(status: .success))
        let response = try await exchange.nextSent(SubscribeResponseMessage.self)
        try await imFinish(handling)
        #expect(priming.subscriptionID == response.subscriptionID)
        return Established(session: session, subscriptionID: response.subscriptionID, maxInterval: response.maxInterval, priming: priming)
    }

    /// The next report of a subscription, on the exchange the server opens for it; acknowledged with `status`.
    func nextReport(_ session: IMFakeSession, acknowledge status: StatusCode = .success) async throws -> ReportDataMessage {
        let exchange = try await session.nextOpened()
        let report = try await exchange.nextSent(ReportDataMessage.self)
        exchange.deliver(StatusResponseMessage(status: status))
        return report
    }

    func waitForSubscriptions(_ server: InteractionServer, count: Int) async throws {
        try await imWithin {
            await server.untilActiveSubscriptions(count)
        }
    }

    @Test func primingChangeReportsKeepAliveAndEnd() async throws {
        let node = await makeIMNode()
        let clock = ManualClock()
        let server = InteractionServer(provider: node, clock: clock)
        let running = Task { await server.run() }
        defer { running.cancel() }

        let request = SubscribeRequestMessage(minIntervalFloor: 2, maxIntervalCeiling: 10, attributeRequests: [apIB(1, 6, nil)])
        let sub = try await subscribe(server, request)
        #expect(sub.maxInterval == 10)
        #expect(sub.priming.dataByPath == [ap(1, 6, 0): .bool(false)])
        #expect(await server.activeSubscriptions().map(\.subscriptionID) == [sub.subscriptionID])

        // A change is reported once MinInterval has passed since the last report.
        await node.set(ap(1, 6, 0), .bool(true))
        await node.set(ap(0, 0x28, 5), .utf8("not subscribed"))
        await clock.advance(by: .seconds(2))
        let change = try await nextReport(sub.session)
        #expect(change.subscriptionID == sub.subscriptionID)
        #expect(change.dataByPath == [ap(1, 6, 0): .bool(true)])
        #expect(!change.suppressResponse)

        // The next change waits out MinInterval again.
        await node.set(ap(1, 6, 0), .bool(false))
        await clock.advance(by: .seconds(1))
        // Time stands at 1 s until the next advance: however late the server takes the
        // change in, MinInterval has not passed.
        #expect(!sub.session.hasPendingOpened)
        await clock.advance(by: .seconds(1))
        let second = try await nextReport(sub.session)
        #expect(second.dataByPath == [ap(1, 6, 0): .bool(false)])
        #expect(clock.now == .seconds(4))

        // Nothing changes for MaxInterval: an empty keep-alive report.
        await clock.advance(by: .seconds(10))
        let keepAlive = try await nextReport(sub.session)
        #expect(keepAlive.subscriptionID == sub.subscriptionID)
        #expect(keepAlive.attributeReports.isEmpty && keepAlive.eventReports.isEmpty)

        // The subscriber no longer knows the subscription: it ends.
        await clock.advance(by: .seconds(10))
        _ = try await nextReport(sub.session, acknowledge: .invalidSubscription)
        try await waitForSubscriptions(server, count: 0)
    }

    /// An urgent event that went out with the change that raised it leaves nothing to report
    /// one MinInterval later: no empty report then, which would hold back the next change.
    @Test func anUrgentEventAlreadyReportedBringsNoEmptyReport() async throws {
        let node = await makeIMNode()
        let clock = ManualClock()
        let server = InteractionServer(provider: node, clock: clock)
        let running = Task { await server.run() }
        defer { running.cancel() }
        let event = EventPathIB(endpoint: 1, cluster: ClusterID(6), event: EventID(0))
        var urgent = event
        urgent.isUrgent = true
        let sub = try await subscribe(
            server,
            SubscribeRequestMessage(
                minIntervalFloor: 2, maxIntervalCeiling: 10, attributeRequests: [apIB(1, 6, 0)], eventRequests: [urgent]))
        await clock.advance(by: .seconds(3))
        await node.set(ap(1, 6, 0), .bool(true), raising: event)
        // The change and its event go out together, or the event first (its announcement may
        // be taken in before the change) and the change a MinInterval later.
        var first = try await nextReport(sub.session)
        if first.dataByPath.isEmpty {
            await clock.advance(by: .seconds(2))
            let change = try await nextReport(sub.session)
            first.attributeReports += change.attributeReports
            first.eventReports += change.eventReports
        }
        #expect(first.dataByPath == [ap(1, 6, 0): .bool(true)] && first.eventReports.count == 1)
        // Past the MinInterval that the urgent event's own announcement asked for: the next
        // report is the next change's, at once, not an empty one.
        await clock.advance(by: .milliseconds(2_500))
        await node.set(ap(1, 6, 0), .bool(false))
        let second = try await nextReport(sub.session)
        #expect(second.dataByPath == [ap(1, 6, 0): .bool(false)], "\(second)")
        #expect(second.eventReports.isEmpty)
    }

    @Test func silentSubscriberEndsSubscription() async throws {
        let node = await makeIMNode()
        let clock = ManualClock()
        let server = InteractionServer(provider: node, clock: clock)
        let running = Task { await server.run() }
        defer { running.cancel() }
        let sub = try await subscribe(
            server, SubscribeRequestMessage(minIntervalFloor: 0, maxIntervalCeiling: 5, attributeRequests: [apIB(1, 6, 0)]))
        await clock.advance(by: .seconds(5))
        let exchange = try await sub.session.nextOpened()
        _ = try await exchange.nextSent(ReportDataMessage.self)
        exchange.failReceive()
        try await waitForSubscriptions(server, count: 0)
        #expect(node.changes.listenerCount == 0)
    }

    /// TC-IDM-4.2 step 3 (Core 8.5.1 / 8.2): a subscription whose every path the subscriber
    /// may not read is refused with an INVALID_ACTION Status Response; one readable path, or a
    /// wildcard that reaches one readable attribute, is enough to establish it.
    @Test func aSubscriptionToNothingReadableIsInvalidAction() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let running = Task { await server.run() }
        defer { running.cancel() }
        func request(_ paths: [AttributePathIB]) -> SubscribeRequestMessage {
            SubscribeRequestMessage(keepSubscriptions: true, minIntervalFloor: 0, maxIntervalCeiling: 60, attributeRequests: paths)
        }
        // LevelControl on endpoint 1 is denied: concretely, or every attribute of it by wildcard.
        #expect(try imStatusCode(try await imExchangeOnce(server, request([apIB(1, 8, 0)]))) == .invalidAction)
        #expect(try imStatusCode(try await imExchangeOnce(server, request([apIB(1, 8, nil)]))) == .invalidAction)
        #expect(await server.activeSubscriptions().isEmpty)
        // With a readable path beside it, or a wildcard that reaches a readable attribute, it is served.
        let mixed = try await subscribe(server, request([apIB(1, 8, 0), apIB(1, 6, 0)]))
        #expect(mixed.priming.dataByPath[ap(1, 6, 0)] == .bool(false))
        _ = try await subscribe(server, request([apIB(1, 6, nil)]))
        try await waitForSubscriptions(server, count: 2)
    }

    /// Core 8.5.1: a valid path is one that exists and that the subscriber may read. A
    /// subscription whose only paths are concrete paths to an attribute, cluster or endpoint the
    /// node lacks (or an event path to a cluster it lacks) is refused with INVALID_ACTION, as
    /// connectedhomeip refuses it; beside a valid path the missing one is primed as unsupported.
    /// The old server established it with a priming report of UNSUPPORTED_* statuses only.
    @Test func aSubscriptionToPathsThatDoNotExistIsInvalidAction() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let running = Task { await server.run() }
        defer { running.cancel() }
        func request(_ paths: [AttributePathIB], events: [EventPathIB] = []) -> SubscribeRequestMessage {
            SubscribeRequestMessage(
                keepSubscriptions: true, minIntervalFloor: 0, maxIntervalCeiling: 60, attributeRequests: paths, eventRequests: events)
        }
        for missing in [apIB(1, 6, 0x4321), apIB(1, 0x0300, 0), apIB(9, 6, 0)] {
            #expect(try imStatusCode(try await imExchangeOnce(server, request([missing]))) == .invalidAction, "\(missing)")
        }
        let noCluster = EventPathIB(endpoint: 1, cluster: ClusterID(0x0300), event: EventID(0))
        #expect(try imStatusCode(try await imExchangeOnce(server, request([], events: [noCluster]))) == .invalidAction)
        #expect(await server.activeSubscriptions().isEmpty)
        let mixed = try await subscribe(server, request([apIB(1, 6, 0x4321), apIB(1, 6, 0)]))
        #expect(mixed.priming.dataByPath[ap(1, 6, 0)] == .bool(false))
        try await waitForSubscriptions(server, count: 1)
    }

    /// TC-ACE-1.2 step 14 (Core 8.5.1, 9.10.7.1): a subscription to an event the subscriber
    /// may not read (AccessControlEntryChanged needs Administer) is refused with INVALID_ACTION,
    /// though the subscriber may view the cluster; an event it may read is enough.
    @Test func aSubscriptionToAnEventItMayNotReadIsInvalidAction() async throws {
        let node = await makeIMNode()
        await node.grant(.operate)
        await node.requirePrivilege(.administer, toRead: EventPath(endpoint: 1, cluster: ClusterID(0x1F), event: EventID(0)))
        let server = InteractionServer(provider: node, clock: ManualClock())
        let running = Task { await server.run() }
        defer { running.cancel() }
        func request(_ paths: [EventPathIB]) -> SubscribeRequestMessage {
            SubscribeRequestMessage(keepSubscriptions: true, minIntervalFloor: 0, maxIntervalCeiling: 60, eventRequests: paths)
        }
        let adminOnly = EventPathIB(endpoint: 1, cluster: ClusterID(0x1F), event: EventID(0))
        #expect(try imStatusCode(try await imExchangeOnce(server, request([adminOnly]))) == .invalidAction)
        #expect(await server.activeSubscriptions().isEmpty)
        _ = try await subscribe(server, request([adminOnly, EventPathIB(endpoint: 1, cluster: ClusterID(6), event: EventID(0))]))
        try await waitForSubscriptions(server, count: 1)
    }

    @Test func keepSubscriptionsFalseDropsOlderOnes() async throws {
        let node = await makeIMNode()
        let server = InteractionServer(provider: node, clock: ManualClock())
        let running = Task { await server.run() }
        defer { running.cancel() }
        let paths = [apIB(1, 6, 0)]
        let first = try await subscribe(
            server, SubscribeRequestMessage(keepSubscriptions: true, minIntervalFloor: 0, maxIntervalCeiling: 60, attributeRequests: paths))
        let second = try await subscribe(
            server, SubscribeRequestMessage(keepSubscriptions: true, minIntervalFloor: 0, maxIntervalCeiling: 60, attributeRequests: paths))
        try await waitForSubscriptions(server, count: 2)
        let other = SubjectDescriptor(authMode: .case, fabricIndex: 2, subject: 0x99)
        let elsewhere = try await subscribe(
            server,
            SubscribeRequestMessage(keepSubscriptions: false, minIntervalFloor: 0, maxIntervalCeiling: 60, attributeRequests: paths),
            subject: other)
        try await waitForSubscriptions(server, count: 3)
        let third = try await subscribe(
            server, SubscribeRequestMessage(keepSubscriptions: false, minIntervalFloor: 0, maxIntervalCeiling: 60, attributeRequests: paths)
        )
        try await waitForSubscriptions(server, count: 2)
        let remaining = Set(await server.activeSubscriptions().map(\.subscriptionID))
        #expect(remaining == [elsewhere.subscriptionID, third.subscriptionID])
        #expect(!remaining.contains(first.subscriptionID) && !remaining.contains(second.subscriptionID))
    }

    @Test func maxIntervalChoiceAndInvalidRequests() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        #expect(server.chooseMaxInterval(floor: 0, ceiling: 7200) == 3600)
        #expect(server.chooseMaxInterval(floor: 4000, ceiling: 5000) == 4000)
        #expect(server.chooseMaxInterval(floor: 1, ceiling: 30) == 30)
        #expect(server.chooseMaxInterval(floor: 0, ceiling: 0) == 1)
        let inverted = SubscribeRequestMessage(minIntervalFloor: 10, maxIntervalCeiling: 5, attributeRequests: [apIB(1, 6, 0)])
        #expect(try imStatusCode(try await imExchangeOnce(server, inverted)) == .invalidAction)
        let empty = SubscribeRequestMessage(minIntervalFloor: 0, maxIntervalCeiling: 5)
        #expect(try imStatusCode(try await imExchangeOnce(server, empty)) == .invalidAction)
    }

    @Test func unacknowledgedPrimingEstablishesNothing() async throws {
        let server = InteractionServer(provider: await makeIMNode(), clock: ManualClock())
        let exchange = IMFakeSession().peerExchange(subject: imAdmin)
        let request = SubscribeRequestMessage(minIntervalFloor: 0, maxIntervalCeiling: 5, attributeRequests: [apIB(1, 6, 0)])
        let handling = Task { await server.handle(opcode: 0x03, payload: request.encoded(), on: exchange) }
        _ = try await exchange.nextSent(ReportDataMessage.self)
        exchange.deliver(StatusResponseMessage(status: .failure))
        try await imFinish(handling)
        #expect(!exchange.hasPendingSent)
        #expect(await server.activeSubscriptions().isEmpty)
    }
}
