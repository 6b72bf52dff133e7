import GoogleHomeSDK
import GoogleHomeTypes
private func createAutomationWithDiscoveryAPITimeStarter(
structureName: String,
scheduledTime: TimeOfDay
) async throws -> String {
guard
let structure = try await self.home.structures().list().first(where: {
$0.name == structureName
})
else {
return ""
}
guard
try await structure.candidates().list()
.compactMap({ $0.node as? EventCandidate })
.contains(where: {
$0.event is GoogleHomeTypes.Google.TimeTrait.ScheduledEvent.Type
&& $0.unsupportedReasons.isEmpty
})
else {
return ""
}
guard
try await structure.candidates().list()
.compactMap({ $0.node as? CommandCandidate })
.contains(where: {
$0.command is Matter.WindowCoveringTrait.DownOrCloseCommand.Type
&& $0.unsupportedReasons.isEmpty
})
else {
return ""
}
var blindsDevice: HomeDevice? = nil
// prompt user to select the WindowCoveringDevice
...
guard let blindsDevice else {
return ""
}
// Create the draft automation.
let draftAutomation = automation(
name: "",
description: ""
) {
starter(structure, Google.TimeTrait.ScheduledEvent.self) {
GoogleHomeTypes.Google.TimeTrait.ScheduledEvent.clockTime(scheduledTime)
}
action(blindsDevice, WindowCoveringDeviceType.self) {
Matter.WindowCoveringTrait.downOrClose()
}
}
// Create the automation in the structure.
let automation = try await structure.createAutomation(draftAutomation)
return automation.id
}
