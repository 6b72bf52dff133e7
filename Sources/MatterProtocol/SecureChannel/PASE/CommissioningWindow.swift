import MatterCrypto

/// What a commissionee needs to answer PASE (spec 4.14.1, 5.1.1.6): the SPAKE2+
/// verifier (w0, L) and the PBKDF parameters it was derived with. The passcode
/// itself is not kept.
public struct PASEVerifierParameters: Sendable, Hashable {
    public var verifier: Spake2pVerifier
    public var pbkdf: PBKDFParameters

    public init(verifier: Spake2pVerifier, iterations: UInt32, salt: [UInt8]) {
        self.verifier = verifier
        self.pbkdf = PBKDFParameters(iterations: iterations, salt: salt)
    }

    /// Derives the verifier from a passcode (PBKDF2 with the given salt and iterations).
    public init(passcode: UInt32, iterations: UInt32 = 1000, salt: [UInt8]) throws(MatterCryptoError) {
        let verifier = try Spake2pVerifier(passcode: passcode, salt: salt, iterations: Int(iterations))
        self.init(verifier: verifier, iterations: iterations, salt: salt)
    }
}
