import MatterTLV
import Testing

@Suite("Accessors, equality and text")
struct AccessorTests {
    @Test func scalarAccessorsMatchOnlyTheirType() {
        #expect(TLVValue.unsigned(7).uintValue == 7)
        #expect(TLVValue.signed(7).uintValue == nil)  // signedness is part of the type
        #expect(TLVValue.signed(-7).intValue == -7)
        #expect(TLVValue.unsigned(7).intValue == nil)
        #expect(TLVValue.bool(true).boolValue == true)
        #expect(TLVValue.null.boolValue == nil)
        #expect(TLVValue.utf8("a").stringValue == "a")
        #expect(TLVValue.bytes([1]).stringValue == nil)
        #expect(TLVValue.bytes([1]).bytesValue == [1])
        #expect(TLVValue.float(0.5).floatValue == 0.5)
        #expect(TLVValue.float(0.5).doubleValue == 0.5)
        #expect(TLVValue.double(0.25).doubleValue == 0.25)
        #expect(TLVValue.double(0.25).floatValue == nil)
        #expect(TLVValue.null.isNull)
        #expect(!TLVValue.unsigned(0).isNull)
        #expect(TLVValue.unsigned(0).members == nil)
        #expect(TLVValue.list([]).members == [])
    }

    @Test func contextSubscriptFindsTheFirstMember() {
        let structure = TLVValue.structure([.context(1, .unsigned(10)), .context(2, .utf8("b"))])
        #expect(structure[context: 2] == .utf8("b"))
        #expect(structure[context: 3] == nil)
        let list = TLVValue.list([.context(1, .unsigned(1)), .context(1, .unsigned(2))])
        #expect(list[context: 1] == .unsigned(1))
        #expect(TLVValue.array([TLVElement(.unsigned(1))])[context: 0] == nil)
        let element = TLVElement(tag: .commonProfile(9), structure)
        #expect(element[context: 1] == .unsigned(10))
        #expect(element[.context(2)] == .utf8("b"))
        #expect(TLVTag.context(4).contextNumber == 4)
        #expect(TLVTag.anonymous.contextNumber == nil)
    }

    @Test func equalityIsEqualityOfEncodings() {
        #expect(TLVValue.float(.nan) == .float(.nan))
        #expect(TLVValue.double(.nan) == .double(.nan))
        #expect(TLVValue.double(0.0) != .double(-0.0))
        #expect(TLVValue.float(Float(bitPattern: 0x7FC0_0001)) != .float(Float(bitPattern: 0x7FC0_0002)))
        #expect(TLVValue.signed(1) != .unsigned(1))
        #expect(TLVValue.float(1) != .double(1))
        // Canonically equivalent text with different octets differs, as its encodings do.
        #expect(TLVValue.utf8("\u{E9}") != .utf8("e\u{301}"))
        #expect(TLVValue.structure([]) != .list([]))
        let set: Set<TLVValue> = [.double(.nan), .double(.nan), .utf8("x"), "x"]
        #expect(set.count == 2)
    }

    @Test func literals() {
        let text: TLVValue = "hi"
        let flag: TLVValue = true
        #expect(text == .utf8("hi"))
        #expect(flag == .bool(true))
    }

    @Test func descriptionUsesTheSpecNotation() {
        let element = TLVElement(
            .structure([
                .context(0, .signed(42)), .context(1, .signed(-17)), .context(2, .unsigned(42)),
                .context(3, .array([TLVElement(.bool(true)), TLVElement(.null)])),
                .context(4, .list([.context(0, .utf8("a\"b"))])),
                .context(5, .bytes([0x00, 0xAB])),
                TLVElement(tag: .commonProfile(1), .float(0.5)),
                TLVElement(tag: .fullyQualified(vendorID: 65521, profileNumber: 57069, tagNumber: 1), .double(2)),
                TLVElement(tag: .implicitProfile(3), .structure([])),
            ]))
        #expect(
            element.description
                == #"{0 = 42, 1 = -17, 2 = 42U, 3 = [true, null], 4 = [[0 = "a\"b"]], 5 = hex:00ab, "#
                + #"Matter::1 = 0.5f, 65521::57069:1 = 2.0, implicit::3 = {}}"#)
    }

    @Test func debugDescriptionIndentsMembers() {
        let element = TLVElement(.structure([.context(1, .array([TLVElement(.unsigned(1))]))]))
        #expect(element.debugDescription == "{\n  1 = [\n    1U\n  ]\n}")
    }
}
