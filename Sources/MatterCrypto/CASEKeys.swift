/// Key derivation for the CASE Sigma handshake (Matter Core spec 4.14.2). The transcript hashes
/// are SHA-256 over the exact TLV payloads sent (`MatterHash.sha256(concatenating:)`).
public enum CASEKeys {
    public static let randomLength = 32
    public static let resumptionIDLength = 16

    /// Nonces of the AES-CCM encryptions in CASE (13 ASCII bytes each).
    public static let sigma2Nonce: [UInt8] = Array("NCASE_Sigma2N".utf8)
    public static let sigma3Nonce: [UInt8] = Array("NCASE_Sigma3N".utf8)
    public static let sigma1ResumeNonce: [UInt8] = Array("NCASE_SigmaS1".utf8)
    public static let sigma2ResumeNonce: [UInt8] = Array("NCASE_SigmaS2".utf8)

    /// S2K = HKDF(SharedSecret, salt = IPK || ResponderRandom || ResponderEphPubKey || SHA256(Sigma1), "Sigma2", 16).
    public static func sigma2Key(
        sharedSecret: [UInt8], ipk: [UInt8], responderRandom: [UInt8],
        responderEphemeralPublicKey: [UInt8], sigma1Hash: [UInt8]
    ) -> [UInt8] {
        KeyDerivation.hkdf(
            sharedSecret, salt: ipk + responderRandom + responderEphemeralPublicKey + sigma1Hash,
            info: "Sigma2", length: 16)
    }

    /// S3K = HKDF(SharedSecret, salt = IPK || SHA256(Sigma1 || Sigma2), "Sigma3", 16).
    public static func sigma3Key(sharedSecret: [UInt8], ipk: [UInt8], sigma1Sigma2Hash: [UInt8]) -> [UInt8] {
        KeyDerivation.hkdf(sharedSecret, salt: ipk + sigma1Sigma2Hash, info: "Sigma3", length: 16)
    }

    /// S1RK = HKDF(SharedSecret, salt = InitiatorRandom || ResumptionID, "Sigma1_Resume", 16).
    public static func sigma1ResumeKey(sharedSecret: [UInt8], initiatorRandom: [UInt8], resumptionID: [UInt8]) -> [UInt8] {
        KeyDerivation.hkdf(sharedSecret, salt: initiatorRandom + resumptionID, info: "Sigma1_Resume", length: 16)
    }

    /// S2RK = HKDF(SharedSecret, salt = InitiatorRandom || NewResumptionID, "Sigma2_Resume", 16).
    public static func sigma2ResumeKey(sharedSecret: [UInt8], initiatorRandom: [UInt8], resumptionID: [UInt8]) -> [UInt8] {
        KeyDerivation.hkdf(sharedSecret, salt: initiatorRandom + resumptionID, info: "Sigma2_Resume", length: 16)
    }

    /// InitiatorResumeMIC: the 16-byte AES-CCM tag of an empty message under S1RK, nonce "NCASE_SigmaS1".
    public static func sigma1ResumeMIC(
        sharedSecret: [UInt8], initiatorRandom: [UInt8], resumptionID: [UInt8]
    ) throws(MatterCryptoError) -> [UInt8] {
        let key = sigma1ResumeKey(sharedSecret: sharedSecret, initiatorRandom: initiatorRandom, resumptionID: resumptionID)
        return try AES128CCM(key: key).seal([], nonce: sigma1ResumeNonce)
    }

    /// Sigma2ResumeMIC: the AES-CCM tag of an empty message under S2RK, nonce "NCASE_SigmaS2".
    public static func sigma2ResumeMIC(
        sharedSecret: [UInt8], initiatorRandom: [UInt8], resumptionID: [UInt8]
    ) throws(MatterCryptoError) -> [UInt8] {
        let key = sigma2ResumeKey(sharedSecret: sharedSecret, initiatorRandom: initiatorRandom, resumptionID: resumptionID)
        return try AES128CCM(key: key).seal([], nonce: sigma2ResumeNonce)
    }
}
