import MatterModel
import MatterTLV
import Testing

@testable import MatterProtocol

func imHex(_ text: String) -> [UInt8] {
    let digits = Array(text.filter { !$0.isWhitespace })
    return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
}

func imHexString(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}

private func attr(_ endpoint: EndpointNumber?, _ cluster: UInt32?, _ attribute: UInt32?) -> AttributePathIB {
    AttributePathIB(endpoint: endpoint, cluster: cluster.map { ClusterID($0) }, attribute: attribute.map { AttributeID($0) })
}

@Suite("Interaction Model codecs: published byte vectors")
struct IMVectorTests {
    /// chip-tool's commissioning ReadRequest, as decrypted in matter.js's
    /// MessageCodec test (IM revision 1, fabric-filtered).
    static let chipToolRead = imHex(
        "153600172403312504fcff18172402002403302404001817240200240330240401181724020024033024040218"
            + "172402002403302404031817240200240328240402181724020024032824040418172403312404031818290324ff0118")

    @Test func readRequestFromChipTool() throws {
        let message = try ReadRequestMessage(payload: Self.chipToolRead)
        #expect(
            message.attributeRequests == [
                attr(nil, 0x31, 0xFFFC), attr(0, 0x30, 0), attr(0, 0x30, 1), attr(0, 0x30, 2), attr(0, 0x30, 3),
                attr(0, 0x28, 2), attr(0, 0x28, 4), attr(nil, 0x31, 3),
            ])
        #expect(message.isFabricFiltered)
        #expect(message.eventRequests.isEmpty && message.dataVersionFilters.isEmpty)
        #expect(message.interactionModelRevision == 1)
        #expect(message.encoded() == Self.chipToolRead)
    }

    @Test func readRequestBuiltByHandMatchesRevision12Capture() {
        // A chip-tool ReadRequest of revision 12 (BasicInformation VendorName),
        // re-derived from the tags of spec 10.7.2 / 10.6.2.
        let message = ReadRequestMessage(attributeRequests: [attr(0, 0x28, 1)], isFabricFiltered: true)
        #expect(imHexString(message.encoded()) == "153600172402002403282404011818290324ff0c18")
    }

    /// matter.js TlvCodec test: a ReportData of two attributes, one of them a
    /// structure, with SuppressResponse (IM revision 1).
    static let twoReports = imHex(
        "1536011535012600799ac60c37012402002403312404031824021418181535012600ddad82d6370124020024033024040118"
            + "350224003c18181818290424ff0118")

    @Test func reportDataFromMatterJS() throws {
        let message = try ReportDataMessage(payload: Self.twoReports)
        #expect(message.subscriptionID == nil)
        #expect(message.suppressResponse && !message.moreChunkedMessages)
        #expect(message.interactionModelRevision == 1)
        #expect(
            message.attributeReports == [
                .data(AttributeDataIB(dataVersion: 0x0CC6_9A79, path: attr(0, 0x31, 3), data: .unsigned(20))),
                .data(
                    AttributeDataIB(
                        dataVersion: 0xD682_ADDD, path: attr(0, 0x30, 1),
                        data: .structure([.context(0, .unsigned(60))]))),
            ])
        #expect(message.encoded() == Self.twoReports)
    }

    /// chip's lighting-app answering a read of Descriptor ServerList: the list
    /// is chunked as an empty replace-all then one append (ListIndex null) per entry.
    static let chunkedServerList = imHex(
        "1536011535012600605bd045370124020024031d2404011836021818181535012600605bd045370124020024031d240401340518240204"
            + "18181535012600605bd045370124020024031d24040134051824021d18181535012600605bd045370124020024031d2404013405182402"
            + "1f18181535012600605bd045370124020024031d24040134051824022818181535012600605bd045370124020024031d24040134051824"
            + "022a18181535012600605bd045370124020024031d24040134051824022b18181535012600605bd045370124020024031d240401340518"
            + "24022c18181535012600605bd045370124020024031d24040134051824023018181535012600605bd045370124020024031d2404013405"
            + "1824023118181535012600605bd045370124020024031d24040134051824023218181535012600605bd045370124020024031d24040134"
            + "051824023318181535012600605bd045370124020024031d24040134051824023418181535012600605bd045370124020024031d240401"
            + "34051824023518181535012600605bd045370124020024031d24040134051824023618181535012600605bd045370124020024031d2404"
            + "0134051824023718181535012600605bd045370124020024031d24040134051824023b18181535012600605bd045370124020024031d24"
            + "040134051824023c18181535012600605bd045370124020024031d24040134051824023e18181535012600605bd045370124020024031d"
            + "24040134051824023f18181535012600605bd045370124020024031d24040134051824024018181535012600605bd045370124020024031d"
            + "240401340518240241181818290424ff0118")

    @Test func chunkedListReportFromConnectedhomeip() throws {
        let message = try ReportDataMessage(payload: Self.chunkedServerList)
        guard case .data(let head)? = message.attributeReports.first else {
            Issue.record("first report is not data")
            return
        }
        #expect(head.path == attr(0, 0x1D, 1))
        #expect(head.data == .array([]))
        let appended: [UInt64] = message.attributeReports.dropFirst().compactMap {
            guard case .data(let d) = $0, d.path.listIndex == .append, d.dataVersion == 0x45D0_5B60 else { return nil }
            return d.data.uintValue
        }
        #expect(appended == [4, 29, 31, 40, 42, 43, 44, 48, 49, 50, 51, 52, 53, 54, 55, 59, 60, 62, 63, 64, 65])
        #expect(message.encoded() == Self.chunkedServerList)
    }

    /// chip's lighting-app answering a read of all of Basic Information (from
    /// matter.js's DataReportDecoder test): strings, a struct, and empty and
    /// chunked global lists.
    static let basicInformation = imHex(
        "15360115350126005515687837012402002403282404001824020118181535012600551568783701240200240328240401182c020b544553545f56454e444f52"
            + "18181535012600551568783701240200240328240402182502f1ff18181535012600551568783701240200240328240403182c020c544553545f50524f44554354"
            + "18181535012600551568783701240200240328240404182502018018181535012600551568783701240200240328240405182c0200181815350126005515687837"
            + "01240200240328240406182c02025553181815350126005515687837012402002403282404071824020018181535012600551568783701240200240328240408"
            + "182c020c544553545f56455253494f4e18181535012600551568783701240200240328240409182402011818153501260055156878370124020024032824040a"
            + "182c0203312e301818153501260055156878370124020024032824040b182c020832303230303130311818153501260055156878370124020024032824040c18"
            + "2c02001818153501260055156878370124020024032824040d182c02001818153501260055156878370124020024032824040e182c0200181815350126005515"
            + "6878370124020024032824040f182c0207544553545f534e18181535012600551568783701240200240328240410182802181815350126005515687837012402"
            + "0024032824041118290218181535012600551568783701240200240328240412182c021032354536333242424137354642453943181815350126005515687837"
            + "012402002403282404131835022400032501ffff18181815350126005515687837012402002403282504fcff1824020018181535012600551568783701240200"
            + "2403282504fdff18240201181815350126005515687837012402002403282504f8ff18360218181815350126005515687837012402002403282504f9ff183602"
            + "18181815350126005515687837012402002403282504faff18360218181815350126005515687837012402002403282504faff34051824020018181535012600"
            + "5515687837012402002403282504faff340518240201181815350126005515687837012402002403282504faff34051824020218181535012600551568783701"
            + "2402002403282504fbff18360218181815350126005515687837012402002403282504fbff34051824020018181535012600551568783701240200240328"
            + "2504fbff340518240201181815350126005515687837012402002403282504fbff3405182402021818153501260055156878370124020024032825"
            + "04fbff340518240203181815350126005515687837012402002403282504fbff340518240204181818290324ff0118")

    @Test func wholeClusterReportFromConnectedhomeip() throws {
        let message = try ReportDataMessage(payload: Self.basicInformation)
        let data = message.attributeReports.compactMap { report -> AttributeDataIB? in
            if case .data(let d) = report { d } else { nil }
        }
        #expect(data.count == message.attributeReports.count)
        #expect(data.allSatisfy { $0.dataVersion == 2_020_087_125 })
        #expect(data.first { $0.path == attr(0, 0x28, 1) }?.data == .utf8("TEST_VENDOR"))
        #expect(data.first { $0.path == attr(0, 0x28, 2) }?.data == .unsigned(0xFFF1))
        #expect(
            data.first { $0.path == attr(0, 0x28, 0x13) }?.data
                == .structure([.context(0, .unsigned(3)), .context(1, .unsigned(0xFFFF))]))
        let attributeListAppends = data.filter { $0.path == AttributePathIB(ap(0, 0x28, 0xFFFB), listIndex: .append) }
        #expect(attributeListAppends.map(\.data) == (0...4).map { TLVValue.unsigned($0) })
        #expect(message.encoded() == Self.basicInformation)
    }

    /// chip-tool invoking OnOff Off on endpoint 1 (captured in Tasmota's Matter sources).
    static let chipToolInvoke = imHex("1528002801360215370024000124010624020018350118181824FF0118")

    @Test func invokeRequestFromChipTool() throws {
        let message = try InvokeRequestMessage(payload: Self.chipToolInvoke)
        #expect(!message.suppressResponse && !message.timedRequest)
        #expect(
            message.invokeRequests == [
                CommandDataIB(path: CommandPathIB(endpoint: 1, cluster: ClusterID(6), command: CommandID(0)), fields: .structure([]))
            ])
        #expect(message.encoded() == Self.chipToolInvoke)
    }

    /// matter.js Crypto test plaintext (payload header stripped): an
    /// InvokeResponse with a SUCCESS CommandStatusIB for 0/0x3E/0x0B.
    static let invokeResponse = imHex("1528003601153501370024000024013e24020b1835012400001818181824ff0118")

    @Test func invokeResponseFromMatterJS() throws {
        let message = try InvokeResponseMessage(payload: Self.invokeResponse)
        #expect(
            message.invokeResponses == [
                .status(
                    CommandStatusIB(
                        path: CommandPathIB(endpoint: 0, cluster: ClusterID(0x3E), command: CommandID(0x0B)), status: .success))
            ])
        #expect(!message.moreChunkedMessages && !message.suppressResponse)
        #expect(message.encoded() == Self.invokeResponse)
    }

    @Test func invokeResponseWithCommandHandDerived() {
        // Hand-derived from spec 10.7.10 / 10.6.13 / 10.6.12 tags: a response
        // command 0x0003 on 1/0x0101 with field 0 = 5 and CommandRef 2.
        let message = InvokeResponseMessage(invokeResponses: [
            .command(
                CommandDataIB(
                    path: CommandPathIB(endpoint: 1, cluster: ClusterID(0x0101), command: CommandID(3)),
                    fields: .structure([.context(0, .unsigned(5))]), ref: 2))
        ])
        #expect(
            imHexString(message.encoded())
                == "15280036011535003700240001250101012402031835012400051824020218181824ff0c18")
    }
}

@Suite("Interaction Model codecs: round trips")
struct IMRoundTripTests {
    func roundTrip<M: InteractionMessage>(_ message: M) throws {
        let decoded = try M(payload: message.encoded())
        #expect(decoded == message)
    }

    @Test func everyMessageRoundTrips() throws {
        let path = AttributePathIB(
            enableTagCompression: false, node: 0x1122_3344_5566_7788, endpoint: 0xFFFE, cluster: ClusterID(0xFFF1_FC00),
            attribute: AttributeID(0xFFFD), listIndex: .index(7), wildcardPathFlags: 3)
        let eventPath = EventPathIB(node: 9, endpoint: 1, cluster: ClusterID(0x28), event: EventID(0), isUrgent: true)
        let filter = DataVersionFilterIB(path: ClusterPathIB(node: 1, endpoint: 1, cluster: ClusterID(6)), dataVersion: .max)
        let status = StatusIB(.failure, clusterStatus: 0x42)
        try roundTrip(StatusResponseMessage(status: .timedRequestMismatch))
        try roundTrip(
            ReadRequestMessage(
                attributeRequests: [path, AttributePathIB()], eventRequests: [eventPath],
                eventFilters: [EventFilterIB(node: 1, eventMin: 77)], isFabricFiltered: false, dataVersionFilters: [filter]))
        try roundTrip(
            SubscribeRequestMessage(
                keepSubscriptions: false, minIntervalFloor: 1, maxIntervalCeiling: 60, attributeRequests: [path],
                eventRequests: [eventPath], eventFilters: [EventFilterIB(eventMin: 3)], isFabricFiltered: true,
                dataVersionFilters: [filter]))
        try roundTrip(SubscribeResponseMessage(subscriptionID: 0xDEAD_BEEF, maxInterval: 3600))
        try roundTrip(
            ReportDataMessage(
                subscriptionID: 5,
                attributeReports: [
                    .status(AttributeStatusIB(path: path, status: status)),
                    .data(AttributeDataIB(dataVersion: 1, path: AttributePathIB(endpoint: 1, listIndex: .append), data: .null)),
                ],
                eventReports: [
                    .data(
                        EventDataIB(
                            path: eventPath, eventNumber: 100, priority: .critical, epochTimestamp: 1_700_000_000_000,
                            systemTimestamp: nil, deltaEpochTimestamp: 4, deltaSystemTimestamp: 5,
                            data: .structure([.context(0, .utf8("x"))]))),
                    .status(EventStatusIB(path: eventPath, status: StatusIB(.unsupportedEvent))),
                ],
                moreChunkedMessages: true, suppressResponse: true))
        try roundTrip(
            WriteRequestMessage(
                suppressResponse: true, timedRequest: true,
                writeRequests: [AttributeDataIB(path: path, data: .array([.init(.bool(true))]))], moreChunkedMessages: true))
        try roundTrip(WriteResponseMessage(writeResponses: [AttributeStatusIB(path: path, status: .success)]))
        try roundTrip(
            InvokeRequestMessage(
                suppressResponse: true, timedRequest: true,
                invokeRequests: [
                    CommandDataIB(path: CommandPathIB(endpoint: nil, cluster: ClusterID(6), command: CommandID(2)), ref: 65535)
                ]))
        try roundTrip(
            InvokeResponseMessage(
                suppressResponse: true,
                invokeResponses: [
                    .status(
                        CommandStatusIB(
                            path: CommandPathIB(endpoint: 1, cluster: ClusterID(6), command: CommandID(2)), status: status, ref: 1))
                ], moreChunkedMessages: true))
        try roundTrip(TimedRequestMessage(timeout: 500))
    }

    @Test func handDerivedSmallMessages() {
        // Spec 10.7.1: {0 = status, 0xFF = revision}.
        #expect(imHexString(StatusResponseMessage(status: .success).encoded()) == "1524000024ff0c18")
        // Spec 10.7.8: {0 = timeout ms}.
        #expect(imHexString(TimedRequestMessage(timeout: 1000).encoded()) == "152500e80324ff0c18")
        // Spec 10.7.5: {0 = subscription ID, 2 = max interval}.
        #expect(
            imHexString(SubscribeResponseMessage(subscriptionID: 0x12345678, maxInterval: 60).encoded()) == "152600785634122402"
                + "3c24ff0c18")
        // A wildcard path is an empty list; listIndex null is tag 5 null (0x34 0x05).
        #expect(imHexString(AttributePathIB().element().encoded()) == "1718")
        #expect(imHexString(AttributePathIB(endpoint: 1, listIndex: .append).element().encoded()) == "1724020134" + "0518")
    }
}

@Suite("Interaction Model codecs: malformed input")
struct IMMalformedTests {
    @Test func notTLV() {
        #expect(throws: IMDecodingError.self) { try ReadRequestMessage(payload: [0x15, 0x36]) }
        #expect(throws: IMDecodingError.self) { try ReadRequestMessage(payload: []) }
    }

    @Test func wrongTypesAndRanges() throws {
        // Endpoint 0x10000 does not fit an endpoint number.
        let tooBig = TLVElement(.structure([.context(0, .array([.init(.list([.context(2, .unsigned(0x10000))]))]))]))
        #expect(throws: IMDecodingError.self) { try ReadRequestMessage(payload: tooBig.encoded()) }
        // A signed integer where the cluster ID goes.
        let signed = TLVElement(.structure([.context(0, .array([.init(.list([.context(3, .signed(6))]))]))]))
        let error = try #require(throws: IMDecodingError.self) { try ReadRequestMessage(payload: signed.encoded()) }
        #expect(error.field == "ReadRequestMessage.attributeRequests[0].cluster")
        // The payload is not a structure at all.
        #expect(throws: IMDecodingError.self) { try InvokeRequestMessage(payload: TLVElement(.unsigned(1)).encoded()) }
        // InvokeRequests is mandatory.
        #expect(throws: IMDecodingError.self) {
            try InvokeRequestMessage(payload: TLVElement(.structure([.context(0, .bool(false))])).encoded())
        }
    }

    @Test func reportWithBothStatusAndData() {
        let path = AttributePathIB(endpoint: 1, cluster: ClusterID(6), attribute: AttributeID(0))
        let both = TLVValue.structure([
            .context(0, AttributeStatusIB(path: path, status: .success).tlvValue),
            .context(1, AttributeDataIB(path: path, data: .bool(true)).tlvValue),
        ])
        #expect(throws: IMDecodingError.self) { try AttributeReportIB(tlvValue: both) }
        #expect(throws: IMDecodingError.self) { try AttributeReportIB(tlvValue: .structure([])) }
    }

    @Test func unknownStatusCodeReadsAsFailure() throws {
        let status = try StatusIB(tlvValue: .structure([.context(0, .unsigned(0x77))]))
        #expect(status.status.status == .failure)
    }

    /// Decoding then re-encoding a decoded message reproduces it: holds for
    /// whatever survives decoding.
    func stable<M: InteractionMessage>(_ type: M.Type, _ bytes: [UInt8]) -> Bool {
        guard let message = try? M(payload: bytes) else { return true }
        return (try? M(payload: message.encoded())) == message
    }

    @Test func mutatedVectorsNeverTrap() {
        // Flip, truncate and splice the published vectors; every outcome must
        // be a typed error or a message that re-encodes to itself.
        var generator = SystemRandomNumberGenerator()
        let seeds = [IMVectorTests.chipToolRead, IMVectorTests.twoReports, IMVectorTests.chipToolInvoke, IMVectorTests.invokeResponse]
        for seed in seeds {
            for _ in 0..<400 {
                var bytes = seed
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                case 1: bytes.removeLast(Int.random(in: 1..<bytes.count, using: &generator))
                default: bytes.insert(UInt8.random(in: 0...255, using: &generator), at: Int.random(in: 0..<bytes.count, using: &generator))
                }
                #expect(stable(ReadRequestMessage.self, bytes))
                #expect(stable(ReportDataMessage.self, bytes))
                #expect(stable(InvokeRequestMessage.self, bytes))
                #expect(stable(InvokeResponseMessage.self, bytes))
                #expect(stable(WriteRequestMessage.self, bytes))
                #expect(stable(SubscribeRequestMessage.self, bytes))
            }
        }
    }
}
