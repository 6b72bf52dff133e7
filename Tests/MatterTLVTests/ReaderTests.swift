import MatterTLV
import Testing

@Suite("TLVReader streaming and errors")
struct ReaderTests {
    /// {0 = 42, 1 = [1U, 2U], 2 = {3 = "x"}, 4 = true}
    let sample = TLVElement(
        .structure([
            .context(0, .signed(42)),
            .context(1, .array([TLVElement(.unsigned(1)), TLVElement(.unsigned(2))])),
            .context(2, .structure([.context(3, .utf8("x"))])),
            .context(4, .bool(true)),
        ]))

    @Test func walksEntersAndSkips() throws {
        var reader = TLVReader(sample.encoded())
        let top = try #require(try reader.next())
        #expect(top == TLVElementHeader(tag: .anonymous, type: .structure))
        try reader.enterContainer()
        #expect(reader.depth == 1)

        #expect(try reader.next() == TLVElementHeader(tag: .context(0), type: .signedInteger))
        #expect(try reader.readValue() == .signed(42))

        // Enter the array and read only its first member; exit skips the rest.
        #expect(try reader.next() == TLVElementHeader(tag: .context(1), type: .array))
        try reader.enterContainer()
        #expect(try reader.next()?.type == .unsignedInteger)
        #expect(try reader.readElement() == TLVElement(.unsigned(1)))
        try reader.exitContainer()
        #expect(reader.depth == 1)

        // Not consuming context 2 at all: next() skips the whole structure.
        #expect(try reader.next()?.tag == .context(2))
        #expect(reader.currentHeader?.type == .structure)
        #expect(try reader.next() == TLVElementHeader(tag: .context(4), type: .boolean))
        #expect(try reader.readValue() == .bool(true))

        #expect(try reader.next() == nil)
        #expect(try reader.next() == nil)  // stays at the end until exit
        try reader.exitContainer()
        #expect(reader.depth == 0)
        #expect(try reader.next() == nil)
        #expect(reader.isAtEnd)
    }

    @Test func skipMovesPastAWholeContainer() throws {
        let bytes = sample.encoded() + TLVElement(.unsigned(7)).encoded()
        var reader = TLVReader(bytes)
        _ = try reader.next()
        try reader.skip()
        #expect(reader.offset == sample.encoded().count)
        _ = try reader.next()
        #expect(try reader.readValue() == .unsigned(7))
        #expect(reader.isAtEnd)
    }

    @Test func readValueOfAContainerReadsTheSubtree() throws {
        var reader = TLVReader(sample.encoded())
        _ = try reader.next()
        try reader.enterContainer()
        while let header = try reader.next() {
            if header.tag == .context(2) {
                #expect(try reader.readValue() == .structure([.context(3, .utf8("x"))]))
            }
        }
        try reader.exitContainer()
    }

    @Test func misuseIsReportedNotTrapped() throws {
        var reader = TLVReader(hex("04 01"))
        #expect(throws: TLVError.noCurrentElement) { try reader.readValue() }
        #expect(throws: TLVError.noCurrentElement) { try reader.enterContainer() }
        #expect(throws: TLVError.noCurrentElement) { try reader.skip() }
        #expect(throws: TLVError.noOpenContainer) { try reader.exitContainer() }
        _ = try reader.next()
        #expect(throws: TLVError.notAContainer) { try reader.enterContainer() }
        #expect(try reader.readValue() == .unsigned(1))
        #expect(throws: TLVError.noCurrentElement) { try reader.readElement() }
    }

    @Test func topLevelElementsMayCarryAnyTag() throws {
        #expect(try TLVElement.decode(hex("29 05")) == .context(5, .bool(true)))
    }

    @Test func listsAllowRepeatedAndAnonymousTags() throws {
        let list = try TLVElement.decode(hex("17 24 01 01 24 01 02 04 03 18"))
        #expect(list.value.members?.count == 3)
        #expect(list[context: 1] == .unsigned(1))
    }

    // MARK: Each error kind from a minimal buffer

    @Test(
        "each error kind from a hand-built buffer",
        arguments: [
            ("", TLVError.truncated),  // nothing at all
            ("24", .truncated),  // context tag octet missing
            ("64 01 00 00", .truncated),  // 4-octet profile tag cut short
            ("05 01", .truncated),  // 2-octet integer with one octet
            ("0a 00 00 80", .truncated),  // single float with three octets
            ("0d 01", .truncated),  // 2-octet length field cut short
            ("19", .badControlOctet(0x19)),  // reserved element type
            ("1f", .badControlOctet(0x1F)),
            ("15 38 01", .badControlOctet(0x38)),  // End of Container with a context tag
            ("0c 05 61 62", .lengthPastEnd),
            ("13 ff ff ff ff ff ff ff ff 00", .lengthPastEnd),  // length near 2^64
            ("0c 01 ff", .invalidUTF8),
            ("0c 02 c0 80", .invalidUTF8),  // overlong encoding of NUL
            ("0c 03 ed a0 80", .invalidUTF8),  // UTF-16 surrogate
            ("18", .unexpectedEndOfContainer),
            ("15", .missingEndOfContainer),
            ("16 16 18", .missingEndOfContainer),
            ("04 01 04 02", .trailingBytes),
            ("15 18 18", .trailingBytes),
            ("15 04 01 18", .invalidTagInContainer(.anonymous)),  // anonymous structure member
            ("16 24 01 01 18", .invalidTagInContainer(.context(1))),  // tagged array member
            ("15 24 01 01 24 01 02 18", .duplicateTag(.context(1))),
        ])
    func errorKinds(octets: String, expected: TLVError) {
        #expect(throws: expected) { try TLVElement.decode(hex(octets)) }
    }

    @Test func nestingLimitIsExact() throws {
        let sixteen = [UInt8](repeating: 0x16, count: 16) + [UInt8](repeating: 0x18, count: 16)
        let seventeen = [UInt8](repeating: 0x16, count: 17) + [UInt8](repeating: 0x18, count: 17)
        _ = try TLVElement.decode(sixteen)
        #expect(throws: TLVError.nestingTooDeep(limit: 16)) { try TLVElement.decode(seventeen) }
        #expect(throws: TLVError.nestingTooDeep(limit: 2)) { try TLVElement.decode(hex("15 36 01 17 18 18 18"), maxDepth: 2) }
        _ = try TLVElement.decode(hex("15 36 01 17 18 18 18"), maxDepth: 3)
        // Skipping checks the limit too.
        var reader = TLVReader(seventeen)
        _ = try reader.next()
        #expect(throws: TLVError.nestingTooDeep(limit: 16)) { try reader.skip() }
    }

    @Test func offsetPointsAtTheFailure() throws {
        var reader = TLVReader(hex("15 24 00 01 19 18"))
        _ = try reader.next()
        try reader.enterContainer()
        _ = try reader.next()
        _ = try reader.readValue()
        #expect(reader.offset == 4)
        #expect(throws: TLVError.badControlOctet(0x19)) { try reader.next() }
    }
}
