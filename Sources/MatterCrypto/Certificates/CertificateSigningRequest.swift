import SwiftASN1

/// PKCS#10 certification requests with ECDSA P-256 (RFC 2986), as the device returns in
/// CSRResponse (spec 11.18.6.5) and the commissioner turns into a NOC.
public struct CertificateSigningRequest: Sendable, Equatable {
    public let der: [UInt8]
    /// The requested key; the request's own signature was checked with it.
    public let publicKey: P256PublicKey

    /// Builds and signs a CSR for `key`. The subject is O=CSA, since an empty subject trips some parsers;
    /// the CA ignores it and takes only the key.
    public static func create(key: P256KeyPair, subject: String = "CSA") throws(CertificateError) -> CertificateSigningRequest {
        let info = buildDER { s in
            s.sequence { cri in
                cri.integer(0)
                cri.sequence { name in
                    name.set { rdn in
                        rdn.sequence { atv in
                            atv.oid(DNTextAttribute.organizationName.oid)
                            atv.primitive(.utf8String, Array(subject.utf8))
                        }
                    }
                }
                encodeP256SubjectPublicKeyInfo(key.publicKey.uncompressed, into: &cri)
                cri.contextConstructed(0) { _ in }
            }
        }
        let sig: [UInt8]
        do { sig = try key.signDER(info) } catch { throw .crypto(error) }
        let der = buildDER { s in
            s.sequence { req in
                req.raw(info)
                req.sequence { $0.oid(OID.ecdsaWithSHA256) }
                req.bitString(sig)
            }
        }
        return CertificateSigningRequest(der: der, publicKey: key.publicKey)
    }

    private init(der: [UInt8], publicKey: P256PublicKey) {
        self.der = der
        self.publicKey = publicKey
    }

    /// Parses a DER CSR and verifies its self-signature.
    public init(der: [UInt8]) throws(CertificateError) {
        let root = try DERReader.parse(der, "CSR")
        var req = try DERReader(root, .sequence, "CSR")
        let infoNode = try req.next(.sequence, "certificationRequestInfo")
        try decodeECDSAWithSHA256Algorithm(&req, "signatureAlgorithm")
        let sigBits = try req.primitive(.bitString, "signature")
        try req.finish()

        var info = try DERReader(infoNode, .sequence, "certificationRequestInfo")
        guard try info.primitive(.integer, "version") == [0] else { throw .unsupported("CSR version") }
        _ = try info.next(.sequence, "subject")
        let keyBytes = try decodeP256SubjectPublicKeyInfo(info.next(.sequence, "subjectPKInfo"))
        _ = try info.next(ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), "attributes")
        try info.finish()

        guard sigBits.first == 0 else { throw .malformed("CSR signature has unused bits") }
        let key: P256PublicKey
        do { key = try P256PublicKey(keyBytes) } catch { throw .malformed("CSR public key") }
        guard key.isValidDERSignature(Array(sigBits.dropFirst()), for: Array(infoNode.encodedBytes)) else {
            throw .signatureInvalid
        }
        self.der = der
        self.publicKey = key
    }
}
