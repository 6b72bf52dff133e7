/// Everything a commissionee needs to answer attestation (spec 6.2, 11.18): DAC key pair, DAC and PAI
/// (X.509 DER) and a signed Certification Declaration.
public struct DeviceAttestationCredentials: Sendable {
    public let dacKey: P256KeyPair
    public let dac: AttestationCertificate
    public let pai: AttestationCertificate
    /// CMS SignedData DER.
    public let certificationDeclaration: [UInt8]

    public init(dacKey: P256KeyPair, dac: AttestationCertificate, pai: AttestationCertificate, certificationDeclaration: [UInt8]) {
        self.dacKey = dacKey
        self.dac = dac
        self.pai = pai
        self.certificationDeclaration = certificationDeclaration
    }

    /// Mints a fresh PAI and DAC under a PAA (normally the published test PAA) and a development CD
    /// signed with a CD signing key (normally the published test key), for one vendor/product.
    /// `notBefore` should not precede the PAA's.
    public static func development(
        vendorID: UInt16, productID: UInt16, deviceTypeID: UInt32,
        paaCertificatePEM: String, paaKeyPEM: String,
        cdSigningCertificatePEM: String, cdSigningKeyPEM: String,
        certificateID: String = "ZIG20142ZB330003-24", versionNumber: UInt16 = 0x2694,
        notBefore: UInt32
    ) throws(CertificateError) -> DeviceAttestationCredentials {
        let paa = try AttestationCertificate(pem: paaCertificatePEM)
        let paaKey: P256KeyPair
        do { paaKey = try P256KeyPair(pem: paaKeyPEM) } catch { throw .crypto(error) }
        let cdSigner = try AttestationCertificate(pem: cdSigningCertificatePEM)
        let cdKey: P256KeyPair
        do { cdKey = try P256KeyPair(pem: cdSigningKeyPEM) } catch { throw .crypto(error) }
        guard cdSigner.publicKey == cdKey.publicKey else { throw .malformed("CD signing key does not match its certificate") }
        guard let cdKeyID = cdSigner.subjectKeyIdentifier else { throw .malformed("CD signing certificate has no subject key identifier") }

        let start = max(notBefore, paa.notBefore)
        let paiKey = P256KeyPair()
        let pai = try DeviceAttestationIssuer.issuePAI(
            publicKey: paiKey.publicKey, vendorID: vendorID,
            paa: paa, paaKey: paaKey, notBefore: start)
        let dacKey = P256KeyPair()
        let dac = try DeviceAttestationIssuer.issueDAC(
            publicKey: dacKey.publicKey, vendorID: vendorID, productID: productID,
            pai: pai, paiKey: paiKey, notBefore: start)
        let cd = CertificationDeclaration(
            vendorID: vendorID, productIDs: [productID], deviceTypeID: deviceTypeID,
            certificateID: certificateID, versionNumber: versionNumber)
        return DeviceAttestationCredentials(
            dacKey: dacKey, dac: dac, pai: pai,
            certificationDeclaration: try cd.signedCMS(signingKey: cdKey, signerKeyIdentifier: cdKeyID))
    }
}
