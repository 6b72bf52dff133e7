import MatterTLV
import SwiftASN1

/// The kind of Matter certificate, from its subject DN (spec 6.5.6.2).
public enum MatterCertificateType: Sendable, Equatable {
    case root  // RCAC: subject has matter-rcac-id
    case intermediate  // ICAC: subject has matter-icac-id
    case node  // NOC: subject has matter-node-id
    case firmwareSigning
}

/// A Matter operational certificate (RCAC, ICAC or NOC) in the model both encodings share
/// (spec 6.5.2): TLV for the wire, X.509 DER for the signature, which always covers the X.509 TBS.
public struct MatterCertificate: Hashable, Sendable {
    /// The DER INTEGER content octets of the serial number (1...20 bytes).
    public var serialNumber: [UInt8]
    public var issuer: DistinguishedName
    /// Matter epoch seconds.
    public var notBefore: UInt32
    /// Matter epoch seconds; 0 means no well-defined expiration.
    public var notAfter: UInt32
    public var subject: DistinguishedName
    /// Uncompressed P-256 point (65 bytes).
    public var publicKey: [UInt8]
    public var extensions: [CertificateExtension]
    /// Raw r || s (64 bytes); empty while unsigned.
    public var signature: [UInt8]

    public init(
        serialNumber: [UInt8], issuer: DistinguishedName, notBefore: UInt32, notAfter: UInt32,
        subject: DistinguishedName, publicKey: [UInt8], extensions: [CertificateExtension], signature: [UInt8] = []
    ) {
        self.serialNumber = serialNumber
        self.issuer = issuer
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.subject = subject
        self.publicKey = publicKey
        self.extensions = extensions
        self.signature = signature
    }

    // MARK: Extension views

    public var isCA: Bool {
        for e in extensions { if case .basicConstraints(let ca, _) = e { return ca } }
        return false
    }
    public var pathLengthConstraint: UInt8? {
        for e in extensions { if case .basicConstraints(_, let p) = e { return p } }
        return nil
    }
    public var keyUsage: KeyUsage? {
        for e in extensions { if case .keyUsage(let k) = e { return k } }
        return nil
    }
    public var extendedKeyUsage: [KeyPurpose]? {
        for e in extensions { if case .extendedKeyUsage(let p) = e { return p } }
        return nil
    }
    public var subjectKeyIdentifier: [UInt8]? {
        for e in extensions { if case .subjectKeyIdentifier(let id) = e { return id } }
        return nil
    }
    public var authorityKeyIdentifier: [UInt8]? {
        for e in extensions { if case .authorityKeyIdentifier(let id) = e { return id } }
        return nil
    }

    /// The type from the subject DN; throws when the DN names more than one kind or none.
    public func certificateType() throws(CertificateError) -> MatterCertificateType {
        var found: [MatterCertificateType] = []
        for a in subject.attributes {
            switch a {
            case .matterRCACID: found.append(.root)
            case .matterICACID: found.append(.intermediate)
            case .matterNodeID: found.append(.node)
            case .matterFirmwareSigningID: found.append(.firmwareSigning)
            default: break
            }
        }
        guard found.count == 1, let type = found.first else {
            throw .wrongCertificateType("subject must carry exactly one of rcac-id, icac-id, node-id, firmware-signing-id")
        }
        return type
    }

    // MARK: Matter TLV (spec 6.5.2)

    public var tlvElement: TLVElement {
        TLVElement(
            .structure([
                .context(1, .bytes(serialNumber)),
                .context(2, .unsigned(1)),  // ecdsa-with-sha256
                .context(3, .list(issuer.tlvMembers)),
                .context(4, .unsigned(UInt64(notBefore))),
                .context(5, .unsigned(UInt64(notAfter))),
                .context(6, .list(subject.tlvMembers)),
                .context(7, .unsigned(1)),  // ec-pub-key
                .context(8, .unsigned(1)),  // prime256v1
                .context(9, .bytes(publicKey)),
                .context(10, .list(extensions.map(\.tlv))),
                .context(11, .bytes(signature)),
            ]))
    }

    /// The Matter TLV encoding (what NOCs, ICACs and RCACs travel as).
    public var tlvEncoded: [UInt8] { tlvElement.encoded() }

    public init(tlv bytes: [UInt8]) throws(CertificateError) {
        let element: TLVElement
        do { element = try TLVElement.decode(bytes) } catch { throw .malformed("certificate TLV: \(error)") }
        try self.init(tlvElement: element)
    }

    public init(tlvElement element: TLVElement) throws(CertificateError) {
        guard element.tag == .anonymous, case .structure(let m) = element.value else {
            throw .malformed("certificate is not an anonymous structure")
        }
        // Fields appear in tag order 1...11, all required (spec 6.5.2).
        guard m.count == 11, m.enumerated().allSatisfy({ $0.element.tag == .context(UInt8($0.offset + 1)) }) else {
            throw .malformed("certificate fields are not tags 1...11 in order")
        }
        guard let serial = m[0].value.bytesValue, (1...20).contains(serial.count) else { throw .malformed("serial number") }
        guard m[1].value.uintValue == 1 else { throw .unsupported("signature algorithm") }
        guard case .list(let issuerMembers) = m[2].value else { throw .malformed("issuer") }
        guard let nb = m[3].value.uintValue, let notBefore = UInt32(exactly: nb) else { throw .malformed("not-before") }
        guard let na = m[4].value.uintValue, let notAfter = UInt32(exactly: na) else { throw .malformed("not-after") }
        guard case .list(let subjectMembers) = m[5].value else { throw .malformed("subject") }
        guard m[6].value.uintValue == 1 else { throw .unsupported("public key algorithm") }
        guard m[7].value.uintValue == 1 else { throw .unsupported("elliptic curve") }
        guard let key = m[8].value.bytesValue, key.count == 65, key[0] == 0x04 else { throw .malformed("public key") }
        do { _ = try P256PublicKey(key) } catch { throw .malformed("public key is not on P-256") }
        guard case .list(let extensionMembers) = m[9].value else { throw .malformed("extensions") }
        guard let signature = m[10].value.bytesValue, signature.count == 64 else { throw .malformed("signature") }

        var extensions: [CertificateExtension] = []
        for e in extensionMembers { extensions.append(try CertificateExtension(tlv: e)) }
        self.init(
            serialNumber: serial,
            issuer: try DistinguishedName(tlvMembers: issuerMembers, context: "issuer"),
            notBefore: notBefore, notAfter: notAfter,
            subject: try DistinguishedName(tlvMembers: subjectMembers, context: "subject"),
            publicKey: key, extensions: extensions, signature: signature)
    }
}
