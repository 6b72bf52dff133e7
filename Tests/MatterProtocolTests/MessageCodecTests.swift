import MatterCrypto
import MatterTLV
@testable import MatterProtocol
import Testing

@Suite("Message codec (spec 4.4)")
struct MessageCodecTests {
    /// A PBKDFParamRequest as sent by a commissioner (captured from chip-tool, published in matter.js's tests).
    static let capturedPBKDFParamRequest = [UInt8](
        hexString:
            "040000000a4ff2177ea0c8a7cb6a63520520d3640000153001204715a406c6b0496ad52039e347db8528cb69a1cb2fce6f2318552ae65e103aca250233dc240300280435052501881325022c011818"
    )!

    @Test func decodesCapturedUnsecuredMessage() throws {
        let bytes = Self.capturedPBKDFParamRequest
        let (header, length) = try MessageHeader.decode(bytes)
        #expect(length == 16)
        #expect(header.sessionID == 0)
        #expect(header.isUnsecured)
        #expect(header.sessionType == .unicast)
        #expect(header.messageCounter == 401_755_914)
        #expect(header.sourceNodeID == 5_936_706_156_730_294_398)
        #expect(header.destination == .none)
        #expect(!header.isControlMessage && !header.privacy && header.messageExtensions == nil)

        let (ph, payload) = try ProtocolHeader.decode(Array(bytes[length...]))
        #expect(ph.isInitiator)
        #expect(ph.needsAcknowledgement)
        #expect(ph.acknowledgedMessageCounter == nil)
        #expect(ph.opcode == SecureChannelOpcode.pbkdfParamRequest.rawValue)
        #expect(ph.exchangeID == 0x64D3)
        #expect(ph.protocolID == .secureChannel)

        let request = try PBKDFParamRequest(decoding: payload)
        #expect(request.initiatorRandom.hexString == "4715a406c6b0496ad52039e347db8528cb69a1cb2fce6f2318552ae65e103aca")
        #expect(request.initiatorSessionID == 0xDC33)
        #expect(request.passcodeID == 0)
        #expect(request.hasPBKDFParameters == false)
        #expect(request.initiatorSessionParameters?.idleInterval == .milliseconds(5000))
        #expect(request.initiatorSessionParameters?.activeInterval == .milliseconds(300))

        // Re-encoding both headers reproduces the captured bytes.
        var reencoded = try header.encoded()
        try ph.encode(into: &reencoded)
        reencoded += payload
        #expect(reencoded == bytes)
    }

    @Test(arguments: [
        MessageHeader(sessionID: 0, messageCounter: 1, sourceNodeID: 0x1122_3344_5566_7788),
        MessageHeader(sessionID: 0, messageCounter: 0xFFFF_FFFF, destination: .node(0xDEAD_BEEF_0000_0001)),
        MessageHeader(sessionID: 0xABCD, messageCounter: 42),
        MessageHeader(sessionID: 7, messageCounter: 9, isControlMessage: true),
        MessageHeader(sessionID: 0x1234, messageCounter: 77, sourceNodeID: 5, destination: .group(0xBEEF), sessionType: .group),
        MessageHeader(sessionID: 3, messageCounter: 3, sourceNodeID: 1, destination: .node(2), messageExtensions: [1, 2, 3]),
        MessageHeader(sessionID: 3, messageCounter: 3, messageExtensions: []),
    ])
    func messageHeaderRoundTrips(header: MessageHeader) throws {
        let bytes = try header.encoded() + [0xAA, 0xBB]
        let (decoded, length) = try MessageHeader.decode(bytes)
        #expect(decoded == header)
        #expect(length == bytes.count - 2)
    }

    @Test func messageHeaderFieldLayout() throws {
        let h = MessageHeader(
            sessionID: 0x0102, messageCounter: 0x0A0B_0C0D, sourceNodeID: 0x1112_1314_1516_1718,
            destination: .group(0x2122), sessionType: .group, isControlMessage: true)
        // flags: S | DSIZ=2; security: C | group; all integers little-endian.
        #expect(
            try h.encoded() == [
                0x06, 0x02, 0x01, 0x41, 0x0D, 0x0C, 0x0B, 0x0A,
                0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11, 0x22, 0x21,
            ])
    }

    @Test(arguments: [
        ProtocolHeader(isInitiator: true, needsAcknowledgement: true, opcode: 0x08, exchangeID: 1, protocolID: .interactionModel),
        ProtocolHeader(
            isInitiator: false, acknowledgedMessageCounter: 0x1234_5678, opcode: 0x10, exchangeID: 0xFFFF,
            protocolID: .secureChannel),
        ProtocolHeader(isInitiator: true, opcode: 0x01, exchangeID: 9, protocolID: ProtocolID(vendorID: 0xFFF1, 0x8001)),
        ProtocolHeader(
            isInitiator: false, needsAcknowledgement: true, acknowledgedMessageCounter: 1, opcode: 0x05,
            exchangeID: 2, protocolID: .bdx, securedExtensions: [9, 9]),
    ])
    func protocolHeaderRoundTrips(header: ProtocolHeader) throws {
        let bytes = try header.encoded(payload: [1, 2, 3])
        let (decoded, payload) = try ProtocolHeader.decode(bytes)
        #expect(decoded == header)
        #expect(payload == [1, 2, 3])
    }

    @Test func protocolHeaderFieldLayout() throws {
        let h = ProtocolHeader(
            isInitiator: true, needsAcknowledgement: true, acknowledgedMessageCounter: 0x0102_0304,
            opcode: 0x02, exchangeID: 0x0A0B, protocolID: ProtocolID(vendorID: 0xFFF1, 0x0005))
        // flags I|A|R|V, opcode, exchange ID, vendor ID, protocol ID, ack counter.
        #expect(try h.encoded() == [0x17, 0x02, 0x0B, 0x0A, 0xF1, 0xFF, 0x05, 0x00, 0x04, 0x03, 0x02, 0x01])
    }

    @Test func rejectsReservedAndUnsupportedForms() {
        #expect(throws: MessageCodecError.unsupportedVersion(1)) { try MessageHeader.decode([0x10, 0, 0, 0, 1, 0, 0, 0]) }
        #expect(throws: MessageCodecError.reservedDestinationSize) { try MessageHeader.decode([0x03, 0, 0, 0, 1, 0, 0, 0]) }
        #expect(throws: MessageCodecError.reservedSessionType(2)) { try MessageHeader.decode([0x00, 0, 0, 0x02, 1, 0, 0, 0]) }
        // Group session without source node ID.
        #expect(throws: MessageCodecError.self) { try MessageHeader.decode([0x02, 1, 0, 0x01, 1, 0, 0, 0, 5, 0]) }
        // Unicast addressed to a group.
        #expect(throws: MessageCodecError.self) { try MessageHeader.decode([0x02, 1, 0, 0x00, 1, 0, 0, 0, 5, 0]) }
    }

    @Test func everyTruncationIsATypedError() throws {
        let bytes = Self.capturedPBKDFParamRequest
        for cut in 0..<16 {
            #expect(throws: MessageCodecError.self) { try MessageHeader.decode(Array(bytes[..<cut])) }
        }
        let protocolBytes = Array(bytes[16...])
        for cut in 0..<6 {
            #expect(throws: MessageCodecError.self) { try ProtocolHeader.decode(Array(protocolBytes[..<cut])) }
        }
        // A message-extensions length pointing past the end.
        #expect(throws: MessageCodecError.truncated(field: "message extensions")) {
            try MessageHeader.decode([0x00, 0, 0, 0x20, 1, 0, 0, 0, 0xFF, 0xFF, 1])
        }
    }

    @Test func statusReportCodec() throws {
        let busy = StatusReport.busy(retryAfter: .milliseconds(1000))
        #expect(busy.encoded() == [0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0xE8, 0x03])
        #expect(try StatusReport.decode(busy.encoded()) == busy)
        #expect(try StatusReport.decode(busy.encoded()).secureChannelCode == .busy)

        let close = try StatusReport.decode([0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00])
        #expect(close == .closeSession)
        #expect(close.isSuccess)

        let vendor = StatusReport(generalCode: 1, protocolID: ProtocolID(vendorID: 0xFFF1, 0x0002), protocolCode: 0x55)
        #expect(vendor.encoded() == [0x01, 0x00, 0x02, 0x00, 0xF1, 0xFF, 0x55, 0x00])
        #expect(try StatusReport.decode(vendor.encoded()) == vendor)
        #expect(throws: MessageCodecError.self) { try StatusReport.decode([0, 0, 0, 0, 0, 0, 3]) }
    }

    @Test func sessionParametersTLV() throws {
        let p = SessionParameters(
            idleInterval: .milliseconds(5000), activeInterval: .milliseconds(300),
            activeThreshold: .milliseconds(4000), dataModelRevision: 17,
            interactionModelRevision: 11, specificationVersion: 0x0103_0000, maxPathsPerInvoke: 1)
        let element = p.tlv(tag: .context(5))
        #expect(try SessionParameters(tlv: element.value) == p)
        // Absent fields take the spec defaults.
        let empty = try SessionParameters(tlv: .structure([]))
        #expect(empty == .default)
        #expect(throws: SecureChannelError.self) { try SessionParameters(tlv: .structure([.context(1, .signed(-1))])) }
        #expect(throws: SecureChannelError.self) { try SessionParameters(tlv: .unsigned(3)) }
    }
}
