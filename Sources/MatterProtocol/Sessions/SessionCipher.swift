import MatterCrypto

/// Which side of a session establishment this node took: it decides which of the
/// I2R/R2I keys encrypts and which decrypts (spec 4.14.1.3).
public enum SessionRole: Sendable, Hashable {
    case initiator
    case responder
}

/// Message encryption of one secure unicast session (Matter Core spec 4.8):
/// AES-128-CCM with nonce = security flags || message counter (LE) || source node ID (LE)
/// and the message header as additional authenticated data.
public struct SessionCipher: Sendable {
    private let encryptor: AES128CCM
    private let decryptor: AES128CCM
    /// Node ID placed in the nonce of messages this node sends (0 for PASE).
    public let localNodeID: UInt64
    /// Node ID in the nonce of messages from the peer when their header carries none (0 for PASE).
    public let peerNodeID: UInt64

    public init(keys: SessionKeys, role: SessionRole, localNodeID: UInt64, peerNodeID: UInt64) throws(MatterCryptoError) {
        switch role {
        case .initiator:
            encryptor = try AES128CCM(key: keys.i2rKey)
            decryptor = try AES128CCM(key: keys.r2iKey)
        case .responder:
            encryptor = try AES128CCM(key: keys.r2iKey)
            decryptor = try AES128CCM(key: keys.i2rKey)
        }
        self.localNodeID = localNodeID
        self.peerNodeID = peerNodeID
    }

    /// The 13-byte AES-CCM nonce (spec 4.8.1.1).
    public static func nonce(securityFlags: UInt8, messageCounter: UInt32, sourceNodeID: UInt64) -> [UInt8] {
        var n: [UInt8] = [securityFlags]
        n.reserveCapacity(13)
        n.appendLE(messageCounter)
        n.appendLE(sourceNodeID)
        return n
    }

    /// Encodes `header`, then encrypts `protocolMessage` (protocol header + payload)
    /// with the header as AAD. Returns the complete datagram: header || ciphertext || MIC.
    public func seal(header: MessageHeader, protocolMessage: [UInt8]) throws(TransportError) -> [UInt8] {
        let headerBytes: [UInt8]
        do { headerBytes = try header.encoded() } catch { throw .codec(error) }
        let nonce = Self.nonce(
            securityFlags: header.securityFlags, messageCounter: header.messageCounter,
            sourceNodeID: localNodeID)
        do {
            return headerBytes + (try encryptor.seal(protocolMessage, nonce: nonce, aad: headerBytes))
        } catch {
            throw .crypto(error)
        }
    }

    /// Verifies and decrypts the part of `datagram` after the header (`headerLength` bytes).
    /// Returns the protocol header + payload.
    public func open(datagram: [UInt8], header: MessageHeader, headerLength: Int) throws(TransportError) -> [UInt8] {
        guard headerLength >= 0, headerLength <= datagram.count,
            datagram.count - headerLength >= AES128CCM.micLength
        else { throw .codec(.truncated(field: "message integrity check")) }
        let nonce = Self.nonce(
            securityFlags: header.securityFlags, messageCounter: header.messageCounter,
            sourceNodeID: header.sourceNodeID ?? peerNodeID)
        do {
            return try decryptor.open(Array(datagram[headerLength...]), nonce: nonce, aad: Array(datagram[..<headerLength]))
        } catch {
            throw .crypto(error)
        }
    }
}
