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
