import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterProtocol
import NIOConcurrencyHelpers
import TestDevices
import TestWaiting
import Testing

/// homectl as a person runs it: a separate process on the same home file, against a
/// live device on loopback.
@Suite("homectl", .serialized)
struct HomeCtlTests {
    /// The homectl binary built next to this test bundle.
    static var binary: URL {
        URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent().appendingPathComponent("homectl")
    }

    struct Result {
        var status: Int32
        var output: String
        var error: String
    }

    static func homectl(_ arguments: [String], home: URL) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments + ["--home", home.path, "--timeout", "4"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let error = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, output: String(decoding: output, as: UTF8.self),
            error: String(decoding: error, as: UTF8.self))
    }

    /// Issue #37 item 8: `homectl devices --home DIR` changed the directory's mode to 0600
    /// (as root, `--home /` did it to /). A home that is not a database file is refused.
    @Test func aHomeThatIsNotADatabaseFileIsRefusedAndKeepsItsMode() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("homectl-folder-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try Self.homectl(["devices"], home: folder)
        #expect(result.status != 0)
        #expect(
            result.error.contains("cannot use \(folder.path) as the home database: it is a directory, not a regular file"),
            "\(result.error)")
        #expect(try FileManager.default.attributesOfItem(atPath: folder.path)[.posixPermissions] as? Int == 0o755)
    }

    /// Issue #37 extra: the relay's and the hub's tokens come from a file (or the environment);
    /// a file that cannot be read, or a relay without a token, is a usage error naming it.
    @Test func relayAndHubTokensComeFromAFile() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("homectl-tokens-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: home) }
        let missing = "/nonexistent-\(UUID().uuidString)"
        var result = try Self.homectl(["devices", "--relay", "ws://127.0.0.1:9", "--relay-token-file", missing], home: home)
        #expect(result.status != 0)
        #expect(result.error.contains("--relay-token-file") && result.error.contains("\(missing): cannot read it"), "\(result.error)")
        result = try Self.homectl(["devices", "--hub", "ws://127.0.0.1:9"], home: home)
        #expect(result.status != 0)
        #expect(result.error.contains("--hub needs its home token: --hub-token-file FILE or $HOMECTL_HUB_TOKEN"), "\(result.error)")
        result = try Self.homectl(["devices", "--relay-token-file", missing], home: home)
        #expect(result.error.contains("cannot read it") || result.error.contains("is for --relay"), "\(result.error)")
    }

    /// Numbers a person can type that no duration or port can hold: refused as usage errors
    /// naming the option, where they used to trap (SIGILL) in a Duration or port conversion.
    @Test func outOfRangeNumbersAreUsageErrorsNotCrashes() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("homectl-numbers-\(UUID().uuidString).sqlite")
        defer { try? FileManager.default.removeItem(at: home) }
        let cases: [(arguments: [String], option: String)] = [
            (["devices", "--timeout", "inf"], "--timeout"),
            (["devices", "--timeout", "1e300"], "--timeout"),
            (["devices", "--settle", "nan"], "--settle"),
            (["discover", "--seconds", "1e300"], "--seconds"),
            (["discover", "--seconds", "-1"], "--seconds"),
            (["automations", "run", "--duration", "nan"], "--duration"),
            (["commission", "--code", "34970112332", "--address", "127.0.0.1:99999"], "--address"),
        ]
        for (arguments, option) in cases {
            let process = Process()
            process.executableURL = Self.binary
            process.arguments = arguments + ["--home", home.path]
            let err = Pipe()
            process.standardOutput = FileHandle.nullDevice
            process.standardError = err
            try process.run()
            let error = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationReason == .exit, "\(arguments): killed by signal \(process.terminationStatus)")
            #expect(process.terminationStatus == 64, "\(arguments): exit \(process.terminationStatus): \(error)")
            #expect(error.contains(option), "\(arguments): the message does not name \(option): \(error)")
        }
    }

    @Test func aFanIsSetByModeAndByPercentAndGetShowsItsState() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = dir.appendingPathComponent("home.sqlite")
        let fan = try await TestDevice.start(
            Fixture.singleCluster(
                0x002B, Clusters.FanControl.id, features: ["SPD"],
                attributes: [
                    Clusters.FanControl.Attribute.fanModeSequence: .unsigned(0), Clusters.FanControl.Attribute.speedMax: .unsigned(10),
                ],
                product: "Ceiling Fan", serial: "FAN-CLI"))
        defer { PendingCleanups.run { await fan.stop() } }
        let commissioned = try Self.homectl(
            [
                "commission", "--code", try fan.setupCode, "--address", "127.0.0.1:\(fan.port)", "--structure", "Flat", "--room", "Bedroom",
                "--name", "Ceiling fan", "--allow-untrusted",
            ], home: home)
        #expect(commissioned.status == 0, "\(commissioned.error)")
        let percentSetting = AttributePath(
            endpoint: 1, cluster: Clusters.FanControl.id, attribute: Clusters.FanControl.Attribute.percentSetting)
        let high = try Self.homectl(["fan", "Ceiling fan", "high"], home: home)
        #expect(high.status == 0, "\(high.error) \(high.output)")
        #expect(await fan.value(percentSetting) == .unsigned(100))
        #expect(try Self.homectl(["fan", "Ceiling fan", "40%"], home: home).status == 0)
        #expect(await fan.value(percentSetting) == .unsigned(40))
        #expect(try Self.homectl(["fan", "Ceiling fan", "auto"], home: home).status != 0)  // no Auto in its sequence
        #expect(try Self.homectl(["fan", "Ceiling fan", "150"], home: home).status != 0)
        let got = try Self.homectl(["get", "Ceiling fan", "--json"], home: home)
        #expect(got.output.contains("\"fan\" : \"medium\""), "\(got.output)")
    }

    /// `automations create` on a home just commissioned: the starter's trait is read from the
    /// device, and the home it validates against subscribes (in demo.sh it failed with "has no
    /// SmokeCoAlarmTrait", then with missingSubscription).
    @Test func anAutomationIsCreatedFromTheCommandLine() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = dir.appendingPathComponent("home.sqlite")
        let alarm = try await TestDevice.start(
            SafetySensorHomeTests.device(
                DeviceTypes.smokeCoAlarm, [ClusterInstanceDescription(id: Clusters.SmokeCoAlarm.id, features: ["SMOKE", "CO"])],
                product: "Smoke Alarm", serial: "SMOKE-CLI"))
        let light = try await TestDevice.start(Fixture.dimmableLight(), deviceTypeID: 0x0101)
        defer { PendingCleanups.run { await alarm.stop(); await light.stop() } }
        for (device, name) in [(alarm, "Hall alarm"), (light, "Desk lamp")] {
            let commissioned = try Self.homectl(
                [
                    "commission", "--code", try device.setupCode, "--address", "127.0.0.1:\(device.port)",
                    "--structure", "Flat", "--room", "Hall", "--name", name, "--allow-untrusted",
                ], home: home)
            #expect(commissioned.status == 0, "\(commissioned.error)")
        }
        let created = try Self.homectl(
            ["automations", "create", "Smoke: lamp on", "--when", "Hall alarm:smoke", "--then", "Desk lamp:on"], home: home)
        #expect(created.status == 0, "\(created.error)")
        #expect(created.output.contains("created Smoke: lamp on"), "\(created.output)")
        let listed = try Self.homectl(["automations", "list"], home: home)
        #expect(listed.output.contains("Smoke: lamp on"), "\(listed.output) \(listed.error)")
    }

    @Test func commissionListControlRenameAndRooms() async throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.binary.path), "homectl is not built at \(Self.binary.path)")
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = dir.appendingPathComponent("home.sqlite")
        let light = try await TestDevice.start(Fixture.dimmableLight(), deviceTypeID: 0x0101)
        defer { PendingCleanups.run { await light.stop() } }

        let commissioned = try Self.homectl(
            [
                "commission", "--code", try light.setupCode, "--address", "127.0.0.1:\(light.port)",
                "--structure", "Flat", "--room", "Office", "--name", "Desk lamp",
                "--allow-untrusted",
            ], home: home)
        #expect(commissioned.status == 0, "\(commissioned.error)")
        #expect(commissioned.output.contains("Desk lamp"))

        let devices = try Self.homectl(["devices", "--json"], home: home)
        #expect(devices.status == 0)
        let list = try JSONSerialization.jsonObject(with: Data(devices.output.utf8)) as? [[String: Any]]
        #expect(list?.count == 1)
        #expect(list?.first?["name"] as? String == "Desk lamp")
        #expect(list?.first?["room"] as? String == "Office")

        #expect(try Self.homectl(["on", "desk lamp"], home: home).status == 0)
        #expect(await light.value(.init(endpoint: 1, cluster: Fixture.onOff, attribute: .init(0))) == .bool(true))
        #expect(try Self.homectl(["level", "Desk lamp", "77"], home: home).status == 0)
        let got = try Self.homectl(["get", "Desk lamp", "--json"], home: home)
        #expect(got.status == 0, "\(got.error)")
        #expect(got.output.contains("\"level\" : \"77\""))

        #expect(try Self.homectl(["rename", "Desk lamp", "Reading lamp"], home: home).status == 0)
        #expect(try Self.homectl(["room", "create", "Hall"], home: home).status == 0)
        #expect(try Self.homectl(["room", "move", "Reading lamp", "Hall"], home: home).status == 0)
        #expect(try Self.homectl(["room", "delete", "Office"], home: home).status == 0)
        let table = try Self.homectl(["devices"], home: home)
        #expect(table.output.contains("Reading lamp"))
        #expect(table.output.contains("Hall"))

        // `watch` prints each change another homectl makes, live, until interrupted.
        let watch = Process()
        watch.executableURL = Self.binary
        watch.arguments = ["watch", "--json", "--home", home.path, "--timeout", "4"]
        let watchOut = Pipe()
        watch.standardOutput = watchOut
        watch.standardError = FileHandle.nullDevice
        let printed = Watched("")
        watchOut.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            printed.update { $0 += String(decoding: data, as: UTF8.self) }
        }
        let exited = Watched(false)
        watch.terminationHandler = { _ in exited.update { $0 = true } }
        try watch.run()
        defer { if watch.isRunning { watch.terminate() } }
        // The current device comes first, then the changes.
        #expect(await printed.until { $0.contains("Reading lamp") })
        #expect(try Self.homectl(["rename", "Reading lamp", "Night light"], home: home).status == 0)
        #expect(await printed.until(within: .seconds(5)) { $0.contains("Night light") })
        #expect(try Self.homectl(["off", "Night light"], home: home).status == 0)
        #expect(
            await printed.until(within: .seconds(5)) { text in
                text.split(separator: "\n").contains { $0.contains("Night light") && $0.contains("\"onOff\":\"off\"") }
            }, "watch printed: \(printed.value)")
        kill(watch.processIdentifier, SIGINT)
        let stopped = await exited.until(within: .seconds(5)) { $0 }
        #expect(stopped, "watch did not stop on SIGINT")
        watchOut.fileHandleForReading.readabilityHandler = nil

        // Unknown names fail with a message, not a crash.
        let missing = try Self.homectl(["toggle", "no such device"], home: home)
        #expect(missing.status != 0)
        #expect(missing.error.contains("no device"))
    }
}
