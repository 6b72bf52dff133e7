import Testing
import MatterTLV
@testable import MatterModel

@Suite struct ValidationTests {
    let model = MatterModel.standard
    var levelControl: ClusterDefinition { model.cluster(named: "LevelControl")! }
    var basic: ClusterDefinition { model.cluster(named: "BasicInformation")! }
    var onOff: ClusterDefinition { model.cluster(named: "OnOff")! }

    @Test func levelRangeUsesOtherAttributes() throws {
        let lc = levelControl
        let current = try #require(lc.attribute(named: "CurrentLevel"))
        // No current values: MinLevel/MaxLevel defaults (1, 254) apply.
        let tooHigh = try #require(lc.validate(.unsigned(300), for: current))
        #expect(tooHigh.expected == "an integer in 1...254")
        #expect(tooHigh.kind == .constraint && tooHigh.path == "" && tooHigh.actual == "300")
        #expect(tooHigh.description == "expected an integer in 1...254, got 300")
        #expect(lc.validate(.unsigned(0), for: current)?.expected == "an integer in 1...254")
        #expect(lc.validate(.unsigned(254), for: current) == nil)
        #expect(lc.validate(.signed(128), for: current) == nil)
        #expect(lc.validate(.null, for: current) == nil)
        // The device's own MinLevel/MaxLevel narrow the range.
        let minID = try #require(lc.attribute(named: "MinLevel")).id
        let maxID = try #require(lc.attribute(named: "MaxLevel")).id
        let values: [AttributeID: TLVValue] = [minID: .unsigned(10), maxID: .unsigned(200)]
        let narrowed = lc.validate(.unsigned(201), for: current) { values[$0] }
        #expect(narrowed?.expected == "an integer in 10...200")
        #expect(lc.validate(.unsigned(10), for: current) { values[$0] } == nil)
        #expect(lc.validate(.unsigned(9), for: current) { values[$0] } != nil)
    }

    @Test func nullableIntegersLoseTheirNullEncoding() throws {
        let lc = levelControl
        let onLevel = try #require(lc.attribute(named: "OnTransitionTime"))
        #expect(lc.validate(.unsigned(0xFFFF), for: onLevel)?.expected == "an integer in 0...65534")
        #expect(lc.validate(.unsigned(0xFFFE), for: onLevel) == nil)
        let remaining = try #require(lc.attribute(named: "RemainingTime"))
        #expect(lc.validate(.unsigned(0xFFFF), for: remaining) == nil)
        #expect(lc.validate(.unsigned(0x10000), for: remaining)?.expected == "an integer in 0...65535")
        #expect(lc.validate(.signed(-1), for: remaining)?.expected == "an integer in 0...65535")
        let nc = try #require(model.cluster(named: "NetworkCommissioning"))
        let lastError = try #require(nc.attribute(named: "LastConnectErrorValue"))
        #expect(nc.validate(.signed(Int64(Int32.min)), for: lastError)?.expected == "an integer in -2147483647...2147483647")
        #expect(nc.validate(.signed(-5), for: lastError) == nil)
    }

    @Test func wideIntegersCompareExactly() throws {
        let bi = basic
        let breadcrumb = try #require(model.cluster(named: "GeneralCommissioning")?.attribute(named: "Breadcrumb"))
        let gc = try #require(model.cluster(named: "GeneralCommissioning"))
        #expect(gc.validate(.unsigned(UInt64.max), for: breadcrumb) == nil)
        #expect(gc.validate(.signed(-1), for: breadcrumb) != nil)
        let sw = try #require(bi.attribute(named: "SoftwareVersion"))
        #expect(bi.validate(.unsigned(UInt64(UInt32.max) + 1), for: sw)?.expected == "an integer in 0...4294967295")
    }

    @Test func stringLengthAndType() throws {
        let bi = basic
        let label = try #require(bi.attribute(named: "NodeLabel"))
        #expect(bi.validate(.utf8(String(repeating: "a", count: 32)), for: label) == nil)
        let long = try #require(bi.validate(.utf8(String(repeating: "a", count: 33)), for: label))
        #expect(long.expected == "at most 32 UTF-8 bytes" && long.kind == .constraint && long.actual == "33 UTF-8 bytes")
        // Length counts UTF-8 bytes, not characters: 11 × "é" (2 bytes) + 11 × "€" (3 bytes) = 55 bytes.
        #expect(bi.validate(.utf8(String(repeating: "é€", count: 11)), for: label)?.expected == "at most 32 UTF-8 bytes")
        let wrong = try #require(bi.validate(.unsigned(5), for: label))
        #expect(wrong.kind == .typeMismatch && wrong.expected == "a string" && wrong.actual == "an integer")
        let location = try #require(bi.attribute(named: "Location"))
        #expect(bi.validate(.utf8("US"), for: location) == nil)
        #expect(bi.validate(.utf8("USA"), for: location)?.expected == "exactly 2 UTF-8 bytes")
        #expect(bi.validate(.utf8(""), for: location)?.expected == "exactly 2 UTF-8 bytes")
    }

    @Test func booleansAndNull() throws {
        let oo = onOff
        let attr = try #require(oo.attribute(named: "OnOff"))
        #expect(oo.validate(.bool(true), for: attr) == nil)
        let notBool = try #require(oo.validate(.unsigned(1), for: attr))
        #expect(notBool.expected == "a boolean" && notBool.kind == .typeMismatch)
        let null = try #require(oo.validate(.null, for: attr))
        #expect(null.kind == .nullNotAllowed && null.expected == "a boolean")
        #expect(null.description == "null is not allowed; expected a boolean")
        let label = try #require(basic.attribute(named: "NodeLabel"))
        #expect(basic.validate(.null, for: label)?.kind == .nullNotAllowed)
    }

    @Test func enumValuesMustBeDefined() throws {
        let oo = onOff
        let startUp = try #require(oo.attribute(named: "StartUpOnOff"))
        #expect(oo.validate(.unsigned(2), for: startUp) == nil)
        #expect(oo.validate(.null, for: startUp) == nil)
        let bad = try #require(oo.validate(.unsigned(3), for: startUp))
        #expect(bad.expected == "one of 0 (Off), 1 (On), 2 (Toggle)" && bad.kind == .constraint)
        #expect(oo.validate(.unsigned(256), for: startUp)?.expected == "one of 0 (Off), 1 (On), 2 (Toggle)")
        #expect(oo.validate(.utf8("On"), for: startUp)?.kind == .typeMismatch)
    }

    @Test func bitmapsRejectUnknownBits() throws {
        let lc = levelControl
        let options = try #require(lc.attribute(named: "Options"))
        #expect(lc.validate(.unsigned(0b11), for: options) == nil)
        let bad = try #require(lc.validate(.unsigned(0b100), for: options))
        #expect(bad.expected == "a bitmap of 0x01 (ExecuteIfOff), 0x02 (CoupleColorTempToLevel)")
        #expect(bad.actual == "0x04")
        #expect(lc.validate(.unsigned(0x100), for: options) != nil)
        // A bare map32 (FeatureMap) only checks the width.
        let fm = try #require(lc.attribute(named: "FeatureMap"))
        #expect(lc.validate(.unsigned(0xFFFF_FFFF), for: fm) == nil)
        #expect(lc.validate(.unsigned(0x1_0000_0000), for: fm)?.expected == "a 32-bit bitmap")
    }

    @Test func listOfStructsReportsThePathOfTheBadMember() throws {
        let desc = try #require(model.cluster(named: "Descriptor"))
        let tags = try #require(desc.attribute(named: "TagList"))
        func tag(_ label: TLVValue?) -> TLVElement {
            var members = [
                TLVElement(tag: .context(0), .null),
                TLVElement(tag: .context(1), .unsigned(8)),
                TLVElement(tag: .context(2), .unsigned(3)),
            ]
            if let label { members.append(TLVElement(tag: .context(3), label)) }
            return TLVElement(.structure(members))
        }
        #expect(desc.validate(.array([tag(.utf8("Left")), tag(nil)]), for: tags) == nil)
        let bad = try #require(desc.validate(.array([tag(.utf8("Left")), tag(.utf8(String(repeating: "x", count: 65)))]), for: tags))
        #expect(bad.path == "[1].label")
        #expect(bad.expected == "at most 64 UTF-8 bytes")
        #expect(bad.description == "[1].label: expected at most 64 UTF-8 bytes, got 65 UTF-8 bytes")
        let wrongMember = try #require(desc.validate(.array([tag(.unsigned(1))]), for: tags))
        #expect(wrongMember.path == "[0].label" && wrongMember.kind == .typeMismatch)
        // List count: TagList allows 1 to 6 entries.
        #expect(desc.validate(.array([]), for: tags)?.expected == "1 to 6 entries")
        #expect(desc.validate(.array(Array(repeating: tag(nil), count: 7)), for: tags)?.expected == "1 to 6 entries")
        #expect(desc.validate(.structure([]), for: tags)?.expected == "a list")
    }

    @Test func missingMandatoryFieldAndFabricIndex() throws {
        let acl = try #require(model.cluster(named: "AccessControl"))
        let attr = try #require(acl.attribute(named: "ACL"))
        // FabricIndex (tag 254) may be left to the server in a write.
        let entry = TLVElement(
            .structure([
                TLVElement(tag: .context(1), .unsigned(5)),
                TLVElement(tag: .context(2), .unsigned(2)),
                TLVElement(tag: .context(3), .array([TLVElement(.unsigned(112233))])),
                TLVElement(tag: .context(4), .null),
            ]))
        #expect(acl.validate(.array([entry]), for: attr) == nil)
        let missingAuthMode = TLVElement(
            .structure([
                TLVElement(tag: .context(1), .unsigned(5)),
                TLVElement(tag: .context(3), .null),
                TLVElement(tag: .context(4), .null),
            ]))
        let v = try #require(acl.validate(.array([entry, missingAuthMode]), for: attr))
        #expect(v.path == "[1].authMode" && v.kind == .typeMismatch)
        // Privilege 6 is not an AccessControlEntryPrivilegeEnum value.
        let badPrivilege = TLVElement(
            .structure([
                TLVElement(tag: .context(1), .unsigned(6)),
                TLVElement(tag: .context(2), .unsigned(2)),
                TLVElement(tag: .context(3), .null),
                TLVElement(tag: .context(4), .null),
            ]))
        #expect(acl.validate(.array([badPrivilege]), for: attr)?.path == "[0].privilege")
        // Subjects are bounded by SubjectsPerAccessControlEntry (default 4).
        let tooMany = TLVElement(
            .structure([
                TLVElement(tag: .context(1), .unsigned(3)),
                TLVElement(tag: .context(2), .unsigned(2)),
                TLVElement(tag: .context(3), .array((1...5).map { TLVElement(.unsigned($0)) })),
                TLVElement(tag: .context(4), .null),
            ]))
        #expect(acl.validate(.array([tooMany]), for: attr)?.expected == "at most 4 entries")
        #expect(acl.validate(.array([tooMany]), for: attr)?.path == "[0].subjects")
    }

    @Test func commandFields() throws {
        let lc = levelControl
        let cmd = try #require(lc.command(named: "MoveToLevel"))
        let good = TLVValue.structure([
            TLVElement(tag: .context(0), .unsigned(128)),
            TLVElement(tag: .context(1), .null),
            TLVElement(tag: .context(2), .unsigned(0)),
            TLVElement(tag: .context(3), .unsigned(0)),
        ])
        #expect(lc.validate(fields: good, of: cmd) == nil)
        let badLevel = TLVValue.structure([
            TLVElement(tag: .context(0), .unsigned(255)),
            TLVElement(tag: .context(1), .unsigned(10)),
            TLVElement(tag: .context(2), .unsigned(0)),
            TLVElement(tag: .context(3), .unsigned(0)),
        ])
        let v = try #require(lc.validate(fields: badLevel, of: cmd))
        #expect(v.path == "level" && v.expected == "an integer in 0...254")
        let level = try #require(cmd.field(0))
        #expect(lc.validate(.unsigned(254), for: level) == nil)
        #expect(lc.validate(.null, for: level)?.kind == .nullNotAllowed)
        #expect(lc.validate(.utf8("x"), type: .single) != nil)
        #expect(lc.validate(.float(1.5), type: .single) == nil)
        #expect(lc.validate(.double(1e300), type: .single)?.expected == "a single-precision number")
    }

    @Test func semanticTypeBounds() throws {
        let wc = try #require(model.cluster(named: "WindowCovering"))
        let pct = try #require(wc.attribute(named: "CurrentPositionLiftPercentage"))
        #expect(wc.validate(.unsigned(100), for: pct) == nil)
        #expect(wc.validate(.unsigned(101), for: pct)?.expected == "an integer in 0...100")
        let gd = try #require(model.cluster(named: "GeneralDiagnostics"))
        let hw = try #require(gd.structDefinition(named: "NetworkInterface")?.field(named: "HardwareAddress"))
        #expect(gd.validate(.bytes(Array(repeating: 0, count: 6)), for: hw) == nil)
        #expect(gd.validate(.bytes(Array(repeating: 0, count: 7)), for: hw)?.expected == "6 or 8 bytes")
        let v4 = try #require(gd.structDefinition(named: "NetworkInterface")?.field(named: "IPv4Addresses"))
        #expect(gd.validate(.array([TLVElement(.bytes([127, 0, 0, 1]))]), for: v4) == nil)
        #expect(gd.validate(.array([TLVElement(.bytes([127, 0, 0]))]), for: v4)?.path == "[0]")
    }

    @Test func oddHandBuiltWidthsDoNotTrap() {
        let oo = onOff
        #expect(oo.validate(.unsigned(1), type: .uint(bits: 0)) == nil)
        #expect(oo.validate(.unsigned(2), type: .uint(bits: 0)) != nil)
        #expect(oo.validate(.signed(-1), type: .int(bits: -3)) == nil)
        #expect(oo.validate(.unsigned(UInt64.max), type: .enumeration("", bits: 64), nullable: true) != nil)
        #expect(oo.validate(.unsigned(UInt64.max), type: .bitmap("", bits: 99)) == nil)
        #expect(oo.validate(.unsigned(5), type: .structure("Nope"))?.kind == .typeMismatch)
    }

    @Test func deeplyNestedGarbageDoesNotCrash() {
        let acl = model.cluster(named: "AccessControl")!
        let attr = acl.attribute(named: "ACL")!
        var value = TLVValue.array([])
        for _ in 0..<200 { value = .array([TLVElement(value)]) }
        #expect(acl.validate(value, for: attr)?.path == "[0]")
        #expect(acl.validate(.list([TLVElement(tag: .context(9), .bytes([1]))]), for: attr)?.kind == .typeMismatch)
    }
}
