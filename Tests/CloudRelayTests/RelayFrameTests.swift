@testable import CloudRelay
import MatterTLV
@testable import RelayProtocol
import Testing

@Suite struct RelayFrameTests {
    static let samples: [RelayFrame] = [
        .hello(RelayHello(homeID: "h0123456789ab", deviceID: "kitchen-light")),
        .hello(RelayHello(homeID: "h0123456789ab", session: 7)),
        .message(RelayMessage(deviceID: "kitchen-light", exchangeID: 0xFFFF_FFFF, fromInitiator: true, opcode: 8, payload: [0x15, 0x18])),
        .message(RelayMessage(session: 42, exchangeID: 1, fromInitiator: false, opcode: 5, payload: [])),
        .failure(RelayFailure(deviceID: "d", exchangeID: 9, fromInitiator: true, reason: .deviceOffline)),
        .failure(RelayFailure(session: 3, exchangeID: 9, fromInitiator: false, reason: .sessionGone)),
        .presence(RelayPresence(deviceID: "porch.light_2", online: false)),
    ]

    @Test(arguments: samples) func roundTrips(_ frame: RelayFrame) throws {
        #expect(try RelayFrame(decoding: frame.encoded()) == frame)
    }

    @Test func encodingIsAContextTaggedStructure() throws {
        let bytes = RelayFrame.message(RelayMessage(deviceID: "a", exchangeID: 2, fromInitiator: true, opcode: 8, payload: [0xAB]))
            .encoded()
        let element = try TLVElement.decode(bytes)
        #expect(element.value[context: 0] == .unsigned(1))
        #expect(element.value[context: 1] == .utf8("a"))
        #expect(element.value[context: 3] == .unsigned(2))
        #expect(element.value[context: 4] == .bool(true))
        #expect(element.value[context: 5] == .unsigned(8))
        #expect(element.value[context: 6] == .bytes([0xAB]))
    }

    @Test func malformedInputIsATypedError() {
        func decode(_ value: TLVValue) -> RelayFrameError? {
            do {
                _ = try RelayFrame(decoding: TLVElement(value).encoded())
                return nil
            } catch {
                return error
            }
        }
        #expect(throws: RelayFrameError.self) { try RelayFrame(decoding: [UInt8]()) }
        #expect(throws: RelayFrameError.self) { try RelayFrame(decoding: [0x15, 0x24, 0x00]) }
        #expect(decode(.array([])) == .notAStructure)
        #expect(decode(.structure([])) == .missingField("kind"))
        #expect(decode(.structure([.context(0, .unsigned(99))])) == .unknownKind(99))
        #expect(decode(.structure([.context(0, .signed(1))])) == .invalidField("kind"))
        #expect(decode(.structure([.context(0, .unsigned(1))])) == .missingField("exchangeID"))
        let message: [TLVElement] = [
            .context(0, .unsigned(1)), .context(3, .unsigned(1)), .context(4, .bool(true)), .context(5, .unsigned(8)),
        ]
        #expect(decode(.structure(message)) == .missingField("payload"))
        #expect(decode(.structure(message + [.context(6, .utf8("x"))])) == .invalidField("payload"))
        #expect(decode(.structure(message + [.context(6, .bytes([])), .context(1, .utf8("bad id"))])) == .invalidField("deviceID"))
        #expect(
            decode(.structure(message + [.context(6, .bytes([])), .context(1, .utf8(String(repeating: "a", count: 65)))]))
                == .invalidField("deviceID"))
        #expect(decode(.structure([.context(0, .unsigned(1)), .context(3, .unsigned(1 << 33))])) == .invalidField("exchangeID"))
        #expect(
            decode(.structure([.context(0, .unsigned(2)), .context(3, .unsigned(1)), .context(4, .bool(true)), .context(7, .unsigned(1))]))
                == .invalidField("reason"))
        #expect(decode(.structure([.context(0, .unsigned(3)), .context(1, .utf8("d"))])) == .missingField("online"))
    }

    @Test func randomAndMutatedBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        let valid = Self.samples.map { $0.encoded() }
        var decoded = 0
        for round in 0..<5_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = valid[round % valid.count]
                for _ in 0..<Int.random(in: 1...4, using: &generator) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
                if Bool.random(using: &generator) { bytes.removeLast(Int.random(in: 0...bytes.count, using: &generator)) }
            }
            if (try? RelayFrame(decoding: bytes)) != nil { decoded += 1 }
        }
        // Some mutations still decode (e.g. a flipped payload byte); most do not.
        #expect(decoded < 5_000)
    }

    @Test func identifiers() {
        #expect(RelayFrame.isValidIdentifier("kitchen-light.1_a"))
        #expect(!RelayFrame.isValidIdentifier(""))
        #expect(!RelayFrame.isValidIdentifier("with space"))
        #expect(!RelayFrame.isValidIdentifier("ünicode"))
        #expect(!RelayFrame.isValidIdentifier(String(repeating: "x", count: 65)))
    }

    @Test func bearerParsing() {
        #expect(RelayCredentials.bearer("Bearer abc") == "abc")
        #expect(RelayCredentials.bearer("bearer   abc ") == "abc")
        #expect(RelayCredentials.bearer("Basic abc") == nil)
        #expect(RelayCredentials.bearer("Bearer") == nil)
        #expect(RelayCredentials.bearer(nil) == nil)
        #expect(RelayCredentials.bearer("Bearer " + String(repeating: "a", count: 300)) == nil)
        let token = RelayCredentials.generate(prefix: "mrh_")
        #expect(token.hasPrefix("mrh_") && token.count == 4 + 43)
        #expect(RelayCredentials.constantTimeEquals(token, token))
        #expect(!RelayCredentials.constantTimeEquals(token, token + "x"))
    }
}
