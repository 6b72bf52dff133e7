// The Discovery API guide (seeds/003, English), every Swift block as the guide prints it,
// between `guide-block` markers (scripts/check-guide-code.py checks them against the seeds).
//
// Wrapped: the two automation examples in an extension of `DiscoveryGuide` (the app, for
// `self.home`), opened after their imports; the unsupported-reason block in the method
// `checkAddressSetup`; the constraint block's `...` (the guide's elision) opens the
// extension and the method `checkLevel`. Supplied: the prompt the guide elides ("prompt
// user to select the WindowCoveringDevice": `chooseWindowCovering`), `showToast`,
// `launchChangeAddress`, the `structure` and `value` the constraint block assumes, and a
// record of what the blocks did (`toasts`, `addressChanges`, `levelChecks`) for the tests.
import Synchronization

// guide-block: discovery-01
import GoogleHomeSDK
import GoogleHomeTypes
extension DiscoveryGuide {  // [wrapper]
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
blindsDevice = try await chooseWindowCovering(structure)  // [wrapper]
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
// end guide-block: discovery-01
}

// guide-block: discovery-02
import GoogleHomeSDK
import GoogleHomeTypes
extension DiscoveryGuide {  // [wrapper]
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
// end guide-block: discovery-02
}

/// The app of the Discovery guide.
public final class DiscoveryGuide: Sendable {
    public let home: Home
    /// The user's pick among the structure's devices (the guide's elided prompt).
    let chooseWindowCovering: @Sendable (Structure) async throws -> HomeDevice?
    private let toastLog = Mutex<[String]>([])
    private let addressChangeCount = Mutex(0)
    private let levelCheckLog = Mutex<[LevelCheck]>([])

    /// What the constraint block found: the bounds the device allows, and whether the value fits.
    public struct LevelCheck: Sendable, Equatable {
        public let lowerBound: UInt64
        public let upperBound: UInt64
        public let value: UInt64
        public let isAllowed: Bool
    }

    public init(home: Home, chooseWindowCovering: @escaping @Sendable (Structure) async throws -> HomeDevice?) {
        self.home = home
        self.chooseWindowCovering = chooseWindowCovering
    }

    public var toasts: [String] { toastLog.withLock { $0 } }
    public var addressChanges: Int { addressChangeCount.withLock { $0 } }
    public var levelChecks: [LevelCheck] { levelCheckLog.withLock { $0 } }

    /// The guide's first example: the blinds close at `scheduledTime`.
    public func createBlindsAutomation(structureName: String, scheduledTime: TimeOfDay) async throws -> String {
        try await createAutomationWithDiscoveryAPITimeStarter(structureName: structureName, scheduledTime: scheduledTime)
    }

    /// The guide's second example: the dimmable light goes to level 55 when turned on.
    public func createDimmableLightAutomation(structureName: String) async throws -> String {
        try await createAutomationWithDiscoveryAPIForDimmableLight(structureName: structureName)
    }

    func showToast(_ message: String) { toastLog.withLock { $0.append(message) } }

    func launchChangeAddress() { addressChangeCount.withLock { $0 += 1 } }

    public func checkAddressSetup() async throws {
// guide-block: discovery-03
guard let structure = try await home.structures().list().first else { return }
let allCandidates = try await structure.candidates().list()
guard
let scheduledStarterCandidate =
allCandidates
.compactMap({ $0.node as? EventCandidate })
.first(where: {
$0.event is GoogleHomeTypes.Google.TimeTrait.ScheduledEvent.Type
})
else {
return
}
if scheduledStarterCandidate.unsupportedReasons.contains(where: {
$0.reasonType == .missingStructureAddressSetup
}) {
showToast("No Structure Address setup. Redirecting to GHA to setup address.")
launchChangeAddress()
}
// end guide-block: discovery-03
    }
}

// guide-block: discovery-04
import GoogleHomeSDK
import GoogleHomeTypes
extension DiscoveryGuide {  // [wrapper]
    public func checkLevel(_ value: UInt64, structure: Structure) async throws {  // [wrapper]
guard
let levelCommandCandidate = try await structure.candidates().list()
.compactMap({ $0.node as? CommandCandidate })
.first(where: {
$0.command is Matter.LevelControlTrait.MoveToLevelCommand.Type
})
else {
return
}
let field = AnyField(
erasing: Matter.LevelControlTrait.MoveToLevelCommand.CommandRequestFields.level)
guard let levelConstraint = levelCommandCandidate.fieldDetails[field]?.constraint else {
return
}
guard case .uintRangeConstraint(let lowerBound, let upperBound, _, _) = levelConstraint else {
return
}
if (lowerBound...upperBound).contains(value) {
// OK to use the value
}
// end guide-block: discovery-04
        levelCheckLog.withLock {
            $0.append(LevelCheck(lowerBound: lowerBound, upperBound: upperBound, value: value,
                                 isAllowed: (lowerBound...upperBound).contains(value)))
        }
    }
}
