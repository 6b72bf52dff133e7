import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Basic Information (Core spec 11.1).
@Suite struct BasicInformationTests {
    let clock = ManualClock()

    func node(_ attributes: [AttributeID: TLVValue] = [:]) throws -> MatterNode {
        try makeNode([rootEndpoint(basicInformation: attributes)], clock: clock)
    }

    @Test func everyMandatoryAttributeIsPresent() async throws {
        let node = try node()
        let definition = try #require(MatterModel.standard.cluster(IDs.basicInformation))
        let present = Set(uintList(await node.value(0, IDs.basicInformation, IDs.attributeList.rawValue)))
        for attribute in definition.mandatoryAttributes(features: []) {
            #expect(present.contains(UInt64(attribute.id.rawValue)), "missing \(attribute.name)")
            #expect(await node.value(0, IDs.basicInformation, attribute.id.rawValue) != nil, "unreadable \(attribute.name)")
        }
        #expect(await node.value(0, IDs.basicInformation, 0x0006) == .utf8("XX"))
        #expect(await node.uint(0, IDs.basicInformation, 0x0015) == 0x0104_0000)
        let minima = try #require(await node.value(0, IDs.basicInformation, 0x0013))
        #expect(minima[context: 0] == u(3))
        #expect(minima[context: 1] == u(3))
    }

    @Test func describedIdentityIsReported() async throws {
        let node = try node([
            AttributeID(0x0001): .utf8("Acme"), AttributeID(0x0002): u(0xFFF2),
            AttributeID(0x0003): .utf8("Lamp"), AttributeID(0x000F): .utf8("SN-1"),
        ])
        #expect(await node.value(0, IDs.basicInformation, 0x0001) == .utf8("Acme"))
        #expect(await node.uint(0, IDs.basicInformation, 0x0002) == 0xFFF2)
        #expect(await node.value(0, IDs.basicInformation, 0x000F) == .utf8("SN-1"))
    }

    @Test func nodeLabelIsAtMost32Bytes() async throws {
        let node = try node()
        let tooLong = await node.write(0, IDs.basicInformation, 0x0005, .utf8(String(repeating: "a", count: 33)))
        #expect(tooLong == InteractionStatus(.constraintError))
        let fits = await node.write(0, IDs.basicInformation, 0x0005, .utf8(String(repeating: "a", count: 32)))
        #expect(fits == .success)
        #expect(await node.value(0, IDs.basicInformation, 0x0005) == .utf8(String(repeating: "a", count: 32)))
    }

    @Test func locationIsExactlyTwoCharacters() async throws {
        let node = try node()
        #expect(await node.write(0, IDs.basicInformation, 0x0006, .utf8("USA")) == InteractionStatus(.constraintError))
        #expect(await node.write(0, IDs.basicInformation, 0x0006, .utf8("D")) == InteractionStatus(.constraintError))
        #expect(await node.write(0, IDs.basicInformation, 0x0006, .utf8("DE")) == .success)
        #expect(await node.value(0, IDs.basicInformation, 0x0006) == .utf8("DE"))
    }

    @Test func writesNeedWritableAttributesTheRightTypeAndPrivilege() async throws {
        let node = try node()
        #expect(await node.write(0, IDs.basicInformation, 0x0001, .utf8("Other")) == InteractionStatus(.unsupportedWrite))
        #expect(await node.write(0, IDs.basicInformation, 0x0005, u(5)) == InteractionStatus(.invalidDataType))
        let path = AttributePath(endpoint: 0, cluster: IDs.basicInformation, attribute: AttributeID(0x0005))
        // NodeLabel needs Manage (11.1.5.6): an operator may not write it, a manager may.
        await node.replaceAccessControlEntries(
            of: 1,
            with: [
                AccessControlEntry(fabricIndex: 1, privilege: .operate, authMode: .case, subjects: [0x10]),
                AccessControlEntry(fabricIndex: 1, privilege: .manage, authMode: .case, subjects: [0x20]),
            ])
        let operate = SubjectDescriptor(authMode: .case, fabricIndex: 1, subject: 0x10)
        let manage = SubjectDescriptor(authMode: .case, fabricIndex: 1, subject: 0x20)
        #expect(await node.write(path, value: .utf8("x"), subject: operate) == InteractionStatus(.unsupportedAccess))
        #expect(await node.write(path, value: .utf8("x"), subject: manage) == .success)
        // Global attributes are never writable.
        #expect(await node.write(0, IDs.basicInformation, 0xFFFD, u(9)) == InteractionStatus(.unsupportedWrite))
    }
}
