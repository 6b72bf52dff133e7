/// Issuing Matter operational certificates (spec 6.5.5 profiles): what a commissioner's
/// certificate authority does, and what tests need.
public enum MatterCertificateIssuer {
    /// A fresh positive serial number: 8 random bytes with the top bit clear and a non-zero first byte,
    /// so the bytes are a minimal DER INTEGER.
    public static func randomSerialNumber() -> [UInt8] {
        var s = SecureRandom.bytes(8)
        s[0] = (s[0] & 0x7f) | 0x01
        return s
    }

    /// A self-signed root CA certificate (RCAC): CA:TRUE, keyCertSign|cRLSign, SKID = AKID.
    public static func issueRoot(
        key: P256KeyPair, rcacID: UInt64, fabricID: UInt64? = nil,
        notBefore: UInt32, notAfter: UInt32 = 0,
        serialNumber: [UInt8] = randomSerialNumber()
    ) throws(CertificateError) -> MatterCertificate {
        var dn: [DNAttribute] = [.matterRCACID(rcacID)]
        if let fabricID { dn.append(.matterFabricID(fabricID)) }
        let keyID = key.publicKey.keyIdentifier
        var cert = MatterCertificate(
            serialNumber: serialNumber, issuer: DistinguishedName(dn), notBefore: notBefore, notAfter: notAfter,
            subject: DistinguishedName(dn), publicKey: key.publicKey.uncompressed,
            extensions: [
                .basicConstraints(isCA: true, pathLengthConstraint: nil), .keyUsage([.keyCertSign, .cRLSign]),
                .subjectKeyIdentifier(keyID), .authorityKeyIdentifier(keyID),
            ])
        try cert.sign(with: key)
        return cert
    }

    /// An intermediate CA certificate (ICAC) signed by `issuer` (normally the RCAC).
    public static func issueIntermediate(
        publicKey: P256PublicKey, icacID: UInt64, fabricID: UInt64? = nil,
        issuer: MatterCertificate, issuerKey: P256KeyPair,
        notBefore: UInt32, notAfter: UInt32 = 0,
        serialNumber: [UInt8] = randomSerialNumber()
    ) throws(CertificateError) -> MatterCertificate {
        var dn: [DNAttribute] = [.matterICACID(icacID)]
        if let fabricID { dn.append(.matterFabricID(fabricID)) }
        var cert = MatterCertificate(
            serialNumber: serialNumber, issuer: issuer.subject, notBefore: notBefore, notAfter: notAfter,
            subject: DistinguishedName(dn), publicKey: publicKey.uncompressed,
            extensions: [
                .basicConstraints(isCA: true, pathLengthConstraint: nil), .keyUsage([.keyCertSign, .cRLSign]),
                .subjectKeyIdentifier(publicKey.keyIdentifier),
                .authorityKeyIdentifier(issuer.subjectKeyIdentifier ?? issuerKey.publicKey.keyIdentifier),
            ])
        try cert.sign(with: issuerKey)
        return cert
    }

    /// A node operational certificate (NOC): CA:FALSE, digitalSignature, EKU clientAuth+serverAuth,
    /// subject node ID, fabric ID and up to three CASE Authenticated Tags.
    public static func issueNode(
        publicKey: P256PublicKey, nodeID: UInt64, fabricID: UInt64,
        caseAuthenticatedTags: [UInt32] = [],
        issuer: MatterCertificate, issuerKey: P256KeyPair,
        notBefore: UInt32, notAfter: UInt32 = 0,
        serialNumber: [UInt8] = randomSerialNumber()
    ) throws(CertificateError) -> MatterCertificate {
        guard OperationalIdentifiers.isOperationalNodeID(nodeID) else { throw .invalidIdentifier("node ID \(nodeID) is not operational") }
        guard fabricID != 0 else { throw .invalidIdentifier("fabric ID 0") }
        guard caseAuthenticatedTags.count <= 3, caseAuthenticatedTags.allSatisfy(OperationalIdentifiers.isValidCASEAuthenticatedTag) else {
            throw .invalidIdentifier("CASE Authenticated Tags")
        }
        let dn: [DNAttribute] =
            [.matterNodeID(nodeID), .matterFabricID(fabricID)]
            + caseAuthenticatedTags.map { .matterCASEAuthenticatedTag($0) }
        var cert = MatterCertificate(
            serialNumber: serialNumber, issuer: issuer.subject, notBefore: notBefore, notAfter: notAfter,
            subject: DistinguishedName(dn), publicKey: publicKey.uncompressed,
            extensions: [
                .basicConstraints(isCA: false, pathLengthConstraint: nil), .keyUsage(.digitalSignature),
                .extendedKeyUsage([.clientAuth, .serverAuth]),
                .subjectKeyIdentifier(publicKey.keyIdentifier),
                .authorityKeyIdentifier(issuer.subjectKeyIdentifier ?? issuerKey.publicKey.keyIdentifier),
            ])
        try cert.sign(with: issuerKey)
        return cert
    }

    /// A NOC for the key in a device's CSR (the CSR's own signature is checked first).
    public static func issueNode(
        csr: [UInt8], nodeID: UInt64, fabricID: UInt64, caseAuthenticatedTags: [UInt32] = [],
        issuer: MatterCertificate, issuerKey: P256KeyPair,
        notBefore: UInt32, notAfter: UInt32 = 0
    ) throws(CertificateError) -> MatterCertificate {
        let request = try CertificateSigningRequest(der: csr)
        return try issueNode(
            publicKey: request.publicKey, nodeID: nodeID, fabricID: fabricID,
            caseAuthenticatedTags: caseAuthenticatedTags, issuer: issuer, issuerKey: issuerKey,
            notBefore: notBefore, notAfter: notAfter)
    }
}

/// Ranges of Matter identifiers (spec 2.5.5, 6.6.2.1.2).
public enum OperationalIdentifiers {
    /// Operational node IDs: 0x0000_0000_0000_0001 ... 0xFFFF_FFEF_FFFF_FFFF.
    public static func isOperationalNodeID(_ id: UInt64) -> Bool {
        id != 0 && id <= 0xFFFF_FFEF_FFFF_FFFF
    }

    /// A CAT has a non-zero version in its low 16 bits.
    public static func isValidCASEAuthenticatedTag(_ cat: UInt32) -> Bool {
        cat & 0xFFFF != 0
    }
}
