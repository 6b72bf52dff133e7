import Testing
@testable import MatterModel

/// The other spec notations the model file uses: types, constraints, access, names.
@Suite struct NotationTests {
    func type(_ s: String) -> DataType? {
        DataType.parse(s) { $0 == "FooEnum" ? .enumeration("FooEnum", bits: 8) : nil }
    }

    @Test func dataTypes() {
        #expect(type("uint8") == .uint(bits: 8))
        #expect(type("uint24") == .uint(bits: 24))
        #expect(type("int64") == .int(bits: 64))
        #expect(type("uint7") == nil)
        #expect(type("uint72") == nil)
        #expect(type("list[uint16]") == .list(.uint(bits: 16)))
        #expect(type("list[FooEnum]") == .list(.enumeration("FooEnum", bits: 8)))
        #expect(type("percent") == .semantic(.percent))
        #expect(type("node-id")?.base == .uint(bits: 64))
        #expect(type("fabric-idx")?.base == .uint(bits: 8))
        #expect(type("ipv6adr")?.base == .octets)
        #expect(type("Unknown") == nil)
        #expect(type("list[Unknown]") == nil)
        #expect(DataType.list(.structure("TargetStruct")).description == "list[TargetStruct]")
        #expect(DataType.semantic(.percent100ths).description == "percent100ths")
        for s in SemanticType.allCases {
            #expect(type(s.rawValue) == .semantic(s))
            if case .semantic = s.base { Issue.record("\(s) has a semantic base") }
        }
    }

    @Test func numericConstraints() throws {
        #expect(try Constraint.parse("0 to 254", for: .uint(bits: 8)) == .range(min: 0, max: 254))
        #expect(try Constraint.parse("-100 to 0x64", for: .int(bits: 16)) == .range(min: -100, max: 100))
        #expect(try Constraint.parse("max 254", for: .uint(bits: 8)) == .range(min: nil, max: 254))
        #expect(try Constraint.parse("min 1", for: .uint(bits: 8)) == .range(min: 1, max: nil))
        #expect(try Constraint.parse("5", for: .uint(bits: 8)) == .range(min: 5, max: 5))
        #expect(try Constraint.parse("0, 1, 3", for: .uint(bits: 8)) == .allowed([0, 1, 3]))
        #expect(
            try Constraint.parse("MinLevel to MaxLevel", for: .uint(bits: 8))
                == .rangeRef(min: .attribute("MinLevel"), max: .attribute("MaxLevel")))
        #expect(try Constraint.parse("MinLevel to 254", for: .uint(bits: 8)) == .rangeRef(min: .attribute("MinLevel"), max: .value(254)))
        #expect(try Constraint.parse("desc", for: .uint(bits: 8)) == .described)
        #expect(try Constraint.parse("all", for: .uint(bits: 8)) == nil)
        #expect(throws: ConstraintParseError.self) { try Constraint.parse("9 to 1", for: .uint(bits: 8)) }
        #expect(throws: ConstraintParseError.self) { try Constraint.parse("lots", for: .uint(bits: 8)) }
        #expect(throws: ConstraintParseError.self) { try Constraint.parse("max", for: .uint(bits: 8)) }
        #expect(throws: ConstraintParseError.self) { try Constraint.parse("max 3", for: .bool) }
    }

    @Test func lengthConstraints() throws {
        #expect(try Constraint.parse("max 32", for: .string) == .maxLength(32))
        #expect(try Constraint.parse("min 1", for: .octets) == .minLength(1))
        #expect(try Constraint.parse("1 to 64", for: .string) == .lengthRange(min: 1, max: 64))
        #expect(try Constraint.parse("2", for: .string) == .lengthRange(min: 2, max: 2))
        #expect(try Constraint.parse("6, 8", for: .octets) == .allowedLengths([6, 8]))
        #expect(try Constraint.parse("max 4", for: .list(.string)) == .maxLength(4))
        #expect(try Constraint.parse("max 4[max 32]", for: .list(.string)) == .list(count: .maxLength(4), entry: .maxLength(32)))
        #expect(try Constraint.parse("[min 1]", for: .list(.uint(bits: 16))) == .list(count: nil, entry: .range(min: 1, max: nil)))
        #expect(
            try Constraint.parse("max SupportedFabrics", for: .list(.octets)) == .rangeRef(min: nil, max: .attribute("SupportedFabrics")))
        #expect(throws: ConstraintParseError.self) { try Constraint.parse("max -1", for: .string) }
        #expect(throws: ConstraintParseError.self) { try Constraint.parse("8 to 2", for: .string) }
        for text in ["0 to 254", "max 32", "MinLevel to MaxLevel", "1 to 64", "max 4[max 32]"] {
            let t: DataType =
                text.contains("[") ? .list(.string) : (text.contains("Level") || text.hasPrefix("0") ? .uint(bits: 8) : .string)
            let c = try #require(try Constraint.parse(text, for: t))
            #expect(c.description == text)
        }
    }

    @Test func integerLiterals() {
        #expect(parseInteger("0xFFFE") == 65534)
        #expect(parseInteger("-9223372036854775808") == Int64.min)
        #expect(parseInteger("9223372036854775808") == nil)
        #expect(parseInteger("0x") == nil)
        #expect(parseInteger("--1") == nil)
    }

    @Test func accessNotation() throws {
        let rw = try #require(AccessSpec.parse("RW VM"))
        #expect(rw.readable && rw.writable && rw.readPrivilege == .view && rw.writePrivilege == .manage)
        let acl = try #require(AccessSpec.parse("RW F A"))
        #expect(acl.fabricScoped && acl.privilege == .administer)
        let cmd = try #require(AccessSpec.parse("A T F"))
        #expect(cmd.timed && cmd.fabricScoped && cmd.privilege == .administer)
        let event = try #require(AccessSpec.parse("A S"))
        #expect(event.fabricSensitive)
        #expect(AccessSpec.parse("RW VQ") == nil)
        #expect(AccessSpec.parse("VOM") == nil)
        #expect(Privilege.view < Privilege.administer && Privilege.operate < Privilege.manage)
        #expect(AttributeQuality([.nonVolatile, .scene]).letters == "N S")
    }

    @Test func names() {
        #expect(Naming.lowerCamel("CurrentLevel") == "currentLevel")
        #expect(Naming.lowerCamel("ACL") == "acl")
        #expect(Naming.lowerCamel("NOCs") == "nocs")
        #expect(Naming.lowerCamel("UTCTime") == "utcTime")
        #expect(Naming.lowerCamel("TCAcceptedVersion") == "tcAcceptedVersion")
        #expect(Naming.lowerCamel("IPv4Addresses") == "ipv4Addresses")
        #expect(Naming.lowerCamel("SSID") == "ssid")
        #expect(Naming.lowerCamel("RSSI") == "rssi")
        #expect(Naming.lowerCamel("CSRRequest") == "csrRequest")
        #expect(Naming.lowerCamel("onOff") == "onOff")
        #expect(Naming.lowerCamel("") == "")
        #expect(Naming.matches("OnOff", "onOff"))
        #expect(Naming.matches("OnOff", "OnOff"))
        #expect(Naming.matches("ACL", "acl"))
        #expect(!Naming.matches("OnOff", "onoff"))
        #expect(!Naming.matches("OnOff", "OnOffX"))
    }
}
