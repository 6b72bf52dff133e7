import Foundation
import MatterTLV
import Testing

@testable import MatterModel

/// The generated typed layer (scripts/matter-codegen.py: structs, commands, events with TLV)
/// against bytes connectedhomeip's own encoder writes: each vector below is the `ToTLV()` of
/// the command or event object of home-assistant-chip-clusters 2025.7.0 (the reference
/// controller's package, `chip.clusters.Objects`), with the values given beside it.
@Suite struct GeneratedTypesTests {
    func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var chars = Array(hex)
        while chars.count >= 2 {
            out.append(UInt8(String(chars[0...1]), radix: 16)!)
            chars.removeFirst(2)
        }
        return out
    }

    func decoded(_ hex: String) throws -> TLVValue {
        try TLVElement.decode(bytes(hex)).value
    }

    func encoded(_ value: some TLVCodable) -> [UInt8] {
        TLVElement(value.tlv).encoded()
    }

    /// LevelControl.Commands.MoveToLevel(level=200, transitionTime=10, optionsMask=1, optionsOverride=1).
    @Test func moveToLevelRoundTrips() throws {
        let hex = "152400c824010a24020124030118"
        let command = try Clusters.LevelControl.Commands.MoveToLevel(tlv: decoded(hex))
        #expect(command.level == 200)
        #expect(command.transitionTime == 10)
        #expect(command.optionsMask == .executeIfOff)
        #expect(command.optionsOverride == .executeIfOff)
        #expect(encoded(command) == bytes(hex))
        let built = Clusters.LevelControl.Commands.MoveToLevel(
            level: 200, transitionTime: 10, optionsMask: .executeIfOff, optionsOverride: .executeIfOff)
        #expect(encoded(built) == bytes(hex))
        #expect(Clusters.LevelControl.Commands.MoveToLevel.commandID == Clusters.LevelControl.Command.moveToLevel)
    }

    /// MoveToLevel(level=50, transitionTime=Null, optionsMask=0, optionsOverride=0): a nullable field as null.
    @Test func nullTransitionTimeIsNil() throws {
        let hex = "15240032340124020024030018"
        let command = try Clusters.LevelControl.Commands.MoveToLevel(tlv: decoded(hex))
        #expect(command.transitionTime == nil)
        #expect(encoded(command) == bytes(hex))
    }

    /// Legacy clients leave out OptionsMask and OptionsOverride (Application Cluster spec
    /// 1.6.7.1.1): the model's default stands in.
    @Test func missingFieldWithDefaultTakesIt() throws {
        let value = TLVValue.structure([.context(0, .unsigned(5)), .context(1, .null)])
        let command = try Clusters.LevelControl.Commands.MoveToLevel(tlv: value)
        #expect(command.optionsMask == [])
        #expect(command.optionsOverride == [])
    }

    /// OperationalCredentials.Commands.AddNOC(NOCValue=00..07, ICACValue=aa×4, IPKValue=00..0f,
    /// caseAdminSubject=0x1122334455667788, adminVendorId=0xFFF1).
    @Test func addNOCRoundTrips() throws {
        let hex = "153000080001020304050607300104aaaaaaaa300210000102030405060708090a0b0c0d0e0f270388776655443322112504f1ff18"
        let command = try Clusters.OperationalCredentials.Commands.AddNOC(tlv: decoded(hex))
        #expect(command.nocValue == Data(0..<8))
        #expect(command.icacValue == Data(repeating: 0xAA, count: 4))
        #expect(command.ipkValue == Data(0..<16))
        #expect(command.caseAdminSubject == 0x1122_3344_5566_7788)
        #expect(command.adminVendorId == 0xFFF1)
        #expect(encoded(command) == bytes(hex))
        // ICACValue is optional: left out, it is nil and not written.
        var withoutICAC = command
        withoutICAC.icacValue = nil
        let again = try Clusters.OperationalCredentials.Commands.AddNOC(tlv: withoutICAC.tlv)
        #expect(again.icacValue == nil)
        #expect(again == withoutICAC)
    }

    /// DoorLock.Commands.SetCredential(operationType=0, credential=CredentialStruct(credentialType=1,
    /// credentialIndex=2), credentialData=b'123456', userIndex=Null, userStatus=Null, userType=Null).
    @Test func setCredentialRoundTrips() throws {
        let hex = "1524000035012400012401021830020631323334353634033404340518"
        let command = try Clusters.DoorLock.Commands.SetCredential(tlv: decoded(hex))
        #expect(command.operationType == .add)
        #expect(command.credential == Clusters.DoorLock.CredentialStruct(credentialType: .pin, credentialIndex: 2))
        #expect(command.credentialData == Data("123456".utf8))
        #expect(command.userIndex == nil && command.userStatus == nil && command.userType == nil)
        #expect(encoded(command) == bytes(hex))
    }

    /// DoorLock.Commands.SetCredentialResponse(status=0, userIndex=3, nextCredentialIndex=4).
    @Test func setCredentialResponseRoundTrips() throws {
        let hex = "1524000024010324020418"
        let response = try Clusters.DoorLock.Commands.SetCredential.Response(tlv: decoded(hex))
        #expect(response.status == 0 && response.userIndex == 3 && response.nextCredentialIndex == .value(4))
        #expect(encoded(response) == bytes(hex))
    }

    /// DoorLock.Events.LockOperation(lockOperationType=1, operationSource=7, userIndex=1,
    /// fabricIndex=1, sourceNode=0x0102, credentials=[CredentialStruct(1, 2)]): a list of structs
    /// in a field both optional and nullable.
    @Test func lockOperationEventRoundTrips() throws {
        let hex = "1524000124010724020124030125040201360515240001240102181818"
        let event = try Clusters.DoorLock.Events.LockOperation(tlv: decoded(hex))
        #expect(event.lockOperationType == .unlock)
        #expect(event.operationSource == .remote)
        #expect(event.sourceNode == 0x0102)
        #expect(event.credentials == .value([Clusters.DoorLock.CredentialStruct(credentialType: .pin, credentialIndex: 2)]))
        #expect(encoded(event) == bytes(hex))
        #expect(Clusters.DoorLock.Events.LockOperation.priority == .critical)
        // Present as null and absent are told apart.
        var nulled = event
        nulled.credentials = .null
        #expect(try Clusters.DoorLock.Events.LockOperation(tlv: nulled.tlv).credentials == .null)
        nulled.credentials = nil
        #expect(try Clusters.DoorLock.Events.LockOperation(tlv: nulled.tlv).credentials == nil)
    }

    /// Switch.Events.MultiPressComplete(previousPosition=1, totalNumberOfPressesCounted=2), and
    /// OnOff.Commands.Off() (chip-tool's Off, an empty structure).
    @Test func smallEventAndEmptyCommandRoundTrip() throws {
        let hex = "1524000124010218"
        let event = try Clusters.Switch.Events.MultiPressComplete(tlv: decoded(hex))
        #expect(event.previousPosition == 1 && event.totalNumberOfPressesCounted == 2)
        #expect(encoded(event) == bytes(hex))
        #expect(encoded(Clusters.OnOff.Commands.Off()) == bytes("1518"))
        _ = try Clusters.OnOff.Commands.Off(tlv: decoded("1518"))
    }

    /// Unknown context tags are skipped (Core spec 7.19.1); fields keep their own tags.
    @Test func unknownTagsAreIgnored() throws {
        let value = TLVValue.structure([.context(0, .unsigned(5)), .context(1, .unsigned(3)), .context(9, .utf8("future"))])
        let command = try Clusters.LevelControl.Commands.MoveToLevel(tlv: value)
        #expect(command.level == 5 && command.transitionTime == 3)
    }

    // MARK: Errors name the type, the field and what was expected

    func error(_ body: () throws -> Void) -> TLVDecodingError? {
        do {
            try body()
            return nil
        } catch let error as TLVDecodingError {
            return error
        } catch {
            return nil
        }
    }

    @Test func missingMandatoryFieldIsInvalidCommand() {
        let e = error { _ = try Clusters.LevelControl.Commands.MoveToLevel(tlv: .structure([.context(1, .null)])) }
        #expect(e?.problem == .missing)
        #expect(e?.status == .invalidCommand)
        #expect(e?.description == "LevelControl.MoveToLevel: field Level (0): missing mandatory field")
        // A mandatory nullable field must be there too, if only as null.
        let n = error { _ = try Clusters.LevelControl.Commands.MoveToLevel(tlv: .structure([.context(0, .unsigned(5))])) }
        #expect(n?.field == "TransitionTime (1)" && n?.problem == .missing)
    }

    @Test func wrongTypeIsInvalidCommand() {
        let e = error {
            _ = try Clusters.LevelControl.Commands.MoveToLevel(tlv: .structure([.context(0, .utf8("full")), .context(1, .null)]))
        }
        #expect(e?.problem == .wrongType(expected: "an integer", found: "a string"))
        #expect(e?.status == .invalidCommand)
        let notStruct = error { _ = try Clusters.OnOff.Commands.Off(tlv: .unsigned(1)) }
        #expect(notStruct?.description == "OnOff.Off: expected a structure, found the unsigned integer 1")
    }

    @Test func outOfTypeRangeIsConstraintError() {
        let e = error {
            _ = try Clusters.LevelControl.Commands.MoveToLevel(tlv: .structure([.context(0, .unsigned(300)), .context(1, .null)]))
        }
        #expect(e?.problem == .outOfRange(expected: "an integer in 0...255", found: "the unsigned integer 300"))
        #expect(e?.status == .constraintError)
        // Either signedness within range is the same number (Core spec 7.18).
        #expect(
            (try? Clusters.LevelControl.Commands.MoveToLevel(tlv: .structure([.context(0, .signed(7)), .context(1, .null)])))?.level == 7)
        let negative = error {
            _ = try Clusters.LevelControl.Commands.MoveToLevel(tlv: .structure([.context(0, .signed(-1)), .context(1, .null)]))
        }
        #expect(negative?.status == .constraintError)
    }

    @Test func unknownEnumValueAndNullAreConstraintErrors() {
        let e = error {
            _ = try Clusters.LevelControl.Commands.Move(tlv: .structure([.context(0, .unsigned(7)), .context(1, .null)]))
        }
        #expect(e?.problem == .unknownEnumValue(type: "MoveModeEnum", value: 7))
        #expect(e?.status == .constraintError)
        let null = error {
            _ = try Clusters.LevelControl.Commands.MoveToLevel(tlv: .structure([.context(0, .null), .context(1, .null)]))
        }
        #expect(null?.status == .constraintError)
    }

    /// An error deep inside names the path down to it: a struct field, a list element.
    @Test func nestedErrorsNameTheirPath() throws {
        let hex = "1524000024010724020124030125040201360515240001240102181818"
        guard case .structure(var fields) = try decoded(hex) else { Issue.record("not a structure"); return }
        fields[5] = .context(5, .array([TLVElement(.structure([.context(1, .unsigned(1))]))]))
        let e = error { _ = try Clusters.DoorLock.Events.LockOperation(tlv: .structure(fields)) }
        #expect(e?.description == "DoorLock.LockOperation: field Credentials (5)[0].CredentialType (0): missing mandatory field")
        let s = error {
            _ = try Clusters.DoorLock.Commands.SetCredential(
                tlv: .structure([
                    .context(0, .unsigned(0)), .context(1, .structure([.context(0, .utf8("pin")), .context(1, .unsigned(1))])),
                    .context(2, .bytes([1])), .context(3, .null),
                ]))
        }
        #expect(s?.type == "DoorLock.SetCredential")
        #expect(s?.field == "Credential (1).CredentialType (0)")
        #expect(s?.status == .invalidCommand)
    }
}
