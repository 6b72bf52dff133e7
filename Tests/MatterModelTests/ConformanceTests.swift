import Testing
@testable import MatterModel

@Suite struct ConformanceTests {
    func parse(_ s: String) throws -> Conformance { try Conformance(parsing: s) }

    @Test func simpleForms() throws {
        #expect(try parse("M") == .mandatory)
        #expect(try parse("O") == .optional)
        #expect(try parse("P") == .provisional)
        #expect(try parse("D") == .deprecated)
        #expect(try parse("X") == .disallowed)
        #expect(try parse("desc") == .described)
        #expect(try parse(" M ") == .mandatory)
    }

    @Test func featureExpressions() throws {
        #expect(try parse("LT") == .mandatoryIf(.name("LT")))
        #expect(try parse("[LT]") == .optionalIf(.name("LT")))
        #expect(try parse("!LT") == .mandatoryIf(.not(.name("LT"))))
        #expect(try parse("LF & PA_LF") == .mandatoryIf(.and(.name("LF"), .name("PA_LF"))))
        #expect(try parse("LF | TL") == .mandatoryIf(.or(.name("LF"), .name("TL"))))
        #expect(try parse("[!(LT | DF)]") == .optionalIf(.not(.or(.name("LT"), .name("DF")))))
        // & binds tighter than |.
        #expect(try parse("A | B & C") == .mandatoryIf(.or(.name("A"), .and(.name("B"), .name("C")))))
        #expect(try parse("(A | B) & C") == .mandatoryIf(.and(.or(.name("A"), .name("B")), .name("C"))))
        #expect(try parse("A ^ B") == .mandatoryIf(.xor(.name("A"), .name("B"))))
    }

    @Test func otherwiseListsAndChoices() throws {
        #expect(try parse("[LT], O") == .otherwise([.optionalIf(.name("LT")), .optional]))
        #expect(try parse("LF & PA_LF, [LF]") == .otherwise([.mandatoryIf(.and(.name("LF"), .name("PA_LF"))), .optionalIf(.name("LF"))]))
        #expect(try parse("P, M") == .otherwise([.provisional, .mandatory]))
        #expect(try parse("O.a+") == .choice(.optional, ConformanceChoice(group: "a", more: true)))
        #expect(try parse("O.a") == .choice(.optional, ConformanceChoice(group: "a", more: false)))
        #expect(try parse("[LF].b") == .choice(.optionalIf(.name("LF")), ConformanceChoice(group: "b", more: false)))
    }

    @Test func roundTripsThroughDescription() throws {
        for text in [
            "M", "O", "LT", "[LT]", "!LT", "LF & PA_LF", "LF | TL", "[LT], O", "O.a+", "[!(LT | DF)]", "LF & PA_LF, [LF]", "P, TC",
        ] {
            let c = try parse(text)
            #expect(c.description == text)
            #expect(try parse(c.description) == c)
        }
    }

    @Test func malformedTextThrows() {
        for bad in ["", "LT &", "[LT", "(A | B", "LT)", "& LT", "M & LT", "O.", "LT,", "1LT", "LT $"] {
            #expect(throws: ConformanceParseError.self, "\(bad)") { try Conformance(parsing: bad) }
        }
    }

    @Test func evaluation() throws {
        let lt = try parse("LT")
        #expect(lt.isMandatory(features: ["LT"]))
        #expect(!lt.isAllowed(features: []))
        let optLT = try parse("[LT]")
        #expect(!optLT.isMandatory(features: ["LT"]) && optLT.isAllowed(features: ["LT"]))
        #expect(!optLT.isAllowed(features: ["OO"]))
        let notOffOnly = try parse("!OFFONLY")
        #expect(notOffOnly.isMandatory(features: []) && !notOffOnly.isAllowed(features: ["OFFONLY"]))
        let otherwise = try parse("LF & PA_LF, [LF]")
        #expect(otherwise.result(features: ["LF", "PA_LF"]) == .mandatory)
        #expect(otherwise.result(features: ["LF"]) == .optional)
        #expect(otherwise.result(features: []) == .disallowed)
        #expect(try parse("[LT], O").result(features: []) == .optional)
        #expect(try parse("X").result(features: ["LT"]) == .disallowed)
        #expect(try parse("P").result(features: []) == .optional)
        #expect(try parse("D").isAllowed(features: []))
        // A choice member is never forced by itself.
        #expect(try parse("O.a+").result(features: []) == .optional)
        #expect(try parse("A ^ B").isMandatory(features: ["A"]))
        #expect(!(try parse("A ^ B").isMandatory(features: ["A", "B"])))
        #expect(try parse("[LF & PA_LF & ABS]").names == ["LF", "PA_LF", "ABS"])
    }
}
