import Testing
@testable import MatterModel

/// What the model's `idSpace`, `retiredGlobalAttributes`, `globalFields` and clusters'
/// `testEventTriggers` generate (scripts/model-overlay.json, then the import and the codegen).
@Suite struct IDSpaceTests {
    @Test func aManufacturerSpecificIDHasAVendorsPrefixAndItsKindsSuffix() {
        #expect(ClusterID(0xFFF1_FC00).isManufacturerSpecific)
        #expect(ClusterID(0x1234_FFFE).isManufacturerSpecific)
        #expect(!ClusterID(0x0000_FC00).isManufacturerSpecific)  // the standard's prefix
        #expect(!ClusterID(0x1234_0006).isManufacturerSpecific)  // a standard suffix
        #expect(!ClusterID(0xFFFF_FC00).isManufacturerSpecific)
        // 0xFFF5...0xFFFF are neither a manufacturer's nor a test vendor's prefix.
        #expect(!ClusterID(0xFFF5_FC00).isManufacturerSpecific)
        #expect(AttributeID(0x1234_0001).isManufacturerSpecific)
        #expect(!AttributeID(0x1234_5000).isManufacturerSpecific)
        #expect(!AttributeID(0x1234_FFFD).isManufacturerSpecific)
    }

    @Test func aGlobalAttributeHasTheStandardPrefixAndAGlobalSuffix() {
        #expect(Clusters.Global.Attribute.clusterRevision.isGlobal)
        #expect(Clusters.Global.RetiredAttribute.eventList.isGlobal)
        #expect(Clusters.Global.RetiredAttribute.eventList == AttributeID(0xFFFA))
        #expect(!AttributeID(0x0000_EFFF).isGlobal)
        #expect(!AttributeID(0x0000_FFFF).isGlobal)
        #expect(!AttributeID(0x1234_FFFD).isGlobal)
        #expect(MatterModel.standard.globalAttributes.allSatisfy { $0.id.isGlobal })
    }

    @Test func fabricScopedStructsCarryTheGlobalFabricIndexField() throws {
        #expect(FieldDefinition.fabricIndexTag == 0xFE)
        let acl = try #require(MatterModel.standard.cluster(named: "AccessControl"))
        let entry = try #require(acl.structs.first { $0.name == "AccessControlEntryStruct" })
        #expect(entry.fields.contains { $0.id == FieldDefinition.fabricIndexTag && $0.name == "FabricIndex" })
    }

    @Test func theSpecificationVersionAndTheTestIDsAreTheModels() {
        #expect(MatterSpecification.version == "1.4")
        #expect(MatterSpecification.specificationVersion == 0x0104_0000)
        #expect(IDSpace.Prefix.test.lowerBound == 0xFFF1 && IDSpace.Prefix.test.upperBound == 0xFFF4)
        #expect(IDSpace.testProductIDs.lowerBound == 0x8000)
    }

    @Test func testEventTriggerCodesNameTheirClusterAndEvent() {
        typealias SmokeCo = Clusters.SmokeCoAlarm.TestEventTrigger
        #expect(SmokeCo(code: 0x005C_0000_0000_0090) == .warningSmokeAlarm)
        #expect(SmokeCo(code: 0x005C_0000_0000_00A5) == .batteryAlertClear)
        // TC_SMOKECO_2_3 and 2_4 still send the older namespace's codes.
        #expect(SmokeCo(code: 0xFFFF_FFFF_0000_009D) == .criticalCoAlarm)
        #expect(SmokeCo(code: 0x005C_0000_0000_00AB) == .deviceMutedClear)  // the hush ends (TC_SMOKECO_2_5)
        #expect(SmokeCo(code: 0x005C_0000_0000_00A6) == nil)  // contamination clear: not modelled
        #expect(SmokeCo(code: 0x0080_0000_0000_0090) == nil)
        typealias Leak = Clusters.BooleanStateConfiguration.TestEventTrigger
        #expect(Leak(code: 0x0080_0000_0000_0000) == .sensorTrigger)
        #expect(Leak(code: 0x0080_0000_0000_0001) == .sensorUntrigger)
        #expect(Leak(code: 0xFFFF_FFFF_0000_0001) == nil)  // no older namespace for this cluster
        #expect(
            SmokeCo.allCases.allSatisfy {
                $0.codes.allSatisfy { $0 >> 48 == UInt64(Clusters.SmokeCoAlarm.id.rawValue) || $0 >> 32 == 0xFFFF_FFFF }
            })
    }
}
