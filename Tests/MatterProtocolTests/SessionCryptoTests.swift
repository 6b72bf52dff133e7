import MatterCrypto
@testable import MatterProtocol
import Testing

@Suite("Message security (spec 4.6, 4.8)")
struct SessionCryptoTests {
    let keys = SessionKeys(
        i2rKey: [UInt8](repeating: 0x11, count: 16), r2iKey: [UInt8](repeating: 0x22, count: 16),
        attestationChallenge: [UInt8](repeating: 0x33, count: 16))

    @Test func nonceLayout() {
        let nonce = SessionCipher.nonce(securityFlags: 0x41, messageCounter: 0x0102_0304, sourceNodeID: 0x1112_1314_1516_1718)
        #expect(nonce == [0x41, 0x04, 0x03, 0x02, 0x01, 0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11])
    }

    @Test func sealInOneSessionOpenInItsPeer() throws {
        // CASE-like: node IDs enter the nonce.
        let initiator = try SessionCipher(keys: keys, role: .initiator, localNodeID: 0xAAAA, peerNodeID: 0xBBBB)
        let responder = try SessionCipher(keys: keys, role: .responder, localNodeID: 0xBBBB, peerNodeID: 0xAAAA)
        let header = MessageHeader(sessionID: 0x1234, messageCounter: 1000)
        let plaintext = try ProtocolHeader(
            isInitiator: true, needsAcknowledgement: true, opcode: 2, exchangeID: 5,
            protocolID: .interactionModel
        ).encoded(payload: Array("hello".utf8))
        let datagram = try initiator.seal(header: header, protocolMessage: plaintext)
        let headerLength = try header.encoded().count
        #expect(datagram.count == headerLength + plaintext.count + 16)
        #expect(Array(datagram[..<headerLength]) == (try header.encoded()))
        #expect(try responder.open(datagram: datagram, header: header, headerLength: headerLength) == plaintext)

        // The ciphertext is what AES-CCM gives for nonce (flags, counter, sender node ID) and AAD = header.
        let expected = try AES128CCM(key: keys.i2rKey).seal(
            plaintext, nonce: SessionCipher.nonce(securityFlags: 0, messageCounter: 1000, sourceNodeID: 0xAAAA),
            aad: try header.encoded())
        #expect(Array(datagram[headerLength...]) == expected)

        // And the reverse direction uses R2I.
        let back = try responder.seal(header: MessageHeader(sessionID: 0x9999, messageCounter: 7), protocolMessage: [1, 2, 3])
        #expect(
            try initiator.open(
                datagram: back, header: MessageHeader(sessionID: 0x9999, messageCounter: 7),
                headerLength: 8) == [1, 2, 3])
    }

    @Test func tamperingOrWrongNonceFails() throws {
        let initiator = try SessionCipher(keys: keys, role: .initiator, localNodeID: 0, peerNodeID: 0)
        let responder = try SessionCipher(keys: keys, role: .responder, localNodeID: 0, peerNodeID: 0)
        let header = MessageHeader(sessionID: 1, messageCounter: 55)
        let datagram = try initiator.seal(header: header, protocolMessage: Array(repeating: 7, count: 20))

        var headerTampered = datagram
        headerTampered[4] ^= 0x01  // counter byte: part of both AAD and nonce
        let (h2, l2) = try MessageHeader.decode(headerTampered)
        #expect(throws: TransportError.crypto(.authenticationFailed)) {
            try responder.open(datagram: headerTampered, header: h2, headerLength: l2)
        }
        var bodyTampered = datagram
        bodyTampered[10] ^= 0x80
        #expect(throws: TransportError.crypto(.authenticationFailed)) {
            try responder.open(datagram: bodyTampered, header: header, headerLength: 8)
        }
        // A responder expecting another sender node ID builds another nonce.
        let confused = try SessionCipher(keys: keys, role: .responder, localNodeID: 0, peerNodeID: 1)
        #expect(throws: TransportError.crypto(.authenticationFailed)) {
            try confused.open(datagram: datagram, header: header, headerLength: 8)
        }
        // Same role on both ends means the wrong key.
        #expect(throws: TransportError.self) { try initiator.open(datagram: datagram, header: header, headerLength: 8) }
        // Too short to hold a MIC.
        #expect(throws: TransportError.self) { try responder.open(datagram: Array(datagram[..<20]), header: header, headerLength: 8) }
    }

    @Test func duplicateWindowForEncryptedUnicast() {
        var c = PeerMessageCounter(synchronizedAt: 0)
        #expect(c.acceptEncryptedUnicast(100) == .new)
        #expect(c.acceptEncryptedUnicast(100) == .duplicate)
        #expect(c.acceptEncryptedUnicast(99) == .new)  // late but inside the window
        #expect(c.acceptEncryptedUnicast(99) == .duplicate)
        #expect(c.acceptEncryptedUnicast(68) == .new)  // offset 32: the window's oldest slot
        #expect(c.acceptEncryptedUnicast(67) == .duplicate)  // offset 33: before the window
        #expect(c.acceptEncryptedUnicast(131) == .new)  // shift by 31
        #expect(c.acceptEncryptedUnicast(100) == .duplicate)  // still remembered at offset 31
        #expect(c.acceptEncryptedUnicast(101) == .new)
        #expect(c.acceptEncryptedUnicast(1000) == .new)  // big jump clears the window
        #expect(c.acceptEncryptedUnicast(999) == .new)
        #expect(c.acceptEncryptedUnicast(131) == .duplicate)
        // No rollover for encrypted unicast: a wrapped counter is old.
        #expect(c.acceptEncryptedUnicast(5) == .duplicate)
        #expect(c.maxCounter == 1000)
    }

    @Test func everyCounterInTheWindowIsAcceptedOnce() {
        var c = PeerMessageCounter(synchronizedAt: 0)
        #expect(c.acceptEncryptedUnicast(1000) == .new)
        for n in (968..<1000).reversed() { #expect(c.acceptEncryptedUnicast(UInt32(n)) == .new) }
        for n in 968...1000 { #expect(c.acceptEncryptedUnicast(UInt32(n)) == .duplicate) }
    }

    @Test func unencryptedCountersRollOverAndResync() {
        var c = PeerMessageCounter()
        #expect(c.acceptUnencrypted(0xFFFF_FFF0) == .new)  // first message sets the counter
        #expect(c.acceptUnencrypted(0xFFFF_FFF0) == .duplicate)
        #expect(c.acceptUnencrypted(3) == .new)  // rollover is fine
        #expect(c.acceptUnencrypted(0xFFFF_FFF5) == .new)  // inside the window across the wrap
        #expect(c.acceptUnencrypted(0xFFFF_FFF5) == .duplicate)
        #expect(c.acceptUnencrypted(0x8000_0000) == .new)  // far behind: the peer restarted
        #expect(c.maxCounter == 0x8000_0000)
        #expect(c.acceptUnencrypted(0x8000_0000) == .duplicate)
    }

    @Test func localCountersStartInRangeAndSecureOnesDoNotWrap() {
        for _ in 0..<100 {
            let v = MessageCounter.randomInitialValue()
            #expect(v >= 1 && v <= 1 << 28)
        }
        var secure = MessageCounter(allowsRollover: false, initialValue: UInt32.max - 1)
        #expect(secure.take() == UInt32.max - 1)
        #expect(secure.take() == UInt32.max)
        #expect(secure.take() == nil)
        var global = MessageCounter(allowsRollover: true, initialValue: UInt32.max)
        #expect(global.take() == UInt32.max)
        #expect(global.take() == 0)
    }
}
