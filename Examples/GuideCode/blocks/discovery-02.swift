import GoogleHomeSDK
import GoogleHomeTypes
private func createAutomationWithDiscoveryAPIForDimmableLight(structureName: String) async throws -> String {
// Get the structure.
let structures = try await self.home.structures().list()
guard let structure = structures.first(where: { $0.name == structureName }) else {
return ""
}
// Get the devices in the structure.
let structureDevices = try await self.home.devices().list().filter {
$0.structureID == structure.id
}
// Get the candidates.
let allCandidates = try await structure.candidates().list()
// Get the first dimmable light device.
guard
let dimmableLightDevice = structureDevices.first(where: {
$0.types.contains(DimmableLightDeviceType.self)
})
else {
return ""
}
// Validate that the `Matter.OnOffTrait` attribute starter candidate is present for the dimmable
// light device.
guard
allCandidates
.compactMap({ $0.node as? TraitAttributesCandidate })
.contains(where: {
$0.homeObject.id == dimmableLightDevice.id && $0.trait is Matter.OnOffTrait.Type
})
else {
return ""
}
// Validate that the `LevelControlTrait.MoveToLevelCommand`` candidate is present for the
// dimmable light device.
guard
allCandidates
.compactMap({ $0.node as? CommandCandidate })
.contains(where: {
$0.homeObject.id == dimmableLightDevice.id
&& $0.command is Matter.LevelControlTrait.MoveToLevelCommand.Type
})
else {
return ""
}
// Create the draft automation.
let draftAutomation = automation {
let onOffStarter = starter(
dimmableLightDevice, OnOffLightDeviceType.self, Matter.OnOffTrait.self)
condition { onOffStarter.onOff.equals(true) }
action(dimmableLightDevice, DimmableLightDeviceType.self) {
Matter.LevelControlTrait.moveToLevel(
level: 55,
transitionTime: nil,
optionsMask: Matter.LevelControlTrait.OptionsBitmap(),
optionsOverride: Matter.LevelControlTrait.OptionsBitmap()
)
}
}
// Create the automation in the structure.
let automation = try await structure.createAutomation(draftAutomation)
return automation.id
}
