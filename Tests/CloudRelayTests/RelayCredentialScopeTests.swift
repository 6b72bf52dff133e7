@testable import CloudRelay
import Foundation
@testable import RelayClients
@testable import RelayProtocol
import TestWaiting
import Testing

/// Issue #37 item 6: what a device's credential may do, and the admin token the relay
/// starts with.
@Suite struct RelayCredentialScopeTests {
    /// A device credential (what docker-compose now gives each device instead of the home
    /// token) connects its own device and nothing else: no controller connection, no device
    /// list, no registration or re-registration of another device ID (or its own), no admin
    /// API. The device it would have cut off stays connected and controllable.
    @Test func aDeviceCredentialIsNeitherAControllerNorARegistrar() async throws {
        try await withRelay { relay in
            let (home, token, lampCredential) = try await relay.home("Flat", device: "lamp")
            let plugCredential = try await relay.store.registerDevice(homeID: home.id, deviceID: "plug")
            let plug = RelayTestDevice(relayURL: relay.baseURL, credential: plugCredential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: token, configuration: controllerConfiguration(), logger: testLogger)
            let impostor = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: lampCredential, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(plug.services + [{ try await controller.run() }, { try await impostor.run() }]) {
                try await plug.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                #expect(await until(impostor.stateUpdates()) { impostor.state == .disconnected(.unauthorized) })

                let devices = relay.httpURL + "/v1/homes/\(home.id)/devices"
                #expect(try await RelayHTTP.request("GET", relay.httpURL + "/v1/controller", bearer: lampCredential).status == 401)
                #expect(try await RelayHTTP.request("GET", devices, bearer: lampCredential).status == 401)
                for id in ["plug", "lamp", "new-device"] {
                    let register = try await RelayHTTP.request(
                        "POST", devices, bearer: lampCredential, json: Array(#"{"deviceID":"\#(id)"}"#.utf8))
                    #expect(register.status == 401, "registering \(id) with a device credential")
                    let admin = try await RelayHTTP.request(
                        "POST", relay.httpURL + "/v1/admin/homes/\(home.id)/devices", bearer: lampCredential,
                        json: Array(#"{"deviceID":"\#(id)"}"#.utf8))
                    #expect(admin.status == 401, "the admin API with a device credential")
                }
                #expect(try await RelayHTTP.request("GET", relay.httpURL + "/v1/admin/homes", bearer: lampCredential).status == 401)

                // Nothing was re-issued: both credentials still authenticate their own devices.
                #expect(try await relay.store.authenticateDevice(credential: plugCredential)?.deviceID == "plug")
                #expect(try await relay.store.authenticateDevice(credential: lampCredential)?.deviceID == "lamp")
                #expect(try await relay.store.devices(homeID: home.id).map(\.deviceID) == ["lamp", "plug"])
                #expect(try await controller.invoke("plug", OnOff.command(OnOff.on)).statuses == [.success])
                #expect(plug.client.state == .connected)
            }
        }
    }

    @Test func weakAdminTokensAreNamed() {
        for weak in ["", "change-me", "CHANGE-ME-please-0123456789abcdefghijk", "short-token", String(repeating: "ab", count: 40)] {
            #expect(RelayServerConfiguration.adminTokenWeakness(weak) != nil, "\(weak) passed")
        }
        #expect(RelayServerConfiguration.adminTokenWeakness("q3Zr8KfLw2Xn7TbVy1HcMs9PdGe4JuA6oRiE0tYkWxB") == nil)
    }

    /// `matter-relay serve` refuses to start with a weak admin token (file or environment)
    /// and says why, unless --allow-weak-admin-token says it is a test; a strong one starts.
    @Test func matterRelayRefusesToStartWithAWeakAdminToken() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relay-admin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let weakFile = directory.appendingPathComponent("weak").path
        try "change-me\n".write(toFile: weakFile, atomically: true, encoding: .utf8)
        let strongFile = directory.appendingPathComponent("strong").path
        try "q3Zr8KfLw2Xn7TbVy1HcMs9PdGe4JuA6oRiE0tYkWxB\n".write(toFile: strongFile, atomically: true, encoding: .utf8)
        let database = directory.appendingPathComponent("relay.sqlite").path
        let serve = ["serve", "--port", "0", "--database", database]

        let fromFile = try runRelay(serve + ["--admin-token-file", weakFile], in: directory)
        #expect(fromFile.exited && fromFile.status != 0, "started with change-me: \(fromFile.output)")
        #expect(fromFile.output.contains("placeholder 'change-me'"), "\(fromFile.output)")
        let fromEnvironment = try runRelay(serve, environment: ["MATTER_RELAY_ADMIN_TOKEN": "0123456789"], in: directory)
        #expect(fromEnvironment.exited && fromEnvironment.status != 0, "started with a 10-character token: \(fromEnvironment.output)")
        #expect(fromEnvironment.output.contains("fewer than 32"), "\(fromEnvironment.output)")
        let empty = try runRelay(serve, environment: ["MATTER_RELAY_ADMIN_TOKEN": ""], in: directory)
        #expect(empty.exited && empty.status != 0, "started with an empty token: \(empty.output)")

        let test = try runRelay(serve + ["--admin-token-file", weakFile, "--allow-weak-admin-token"], in: directory)
        #expect(!test.exited && test.output.contains("admin API on"), "\(test.output)")
        let strong = try runRelay(serve + ["--admin-token-file", strongFile], in: directory)
        #expect(!strong.exited && strong.output.contains("admin API on"), "\(strong.output)")
    }
}

/// Runs `matter-relay` (built beside the tests) until it exits or prints its listening line
/// (then it is stopped), for at most 20 s; its output, and its status if it exited by itself.
private func runRelay(
    _ arguments: [String], environment: [String: String] = [:], in directory: URL
) throws -> (
    exited: Bool, status: Int32, output: String
) {
    let binary = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "matter-relay")
    let log = directory.appendingPathComponent("relay-\(UUID().uuidString).log")
    FileManager.default.createFile(atPath: log.path, contents: nil)
    let handle = try FileHandle(forWritingTo: log)
    defer { try? handle.close() }
    let process = Process()
    process.executableURL = binary
    process.arguments = arguments
    var variables = ProcessInfo.processInfo.environment
    variables["MATTER_RELAY_ADMIN_TOKEN"] = nil
    variables.merge(environment) { $1 }
    process.environment = variables
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    func output() -> String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
    // real time: external: a child process's exit or its first line.
    let deadline = Date().addingTimeInterval(20)
    while process.isRunning, Date() < deadline, !output().contains("listening on") { usleep(20_000) }
    let exited = !process.isRunning
    if !exited {
        process.terminate()
        process.waitUntilExit()
    }
    return (exited, exited ? process.terminationStatus : 0, output())
}
