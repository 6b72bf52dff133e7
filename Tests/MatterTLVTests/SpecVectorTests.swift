import MatterTLV
import Testing

/// One row of the spec's encoding examples (Matter Core spec Appendix A, "TLV
/// Encoding Examples": sample encodings of primitive types, of containers and
/// of different tag types). Octets as printed in the spec.
struct SpecVector: Sendable, CustomTestStringConvertible {
    let name: String
    let octets: String
    let element: TLVElement
    var testDescription: String { name }

    init(_ name: String, _ octets: String, _ element: TLVElement) {
        self.name = name
        self.octets = octets
        self.element = element
    }

    init(_ name: String, _ octets: String, _ value: TLVValue) {
        self.init(name, octets, TLVElement(value))
    }
}

let primitiveVectors: [SpecVector] = [
    SpecVector("Boolean false", "08", .bool(false)),
    SpecVector("Boolean true", "09", .bool(true)),
    SpecVector("Signed Integer, 1-octet, value 42", "00 2a", .signed(42)),
    SpecVector("Signed Integer, 1-octet, value -17", "00 ef", .signed(-17)),
    SpecVector("Unsigned Integer, 1-octet, value 42U", "04 2a", .unsigned(42)),
    SpecVector("Signed Integer, 4-octet, value -170000", "02 f0 67 fd ff", .signed(-170_000)),
    SpecVector("Signed Integer, 8-octet, value 40000000000", "03 00 90 2f 50 09 00 00 00", .signed(40_000_000_000)),
    SpecVector("UTF-8 String, 1-octet length, \"Hello!\"", "0c 06 48 65 6c 6c 6f 21", .utf8("Hello!")),
    SpecVector("UTF-8 String, 1-octet length, \"Tschüs\"", "0c 07 54 73 63 68 c3 bc 73", .utf8("Tschüs")),
    SpecVector("Octet String, 1-octet length, octets 00 01 02 03 04", "10 05 00 01 02 03 04", .bytes([0, 1, 2, 3, 4])),
    SpecVector("Null", "14", .null),
    SpecVector("Single precision floating point 0.0", "0a 00 00 00 00", .float(0.0)),
    SpecVector("Single precision floating point (1.0 / 3.0)", "0a ab aa aa 3e", .float(1.0 / 3.0)),
    SpecVector("Single precision floating point 17.9", "0a 33 33 8f 41", .float(17.9)),
    SpecVector("Single precision floating point infinity", "0a 00 00 80 7f", .float(.infinity)),
    SpecVector("Single precision floating point negative infinity", "0a 00 00 80 ff", .float(-.infinity)),
    SpecVector("Double precision floating point 0.0", "0b 00 00 00 00 00 00 00 00", .double(0.0)),
    SpecVector("Double precision floating point (1.0 / 3.0)", "0b 55 55 55 55 55 55 d5 3f", .double(1.0 / 3.0)),
    SpecVector("Double precision floating point 17.9", "0b 66 66 66 66 66 e6 31 40", .double(17.9)),
    SpecVector("Double precision floating point infinity", "0b 00 00 00 00 00 00 f0 7f", .double(.infinity)),
    SpecVector("Double precision floating point negative infinity", "0b 00 00 00 00 00 00 f0 ff", .double(-.infinity)),
]

let containerVectors: [SpecVector] = [
    SpecVector("Empty Structure, {}", "15 18", .structure([])),
    SpecVector("Empty Array, []", "16 18", .array([])),
    SpecVector("Empty List, [[]]", "17 18", .list([])),
    SpecVector(
        "Structure, two context specific tags, {0 = 42, 1 = -17}", "15 20 00 2a 20 01 ef 18",
        .structure([.context(0, .signed(42)), .context(1, .signed(-17))])),
    SpecVector(
        "Array, Signed Integer, 1-octet values, [0, 1, 2, 3, 4]", "16 00 00 00 01 00 02 00 03 00 04 18",
        .array((0...4).map { TLVElement(.signed($0)) })),
    SpecVector(
        "List, mix of anonymous and context tags, [[1, 0 = 42, 2, 3, 0 = -17]]",
        "17 00 01 20 00 2a 00 02 00 03 20 00 ef 18",
        .list([
            TLVElement(.signed(1)), .context(0, .signed(42)), TLVElement(.signed(2)),
            TLVElement(.signed(3)), .context(0, .signed(-17)),
        ])),
    SpecVector(
        "Array, mix of element types, [42, -170000, {}, 17.9, \"Hello!\"]",
        "16 00 2a 02 f0 67 fd ff 15 18 0a 33 33 8f 41 0c 06 48 65 6c 6c 6f 21 18",
        .array([
            TLVElement(.signed(42)), TLVElement(.signed(-170_000)), TLVElement(.structure([])),
            TLVElement(.float(17.9)), TLVElement(.utf8("Hello!")),
        ])),
]

let fq1 = TLVTag.fullyQualified(vendorID: 0xFFF1, profileNumber: 0xDEED, tagNumber: 1)

let tagVectors: [SpecVector] = [
    SpecVector("Anonymous tag, Unsigned Integer, 1-octet value, 42U", "04 2a", .unsigned(42)),
    SpecVector("Context tag 1, Unsigned Integer, 1-octet value, 1 = 42U", "24 01 2a", .context(1, .unsigned(42))),
    SpecVector(
        "Common profile tag 1, Unsigned Integer, 1-octet value, Matter::1 = 42U", "44 01 00 2a",
        TLVElement(tag: .commonProfile(1), .unsigned(42))),
    SpecVector(
        "Common profile tag 100000, Unsigned Integer, 1-octet value, Matter::100000 = 42U", "64 a0 86 01 00 2a",
        TLVElement(tag: .commonProfile(100_000), .unsigned(42))),
    SpecVector(
        "Fully qualified tag, 65521::57069:1 = 42U (6-octet tag)", "c4 f1 ff ed de 01 00 2a",
        TLVElement(tag: fq1, .unsigned(42))),
    SpecVector(
        "Fully qualified tag, 65521::57069:2857762541 = 42U (8-octet tag)", "e4 f1 ff ed de ed fe 55 aa 2a",
        TLVElement(
            tag: .fullyQualified(vendorID: 0xFFF1, profileNumber: 0xDEED, tagNumber: 0xAA55_FEED),
            .unsigned(42))),
    SpecVector(
        "Structure with fully qualified tag, 65521::57069:1 = {65521::57069:43605 = 42U}",
        "d5 f1 ff ed de 01 00 c4 f1 ff ed de 55 aa 2a 18",
        TLVElement(
            tag: fq1,
            .structure([
                TLVElement(
                    tag: .fullyQualified(vendorID: 0xFFF1, profileNumber: 0xDEED, tagNumber: 0xAA55),
                    .unsigned(42))
            ]))),
]

@Suite("Spec Appendix A encoding examples")
struct SpecVectorTests {
    @Test("encodes to the spec's octets", arguments: primitiveVectors + containerVectors + tagVectors)
    func encodes(_ vector: SpecVector) {
        #expect(hexString(vector.element.encoded()) == hexString(hex(vector.octets)))
    }

    @Test("decodes the spec's octets", arguments: primitiveVectors + containerVectors + tagVectors)
    func decodes(_ vector: SpecVector) throws {
        let decoded = try TLVElement.decode(hex(vector.octets))
        #expect(decoded == vector.element)
    }

    /// The table shows 42 in a 2-octet signed integer: legal but not the
    /// shortest form, so it decodes, and re-encoding shortens it.
    @Test func nonMinimalSignedTwoOctet42() throws {
        let decoded = try TLVElement.decode(hex("01 2a 00"))
        #expect(decoded == TLVElement(.signed(42)))
        #expect(decoded.encoded() == hex("00 2a"))
    }

    /// A value that needs two octets: 422 = 0x01A6.
    @Test func signedTwoOctet422() throws {
        #expect(TLVElement(.signed(422)).encoded() == hex("01 a6 01"))
        #expect(try TLVElement.decode(hex("01 a6 01")) == TLVElement(.signed(422)))
    }

    /// The tables have no implicit-profile row; these apply the tag control
    /// values of A.7.2 (0x80: 2-octet, 0xA0: 4-octet implicit profile tag) to
    /// the common-profile rows' values.
    @Test func implicitProfileTags() throws {
        let short = TLVElement(tag: .implicitProfile(1), .unsigned(42))
        let long = TLVElement(tag: .implicitProfile(100_000), .unsigned(42))
        #expect(short.encoded() == hex("84 01 00 2a"))
        #expect(long.encoded() == hex("a4 a0 86 01 00 2a"))
        #expect(try TLVElement.decode(hex("84 01 00 2a")) == short)
        #expect(try TLVElement.decode(hex("a4 a0 86 01 00 2a"), implicitProfile: 0xFFF1_DEED) == long)
        #expect(
            long.tag.resolvingImplicitProfile(0xFFF1_DEED)
                == .fullyQualified(vendorID: 0xFFF1, profileNumber: 0xDEED, tagNumber: 100_000))
        var reader = TLVReader(hex("84 01 00 2a"), implicitProfile: 0xFFF1_DEED)
        #expect(try reader.next()?.tag == .implicitProfile(1))
        #expect(reader.implicitProfile == 0xFFF1_DEED)
    }

    /// The same structure built with the streaming writer calls.
    @Test func streamingWriterMatchesSpecRows() {
        var writer = TLVWriter()
        writer.startStructure()
        writer.put(tag: .context(0), value: .signed(42))
        writer.put(tag: .context(1), value: .signed(-17))
        writer.endContainer()
        #expect(writer.bytes == hex("15 20 00 2a 20 01 ef 18"))

        var list = TLVWriter()
        list.list { w in
            w.put(value: .signed(1))
            w.put(tag: .context(0), value: .signed(42))
            w.put(value: .signed(2))
            w.put(value: .signed(3))
            w.put(tag: .context(0), value: .signed(-17))
        }
        #expect(list.bytes == hex("17 00 01 20 00 2a 00 02 00 03 20 00 ef 18"))

        var nested = TLVWriter()
        nested.startStructure(tag: fq1)
        nested.put(
            tag: .fullyQualified(vendorID: 0xFFF1, profileNumber: 0xDEED, tagNumber: 0xAA55), value: .unsigned(42))
        nested.endContainer()
        #expect(nested.bytes == hex("d5 f1 ff ed de 01 00 c4 f1 ff ed de 55 aa 2a 18"))
        #expect(nested.isBalanced)
    }
}
