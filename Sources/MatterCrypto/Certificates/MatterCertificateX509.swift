import SwiftASN1

/// X.509 DER form of Matter operational certificates (spec 6.5.1, 6.5.2). The signature always covers
/// this TBSCertificate encoding, so the conversion must reproduce connectedhomeip's bytes exactly.
extension MatterCertificate {
    /// The DER TBSCertificate the signature covers.
    public var tbsCertificateDER: [UInt8] {
        buildDER { encodeTBS(into: &$0) }
    }

    func encodeTBS(into s: inout DER.Serializer) {
        s.sequence { tbs in
            tbs.contextConstructed(0) { $0.integer(2) }  // version v3
            tbs.integerContent(serialNumber)
            tbs.sequence { $0.oid(OID.ecdsaWithSHA256) }
            issuer.encode(into: &tbs)
            tbs.sequence { validity in
                CertificateTime.encode(notBefore, into: &validity)
                CertificateTime.encode(notAfter, into: &validity)
            }
            subject.encode(into: &tbs)
            encodeP256SubjectPublicKeyInfo(publicKey, into: &tbs)
            tbs.contextConstructed(3) { exts in
                exts.sequence { seq in
                    for e in extensions { e.encode(into: &seq) }
                }
            }
        }
    }

    /// The whole X.509 certificate in DER.
    public func x509DER() throws(CertificateError) -> [UInt8] {
        guard signature.count == 64 else { throw .malformed("certificate is not signed") }
        let sigDER: [UInt8]
        do { sigDER = try ECDSASignatureEncoding.der(fromRaw: signature) } catch { throw .malformed("signature") }
        return buildDER { s in
            s.sequence { cert in
                encodeTBS(into: &cert)
                cert.sequence { $0.oid(OID.ecdsaWithSHA256) }
                cert.bitString(sigDER)
            }
        }
    }

    /// Converts an X.509 DER certificate that follows the Matter profile. Throws `.notMatterEncodable`
    /// when converting back would not give the same bytes (the signature could not be checked from TLV).
    public init(x509DER der: [UInt8]) throws(CertificateError) {
        let root = try DERReader.parse(der, "certificate")
        var cert = try DERReader(root, .sequence, "certificate")
        var tbs = try cert.constructed(.sequence, "tbsCertificate")
        try decodeECDSAWithSHA256Algorithm(&cert, "signatureAlgorithm")
        let sigBits = try cert.primitive(.bitString, "signatureValue")
        try cert.finish()
        guard sigBits.first == 0 else { throw .malformed("signatureValue has unused bits") }
        let raw: [UInt8]
        do { raw = try ECDSASignatureEncoding.raw(fromDER: Array(sigBits.dropFirst())) } catch {
            throw .malformed("signatureValue is not an ECDSA signature")
        }

        var version = try tbs.constructed(ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), "version")
        guard try version.primitive(.integer, "version") == [2] else { throw .unsupported("certificate version is not v3") }
        try version.finish()
        let serial = try tbs.primitive(.integer, "serialNumber")
        guard (1...20).contains(serial.count) else { throw .malformed("serial number length") }
        try decodeECDSAWithSHA256Algorithm(&tbs, "signature")
        let issuer = try DistinguishedName(der: tbs.next(.sequence, "issuer"), context: "issuer")
        var validity = try tbs.constructed(.sequence, "validity")
        let notBefore = try CertificateTime.decode(validity.next("notBefore"))
        let notAfter = try CertificateTime.decode(validity.next("notAfter"))
        try validity.finish()
        let subject = try DistinguishedName(der: tbs.next(.sequence, "subject"), context: "subject")
        let key = try decodeP256SubjectPublicKeyInfo(tbs.next(.sequence, "subjectPublicKeyInfo"))
        var extWrapper = try tbs.constructed(ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific), "extensions")
        var extSeq = try extWrapper.constructed(.sequence, "extensions")
        try extWrapper.finish()
        try tbs.finish()
        var extensions: [CertificateExtension] = []
        while !extSeq.isAtEnd {
            extensions.append(try CertificateExtension(der: extSeq.next(.sequence, "extension")))
        }
        self.init(
            serialNumber: serial, issuer: issuer, notBefore: notBefore, notAfter: notAfter,
            subject: subject, publicKey: key, extensions: extensions, signature: raw)
        guard try x509DER() == der else { throw .notMatterEncodable }
    }

    /// Checks the signature against the issuer's public key (uncompressed point).
    public func verifySignature(issuerPublicKey: [UInt8]) throws(CertificateError) {
        let key: P256PublicKey
        do { key = try P256PublicKey(issuerPublicKey) } catch { throw .malformed("issuer public key") }
        guard key.isValidSignature(signature, for: tbsCertificateDER) else { throw .signatureInvalid }
    }

    /// Signs the TBS encoding with the issuer's key and stores the raw signature.
    public mutating func sign(with issuerKey: P256KeyPair) throws(CertificateError) {
        do { signature = try issuerKey.sign(tbsCertificateDER) } catch { throw .crypto(error) }
    }
}
