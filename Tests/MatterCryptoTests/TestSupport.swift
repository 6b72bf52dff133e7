import Foundation
import MatterCrypto

/// Hex literal → bytes; test vectors only.
func hex(_ s: String) -> [UInt8] {
    guard let b = [UInt8](hexString: s) else { fatalError("bad hex literal in test: \(s)") }
    return b
}

/// The published test credentials the project carries (DeviceProfiles/credentials, test only).
let testCredentialsDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("DeviceProfiles/credentials")

func readTestCredential(_ name: String) throws -> String {
    try String(contentsOf: testCredentialsDirectory.appendingPathComponent(name), encoding: .utf8)
}
