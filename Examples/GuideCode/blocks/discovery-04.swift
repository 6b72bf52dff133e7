import GoogleHomeSDK
import GoogleHomeTypes
...
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
