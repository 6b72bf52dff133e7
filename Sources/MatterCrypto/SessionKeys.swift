/// The keys of one secure unicast session (Matter Core spec 4.14.1.3 / 4.14.2.6):
/// HKDF(secret, salt, info, 48) split as I2RKey || R2IKey || AttestationChallenge.
public struct SessionKeys: Sendable, Equatable {
    /// Encrypts initiator → responder messages.
    public let i2rKey: [UInt8]
    /// Encrypts responder → initiator messages.
    public let r2iKey: [UInt8]
    /// Signed over in device attestation and CSR requests (spec 6.2.3, 11.18.5).
    public let attestationChallenge: [UInt8]

    public init(i2rKey: [UInt8], r2iKey: [UInt8], attestationChallenge: [UInt8]) {
        self.i2rKey = i2rKey
        self.r2iKey = r2iKey
        self.attestationChallenge = attestationChallenge
    }

    static func derive(secret: [UInt8], salt: [UInt8], info: String) -> SessionKeys {
        let okm = KeyDerivation.hkdf(secret, salt: salt, info: info, length: 48)
        return SessionKeys(i2rKey: Array(okm[0..<16]), r2iKey: Array(okm[16..<32]), attestationChallenge: Array(okm[32..<48]))
    }

    /// PASE (spec 4.14.1.3): HKDF(Ke, salt = [], info = "SessionKeys").
    public static func pase(Ke: [UInt8]) -> SessionKeys {
        derive(secret: Ke, salt: [], info: "SessionKeys")
    }

    /// CASE (spec 4.14.2.6): HKDF(SharedSecret, salt = IPK || SHA256(Sigma1 || Sigma2 || Sigma3), info = "SessionKeys").
    public static func `case`(sharedSecret: [UInt8], ipk: [UInt8], transcriptHash: [UInt8]) -> SessionKeys {
        derive(secret: sharedSecret, salt: ipk + transcriptHash, info: "SessionKeys")
    }

    /// Resumed CASE (spec 4.14.2.6.1): HKDF(SharedSecret, salt = InitiatorRandom || ResumptionID,
    /// info = "SessionResumptionKeys"), with the new resumption ID from Sigma2_Resume.
    public static func caseResumption(sharedSecret: [UInt8], initiatorRandom: [UInt8], resumptionID: [UInt8]) -> SessionKeys {
        derive(secret: sharedSecret, salt: initiatorRandom + resumptionID, info: "SessionResumptionKeys")
    }
}
