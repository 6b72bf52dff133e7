import SwiftASN1

/// A device attestation certificate (PAA, PAI or DAC; spec 6.2.2) in X.509 DER, with the fields
/// attestation needs. Unlike operational certificates these never travel as Matter TLV.
public struct AttestationCertificate: Sendable, Equatable {
    public let der: [UInt8]
    public let publicKey: P256PublicKey
    /// DER of the subject Name, reused verbatim as the issuer of certificates it signs.
    public let subjectDER: [UInt8]
    public let issuerDER: [UInt8]
    /// matter-vendor-id (1.3.6.1.4.1.37244.2.1) in the subject, if present.
    public let vendorID: UInt16?
    /// matter-product-id (1.3.6.1.4.1.37244.2.2) in the subject, if present.
    public let productID: UInt16?
    public let isCA: Bool
    public let pathLengthConstraint: UInt8?
    public let keyUsage: KeyUsage?
    public let subjectKeyIdentifier: [UInt8]?
    public let authorityKeyIdentifier: [UInt8]?
    /// Matter epoch seconds (0 = no expiry for notAfter).
    public let notBefore: UInt32
    public let notAfter: UInt32
    let tbsDER: [UInt8]
    let signatureDER: [UInt8]

    public init(pem: String) throws(CertificateError) {
        let der: [UInt8]
        do { der = try PEMDocument(pemString: pem).derBytes } catch { throw .malformed("not a PEM document") }
        try self.init(der: der)
    }

    public init(der: [UInt8]) throws(CertificateError) {
        let root = try DERReader.parse(der, "certificate")
        var cert = try DERReader(root, .sequence, "certificate")
        let tbsNode = try cert.next(.sequence, "tbsCertificate")
        try decodeECDSAWithSHA256Algorithm(&cert, "signatureAlgorithm")
        let sigBits = try cert.primitive(.bitString, "signatureValue")
        try cert.finish()
        guard sigBits.first == 0 else { throw .malformed("signature has unused bits") }

        var tbs = try DERReader(tbsNode, .sequence, "tbsCertificate")
        var version = try tbs.constructed(ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), "version")
        guard try version.primitive(.integer, "version") == [2] else { throw .unsupported("certificate version is not v3") }
        _ = try tbs.primitive(.integer, "serialNumber")
        try decodeECDSAWithSHA256Algorithm(&tbs, "signature")
        let issuer = try tbs.next(.sequence, "issuer")
        var validity = try tbs.constructed(.sequence, "validity")
        let notBefore = try CertificateTime.decode(validity.next("notBefore"))
        let notAfter = try CertificateTime.decode(validity.next("notAfter"))
        let subject = try tbs.next(.sequence, "subject")
        let key = try decodeP256SubjectPublicKeyInfo(tbs.next(.sequence, "subjectPublicKeyInfo"))
        var extensions: [CertificateExtension] = []
        if !tbs.isAtEnd {
            var wrapper = try tbs.constructed(ASN1Identifier(tagWithNumber: 3, tagClass: .contextSpecific), "extensions")
            var seq = try wrapper.constructed(.sequence, "extensions")
            while !seq.isAtEnd { extensions.append(try CertificateExtension(der: seq.next(.sequence, "extension"))) }
            try wrapper.finish()
        }
        try tbs.finish()

        var vendorID: UInt16? = nil, productID: UInt16? = nil
        var name = try DERReader(subject, .sequence, "subject")
        while !name.isAtEnd {
            var rdn = try name.constructed(.set, "subject RDN")
            while !rdn.isAtEnd {
                var atv = try rdn.constructed(.sequence, "subject attribute")
                let oid = try atv.oid("attribute type")
                let value = try DERReader.primitiveContent(atv.next("attribute value"), "attribute value")
                if oid == OID.matterVendorID || oid == OID.matterProductID {
                    guard let v = DistinguishedName.parseHex(value, width: 4) else {
                        throw .malformed("vendor/product ID is not 4 upper-case hex digits")
                    }
                    if oid == OID.matterVendorID { vendorID = UInt16(v) } else { productID = UInt16(v) }
                }
            }
        }

        self.der = der
        do { self.publicKey = try P256PublicKey(key) } catch { throw .malformed("public key") }
        self.subjectDER = Array(subject.encodedBytes)
        self.issuerDER = Array(issuer.encodedBytes)
        self.vendorID = vendorID
        self.productID = productID
        var isCA = false, pathLength: UInt8? = nil, usage: KeyUsage? = nil, skid: [UInt8]? = nil, akid: [UInt8]? = nil
        for e in extensions {
            switch e {
            case .basicConstraints(let ca, let p): isCA = ca; pathLength = p
            case .keyUsage(let u): usage = u
            case .subjectKeyIdentifier(let id): skid = id
            case .authorityKeyIdentifier(let id): akid = id
            default: break
            }
        }
        self.isCA = isCA
        self.pathLengthConstraint = pathLength
        self.keyUsage = usage
        self.subjectKeyIdentifier = skid
        self.authorityKeyIdentifier = akid
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.tbsDER = Array(tbsNode.encodedBytes)
        self.signatureDER = Array(sigBits.dropFirst())
    }

    /// PEM text of the certificate.
    public var pem: String { PEMDocument(type: "CERTIFICATE", derBytes: der).pemString }

    /// Whether `issuer` signed this certificate and names it as issuer.
    public func isIssued(by issuer: AttestationCertificate) -> Bool {
        issuerDER == issuer.subjectDER && issuer.publicKey.isValidDERSignature(signatureDER, for: tbsDER)
    }
}

/// Minting attestation certificates under a PAA (spec 6.2.2.3-6.2.2.5 profiles), for simulated
/// devices and tests. Never for a product: the test PAA key is public.
public enum DeviceAttestationIssuer {
    /// A PAI: CA:TRUE pathlen:0, keyCertSign|cRLSign, subject CN + vendor ID (+ optional product ID).
    public static func issuePAI(
        publicKey: P256PublicKey, vendorID: UInt16, productID: UInt16? = nil,
        commonName: String = "Matter Test PAI",
        paa: AttestationCertificate, paaKey: P256KeyPair,
        notBefore: UInt32, notAfter: UInt32 = 0,
        serialNumber: [UInt8] = MatterCertificateIssuer.randomSerialNumber()
    ) throws(CertificateError) -> AttestationCertificate {
        guard paa.isCA, paa.publicKey == paaKey.publicKey else { throw .notACertificateAuthority }
        return try issue(
            serialNumber: serialNumber, issuerDER: paa.subjectDER,
            subject: subjectName(commonName: commonName, vendorID: vendorID, productID: productID),
            notBefore: notBefore, notAfter: notAfter, publicKey: publicKey,
            extensions: [
                .basicConstraints(isCA: true, pathLengthConstraint: 0), .keyUsage([.keyCertSign, .cRLSign]),
                .subjectKeyIdentifier(publicKey.keyIdentifier),
                .authorityKeyIdentifier(paa.subjectKeyIdentifier ?? paaKey.publicKey.keyIdentifier),
            ],
            signer: paaKey)
    }

    /// A DAC: CA:FALSE, digitalSignature only, subject CN + vendor ID + product ID.
    public static func issueDAC(
        publicKey: P256PublicKey, vendorID: UInt16, productID: UInt16,
        commonName: String = "Matter Test DAC",
        pai: AttestationCertificate, paiKey: P256KeyPair,
        notBefore: UInt32, notAfter: UInt32 = 0,
        serialNumber: [UInt8] = MatterCertificateIssuer.randomSerialNumber()
    ) throws(CertificateError) -> AttestationCertificate {
        guard pai.isCA, pai.publicKey == paiKey.publicKey else { throw .notACertificateAuthority }
        if let paiVendor = pai.vendorID, paiVendor != vendorID { throw .invalidIdentifier("DAC vendor ID differs from the PAI's") }
        if let paiProduct = pai.productID, paiProduct != productID { throw .invalidIdentifier("DAC product ID differs from the PAI's") }
        return try issue(
            serialNumber: serialNumber, issuerDER: pai.subjectDER,
            subject: subjectName(commonName: commonName, vendorID: vendorID, productID: productID),
            notBefore: notBefore, notAfter: notAfter, publicKey: publicKey,
            extensions: [
                .basicConstraints(isCA: false, pathLengthConstraint: nil), .keyUsage(.digitalSignature),
                .subjectKeyIdentifier(publicKey.keyIdentifier),
                .authorityKeyIdentifier(pai.subjectKeyIdentifier ?? paiKey.publicKey.keyIdentifier),
            ],
            signer: paiKey)
    }

    static func subjectName(commonName: String, vendorID: UInt16, productID: UInt16?) -> [UInt8] {
        buildDER { s in
            s.sequence { name in
                func attribute(_ oid: ASN1ObjectIdentifier, _ value: String) {
                    name.set { rdn in
                        rdn.sequence { atv in
                            atv.oid(oid)
                            atv.primitive(.utf8String, Array(value.utf8))
                        }
                    }
                }
                attribute(DNTextAttribute.commonName.oid, commonName)
                attribute(OID.matterVendorID, DistinguishedName.upperHex(UInt64(vendorID), width: 4))
                if let productID { attribute(OID.matterProductID, DistinguishedName.upperHex(UInt64(productID), width: 4)) }
            }
        }
    }

    static func issue(
        serialNumber: [UInt8], issuerDER: [UInt8], subject: [UInt8], notBefore: UInt32, notAfter: UInt32,
        publicKey: P256PublicKey, extensions: [CertificateExtension], signer: P256KeyPair
    ) throws(CertificateError) -> AttestationCertificate {
        let tbs = buildDER { s in
            s.sequence { tbs in
                tbs.contextConstructed(0) { $0.integer(2) }
                tbs.integerContent(serialNumber)
                tbs.sequence { $0.oid(OID.ecdsaWithSHA256) }
                tbs.raw(issuerDER)
                tbs.sequence { validity in
                    CertificateTime.encode(notBefore, into: &validity)
                    CertificateTime.encode(notAfter, into: &validity)
                }
                tbs.raw(subject)
                encodeP256SubjectPublicKeyInfo(publicKey.uncompressed, into: &tbs)
                tbs.contextConstructed(3) { exts in exts.sequence { seq in for e in extensions { e.encode(into: &seq) } } }
            }
        }
        let signature: [UInt8]
        do { signature = try signer.signDER(tbs) } catch { throw .crypto(error) }
        let der = buildDER { s in
            s.sequence { cert in
                cert.raw(tbs)
                cert.sequence { $0.oid(OID.ecdsaWithSHA256) }
                cert.bitString(signature)
            }
        }
        return try AttestationCertificate(der: der)
    }
}
