import Foundation
import MatterCrypto
import Testing
@testable import matter_sim

/// Issue #37 extra: `--relay-home-token` and `--dashboard-token` were only on the command
/// line, which `ps` shows every user. Each secret also comes from a file or the environment,
/// and `home --process-per-device` hands its children the token in their environment.
@Suite("Secrets off the command line")
struct CommandLineSecretsTests {
    static func file(_ text: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("secret-\(UUID().uuidString)")
        try SecretFiles.writeNew(Data(text.utf8), to: url)
        return url
    }

    @Test func tokensAndCredentialsComeFromFiles() throws {
        let token = try Self.file("mrh_token-1234\n")
        defer { try? FileManager.default.removeItem(at: token) }
        #expect(try CloudOptions.parse(["--relay-home-token-file", token.path]).homeToken == "mrh_token-1234")
        #expect(try CloudOptions.parse(["--relay-home-token", "old-form"]).homeToken == "old-form")
        #expect(throws: (any Error).self) {
            try CloudOptions.parse(["--relay-home-token", "a", "--relay-home-token-file", token.path])
        }
        let home = try HomeCommand.parse(["home.yaml", "--dashboard", "0.0.0.0:8090", "--dashboard-token-file", token.path])
        #expect(home.dashboardToken == "mrh_token-1234")
        let run = try RunCommand.parse(["light.yaml", "--relay-credential-file", token.path])
        #expect(run.relayCredential == "mrh_token-1234")
    }

    @Test func aBadSecretFileIsAnErrorNamingIt() throws {
        let empty = try Self.file(" \n")
        let large = try Self.file(String(repeating: "x", count: 70_000))
        defer { for url in [empty, large] { try? FileManager.default.removeItem(at: url) } }
        let missing = "/nonexistent-\(UUID().uuidString)"
        for (path, expected) in [(empty.path, "it is empty"), (large.path, "more than 65536 bytes"), (missing, "cannot read it")] {
            let error = #expect(throws: SecretFileError.self) { try CommandLineSecrets.read(file: path) }
            #expect(
                error?.description.hasPrefix(path) == true && error?.description.contains(expected) == true, "\(error?.description ?? "")")
            #expect(throws: (any Error).self) { try CloudOptions.parse(["--relay-home-token-file", path]) }
        }
    }

    @Test func anEmptyVariableIsNoSecret() {
        #expect(CommandLineSecrets.environment("T", in: ["T": " tok\n"]) == "tok")
        #expect(CommandLineSecrets.environment("T", in: ["T": ""]) == nil)
        #expect(CommandLineSecrets.environment("T", in: [:]) == nil)
    }

    /// The children of `home --process-per-device` get the token in their environment.
    @Test func aChildGetsItsSecretInItsEnvironment() throws {
        let child = try DeviceProcess(
            ["/bin/sh", "-c", "test \"$\(CloudOptions.homeTokenVariable)\" = mrh_child && echo handed"],
            environment: [CloudOptions.homeTokenVariable: "mrh_child"], readyMarker: "handed")
        child.waitForExit()
        #expect(child.exitStatus == 0)
        #expect(child.isReady)
    }
}
