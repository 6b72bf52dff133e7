import SwiftASN1

// Thin helpers over swift-asn1 for the fixed DER profiles Matter uses: we write the exact
// structures ourselves (so TLV ⇄ X.509 conversion is byte exact) and walk parsed trees strictly.

enum OID {
    static let ecdsaWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 4, 3, 2]
    static let ecPublicKey: ASN1ObjectIdentifier = [1, 2, 840, 10045, 2, 1]
    static let prime256v1: ASN1ObjectIdentifier = [1, 2, 840, 10045, 3, 1, 7]
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    static let pkcs7Data: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    static let pkcs7SignedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]

    static let basicConstraints: ASN1ObjectIdentifier = [2, 5, 29, 19]
    static let keyUsage: ASN1ObjectIdentifier = [2, 5, 29, 15]
    static let extendedKeyUsage: ASN1ObjectIdentifier = [2, 5, 29, 37]
    static let subjectKeyIdentifier: ASN1ObjectIdentifier = [2, 5, 29, 14]
    static let authorityKeyIdentifier: ASN1ObjectIdentifier = [2, 5, 29, 35]

    /// Matter DN attributes, 1.3.6.1.4.1.37244.1.x (spec 6.5.6.1).
    static func matterOperational(_ n: UInt) -> ASN1ObjectIdentifier {
        // Arrays of literal components always form a valid OID.
        try! ASN1ObjectIdentifier(elements: [1, 3, 6, 1, 4, 1, 37244, 1, n])
    }
    /// Matter attestation DN attributes: vendor ID .2.1, product ID .2.2 (spec 6.2.2.2).
    static let matterVendorID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 37244, 2, 1]
    static let matterProductID: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 37244, 2, 2]
}

extension DER.Serializer {
    mutating func sequence(_ body: (inout DER.Serializer) throws -> Void) rethrows {
        try appendConstructedNode(identifier: .sequence, body)
    }

    mutating func set(_ body: (inout DER.Serializer) throws -> Void) rethrows {
        try appendConstructedNode(identifier: .set, body)
    }

    mutating func contextConstructed(_ tag: UInt, _ body: (inout DER.Serializer) throws -> Void) rethrows {
        try appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: tag, tagClass: .contextSpecific), body)
    }

    mutating func oid(_ oid: ASN1ObjectIdentifier) {
        // Serializing a constructed OID cannot fail.
        try! serialize(oid)
    }

    mutating func primitive(_ identifier: ASN1Identifier, _ content: some Sequence<UInt8>) {
        appendPrimitiveNode(identifier: identifier) { $0.append(contentsOf: content) }
    }

    /// An INTEGER whose content octets are given as-is (certificate serial numbers).
    mutating func integerContent(_ content: [UInt8]) {
        primitive(.integer, content)
    }

    mutating func integer(_ value: Int) {
        try! serialize(value)
    }

    mutating func boolean(_ value: Bool) {
        primitive(.boolean, [value ? 0xFF : 0x00])
    }

    mutating func octetString(_ bytes: [UInt8]) {
        primitive(.octetString, bytes)
    }

    mutating func bitString(_ bytes: [UInt8], unusedBits: UInt8 = 0) {
        primitive(.bitString, [unusedBits] + bytes)
    }

    mutating func raw(_ bytes: [UInt8]) {
        serializeRawBytes(bytes)
    }
}

/// Reads the children of one constructed node in order, insisting on each expected tag.
struct DERReader {
    private let nodes: [ASN1Node]
    private var index = 0
    let context: String

    init(_ node: ASN1Node, _ identifier: ASN1Identifier, _ context: String) throws(CertificateError) {
        guard node.identifier == identifier, case .constructed(let children) = node.content else {
            throw .malformed("\(context): expected constructed \(identifier)")
        }
        self.nodes = Array(children)
        self.context = context
    }

    var isAtEnd: Bool { index >= nodes.count }
    var peekIdentifier: ASN1Identifier? { isAtEnd ? nil : nodes[index].identifier }

    mutating func next(_ context: String) throws(CertificateError) -> ASN1Node {
        guard index < nodes.count else { throw .malformed("\(self.context): missing \(context)") }
        defer { index += 1 }
        return nodes[index]
    }

    mutating func next(_ identifier: ASN1Identifier, _ context: String) throws(CertificateError) -> ASN1Node {
        let node = try next(context)
        guard node.identifier == identifier else {
            throw .malformed("\(self.context): \(context) has tag \(node.identifier), expected \(identifier)")
        }
        return node
    }

    mutating func primitive(_ identifier: ASN1Identifier, _ context: String) throws(CertificateError) -> [UInt8] {
        try DERReader.primitiveContent(next(identifier, context), context)
    }

    mutating func constructed(_ identifier: ASN1Identifier, _ context: String) throws(CertificateError) -> DERReader {
        try DERReader(next(identifier, context), identifier, context)
    }

    mutating func oid(_ context: String) throws(CertificateError) -> ASN1ObjectIdentifier {
        let node = try next(.objectIdentifier, context)
        do { return try ASN1ObjectIdentifier(derEncoded: node) } catch {
            throw .malformed("\(self.context): \(context) is not a valid OID")
        }
    }

    func finish() throws(CertificateError) {
        guard isAtEnd else { throw .malformed("\(context): unexpected trailing elements") }
    }

    static func primitiveContent(_ node: ASN1Node, _ context: String) throws(CertificateError) -> [UInt8] {
        guard case .primitive(let bytes) = node.content else { throw .malformed("\(context): expected a primitive value") }
        return Array(bytes)
    }

    static func parse(_ bytes: [UInt8], _ context: String) throws(CertificateError) -> ASN1Node {
        do { return try DER.parse(bytes) } catch { throw .malformed("\(context): not valid DER") }
    }
}

/// Runs a DER-building closure; building our own structures never fails, but the API is throwing.
func buildDER(_ body: (inout DER.Serializer) throws -> Void) rethrows -> [UInt8] {
    var s = DER.Serializer()
    try body(&s)
    return s.serializedBytes
}

/// Encodes a SubjectPublicKeyInfo for a P-256 key.
func encodeP256SubjectPublicKeyInfo(_ publicKey: [UInt8], into s: inout DER.Serializer) {
    s.sequence { spki in
        spki.sequence { alg in
            alg.oid(OID.ecPublicKey)
            alg.oid(OID.prime256v1)
        }
        spki.bitString(publicKey)
    }
}

/// Parses a SubjectPublicKeyInfo and returns the uncompressed P-256 point, validated on the curve.
func decodeP256SubjectPublicKeyInfo(_ node: ASN1Node) throws(CertificateError) -> [UInt8] {
    var spki = try DERReader(node, .sequence, "SubjectPublicKeyInfo")
    var alg = try spki.constructed(.sequence, "algorithm")
    guard try alg.oid("algorithm") == OID.ecPublicKey else { throw .unsupported("public key algorithm is not EC") }
    guard try alg.oid("curve") == OID.prime256v1 else { throw .unsupported("curve is not P-256") }
    try alg.finish()
    let bits = try spki.primitive(.bitString, "subjectPublicKey")
    try spki.finish()
    guard bits.first == 0, bits.count == 66 else { throw .malformed("subjectPublicKey is not a 65-byte point") }
    let key = Array(bits[1...])
    do { _ = try P256PublicKey(key) } catch { throw .malformed("subjectPublicKey is not a P-256 point") }
    guard key[0] == 0x04 else { throw .unsupported("compressed public key") }
    return key
}

/// AlgorithmIdentifier for ecdsa-with-SHA256 (no parameters, RFC 5758).
func decodeECDSAWithSHA256Algorithm(_ reader: inout DERReader, _ context: String) throws(CertificateError) {
    var alg = try reader.constructed(.sequence, context)
    guard try alg.oid(context) == OID.ecdsaWithSHA256 else { throw .unsupported("\(context) is not ecdsa-with-SHA256") }
    try alg.finish()
}
