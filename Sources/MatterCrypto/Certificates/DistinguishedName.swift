import MatterTLV
import SwiftASN1

/// X.520 string attributes a Matter certificate DN may carry; the raw value is the Matter TLV
/// tag number (spec 6.5.6.1), which is also connectedhomeip's attribute OID enumeration.
public enum DNTextAttribute: UInt8, Sendable, CaseIterable {
    case commonName = 1
    case surname = 2
    case serialNumber = 3
    case countryName = 4
    case localityName = 5
    case stateOrProvinceName = 6
    case organizationName = 7
    case organizationalUnitName = 8
    case title = 9
    case name = 10
    case givenName = 11
    case initials = 12
    case generationQualifier = 13
    case dnQualifier = 14
    case pseudonym = 15
    case domainComponent = 16

    var oid: ASN1ObjectIdentifier {
        switch self {
        case .commonName: [2, 5, 4, 3]
        case .surname: [2, 5, 4, 4]
        case .serialNumber: [2, 5, 4, 5]
        case .countryName: [2, 5, 4, 6]
        case .localityName: [2, 5, 4, 7]
        case .stateOrProvinceName: [2, 5, 4, 8]
        case .organizationName: [2, 5, 4, 10]
        case .organizationalUnitName: [2, 5, 4, 11]
        case .title: [2, 5, 4, 12]
        case .name: [2, 5, 4, 41]
        case .givenName: [2, 5, 4, 42]
        case .initials: [2, 5, 4, 43]
        case .generationQualifier: [2, 5, 4, 44]
        case .dnQualifier: [2, 5, 4, 46]
        case .pseudonym: [2, 5, 4, 65]
        case .domainComponent: [0, 9, 2342, 19200300, 100, 1, 25]
        }
    }

    init?(oid: ASN1ObjectIdentifier) {
        guard let match = Self.allCases.first(where: { $0.oid == oid }) else { return nil }
        self = match
    }
}

/// One attribute of a Matter certificate DN. Matter-defined identifiers are numbers in TLV and
/// fixed-width upper-case hex UTF8Strings in X.509 (16 digits; 8 for CASE Authenticated Tags).
public enum DNAttribute: Hashable, Sendable {
    case matterNodeID(UInt64)
    case matterFirmwareSigningID(UInt64)
    case matterICACID(UInt64)
    case matterRCACID(UInt64)
    case matterFabricID(UInt64)
    case matterCASEAuthenticatedTag(UInt32)
    /// A string attribute; `printableString` selects PrintableString over UTF8String in X.509
    /// (TLV tag | 0x80). domainComponent is always IA5String.
    case text(DNTextAttribute, String, printableString: Bool = false)

    var tlvTagNumber: UInt8 {
        switch self {
        case .matterNodeID: 17
        case .matterFirmwareSigningID: 18
        case .matterICACID: 19
        case .matterRCACID: 20
        case .matterFabricID: 21
        case .matterCASEAuthenticatedTag: 22
        case .text(let type, _, let printable): type.rawValue | (printable ? 0x80 : 0)
        }
    }
}

/// A distinguished name: the ordered attributes of a certificate's issuer or subject (spec 6.5.6).
/// Each attribute is its own RDN in X.509, as connectedhomeip encodes them.
public struct DistinguishedName: Hashable, Sendable {
    public var attributes: [DNAttribute]

    public init(_ attributes: [DNAttribute]) {
        self.attributes = attributes
    }

    public var nodeID: UInt64? {
        attributes.lazy.compactMap { if case .matterNodeID(let v) = $0 { v } else { nil } }.first
    }
    public var fabricID: UInt64? {
        attributes.lazy.compactMap { if case .matterFabricID(let v) = $0 { v } else { nil } }.first
    }
    public var rcacID: UInt64? {
        attributes.lazy.compactMap { if case .matterRCACID(let v) = $0 { v } else { nil } }.first
    }
    public var icacID: UInt64? {
        attributes.lazy.compactMap { if case .matterICACID(let v) = $0 { v } else { nil } }.first
    }
    public var firmwareSigningID: UInt64? {
        attributes.lazy.compactMap { if case .matterFirmwareSigningID(let v) = $0 { v } else { nil } }.first
    }
    public var caseAuthenticatedTags: [UInt32] {
        attributes.compactMap { if case .matterCASEAuthenticatedTag(let v) = $0 { v } else { nil } }
    }
    public var commonName: String? {
        attributes.lazy.compactMap { if case .text(.commonName, let v, _) = $0 { v } else { nil } }.first
    }

    // MARK: TLV (a list of context-tagged members)

    var tlvMembers: [TLVElement] {
        attributes.map { attribute in
            let tag = TLVTag.context(attribute.tlvTagNumber)
            switch attribute {
            case .matterNodeID(let v), .matterFirmwareSigningID(let v), .matterICACID(let v),
                .matterRCACID(let v), .matterFabricID(let v):
                return TLVElement(tag: tag, .unsigned(v))
            case .matterCASEAuthenticatedTag(let v):
                return TLVElement(tag: tag, .unsigned(UInt64(v)))
            case .text(_, let s, _):
                return TLVElement(tag: tag, .utf8(s))
            }
        }
    }

    init(tlvMembers: [TLVElement], context: String) throws(CertificateError) {
        var attributes: [DNAttribute] = []
        for member in tlvMembers {
            guard case .context(let tagNumber) = member.tag else {
                throw .malformed("\(context): DN attribute without a context tag")
            }
            let printable = tagNumber & 0x80 != 0
            let base = tagNumber & 0x7f
            if base >= 17 {
                guard !printable else { throw .malformed("\(context): Matter attribute \(base) marked printable") }
                guard let v = member.value.uintValue else { throw .malformed("\(context): attribute \(base) is not an unsigned integer") }
                switch base {
                case 17: attributes.append(.matterNodeID(v))
                case 18: attributes.append(.matterFirmwareSigningID(v))
                case 19: attributes.append(.matterICACID(v))
                case 20: attributes.append(.matterRCACID(v))
                case 21: attributes.append(.matterFabricID(v))
                case 22:
                    guard let cat = UInt32(exactly: v) else { throw .malformed("\(context): CASE Authenticated Tag exceeds 32 bits") }
                    attributes.append(.matterCASEAuthenticatedTag(cat))
                default: throw .unsupported("\(context): DN attribute tag \(base)")
                }
            } else {
                guard let type = DNTextAttribute(rawValue: base) else { throw .unsupported("\(context): DN attribute tag \(base)") }
                guard let s = member.value.stringValue else { throw .malformed("\(context): attribute \(base) is not a string") }
                attributes.append(.text(type, s, printableString: printable))
            }
        }
        self.attributes = attributes
    }

    // MARK: X.509 Name

    func encode(into s: inout DER.Serializer) {
        s.sequence { name in
            for attribute in attributes {
                name.set { rdn in
                    rdn.sequence { atv in
                        switch attribute {
                        case .matterNodeID(let v): Self.appendHex(v, width: 16, oid: OID.matterOperational(1), into: &atv)
                        case .matterFirmwareSigningID(let v): Self.appendHex(v, width: 16, oid: OID.matterOperational(2), into: &atv)
                        case .matterICACID(let v): Self.appendHex(v, width: 16, oid: OID.matterOperational(3), into: &atv)
                        case .matterRCACID(let v): Self.appendHex(v, width: 16, oid: OID.matterOperational(4), into: &atv)
                        case .matterFabricID(let v): Self.appendHex(v, width: 16, oid: OID.matterOperational(5), into: &atv)
                        case .matterCASEAuthenticatedTag(let v):
                            Self.appendHex(UInt64(v), width: 8, oid: OID.matterOperational(6), into: &atv)
                        case .text(let type, let value, let printable):
                            atv.oid(type.oid)
                            let id: ASN1Identifier = type == .domainComponent ? .ia5String : (printable ? .printableString : .utf8String)
                            atv.primitive(id, Array(value.utf8))
                        }
                    }
                }
            }
        }
    }

    private static func appendHex(_ v: UInt64, width: Int, oid: ASN1ObjectIdentifier, into s: inout DER.Serializer) {
        s.oid(oid)
        s.primitive(.utf8String, Array(upperHex(v, width: width).utf8))
    }

    static func upperHex(_ v: UInt64, width: Int) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8](repeating: 0, count: width)
        for i in 0..<width {
            out[width - 1 - i] = digits[Int((v >> (4 * UInt64(i))) & 0xf)]
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func parseHex(_ bytes: [UInt8], width: Int) -> UInt64? {
        guard bytes.count == width else { return nil }
        var v: UInt64 = 0
        for b in bytes {
            let n: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): n = b - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): n = b - UInt8(ascii: "A") + 10
            default: return nil
            }
            v = v << 4 | UInt64(n)
        }
        return v
    }

    init(der node: ASN1Node, context: String) throws(CertificateError) {
        var name = try DERReader(node, .sequence, context)
        var attributes: [DNAttribute] = []
        while !name.isAtEnd {
            var rdn = try name.constructed(.set, "\(context) RDN")
            var atv = try rdn.constructed(.sequence, "\(context) attribute")
            try rdn.finish()
            let oid = try atv.oid("\(context) attribute type")
            let valueNode = try atv.next("\(context) attribute value")
            try atv.finish()
            let value = try DERReader.primitiveContent(valueNode, context)
            let matterArc: [UInt] = [1, 3, 6, 1, 4, 1, 37244, 1]
            let components = oid.oidComponents
            if components.count == 9, Array(components.prefix(8)) == matterArc, let last = components.last {
                guard valueNode.identifier == .utf8String else { throw .malformed("\(context): Matter attribute not a UTF8String") }
                let width = last == 6 ? 8 : 16
                guard let v = Self.parseHex(value, width: width) else {
                    throw .malformed("\(context): Matter attribute is not \(width) upper-case hex digits")
                }
                switch last {
                case 1: attributes.append(.matterNodeID(v))
                case 2: attributes.append(.matterFirmwareSigningID(v))
                case 3: attributes.append(.matterICACID(v))
                case 4: attributes.append(.matterRCACID(v))
                case 5: attributes.append(.matterFabricID(v))
                case 6: attributes.append(.matterCASEAuthenticatedTag(UInt32(truncatingIfNeeded: v)))
                default: throw .unsupported("\(context): Matter DN attribute \(oid)")
                }
            } else if let type = DNTextAttribute(oid: oid) {
                guard let text = String(validating: value, as: UTF8.self) else {
                    throw .malformed("\(context): attribute is not valid text")
                }
                let printable: Bool
                switch valueNode.identifier {
                case .utf8String: printable = false
                case .printableString: printable = true
                case .ia5String where type == .domainComponent: printable = false
                default: throw .unsupported("\(context): attribute string type \(valueNode.identifier)")
                }
                attributes.append(.text(type, text, printableString: printable))
            } else {
                throw .unsupported("\(context): DN attribute \(oid)")
            }
        }
        self.attributes = attributes
    }
}
