import Crypto
import Foundation

/// A P-256 public key (Matter Core spec 3.5), kept in the uncompressed SEC1 form
/// (0x04 || X || Y, 65 bytes) that Matter certificates and messages carry.
public struct P256PublicKey: Sendable, Hashable {
    public static let uncompressedLength = 65

    /// 0x04 || X || Y.
    public let uncompressed: [UInt8]

    /// Parses an uncompressed (65-byte) or compressed (33-byte) SEC1 point; rejects points off the curve.
    public init(_ encoded: [UInt8]) throws(MatterCryptoError) {
        do {
            let key: P256.Signing.PublicKey
            switch encoded.count {
            case 65: key = try P256.Signing.PublicKey(x963Representation: encoded)
            case 33: key = try P256.Signing.PublicKey(compressedRepresentation: encoded)
            default: throw MatterCryptoError.invalidPublicKey
            }
            self.uncompressed = Array(key.x963Representation)
        } catch {
            throw .invalidPublicKey
        }
    }

    init(signingKey: P256.Signing.PublicKey) {
        self.uncompressed = Array(signingKey.x963Representation)
    }

    var signingKey: P256.Signing.PublicKey {
        // `uncompressed` was validated at construction.
        try! P256.Signing.PublicKey(x963Representation: uncompressed)
    }

    /// Crypto_Verify: ECDSA-SHA256 over `message`; `signature` is raw r || s (64 bytes).
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 64,
            let sig = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return false }
        return signingKey.isValidSignature(sig, for: message)
    }

    /// Like `isValidSignature` but throws `.signatureVerificationFailed`.
    public func verifySignature(_ signature: [UInt8], for message: [UInt8]) throws(MatterCryptoError) {
        guard isValidSignature(signature, for: message) else { throw .signatureVerificationFailed }
    }

    /// Verifies an ECDSA-SHA256 signature given as DER Ecdsa-Sig-Value (as in X.509 and CMS).
    public func isValidDERSignature(_ der: [UInt8], for message: [UInt8]) -> Bool {
        guard let raw = try? ECDSASignatureEncoding.raw(fromDER: der) else { return false }
        return isValidSignature(raw, for: message)
    }

    /// SHA-1 of the public key bytes: the Matter subject/authority key identifier (spec 6.5.11.4).
    public var keyIdentifier: [UInt8] {
        Array(Insecure.SHA1.hash(data: uncompressed))
    }
}

/// A P-256 key pair used for ECDSA signing (Crypto_Sign) and ECDH (Crypto_ECDH).
public struct P256KeyPair: Sendable {
    public static let privateKeyLength = 32

    private let signingKey: P256.Signing.PrivateKey

    /// Crypto_GenerateKeypair: a fresh random key pair.
    public init() {
        signingKey = P256.Signing.PrivateKey()
    }

    /// From the 32-byte big-endian private scalar.
    public init(rawPrivateKey: [UInt8]) throws(MatterCryptoError) {
        try requireLength(rawPrivateKey, Self.privateKeyLength, "P-256 private key")
        do { signingKey = try P256.Signing.PrivateKey(rawRepresentation: rawPrivateKey) } catch {
            throw .invalidPrivateKey
        }
    }

    /// From PEM ("EC PRIVATE KEY" SEC1 or "PRIVATE KEY" PKCS#8).
    public init(pem: String) throws(MatterCryptoError) {
        do { signingKey = try P256.Signing.PrivateKey(pemRepresentation: pem) } catch {
            throw .invalidPrivateKey
        }
    }

    /// From DER (SEC1 ECPrivateKey or PKCS#8).
    public init(der: [UInt8]) throws(MatterCryptoError) {
        do { signingKey = try P256.Signing.PrivateKey(derRepresentation: der) } catch {
            throw .invalidPrivateKey
        }
    }

    /// The 32-byte big-endian private scalar.
    public var rawPrivateKey: [UInt8] { Array(signingKey.rawRepresentation) }

    /// PKCS#8 PEM of the private key.
    public var pemPrivateKey: String { signingKey.pemRepresentation }

    public var publicKey: P256PublicKey { P256PublicKey(signingKey: signingKey.publicKey) }

    /// Crypto_Sign: ECDSA-SHA256 over `message`, returned as raw r || s (64 bytes).
    public func sign(_ message: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        do { return Array(try signingKey.signature(for: message).rawRepresentation) } catch {
            throw .libraryFailure("ECDSA sign")
        }
    }

    /// ECDSA-SHA256 over `message`, returned as DER Ecdsa-Sig-Value (for X.509, CSR and CMS).
    public func signDER(_ message: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        do { return Array(try signingKey.signature(for: message).derRepresentation) } catch {
            throw .libraryFailure("ECDSA sign")
        }
    }

    /// Crypto_ECDH: the shared secret (X coordinate, 32 bytes) with the peer's public key.
    public func sharedSecret(with peer: P256PublicKey) throws(MatterCryptoError) -> [UInt8] {
        do {
            let agreementKey = try P256.KeyAgreement.PrivateKey(rawRepresentation: signingKey.rawRepresentation)
            let peerKey = try P256.KeyAgreement.PublicKey(x963Representation: peer.uncompressed)
            let secret = try agreementKey.sharedSecretFromKeyAgreement(with: peerKey)
            return secret.withUnsafeBytes { Array($0) }
        } catch {
            throw .invalidPublicKey
        }
    }
}

/// Conversions between raw r || s and DER Ecdsa-Sig-Value encodings of ECDSA P-256 signatures.
public enum ECDSASignatureEncoding {
    public static func der(fromRaw raw: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        guard raw.count == 64 else { throw .invalidSignatureEncoding }
        do { return Array(try P256.Signing.ECDSASignature(rawRepresentation: raw).derRepresentation) } catch {
            throw .invalidSignatureEncoding
        }
    }

    public static func raw(fromDER der: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        do { return Array(try P256.Signing.ECDSASignature(derRepresentation: der).rawRepresentation) } catch {
            throw .invalidSignatureEncoding
        }
    }
}
