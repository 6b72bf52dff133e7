import Testing
import MatterTLV
@testable import MatterModel

/// Spot checks of facts against the Matter 1.4 cluster specification.
@Suite struct ClusterFactsTests {
    let model = MatterModel.standard

    @Test func clusterIDsAndRevisions() throws {
        let expected: [(UInt32, String, UInt16)] = [
            (0x001D, "Descriptor", 2), (0x0003, "Identify", 5), (0x0028, "BasicInformation", 4),
            (0x0006, "OnOff", 6), (0x0008, "LevelControl", 6), (0x0102, "WindowCovering", 5),
            (0x0030, "GeneralCommissioning", 2), (0x003E, "OperationalCredentials", 1), (0x001F, "AccessControl", 2),
            (0x0031, "NetworkCommissioning", 2), (0x003F, "GroupKeyManagement", 2), (0x003C, "AdministratorCommissioning", 1),
            (0x0033, "GeneralDiagnostics", 2), (0x0004, "Groups", 4), (0x0062, "ScenesManagement", 1),
        ]
        for (id, name, revision) in expected {
            let c = try #require(model.cluster(ClusterID(id)), "\(name)")
            #expect(c.name == name)
            #expect(c.revision == revision, "\(name)")
            #expect(model.cluster(named: name)?.id == ClusterID(id))
            #expect(model.cluster(named: c.lowerCamelName)?.id == ClusterID(id))
        }
    }

    @Test func globalAttributesOnEveryCluster() throws {
        for c in model.clusters {
            #expect(c.attribute(AttributeID(0xFFFD))?.name == "ClusterRevision")
            #expect(c.attribute(AttributeID(0xFFFD))?.defaultValue == .unsigned(UInt64(c.revision)))
            #expect(c.attribute(named: "featureMap")?.type == .bitmap("", bits: 32))
            #expect(c.attribute(AttributeID(0xFFFB))?.type == .list(.semantic(.attributeID)))
            #expect(c.attribute(AttributeID(0xFFF9))?.type == .list(.semantic(.commandID)))
            #expect(c.attribute(AttributeID(0xFFF8))?.type == .list(.semantic(.commandID)))
            // EventList was removed in Matter 1.3.
            #expect(c.attribute(AttributeID(0xFFFA)) == nil)
            #expect(c.globalAttributes.allSatisfy { $0.isGlobal && !$0.isWritable && $0.quality.contains(.fixed) })
        }
    }

    @Test func levelControlCurrentLevel() throws {
        let lc = try #require(model.cluster(named: "LevelControl"))
        let current = try #require(lc.attribute(AttributeID(0x0000)))
        #expect(current.name == "CurrentLevel")
        #expect(current.lowerCamelName == "currentLevel")
        #expect(current.type == .uint(bits: 8))
        #expect(current.nullable)
        #expect(current.defaultValue == .null)
        #expect(lc.attribute(named: "RemainingTime")?.defaultValue == .unsigned(0))
        #expect(lc.attribute(named: "DefaultMoveRate")?.defaultValue == nil)  // manufacturer-specific
        #expect(current.quality.isSuperset(of: [.nonVolatile, .scene, .quieterReporting]))
        #expect(current.writePrivilege == nil)
        #expect(current.constraint == .rangeRef(min: .attribute("MinLevel"), max: .attribute("MaxLevel")))
        #expect(lc.attribute(named: "currentLevel") == current)
        #expect(lc.attribute(named: "OnLevel")?.writePrivilege == .operate)
        #expect(lc.attribute(named: "StartUpCurrentLevel")?.writePrivilege == .manage)
        #expect(lc.attribute(named: "StartUpCurrentLevel")?.conformance == .mandatoryIf(.name("LT")))
        #expect(lc.featureMap(codes: ["OO", "LT"]) == 0b011)
        #expect(lc.feature(code: "FQ")?.conformance == .provisional)
    }

    @Test func moveToLevelFields() throws {
        let lc = try #require(model.cluster(named: "LevelControl"))
        let cmd = try #require(lc.command(CommandID(0x00)))
        #expect(cmd.name == "MoveToLevel")
        #expect(cmd.direction == .request)
        #expect(cmd.responseName == nil)  // plain status
        #expect(cmd.invokePrivilege == .operate)
        #expect(!cmd.timed)
        #expect(cmd.fields.map(\.name) == ["Level", "TransitionTime", "OptionsMask", "OptionsOverride"])
        #expect(cmd.fields.map(\.id) == [0, 1, 2, 3])
        #expect(cmd.fields[0].type == .uint(bits: 8))
        #expect(cmd.fields[0].constraint == .range(min: nil, max: 254))
        #expect(cmd.fields[1].type == .uint(bits: 16) && cmd.fields[1].nullable)
        #expect(cmd.fields[2].type == .bitmap("OptionsBitmap", bits: 8))
        #expect(cmd.fields[2].defaultValue == .unsigned(0))
        #expect(lc.command(named: "moveToLevelWithOnOff")?.id == CommandID(0x04))
        #expect(lc.command(named: "MoveToLevelWithOnOff")?.fields == cmd.fields)
    }

    @Test func onOffFacts() throws {
        let oo = try #require(model.cluster(ClusterID(0x0006)))
        #expect(oo.features.map(\.code) == ["LT", "DF", "OFFONLY"])
        #expect(oo.featureCodes(map: 0b101) == ["LT", "OFFONLY"])
        #expect(oo.featureCodes(map: 0xFFFF_FFF8) == [])
        let onOff = try #require(oo.attribute(AttributeID(0)))
        #expect(onOff.type == .bool && onOff.defaultValue == .bool(false))
        #expect(onOff.quality == [.nonVolatile, .scene])
        let startUp = try #require(oo.attribute(named: "StartUpOnOff"))
        #expect(startUp.id == AttributeID(0x4003))
        #expect(startUp.type == .enumeration("StartUpOnOffEnum", bits: 8))
        #expect(startUp.nullable && startUp.writePrivilege == .manage)
        #expect(oo.command(CommandID(0x42))?.name == "OnWithTimedOff")
        #expect(oo.command(named: "On")?.conformance == .mandatoryIf(.not(.name("OFFONLY"))))
        #expect(oo.mandatoryAttributes(features: []).map(\.name) == ["OnOff"])
        #expect(
            oo.mandatoryAttributes(features: ["LT"]).map(\.name) == [
                "OnOff", "GlobalSceneControl", "OnTime", "OffWaitTime", "StartUpOnOff",
            ])
        #expect(oo.mandatoryCommands(features: ["OFFONLY"]).map(\.name) == ["Off"])
    }

    @Test func windowCoveringGoToLiftPercentage() throws {
        let wc = try #require(model.cluster(ClusterID(0x0102)))
        let cmd = try #require(wc.command(CommandID(0x05)))
        #expect(cmd.name == "GoToLiftPercentage")
        let field = try #require(cmd.field(named: "liftPercent100thsValue"))
        #expect(field.type == .semantic(.percent100ths))
        #expect(field.type.base == .uint(bits: 16))
        #expect(field.constraint == .range(min: 0, max: 10000))
        #expect(wc.validate(.unsigned(10000), for: field) == nil)
        #expect(wc.validate(.unsigned(10001), for: field)?.expected == "an integer in 0...10000")
        // Mandatory with LF & PA_LF, otherwise optional with LF, otherwise not allowed.
        #expect(cmd.conformance.result(features: ["LF", "PA_LF"]) == .mandatory)
        #expect(cmd.conformance.result(features: ["LF"]) == .optional)
        #expect(cmd.conformance.result(features: ["TL"]) == .disallowed)
        #expect(wc.features.map(\.code) == ["LF", "TL", "PA_LF", "ABS", "PA_TL"])
        let opStatus = try #require(wc.bitmapDefinition(named: "OperationalStatusBitmap"))
        #expect(opStatus.fields.map(\.mask) == [0x03, 0x0C, 0x30])
        let target = try #require(wc.attribute(AttributeID(0x000B)))
        #expect(target.name == "TargetPositionLiftPercent100ths" && target.nullable)
        #expect(
            wc.mandatoryAttributes(features: ["LF", "PA_LF"]).map(\.id.rawValue) == [
                0x0000, 0x0007, 0x000A, 0x000B, 0x000D, 0x000E, 0x0017,
            ])
    }

    @Test func basicInformationFacts() throws {
        let bi = try #require(model.cluster(named: "BasicInformation"))
        let nodeLabel = try #require(bi.attribute(AttributeID(0x0005)))
        #expect(nodeLabel.name == "NodeLabel")
        #expect(nodeLabel.type == .string)
        #expect(nodeLabel.constraint == .maxLength(32))
        #expect(nodeLabel.writePrivilege == .manage && nodeLabel.readPrivilege == .view)
        #expect(nodeLabel.quality.contains(.nonVolatile))
        #expect(nodeLabel.defaultValue == .utf8(""))
        let location = try #require(bi.attribute(named: "location"))
        #expect(location.constraint == .lengthRange(min: 2, max: 2))
        #expect(location.writePrivilege == .administer)
        #expect(location.defaultValue == .utf8("XX"))
        #expect(bi.attribute(named: "VendorID")?.type == .semantic(.vendorID))
        #expect(bi.attribute(named: "UniqueID")?.conformance == .mandatory)
        #expect(bi.attribute(named: "CapabilityMinima")?.type == .structure("CapabilityMinimaStruct"))
        let startUp = try #require(bi.event(EventID(0)))
        #expect(startUp.name == "StartUp" && startUp.priority == .critical)
        #expect(startUp.fields.first?.type == .uint(bits: 32))
    }

    @Test func commissioningFacts() throws {
        let gc = try #require(model.cluster(ClusterID(0x0030)))
        let arm = try #require(gc.command(CommandID(0x00)))
        #expect(arm.name == "ArmFailSafe" && arm.responseName == "ArmFailSafeResponse")
        #expect(arm.invokePrivilege == .administer)
        #expect(arm.field(0)?.defaultValue == .unsigned(900))
        #expect(gc.response(CommandID(0x01))?.name == "ArmFailSafeResponse")
        #expect(gc.command(named: "CommissioningComplete")?.fabricScoped == true)
        #expect(gc.attribute(named: "Breadcrumb")?.writePrivilege == .administer)

        let ac = try #require(model.cluster(ClusterID(0x003C)))
        let open = try #require(ac.command(CommandID(0x00)))
        #expect(open.name == "OpenCommissioningWindow" && open.timed && open.invokePrivilege == .administer)
        #expect(open.field(named: "Iterations")?.constraint == .range(min: 1000, max: 100000))
        #expect(open.field(named: "Salt")?.constraint == .lengthRange(min: 16, max: 32))

        let oc = try #require(model.cluster(ClusterID(0x003E)))
        let nocs = try #require(oc.attribute(named: "NOCs"))
        #expect(nocs.lowerCamelName == "nocs")
        #expect(nocs.fabricScoped && nocs.readPrivilege == .administer && nocs.quality.contains(.changesOmitted))
        #expect(nocs.constraint == .rangeRef(min: nil, max: .attribute("SupportedFabrics")))
        let nocStruct = try #require(oc.structDefinition(named: "NOCStruct"))
        #expect(nocStruct.fabricScoped && nocStruct.field(1)?.fabricSensitive == true)
        #expect(oc.command(named: "AddNOC")?.responseName == "NOCResponse")
        #expect(oc.command(named: "UpdateFabricLabel")?.fabricScoped == true)
        #expect(
            oc.attribute(named: "TrustedRootCertificates")?.constraint
                == .list(count: .rangeRef(min: nil, max: .attribute("SupportedFabrics")), entry: .maxLength(400)))

        let acl = try #require(model.cluster(ClusterID(0x001F))?.attribute(AttributeID(0)))
        #expect(acl.name == "ACL" && acl.lowerCamelName == "acl")
        #expect(acl.fabricScoped && acl.readPrivilege == .administer && acl.writePrivilege == .administer)
        let event = try #require(model.cluster(ClusterID(0x001F))?.event(named: "AccessControlEntryChanged"))
        #expect(event.fabricSensitive && event.readPrivilege == .administer)

        let nc = try #require(model.cluster(ClusterID(0x0031)))
        #expect(nc.featureMap(codes: ["ET"]) == 0b100)
        #expect(
            nc.mandatoryAttributes(features: ["ET"]).map(\.name)
                == ["MaxNetworks", "Networks", "InterfaceEnabled", "LastNetworkingStatus", "LastNetworkID", "LastConnectErrorValue"])
        #expect(nc.mandatoryCommands(features: ["ET"]).isEmpty)
        #expect(nc.mandatoryCommands(features: ["WI"]).map(\.name).contains("AddOrUpdateWiFiNetwork"))

        let gd = try #require(model.cluster(ClusterID(0x0033)))
        #expect(
            gd.mandatoryAttributes(features: []).map(\.name) == ["NetworkInterfaces", "RebootCount", "UpTime", "TestEventTriggersEnabled"])
        #expect(gd.command(named: "TestEventTrigger")?.invokePrivilege == .manage)

        let gk = try #require(model.cluster(ClusterID(0x003F)))
        #expect(gk.attribute(named: "GroupKeyMap")?.writePrivilege == .manage)
        #expect(gk.command(named: "KeySetRead")?.responseName == "KeySetReadResponse")
    }

    @Test func everyRequestResponseNameResolves() {
        var checked = 0
        for c in model.clusters {
            for cmd in c.requests {
                guard let r = cmd.responseName else { continue }
                let response = c.command(named: r)
                #expect(response?.direction == .response, "\(c.name).\(cmd.name) → \(r)")
                checked += 1
            }
            for response in c.responses {
                #expect(c.requests.contains { $0.responseName == response.name }, "\(c.name).\(response.name) is never generated")
            }
        }
        #expect(checked >= 25)
    }

    @Test func everyReferencedTypeExists() {
        var references = 0
        for c in model.clusters {
            var types: [DataType] = c.allAttributes.map(\.type)
            types += c.commands.flatMap { $0.fields.map(\.type) }
            types += c.events.flatMap { $0.fields.map(\.type) }
            types += c.structs.flatMap { $0.fields.map(\.type) }
            for t in types {
                guard let name = t.referencedTypeName else { continue }
                references += 1
                let found =
                    c.enumDefinition(named: name) != nil || c.bitmapDefinition(named: name) != nil
                    || c.structDefinition(named: name) != nil
                #expect(found, "\(c.name): \(name)")
            }
        }
        #expect(references > 100)
    }

    @Test func everyDefaultFitsItsElement() {
        for c in model.clusters {
            for a in c.allAttributes {
                guard let d = a.defaultValue else { continue }
                #expect(c.validate(d, for: a) == nil, "\(c.name).\(a.name) default \(d)")
            }
        }
    }
}
