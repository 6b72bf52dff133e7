import Testing
@testable import MatterModel

/// The generated ID layer (Sources/MatterModel/Generated, scripts/matter-codegen.py) names the
/// numbers the loaded model has: every side writes IDs through it, so a wrong number there
/// would be wrong everywhere at once.
@Suite struct GeneratedIDTests {
    let model = MatterModel.standard

    func attribute(_ cluster: String, _ name: String) -> AttributeID? {
        model.cluster(named: cluster)?.attributes.first { $0.name == name }?.id
    }

    func command(_ cluster: String, _ name: String) -> CommandID? {
        model.cluster(named: cluster)?.commands.first { $0.name == name }?.id
    }

    @Test func clusterIDsAreTheModels() {
        #expect(Clusters.OnOff.id == model.cluster(named: "OnOff")?.id)
        #expect(Clusters.Descriptor.id == model.cluster(named: "Descriptor")?.id)
        #expect(Clusters.ColorControl.id == model.cluster(named: "ColorControl")?.id)
        #expect(Clusters.OperationalCredentials.id == model.cluster(named: "OperationalCredentials")?.id)
        #expect(Clusters.WindowCovering.revision == model.cluster(named: "WindowCovering")?.revision)
    }

    @Test func elementIDsAreTheModels() {
        #expect(Clusters.OnOff.Attribute.startUpOnOff == attribute("OnOff", "StartUpOnOff"))
        #expect(Clusters.WindowCovering.Attribute.installedClosedLimitTilt == attribute("WindowCovering", "InstalledClosedLimitTilt"))
        #expect(Clusters.OperationalCredentials.Attribute.nocs == attribute("OperationalCredentials", "NOCs"))
        #expect(Clusters.ColorControl.Command.enhancedMoveToHueAndSaturation == command("ColorControl", "EnhancedMoveToHueAndSaturation"))
        // A response shares its request's number in another direction (Groups 1.3.7).
        #expect(Clusters.Groups.Command.viewGroupResponse == command("Groups", "ViewGroupResponse"))
        #expect(Clusters.Groups.Command.viewGroupResponse == Clusters.Groups.Command.viewGroup)
        #expect(Clusters.BasicInformation.Event.leave == model.cluster(named: "BasicInformation")?.events.first { $0.name == "Leave" }?.id)
        #expect(DeviceTypes.extendedColorLight == model.deviceType(named: "ExtendedColorLight")?.id)
        #expect(DeviceTypes.rootNode == model.deviceType(named: "RootNode")?.id)
    }

    @Test func globalAttributesAndFeaturesAreTheModels() {
        let globals = Dictionary(uniqueKeysWithValues: model.globalAttributes.map { ($0.name, $0.id) })
        #expect(Clusters.Global.Attribute.featureMap == globals["FeatureMap"])
        #expect(Clusters.Global.Attribute.acceptedCommandList == globals["AcceptedCommandList"])
        #expect(Clusters.Global.Attribute.clusterRevision == globals["ClusterRevision"])
        let switchFeatures = model.cluster(named: "Switch")?.features.map(\.code) ?? []
        #expect(switchFeatures.contains(Clusters.Switch.Feature.momentarySwitchMultiPress))
        #expect(Clusters.Switch.Feature.momentarySwitchMultiPress == "MSM")
        #expect(Clusters.WindowCovering.Feature.positionAwareLift == "PA_LF")
    }

    /// Enums and bitmaps carry the model's values (a bit range is its mask).
    @Test func enumAndBitmapValuesAreTheModels() {
        #expect(Clusters.Identify.EffectIdentifierEnum.channelChange.rawValue == 11)
        #expect(Clusters.Identify.EffectIdentifierEnum.stopEffect.rawValue == 255)
        #expect(Clusters.Groups.NameSupportBitmap.groupNames.rawValue == 1 << 7)
        #expect(Clusters.WindowCovering.OperationalStatusBitmap.lift.rawValue == 0b1100)
        #expect(Clusters.NetworkCommissioning.WiFiBandEnum._2G4.rawValue == 0)
    }
}
