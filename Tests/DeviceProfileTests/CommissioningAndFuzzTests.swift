import DeviceProfile
import Foundation
import MatterModel
import Testing

@Suite("Commissioning codes")
struct CommissioningCodeTests {
    @Test("the spec's invalid passcodes are rejected, the range is enforced")
    func validity() {
        for bad: UInt32 in [
            0, 11_111_111, 22_222_222, 33_333_333, 44_444_444, 55_555_555, 66_666_666,
            77_777_777, 88_888_888, 99_999_999, 12_345_678, 87_654_321, 99_999_999, 100_000_000,
        ] {
            #expect(!CommissioningCodes.isValidPasscode(bad), "\(bad)")
        }
        for good: UInt32 in [1, 20_202_021, 99_999_998, 12_345_679] {
            #expect(CommissioningCodes.isValidPasscode(good), "\(good)")
        }
    }

    @Test("generated passcodes are valid, discriminators 12-bit, and both stable per serial")
    func generated() {
        var passcodes: Set<UInt32> = []
        for i in 0..<2000 {
            let serial = "SN-\(i)"
            let a = CommissioningCodes.generated(serialNumber: serial, vendorID: 0xFFF1, productID: 0x8000)
            let b = CommissioningCodes.generated(serialNumber: serial, vendorID: 0xFFF1, productID: 0x8000)
            #expect(a.passcode == b.passcode && a.discriminator == b.discriminator)
            #expect(CommissioningCodes.isValidPasscode(a.passcode))
            #expect(a.discriminator <= 4095)
            passcodes.insert(a.passcode)
        }
        // Different serials give (almost always) different codes.
        #expect(passcodes.count > 1990)
        let other = CommissioningCodes.generated(serialNumber: "SN-1", vendorID: 0xFFF2, productID: 0x8000)
        #expect(other.passcode != CommissioningCodes.generated(serialNumber: "SN-1", vendorID: 0xFFF1, productID: 0x8000).passcode)
    }

    @Test("a profile without a commissioning section keeps its generated code across loads")
    func stableAcrossLoads() throws {
        let first = try ProfileLoader().loadDevice(file: shippedProfile("devices/dimmable-light.yaml"))
        let second = try ProfileLoader().loadDevice(file: shippedProfile("devices/dimmable-light.yaml"))
        #expect(first.commissioning == second.commissioning)
        #expect(first.commissioning.passcodeGenerated && first.commissioning.discriminatorGenerated)
        #expect(CommissioningCodes.isValidPasscode(first.commissioning.passcode))
        let expected = CommissioningCodes.generated(serialNumber: "SIM-DL-0001", vendorID: 0xFFF1, productID: 0x8002)
        #expect(first.commissioning.passcode == expected.passcode)
        #expect(first.commissioning.discriminator == expected.discriminator)

        // A given discriminator is kept; only the passcode is generated.
        let half = try memoryLoader([:]).loadDevice(
            yaml: device("deviceTypes: [OnOffLight]", extra: "commissioning: {discriminator: 77}"), file: "d.yaml")
        #expect(half.commissioning.discriminator == 77)
        #expect(!half.commissioning.discriminatorGenerated && half.commissioning.passcodeGenerated)
    }

    @Test("a home spreads generated discriminators over the short values; given ones stay")
    func shortDiscriminatorsSpread() throws {
        // The demo home: 29 devices, 3 with their own discriminators. Before spreading, several
        // shared short discriminator 12 (one manual code prefix); now all 16 short values are
        // used and none more than twice (29 devices, 16 values: thirteen twice).
        let home = try ProfileLoader().loadHome(file: shippedProfile("homes/demo-home.yaml"))
        let codes = home.allDevices.map(\.profile.commissioning)
        let shorts = codes.map { $0.discriminator >> 8 }
        #expect(codes.count == 29)
        let shortUses = Dictionary(grouping: shorts, by: { $0 }).mapValues(\.count)
        #expect(shortUses.count == 16 && shortUses.values.sorted() == Array(repeating: 1, count: 3) + Array(repeating: 2, count: 13))
        #expect(Set(codes.map(\.discriminator)).count == codes.count)
        let given = home.allDevices.filter { !$0.profile.commissioning.discriminatorGenerated }
        #expect(given.map(\.name) == ["Kitchen Pendant", "Guest Light", "Porch Light"])
        #expect(given.map(\.profile.commissioning.discriminator) == [1201, 2442, 3001])
        // Every process of a home loads the same codes.
        #expect(try ProfileLoader().loadHome(file: shippedProfile("homes/demo-home.yaml")) == home)

        // Beyond 16 devices each short value is shared as little as it can be; a generated
        // value keeps its low 8 bits, and its own short value when that is among the least used.
        let entries = (0..<40).map { i in (discriminator: UInt16(0xC00 | i), generated: i != 5) }
        let spread = CommissioningCodes.spreadShortDiscriminators(entries)
        #expect(spread[5] == 0xC05)
        #expect(spread[0] == 0x000)
        let uses = Dictionary(grouping: spread, by: { $0 >> 8 }).mapValues(\.count)
        #expect(uses.count == 16 && uses.values.allSatisfy { $0 == 2 || $0 == 3 })
        #expect(zip(spread, entries).allSatisfy { $0.0 & 0xFF == $0.1.discriminator & 0xFF })
        #expect(Set(spread).count == spread.count)
        // A device alone keeps what it was generated with.
        #expect(CommissioningCodes.spreadShortDiscriminators([(discriminator: 3211, generated: true)]) == [3211])
    }

    @Test("a fleet of more devices than there are discriminators gets one each, evenly spread, and the first 4,096 distinct")
    func spreadBeyondAllDiscriminators() {
        // 4,096 12-bit values: the 4,097th device has no free one (this looped for ever, issue #43).
        var rng = SplitMix64(seed: 43)
        let entries = (0..<10_000).map { _ in (discriminator: UInt16(rng.next() % 4096), generated: true) }
        let spread = CommissioningCodes.spreadShortDiscriminators(entries)
        #expect(spread.count == 10_000)
        #expect(Set(spread.prefix(4096)).count == 4096)
        let uses = Dictionary(grouping: spread, by: { $0 >> 8 }).mapValues(\.count)
        #expect(uses.count == 16 && uses.values.allSatisfy { $0 == 625 })
    }
}

@Suite("Robustness")
struct RobustnessTests {
    /// A small deterministic generator so a failure reproduces.
    struct Generator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return state >> 11
        }
        mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
    }

    static let tokens = [
        ":", "-", "- ", "[", "]", "{", "}", ",", "&a ", "*a", "<<: *a", "!!str ", "!!int ", "?", "'", "\"",
        "\t", "\n", "  ", "#", "0x", "-1", "99999999999999999999", "1e400", ".nan", "null", "~", "true",
        "|", ">", "%YAML 1.1\n", "---\n", "...\n", "\\u0000", "é", "endpoints:", "features: [",
        "0: {deviceTypes: [RootNode]}", "LevelControl:", "currentLevel: ", "structures:", "profile: ",
        "values: {1: {OnOff: {onOff: 1}}}", "65535", "4095", "passcode: ", "cloudOnly: [OnOff]",
    ]

    static func mutate(_ text: String, _ g: inout Generator) -> String {
        var chars = Array(text.unicodeScalars)
        for _ in 0..<(1 + g.below(4)) {
            let at = g.below(chars.count + 1)
            switch g.below(6) {
            case 0:  // delete a run
                let n = min(g.below(12) + 1, chars.count - min(at, chars.count))
                if n > 0 { chars.removeSubrange(at..<(at + n)) }
            case 1:  // insert a token
                chars.insert(contentsOf: Self.tokens[g.below(Self.tokens.count)].unicodeScalars, at: at)
            case 2:  // replace a character with a random printable or control one
                if at < chars.count { chars[at] = Unicode.Scalar(UInt8(g.below(127))) }
            case 3:  // duplicate a line
                let lines = String(String.UnicodeScalarView(chars)).split(separator: "\n", omittingEmptySubsequences: false)
                if !lines.isEmpty {
                    var l = lines
                    let i = g.below(l.count)
                    l.insert(l[i], at: g.below(l.count + 1))
                    chars = Array(l.joined(separator: "\n").unicodeScalars)
                }
            case 4:  // change a digit
                if at < chars.count, ("0"..."9").contains(chars[at]) {
                    chars[at] = Unicode.Scalar(UInt8(48 + g.below(10)))
                } else {
                    chars.insert("9", at: at)
                }
            default:  // swap two lines' indentation by dropping leading spaces
                if at < chars.count, chars[at] == " " { chars.remove(at: at) }
            }
        }
        return String(String.UnicodeScalarView(chars))
    }

    @Test("random mutations of shipped profiles produce errors or success, never a crash")
    func mutationFuzz() throws {
        let names = ShippedProfileTests.deviceFiles.map { "devices/" + $0 } + ["homes/demo-home.yaml"]
        var files: [String: String] = [:]
        for name in names { files[name] = try shippedText(name) }
        let loader = memoryLoader(files)
        var g = Generator(state: 0x5EED_CAFE)
        var failures = 0, successes = 0
        for i in 0..<3000 {
            let name = names[i % names.count]
            let mutated = Self.mutate(files[name] ?? "", &g)
            let result = loader.load(yaml: mutated, file: name)
            if result.profile == nil {
                failures += 1
                #expect(!result.diagnostics.isEmpty, "no profile and no diagnostics for mutation \(i) of \(name)")
            } else {
                successes += 1
                #expect(result.diagnostics.isEmpty)
            }
            // Every diagnostic names the file it is about.
            for d in result.diagnostics {
                #expect(!d.file.isEmpty && !d.message.isEmpty)
            }
        }
        // Both outcomes occur, so the mutations exercise the checks rather than the parser only.
        #expect(failures > 100)
        #expect(successes > 100)
    }

    @Test("a home whose referenced device profiles are mutated never crashes")
    func referencedProfileFuzz() throws {
        let devices = ShippedProfileTests.deviceFiles.map { "devices/" + $0 }
        var files: [String: String] = [:]
        for name in devices + ["homes/demo-home.yaml"] { files[name] = try shippedText(name) }
        var g = Generator(state: 0xD0D0)
        var failures = 0
        for _ in 0..<300 {
            var mutated = files
            let target = devices[g.below(devices.count)]
            mutated[target] = Self.mutate(files[target] ?? "", &g)
            let result = memoryLoader(mutated).load(file: "homes/demo-home.yaml")
            if result.profile == nil {
                failures += 1
                #expect(!result.diagnostics.isEmpty)
                // Problems inside the mutated profile are reported against that file.
                #expect(result.diagnostics.allSatisfy { $0.file == target || $0.file == "homes/demo-home.yaml" })
            }
        }
        #expect(failures > 50)
    }

    @Test("hostile documents: alias bombs, deep nesting, binary junk, huge numbers")
    func hostile() {
        let loader = memoryLoader([:])
        var bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
        for i in 1..<12 {
            bomb +=
                "a\(i): &a\(i) [*a\(i - 1), *a\(i - 1), *a\(i - 1), *a\(i - 1), *a\(i - 1), *a\(i - 1), *a\(i - 1), *a\(i - 1), *a\(i - 1), *a\(i - 1)]\n"
        }
        let bombResult = loader.load(yaml: bomb, file: "bomb.yaml")
        #expect(bombResult.profile == nil && !bombResult.diagnostics.isEmpty)

        let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        #expect(!loader.load(yaml: deep, file: "deep.yaml").diagnostics.isEmpty)
        let dashes = String(repeating: "- ", count: 3000) + "x"
        #expect(!loader.load(yaml: dashes, file: "dash.yaml").diagnostics.isEmpty)

        var g = Generator(state: 42)
        for _ in 0..<200 {
            let bytes = (0..<g.below(400)).map { _ in UInt8(g.below(256)) }
            let text = String(decoding: bytes, as: UTF8.self)
            _ = loader.load(yaml: text, file: "junk.yaml")
        }
        let huge = device(
            """
            deviceTypes: [DimmableLight]
            clusters:
              LevelControl: {currentLevel: 340282366920938463463374607431768211456, onLevel: -9223372036854775809}
            """)
        let diags = loader.load(yaml: huge, file: "huge.yaml").diagnostics
        #expect(diags.count == 2, "\(diags.map(\.description))")
    }

    @Test("lexical path joining for profile references")
    func paths() {
        #expect(ProfilePaths.join("DeviceProfiles/homes", "../devices/a.yaml") == "DeviceProfiles/devices/a.yaml")
        #expect(ProfilePaths.join("", "a.yaml") == "a.yaml")
        #expect(ProfilePaths.join("homes", "/abs/a.yaml") == "/abs/a.yaml")
        #expect(ProfilePaths.normalize("./a//b/./c/../d") == "a/b/d")
        #expect(ProfilePaths.normalize("../../x") == "../../x")
        #expect(ProfilePaths.normalize("/../x") == "/x")
        #expect(ProfilePaths.directory(of: "a/b/c.yaml") == "a/b")
        #expect(ProfilePaths.directory(of: "c.yaml") == "")
    }

    @Test("profile paths render and parse back")
    func profilePathRendering() {
        let p = ProfilePath().key("endpoints").index(1).key("clusters").key("LevelControl").key("currentLevel")
        #expect(p.description == "endpoints[1].clusters.LevelControl.currentLevel")
        #expect(ProfilePath(stringLiteral: p.description) == p)
        let odd = ProfilePath().key("endpoints").key("one two")
        #expect(odd.description == "endpoints[\"one two\"]")
        #expect(ProfilePath(stringLiteral: odd.description) == odd)
    }
}
