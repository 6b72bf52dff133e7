/// Failures of the cryptographic primitives and protocols in this module.
/// Bad input always surfaces as one of these, never as a trap.
public enum MatterCryptoError: Error, Equatable, Sendable {
    /// A key, nonce, tag, scalar or other fixed-size input had the wrong length.
    case invalidLength(what: String, expected: Int, actual: Int)
    /// AEAD tag (MIC) did not verify: the message was altered or the key is wrong.
    case authenticationFailed
    /// Bytes that should encode a P-256 point do not, or the point is the identity.
    case invalidPoint
    /// A scalar is zero or otherwise unusable.
    case invalidScalar
    /// A private key could not be parsed or is out of range.
    case invalidPrivateKey
    /// A public key could not be parsed.
    case invalidPublicKey
    /// A signature could not be parsed (not 64 raw bytes / not valid DER).
    case invalidSignatureEncoding
    /// A signature did not verify.
    case signatureVerificationFailed
    /// The SPAKE2+ peer's key confirmation value did not match.
    case confirmationMismatch
    /// A parameter is outside the range the spec allows (e.g. PBKDF iterations, passcode).
    case invalidParameter(String)
    /// libcrypto reported a failure we did not expect for valid input.
    case libraryFailure(String)
}
