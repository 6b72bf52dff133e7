import DeviceProfile
import Foundation
import MatterModel
import Testing

/// The repository's DeviceProfiles directory (next to Tests/).
let profilesDirectory: String = {
    let here = URL(fileURLWithPath: #filePath)
    return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("DeviceProfiles").path
}()

func shippedProfile(_ relative: String) -> String {
    profilesDirectory + "/" + relative
}

func shippedText(_ relative: String) throws -> String {
    try String(contentsOfFile: shippedProfile(relative), encoding: .utf8)
}

/// A loader over in-memory files.
func memoryLoader(_ files: [String: String]) -> ProfileLoader {
    ProfileLoader(model: .standard, fileSystem: .memory(files))
}

/// Diagnostics for one device or home given as text.
func diagnostics(_ yaml: String, file: String = "test.yaml", others: [String: String] = [:]) -> [ProfileDiagnostic] {
    memoryLoader(others).load(yaml: yaml, file: file).diagnostics
}

/// A minimal valid device profile with `endpoint1` as the body of endpoint 1.
func device(_ endpoint1: String, extra: String = "") -> String {
    """
    identity:
      serialNumber: TEST-0001
    \(extra)
    endpoints:
      1:
    \(endpoint1.split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n"))
    """
}

/// Expects exactly one diagnostic at `path` and returns its message.
@discardableResult
func expectOne(_ diags: [ProfileDiagnostic], at path: String, sourceLocation: SourceLocation = #_sourceLocation) -> String? {
    let matching = diags.filter { $0.path.description == path }
    #expect(matching.count == 1, "expected one error at \(path), got: \(diags.map(\.description))", sourceLocation: sourceLocation)
    return matching.first?.message
}
