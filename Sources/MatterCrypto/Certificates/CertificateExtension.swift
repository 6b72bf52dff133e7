import MatterTLV
import SwiftASN1

/// Key usage bits as Matter TLV carries them (spec 6.5.11.2); bit i is X.509 KeyUsage bit i.
public struct KeyUsage: OptionSet, Hashable, Sendable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let digitalSignature = KeyUsage(rawValue: 0x0001)
    public static let nonRepudiation = KeyUsage(rawValue: 0x0002)
    public static let keyEncipherment = KeyUsage(rawValue: 0x0004)
    public static let dataEncipherment = KeyUsage(rawValue: 0x0008)
    public static let keyAgreement = KeyUsage(rawValue: 0x0010)
    public static let keyCertSign = KeyUsage(rawValue: 0x0020)
    public static let cRLSign = KeyUsage(rawValue: 0x0040)
    public static let encipherOnly = KeyUsage(rawValue: 0x0080)
    public static let decipherOnly = KeyUsage(rawValue: 0x0100)

    static let all = KeyUsage(rawValue: 0x01ff)

    /// The DER KeyUsage BIT STRING content: unused-bit count then the named bits, trailing zeros dropped.
    var bitStringContent: [UInt8] {
        guard rawValue != 0 else { return [0] }
        let highest = 15 - rawValue.leadingZeroBitCount
        var bytes = [UInt8](repeating: 0, count: highest / 8 + 1)
        for bit in 0...highest where rawValue & (1 << bit) != 0 {
            bytes[bit / 8] |= 0x80 >> UInt8(bit % 8)
        }
        return [UInt8(7 - highest % 8)] + bytes
    }

    init(bitStringContent c: [UInt8]) throws(CertificateError) {
        guard let unused = c.first, unused < 8, c.count <= 3 else { throw .malformed("KeyUsage bit string") }
        var v: UInt16 = 0
        for (i, byte) in c.dropFirst().enumerated() {
            for j in 0..<8 where byte & (0x80 >> UInt8(j)) != 0 {
                v |= 1 << UInt16(i * 8 + j)
            }
        }
        guard v & ~KeyUsage.all.rawValue == 0 else { throw .unsupported("KeyUsage bits beyond decipherOnly") }
        self.rawValue = v
    }
}

/// Extended key usage purposes (spec 6.5.11.3): TLV numbers and their X.509 OIDs.
public enum KeyPurpose: UInt8, Sendable, CaseIterable {
    case serverAuth = 1
    case clientAuth = 2
    case codeSigning = 3
    case emailProtection = 4
    case timeStamping = 5
    case ocspSigning = 6

    var oid: ASN1ObjectIdentifier {
        switch self {
        case .serverAuth: [1, 3, 6, 1, 5, 5, 7, 3, 1]
        case .clientAuth: [1, 3, 6, 1, 5, 5, 7, 3, 2]
        case .codeSigning: [1, 3, 6, 1, 5, 5, 7, 3, 3]
        case .emailProtection: [1, 3, 6, 1, 5, 5, 7, 3, 4]
        case .timeStamping: [1, 3, 6, 1, 5, 5, 7, 3, 8]
        case .ocspSigning: [1, 3, 6, 1, 5, 5, 7, 3, 9]
        }
    }
}

/// A certificate extension as Matter TLV carries it (spec 6.5.11). Basic constraints, key usage and
/// extended key usage are critical in X.509; the key identifiers are not.
public enum CertificateExtension: Hashable, Sendable {
    case basicConstraints(isCA: Bool, pathLengthConstraint: UInt8?)
    case keyUsage(KeyUsage)
    case extendedKeyUsage([KeyPurpose])
    case subjectKeyIdentifier([UInt8])
    case authorityKeyIdentifier([UInt8])
    /// Any other extension, kept as the DER of its whole X.509 Extension SEQUENCE.
    case futureExtension([UInt8])

    // MARK: TLV

    var tlv: TLVElement {
        switch self {
        case .basicConstraints(let isCA, let pathLength):
            var members = [TLVElement.context(1, .bool(isCA))]
            if let pathLength { members.append(.context(2, .unsigned(UInt64(pathLength)))) }
            return .context(1, .structure(members))
        case .keyUsage(let usage):
            return .context(2, .unsigned(UInt64(usage.rawValue)))
        case .extendedKeyUsage(let purposes):
            return .context(3, .array(purposes.map { TLVElement(.unsigned(UInt64($0.rawValue))) }))
        case .subjectKeyIdentifier(let id):
            return .context(4, .bytes(id))
        case .authorityKeyIdentifier(let id):
            return .context(5, .bytes(id))
        case .futureExtension(let der):
            return .context(6, .bytes(der))
        }
    }

    init(tlv element: TLVElement) throws(CertificateError) {
        guard case .context(let tag) = element.tag else { throw .malformed("extension without a context tag") }
        switch tag {
        case 1:
            guard case .structure(let members) = element.value,
                let first = members.first, first.tag == .context(1), let isCA = first.value.boolValue
            else { throw .malformed("basic constraints") }
            var pathLength: UInt8? = nil
            if members.count == 2 {
                guard members[1].tag == .context(2), let v = members[1].value.uintValue, let p = UInt8(exactly: v) else {
                    throw .malformed("basic constraints path length")
                }
                pathLength = p
            } else if members.count > 2 {
                throw .malformed("basic constraints has extra members")
            }
            self = .basicConstraints(isCA: isCA, pathLengthConstraint: pathLength)
        case 2:
            guard let v = element.value.uintValue, let bits = UInt16(exactly: v), bits & ~KeyUsage.all.rawValue == 0 else {
                throw .malformed("key usage")
            }
            self = .keyUsage(KeyUsage(rawValue: bits))
        case 3:
            guard case .array(let members) = element.value, !members.isEmpty else { throw .malformed("extended key usage") }
            var purposes: [KeyPurpose] = []
            for m in members {
                guard let v = m.value.uintValue, let b = UInt8(exactly: v), let p = KeyPurpose(rawValue: b) else {
                    throw .unsupported("key purpose")
                }
                purposes.append(p)
            }
            self = .extendedKeyUsage(purposes)
        case 4:
            guard let id = element.value.bytesValue, id.count == 20 else { throw .malformed("subject key identifier") }
            self = .subjectKeyIdentifier(id)
        case 5:
            guard let id = element.value.bytesValue, id.count == 20 else { throw .malformed("authority key identifier") }
            self = .authorityKeyIdentifier(id)
        case 6:
            guard let der = element.value.bytesValue else { throw .malformed("future extension") }
            self = .futureExtension(der)
        default:
            throw .unsupported("extension tag \(tag)")
        }
    }

    // MARK: X.509

    func encode(into s: inout DER.Serializer) {
        if case .futureExtension(let der) = self {
            s.raw(der)
            return
        }
        s.sequence { ext in
            switch self {
            case .basicConstraints(let isCA, let pathLength):
                ext.oid(OID.basicConstraints)
                ext.boolean(true)
                ext.octetString(
                    buildDER { v in
                        v.sequence { bc in
                            if isCA { bc.boolean(true) }
                            if let pathLength { bc.integer(Int(pathLength)) }
                        }
                    })
            case .keyUsage(let usage):
                ext.oid(OID.keyUsage)
                ext.boolean(true)
                ext.octetString(buildDER { $0.primitive(.bitString, usage.bitStringContent) })
            case .extendedKeyUsage(let purposes):
                ext.oid(OID.extendedKeyUsage)
                ext.boolean(true)
                ext.octetString(buildDER { v in v.sequence { seq in for p in purposes { seq.oid(p.oid) } } })
            case .subjectKeyIdentifier(let id):
                ext.oid(OID.subjectKeyIdentifier)
                ext.octetString(buildDER { $0.octetString(id) })
            case .authorityKeyIdentifier(let id):
                ext.oid(OID.authorityKeyIdentifier)
                ext.octetString(
                    buildDER { v in
                        v.sequence { akid in akid.primitive(ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), id) }
                    })
            case .futureExtension:
                break
            }
        }
    }

    /// Parses one X.509 Extension. Known extensions must have Matter's shape; others are kept raw.
    init(der node: ASN1Node) throws(CertificateError) {
        var ext = try DERReader(node, .sequence, "extension")
        let oid = try ext.oid("extension id")
        let known: Set<ASN1ObjectIdentifier> = [
            OID.basicConstraints, OID.keyUsage, OID.extendedKeyUsage,
            OID.subjectKeyIdentifier, OID.authorityKeyIdentifier,
        ]
        guard known.contains(oid) else {
            self = .futureExtension(Array(node.encodedBytes))
            return
        }
        if ext.peekIdentifier == .boolean {
            _ = try ext.primitive(.boolean, "critical")
        }
        let value = try ext.primitive(.octetString, "extension value")
        try ext.finish()
        let inner = try DERReader.parse(value, "extension value")
        switch oid {
        case OID.basicConstraints:
            var bc = try DERReader(inner, .sequence, "basic constraints")
            var isCA = false
            if bc.peekIdentifier == .boolean {
                isCA = try bc.primitive(.boolean, "cA") != [0]
            }
            var pathLength: UInt8? = nil
            if bc.peekIdentifier == .integer {
                let n = try bc.next(.integer, "pathLenConstraint")
                guard let v = try? Int(derEncoded: n), let p = UInt8(exactly: v) else {
                    throw .unsupported("path length constraint out of range")
                }
                pathLength = p
            }
            try bc.finish()
            self = .basicConstraints(isCA: isCA, pathLengthConstraint: pathLength)
        case OID.keyUsage:
            guard inner.identifier == .bitString else { throw .malformed("key usage") }
            self = .keyUsage(try KeyUsage(bitStringContent: DERReader.primitiveContent(inner, "key usage")))
        case OID.extendedKeyUsage:
            var seq = try DERReader(inner, .sequence, "extended key usage")
            var purposes: [KeyPurpose] = []
            while !seq.isAtEnd {
                let p = try seq.oid("key purpose")
                guard let purpose = KeyPurpose.allCases.first(where: { $0.oid == p }) else {
                    throw .unsupported("key purpose \(p)")
                }
                purposes.append(purpose)
            }
            self = .extendedKeyUsage(purposes)
        case OID.subjectKeyIdentifier:
            guard inner.identifier == .octetString else { throw .malformed("subject key identifier") }
            let id = try DERReader.primitiveContent(inner, "subject key identifier")
            guard id.count == 20 else { throw .unsupported("subject key identifier is not 20 bytes") }
            self = .subjectKeyIdentifier(id)
        default:
            var akid = try DERReader(inner, .sequence, "authority key identifier")
            let id = try akid.primitive(ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), "keyIdentifier")
            try akid.finish()
            guard id.count == 20 else { throw .unsupported("authority key identifier is not 20 bytes") }
            self = .authorityKeyIdentifier(id)
        }
    }
}
