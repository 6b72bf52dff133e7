import MatterTLV
import SwiftASN1

/// The Certification Declaration (spec 6.3.1): a TLV structure the CSA signs, carried in a CMS
/// SignedData envelope (RFC 5652) exactly as connectedhomeip's CMS_Sign/CMS_Verify shape it:
/// version 3, SHA-256, eContent pkcs7-data, one SignerInfo identified by subject key identifier,
/// ecdsa-with-SHA256 over the eContent itself (no signed attributes).
public struct CertificationDeclaration: Sendable, Equatable {
    public enum CertificationType: UInt8, Sendable {
        case developmentAndTest = 0
        case provisional = 1
        case official = 2
    }

    public var formatVersion: UInt8
    public var vendorID: UInt16
    public var productIDs: [UInt16]
    public var deviceTypeID: UInt32
    /// 19 characters, e.g. "ZIG20141ZB330001-24".
    public var certificateID: String
    public var securityLevel: UInt8
    public var securityInformation: UInt16
    public var versionNumber: UInt16
    public var certificationType: CertificationType
    public var dacOriginVendorID: UInt16?
    public var dacOriginProductID: UInt16?

    public init(
        formatVersion: UInt8 = 1, vendorID: UInt16, productIDs: [UInt16], deviceTypeID: UInt32,
        certificateID: String, securityLevel: UInt8 = 0, securityInformation: UInt16 = 0,
        versionNumber: UInt16, certificationType: CertificationType = .developmentAndTest,
        dacOriginVendorID: UInt16? = nil, dacOriginProductID: UInt16? = nil
    ) {
        self.formatVersion = formatVersion
        self.vendorID = vendorID
        self.productIDs = productIDs
        self.deviceTypeID = deviceTypeID
        self.certificateID = certificateID
        self.securityLevel = securityLevel
        self.securityInformation = securityInformation
        self.versionNumber = versionNumber
        self.certificationType = certificationType
        self.dacOriginVendorID = dacOriginVendorID
        self.dacOriginProductID = dacOriginProductID
    }

    public static let certificateIDLength = 19
    public static let maxProductIDs = 100

    // MARK: TLV content

    public func tlvEncoded() throws(CertificateError) -> [UInt8] {
        guard !productIDs.isEmpty, productIDs.count <= Self.maxProductIDs else { throw .malformed("product ID count") }
        guard certificateID.utf8.count == Self.certificateIDLength else { throw .malformed("certificate ID must be 19 characters") }
        guard (dacOriginVendorID == nil) == (dacOriginProductID == nil) else {
            throw .malformed("DAC origin vendor and product IDs go together")
        }
        var m: [TLVElement] = [
            .context(0, .unsigned(UInt64(formatVersion))),
            .context(1, .unsigned(UInt64(vendorID))),
            .context(2, .array(productIDs.map { TLVElement(.unsigned(UInt64($0))) })),
            .context(3, .unsigned(UInt64(deviceTypeID))),
            .context(4, .utf8(certificateID)),
            .context(5, .unsigned(UInt64(securityLevel))),
            .context(6, .unsigned(UInt64(securityInformation))),
            .context(7, .unsigned(UInt64(versionNumber))),
            .context(8, .unsigned(UInt64(certificationType.rawValue))),
        ]
        if let v = dacOriginVendorID, let p = dacOriginProductID {
            m.append(.context(9, .unsigned(UInt64(v))))
            m.append(.context(10, .unsigned(UInt64(p))))
        }
        return TLVElement(.structure(m)).encoded()
    }

    public init(tlv bytes: [UInt8]) throws(CertificateError) {
        let element: TLVElement
        do { element = try TLVElement.decode(bytes) } catch { throw .malformed("CD TLV: \(error)") }
        guard element.tag == .anonymous, case .structure(let m) = element.value, m.count >= 9 else {
            throw .malformed("CD is not a structure of at least 9 members")
        }
        func uint<T: FixedWidthInteger & UnsignedInteger>(_ i: Int, _ tag: UInt8, _: T.Type) throws(CertificateError) -> T {
            guard m[i].tag == .context(tag), let v = m[i].value.uintValue, let t = T(exactly: v) else {
                throw .malformed("CD field \(tag)")
            }
            return t
        }
        guard m[2].tag == .context(2), case .array(let pids) = m[2].value, !pids.isEmpty, pids.count <= Self.maxProductIDs else {
            throw .malformed("CD product IDs")
        }
        var productIDs: [UInt16] = []
        for p in pids {
            guard let v = p.value.uintValue, let pid = UInt16(exactly: v) else { throw .malformed("CD product ID") }
            productIDs.append(pid)
        }
        guard m[4].tag == .context(4), let cid = m[4].value.stringValue, cid.utf8.count == Self.certificateIDLength else {
            throw .malformed("CD certificate ID")
        }
        guard let type = CertificationType(rawValue: try uint(8, 8, UInt8.self)) else { throw .unsupported("certification type") }
        var originVID: UInt16? = nil, originPID: UInt16? = nil
        if m.count > 9 {
            guard m.count == 11 else { throw .malformed("CD DAC origin fields") }
            originVID = try uint(9, 9, UInt16.self)
            originPID = try uint(10, 10, UInt16.self)
        }
        self.init(
            formatVersion: try uint(0, 0, UInt8.self), vendorID: try uint(1, 1, UInt16.self), productIDs: productIDs,
            deviceTypeID: try uint(3, 3, UInt32.self), certificateID: cid,
            securityLevel: try uint(5, 5, UInt8.self), securityInformation: try uint(6, 6, UInt16.self),
            versionNumber: try uint(7, 7, UInt16.self), certificationType: type,
            dacOriginVendorID: originVID, dacOriginProductID: originPID)
    }

    // MARK: CMS envelope

    /// Signs the TLV content and wraps it in CMS SignedData (DER).
    public func signedCMS(signingKey: P256KeyPair, signerKeyIdentifier: [UInt8]) throws(CertificateError) -> [UInt8] {
        let content = try tlvEncoded()
        let signature: [UInt8]
        do { signature = try signingKey.signDER(content) } catch { throw .crypto(error) }
        return Self.encodeCMS(content: content, signerKeyIdentifier: signerKeyIdentifier, signatureDER: signature)
    }

    static func encodeCMS(content: [UInt8], signerKeyIdentifier: [UInt8], signatureDER: [UInt8]) -> [UInt8] {
        buildDER { s in
            s.sequence { ci in
                ci.oid(OID.pkcs7SignedData)
                ci.contextConstructed(0) { explicit in
                    explicit.sequence { sd in
                        sd.integer(3)
                        sd.set { $0.sequence { $0.oid(OID.sha256) } }
                        sd.sequence { eci in
                            eci.oid(OID.pkcs7Data)
                            eci.contextConstructed(0) { $0.octetString(content) }
                        }
                        sd.set { infos in
                            infos.sequence { si in
                                si.integer(3)
                                si.primitive(ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), signerKeyIdentifier)
                                si.sequence { $0.oid(OID.sha256) }
                                si.sequence { $0.oid(OID.ecdsaWithSHA256) }
                                si.octetString(signatureDER)
                            }
                        }
                    }
                }
            }
        }
    }

    /// The parts of a CD CMS envelope, not yet verified.
    public struct SignedEnvelope: Sendable, Equatable {
        public let content: [UInt8]
        public let signerKeyIdentifier: [UInt8]
        public let signatureDER: [UInt8]

        /// Checks the signature with the signer's public key (found by `signerKeyIdentifier`) and decodes the CD.
        public func verify(signerPublicKey: P256PublicKey) throws(CertificateError) -> CertificationDeclaration {
            guard signerPublicKey.isValidDERSignature(signatureDER, for: content) else { throw .signatureInvalid }
            return try CertificationDeclaration(tlv: content)
        }
    }

    /// Parses the CMS SignedData envelope in the shape Matter uses.
    public static func parseCMS(_ der: [UInt8]) throws(CertificateError) -> SignedEnvelope {
        let root = try DERReader.parse(der, "CMS")
        var ci = try DERReader(root, .sequence, "ContentInfo")
        guard try ci.oid("contentType") == OID.pkcs7SignedData else { throw .unsupported("CMS content is not signed-data") }
        var explicit = try ci.constructed(ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), "content")
        try ci.finish()
        var sd = try explicit.constructed(.sequence, "SignedData")
        try explicit.finish()
        guard try sd.primitive(.integer, "version") == [3] else { throw .unsupported("SignedData version") }
        var digests = try sd.constructed(.set, "digestAlgorithms")
        var digest = try digests.constructed(.sequence, "digestAlgorithm")
        guard try digest.oid("digestAlgorithm") == OID.sha256 else { throw .unsupported("digest algorithm") }
        var eci = try sd.constructed(.sequence, "encapContentInfo")
        guard try eci.oid("eContentType") == OID.pkcs7Data else { throw .unsupported("eContentType") }
        var eContent = try eci.constructed(ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), "eContent")
        let content = try eContent.primitive(.octetString, "eContent")
        var infos = try sd.constructed(.set, "signerInfos")
        var si = try infos.constructed(.sequence, "SignerInfo")
        guard try si.primitive(.integer, "SignerInfo version") == [3] else { throw .unsupported("SignerInfo version") }
        let skid = try si.primitive(ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), "subjectKeyIdentifier")
        var dAlg = try si.constructed(.sequence, "digestAlgorithm")
        guard try dAlg.oid("digestAlgorithm") == OID.sha256 else { throw .unsupported("digest algorithm") }
        try decodeECDSAWithSHA256Algorithm(&si, "signatureAlgorithm")
        let signature = try si.primitive(.octetString, "signature")
        try si.finish()
        return SignedEnvelope(content: content, signerKeyIdentifier: skid, signatureDER: signature)
    }
}
