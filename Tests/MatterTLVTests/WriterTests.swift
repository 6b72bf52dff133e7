import MatterTLV
import Testing

@Suite("TLVWriter shortest forms and streaming calls")
struct WriterTests {
    @Test(
        "unsigned integers take the narrowest width",
        arguments: [
            (UInt64(0), "04 00"), (255, "04 ff"), (256, "05 00 01"), (65535, "05 ff ff"),
            (65536, "06 00 00 01 00"), (UInt64(UInt32.max), "06 ff ff ff ff"),
            (UInt64(UInt32.max) + 1, "07 00 00 00 00 01 00 00 00"), (UInt64.max, "07 ff ff ff ff ff ff ff ff"),
        ])
    func unsignedWidths(value: UInt64, octets: String) throws {
        #expect(TLVElement(.unsigned(value)).encoded() == hex(octets))
        #expect(try TLVElement.decode(hex(octets)).value == .unsigned(value))
    }

    @Test(
        "signed integers take the narrowest two's-complement width",
        arguments: [
            (Int64(0), "00 00"), (127, "00 7f"), (128, "01 80 00"), (-128, "00 80"), (-129, "01 7f ff"),
            (32767, "01 ff 7f"), (32768, "02 00 80 00 00"), (-32768, "01 00 80"), (-32769, "02 ff 7f ff ff"),
            (Int64(Int32.max), "02 ff ff ff 7f"), (Int64(Int32.max) + 1, "03 00 00 00 80 00 00 00 00"),
            (Int64(Int32.min), "02 00 00 00 80"), (Int64(Int32.min) - 1, "03 ff ff ff 7f ff ff ff ff"),
            (Int64.min, "03 00 00 00 00 00 00 00 80"), (Int64.max, "03 ff ff ff ff ff ff ff 7f"),
        ])
    func signedWidths(value: Int64, octets: String) throws {
        #expect(TLVElement(.signed(value)).encoded() == hex(octets))
        #expect(try TLVElement.decode(hex(octets)).value == .signed(value))
    }

    @Test("string length fields take the narrowest width", arguments: [0, 255, 256, 65535, 65536])
    func lengthWidths(count: Int) throws {
        let octets = [UInt8](repeating: 0x61, count: count)
        let lengthOctets = count <= 255 ? 1 : count <= 65535 ? 2 : 4
        let widthCode: UInt8 = count <= 255 ? 0 : count <= 65535 ? 1 : 2
        var lengthField: [UInt8] = []
        for i in 0..<lengthOctets { lengthField.append(UInt8(truncatingIfNeeded: count >> (8 * i))) }

        let bytesEncoding = TLVElement(.bytes(octets)).encoded()
        #expect(Array(bytesEncoding.prefix(1 + lengthOctets)) == [0x10 | widthCode] + lengthField)
        #expect(bytesEncoding.count == 1 + lengthOctets + count)

        let text = String(repeating: "a", count: count)
        let utf8Encoding = TLVElement(.utf8(text)).encoded()
        #expect(Array(utf8Encoding.prefix(1 + lengthOctets)) == [0x0C | widthCode] + lengthField)
        #expect(try TLVElement.decode(utf8Encoding).value == .utf8(text))
        #expect(try TLVElement.decode(bytesEncoding).value == .bytes(octets))
    }

    @Test func eightOctetLengthFieldsDecode() throws {
        // Legal, though no writer picks it for short strings.
        #expect(try TLVElement.decode(hex("0f 02 00 00 00 00 00 00 00 68 69")).value == .utf8("hi"))
        #expect(try TLVElement.decode(hex("13 01 00 00 00 00 00 00 00 ff")).value == .bytes([0xFF]))
        #expect(try TLVElement.decode(hex("0e 00 00 00 00")).value == .utf8(""))
    }

    @Test(
        "tags take the shortest form",
        arguments: [
            (TLVTag.anonymous, "04 01"),
            (.context(255), "24 ff 01"),
            (.commonProfile(0xFFFF), "44 ff ff 01"),
            (.commonProfile(0x1_0000), "64 00 00 01 00 01"),
            (.implicitProfile(0xFFFF), "84 ff ff 01"),
            (.implicitProfile(0x1_0000), "a4 00 00 01 00 01"),
            (.fullyQualified(vendorID: 1, profileNumber: 2, tagNumber: 0xFFFF), "c4 01 00 02 00 ff ff 01"),
            (.fullyQualified(vendorID: 1, profileNumber: 2, tagNumber: 0x1_0000), "e4 01 00 02 00 00 00 01 00 01"),
        ])
    func tagForms(tag: TLVTag, octets: String) throws {
        let element = TLVElement(tag: tag, .unsigned(1))
        #expect(element.encoded() == hex(octets))
        #expect(try TLVElement.decode(hex(octets)) == element)
    }

    @Test func nonMinimalTagsAndIntegersDecode() throws {
        // A 4-octet common-profile tag holding a small number, an 8-octet unsigned.
        let element = try TLVElement.decode(hex("67 05 00 00 00 2a 00 00 00 00 00 00 00"))
        #expect(element == TLVElement(tag: .commonProfile(5), .unsigned(42)))
        #expect(element.encoded() == hex("44 05 00 2a"))
    }

    @Test func streamingCallsNestAndBalance() throws {
        var writer = TLVWriter()
        writer.startStructure()
        writer.startArray(tag: .context(1))
        writer.put(value: .bool(true))
        writer.put(value: .null)
        #expect(writer.depth == 2)
        writer.endContainer()
        writer.startList(tag: .context(2))
        writer.put(tag: .context(7), value: "seven")
        writer.endContainer()
        writer.put(tag: .context(3), value: .double(0.5))
        writer.endContainer()
        #expect(writer.isBalanced)

        let expected = TLVElement(
            .structure([
                .context(1, .array([TLVElement(.bool(true)), TLVElement(.null)])),
                .context(2, .list([.context(7, .utf8("seven"))])),
                .context(3, .double(0.5)),
            ]))
        #expect(writer.bytes == expected.encoded())
        #expect(try TLVElement.decode(writer.bytes) == expected)
    }

    @Test func endContainerWithNothingOpenWritesNothing() {
        var writer = TLVWriter()
        writer.put(value: .unsigned(1))
        writer.endContainer()
        #expect(writer.bytes == hex("04 01"))
        writer.startArray()
        #expect(!writer.isBalanced)
        writer.endContainer()
        writer.endContainer()
        #expect(writer.bytes == hex("04 01 16 18"))
        #expect(writer.isBalanced)
    }

    struct Stop: Error {}

    @Test func closureContainersPropagateTypedErrors() {
        var writer = TLVWriter()
        #expect(throws: Stop.self) {
            try writer.structure { (w: inout TLVWriter) throws(Stop) in
                w.put(tag: .context(0), value: .unsigned(1))
                throw Stop()
            }
        }
        // The container was left open by the throw: the caller sees it.
        #expect(writer.depth == 1)

        var ok = TLVWriter()
        ok.array(tag: .anonymous) { w in
            w.write(TLVElement(.unsigned(9)))
        }
        #expect(ok.bytes == hex("16 04 09 18"))
    }

    @Test func writeAppendsSeveralTopLevelElements() throws {
        var writer = TLVWriter(reservingCapacity: 16)
        writer.write(TLVElement(.unsigned(1)))
        writer.write(TLVElement(tag: .commonProfile(2), .utf8("x")))
        #expect(writer.bytes == hex("04 01 4c 02 00 01 78"))
        #expect(
            try TLVElement.decodeAll(writer.bytes) == [
                TLVElement(.unsigned(1)), TLVElement(tag: .commonProfile(2), .utf8("x")),
            ])
        #expect(try TLVElement.decodeAll([UInt8]()) == [])
    }

    @Test func deepTreesEncodeWithoutRecursion() throws {
        var value = TLVValue.null
        for _ in 0..<2000 { value = .array([TLVElement(value)]) }
        let encoded = TLVElement(value).encoded()
        #expect(encoded.count == 2000 * 2 + 1)
        #expect(encoded.first == 0x16 && encoded.last == 0x18)
        #expect(throws: TLVError.nestingTooDeep(limit: 16)) { try TLVElement.decode(encoded) }
        #expect(try TLVElement.decode(encoded, maxDepth: 2000).encoded() == encoded)
    }
}
