import Testing

@testable import MatterDNSSD

@Suite struct TXTRecordTests {
    @Test func encodesEntriesInOrderWithBooleanAttributes() {
        var txt = DNSSDTXTRecord(["D": "3840", "CM": "1"])
        txt.setValue(nil, forKey: "flag")
        txt["empty"] = ""
        #expect(txt.encoded() == [Array("D=3840".utf8), Array("CM=1".utf8), Array("flag".utf8), Array("empty=".utf8)])
        #expect(txt["flag"] == "")
        #expect(txt.rawValue(forKey: "flag") == .some(nil))
        #expect(txt.rawValue(forKey: "empty") == .some([]))
        #expect(txt.rawValue(forKey: "missing") == nil)
    }

    @Test func keysAreCaseInsensitiveAndSettingKeepsPosition() {
        var txt = DNSSDTXTRecord(["SII": "5000", "SAI": "300"])
        #expect(txt["sii"] == "5000")
        txt["sIi"] = "800"
        #expect(txt.keys == ["SII", "SAI"])
        #expect(txt["SII"] == "800")
        txt["SII"] = nil
        #expect(txt.keys == ["SAI"])
        #expect(!txt.contains("SII"))
    }

    @Test func decodingFollowsRFC6763() {
        // Empty strings and strings starting with '=' are ignored; the first of a repeated
        // key wins (RFC 6763 §6.4); values may hold '=' and arbitrary bytes.
        let txt = DNSSDTXTRecord(decoding: [
            [], Array("=nokey".utf8), Array("D=3840".utf8), Array("d=1".utf8), Array("PI=a=b".utf8),
            Array("bool".utf8), [0x42, 0x3D, 0xFF, 0x00],
        ])
        #expect(txt.keys == ["D", "PI", "bool", "B"])
        #expect(txt["D"] == "3840")
        #expect(txt["PI"] == "a=b")
        #expect(txt["bool"] == "")
        #expect(txt.rawValue(forKey: "B") == .some([0xFF, 0x00]))
        // Not UTF-8: no text value, but the bytes are there.
        #expect(txt["B"] == nil)
    }

    @Test func decodingDropsKeysThatAreNotPrintableASCII() {
        let txt = DNSSDTXTRecord(decoding: [[0x01, 0x3D, 0x31], [0xC3, 0xA9, 0x3D, 0x31], Array("ok=1".utf8)])
        #expect(txt.keys == ["ok"])
    }

    @Test func roundTripsThroughTheWireForm() {
        let txt = DNSSDTXTRecord(["VP": "65521+32768", "DN": "Küche", "T": "0"])
        #expect(DNSSDTXTRecord(decoding: txt.encoded()) == txt)
    }

    @Test func validationRejectsWhatCannotBeEncoded() {
        #expect(throws: DNSSDError.self) { try DNSSDTXTRecord(["": "x"]).validate() }
        #expect(throws: DNSSDError.self) { try DNSSDTXTRecord(["a=b": "x"]).validate() }
        #expect(throws: DNSSDError.self) { try DNSSDTXTRecord(["ké": "x"]).validate() }
        let longest = String(repeating: "v", count: 253)
        #expect(throws: Never.self) { try DNSSDTXTRecord(["k": longest]).validate() }
        #expect(throws: DNSSDError.self) { try DNSSDTXTRecord(["k": longest + "v"]).validate() }
    }

    @Test func duplicateKeysInInitialiserKeepTheFirst() {
        let txt = DNSSDTXTRecord(["A": "1", "a": "2"])
        #expect(txt.keys == ["A"])
        #expect(txt["a"] == "1")
    }
}
