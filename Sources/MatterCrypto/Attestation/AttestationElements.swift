import MatterTLV

/// Device attestation and CSR payloads of the Operational Credentials cluster (spec 11.18.4.7,
/// 11.18.4.9): TLV elements the device signs, with the session's attestation challenge appended,
/// using its DAC key.
public enum DeviceAttestation {
    public static let nonceLength = 32

    /// attestation-elements: certification_declaration [1], attestation_nonce [2], timestamp [3],
    /// firmware_information [4, optional].
    public static func attestationElements(
        certificationDeclaration: [UInt8], attestationNonce: [UInt8], timestamp: UInt32 = 0,
        firmwareInformation: [UInt8]? = nil
    ) throws(CertificateError) -> [UInt8] {
        guard attestationNonce.count == nonceLength else { throw .malformed("attestation nonce must be 32 bytes") }
        var m: [TLVElement] = [
            .context(1, .bytes(certificationDeclaration)),
            .context(2, .bytes(attestationNonce)),
            .context(3, .unsigned(UInt64(timestamp))),
        ]
        if let firmwareInformation { m.append(.context(4, .bytes(firmwareInformation))) }
        return TLVElement(.structure(m)).encoded()
    }

    /// nocsr-elements: csr [1], CSRNonce [2].
    public static func nocsrElements(csr: [UInt8], csrNonce: [UInt8]) throws(CertificateError) -> [UInt8] {
        guard csrNonce.count == nonceLength else { throw .malformed("CSR nonce must be 32 bytes") }
        return TLVElement(.structure([.context(1, .bytes(csr)), .context(2, .bytes(csrNonce))])).encoded()
    }

    /// The device's signature over elements || attestation challenge (raw r || s).
    public static func sign(elements: [UInt8], attestationChallenge: [UInt8], dacKey: P256KeyPair) throws(CertificateError) -> [UInt8] {
        do { return try dacKey.sign(elements + attestationChallenge) } catch { throw .crypto(error) }
    }

    /// The commissioner's check of that signature with the DAC's public key.
    public static func verify(
        elements: [UInt8], attestationChallenge: [UInt8], signature: [UInt8],
        dacPublicKey: P256PublicKey
    ) -> Bool {
        dacPublicKey.isValidSignature(signature, for: elements + attestationChallenge)
    }

    public struct ParsedAttestationElements: Sendable, Equatable {
        public let certificationDeclaration: [UInt8]
        public let attestationNonce: [UInt8]
        public let timestamp: UInt32
        public let firmwareInformation: [UInt8]?
    }

    public struct ParsedNOCSRElements: Sendable, Equatable {
        public let csr: [UInt8]
        public let csrNonce: [UInt8]
    }

    public static func parseAttestationElements(_ bytes: [UInt8]) throws(CertificateError) -> ParsedAttestationElements {
        let s = try structure(bytes, "attestation elements")
        guard let cd = s[context: 1]?.bytesValue else { throw .malformed("attestation elements: certification declaration") }
        guard let nonce = s[context: 2]?.bytesValue, nonce.count == nonceLength else { throw .malformed("attestation elements: nonce") }
        guard let ts = s[context: 3]?.uintValue, let timestamp = UInt32(exactly: ts) else {
            throw .malformed("attestation elements: timestamp")
        }
        let fw = s[context: 4]?.bytesValue
        return ParsedAttestationElements(
            certificationDeclaration: cd, attestationNonce: nonce, timestamp: timestamp, firmwareInformation: fw)
    }

    public static func parseNOCSRElements(_ bytes: [UInt8]) throws(CertificateError) -> ParsedNOCSRElements {
        let s = try structure(bytes, "NOCSR elements")
        guard let csr = s[context: 1]?.bytesValue else { throw .malformed("NOCSR elements: csr") }
        guard let nonce = s[context: 2]?.bytesValue, nonce.count == nonceLength else { throw .malformed("NOCSR elements: nonce") }
        return ParsedNOCSRElements(csr: csr, csrNonce: nonce)
    }

    private static func structure(_ bytes: [UInt8], _ what: String) throws(CertificateError) -> TLVElement {
        let element: TLVElement
        do { element = try TLVElement.decode(bytes) } catch { throw .malformed("\(what): \(error)") }
        guard case .structure = element.value else { throw .malformed("\(what) is not a structure") }
        return element
    }
}
