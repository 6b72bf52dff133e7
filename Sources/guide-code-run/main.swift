// Runs the Discovery guide's own code (GuideCode/, linked from Examples/GuideCode) on a home
// file, as an app on a network host would: the fake-LAN test starts it on the controller
// host, with devices that other processes simulate on other hosts.
//
//   guide-code-run --home FILE --structure NAME [--paa-trust-store DIR]
//
// It checks the address branch, creates both example automations through the guide's
// functions, reads the level bounds with the constraint block, then drives the automation
// clock past the blinds' 07:00 and turns the dimmable light on; it prints one JSON object
// with what happened and exits 0 only when every step held.
import Foundation
import GoogleHomeSDK
import MatterProtocol

struct Report: Codable {
    var toastsBeforeAddress = 0
    var toastsAfterAddress = 0
    var blindsAutomationWithoutAddress = ""
    var blindsAutomation = ""
    var dimmableLightAutomation = ""
    var levelBounds: [UInt64] = []
    var blindsTargetBefore0700: UInt16?
    var blindsTargetAfter0700: UInt16?
    var levelAfterTurningOn: UInt8?
    var failure: String?
}

func option(_ name: String) -> String? {
    let args = CommandLine.arguments
    guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
    return args[i + 1]
}

/// Polls `read` until it returns `want` or `limit` passes; returns the last value read.
func waitFor<T: Equatable>(_ want: T, within limit: Duration, _ read: () async -> T?) async -> T? {
    // real time: external: the home's devices are matter-sim processes of their own.
    let deadline = ContinuousClock.now + limit
    var last = await read()
    while last != want, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(100))
        last = await read()
    }
    return last
}

func run() async throws -> Report {
    guard let file = option("--home"), let structureName = option("--structure") else {
        throw HomeError.invalidArgument("usage: guide-code-run --home FILE --structure NAME [--paa-trust-store DIR]")
    }
    var configuration = HomeConfiguration()
    configuration.useDNSSD = true
    configuration.paaTrustStore = option("--paa-trust-store").map { URL(fileURLWithPath: $0) }
    let home = try await Home.open(at: URL(fileURLWithPath: file), configuration: configuration)
    // Closed before the process exits: its controller's threads are still running otherwise.
    do {
        let report = try await run(home, structureName: structureName)
        await home.close()
        return report
    } catch {
        await home.close()
        throw error
    }
}

func run(_ home: Home, structureName: String) async throws -> Report {
    guard await home.waitUntilAllRoutesUp(timeout: .seconds(30)) else { throw HomeError.unavailable("devices not reachable") }

    let devices = try await home.devices().list()
    guard let blinds = devices.first(where: { $0.types.contains(WindowCoveringDeviceType.self) }),
        let dimmer = devices.first(where: { $0.types.contains(DimmableLightDeviceType.self) })
    else {
        throw HomeError.notFound("the home needs a window covering and a dimmable light")
    }
    // The user's pick in the guide's elided prompt: the window covering.
    let app = DiscoveryGuide(home: home) { _ in blinds }
    var report = Report()
    let seven = TimeOfDay(hours: 7, minutes: 0)

    try await app.checkAddressSetup()
    report.toastsBeforeAddress = app.toasts.count
    report.blindsAutomationWithoutAddress = try await app.createBlindsAutomation(structureName: structureName, scheduledTime: seven)
    guard let structure = try await home.structures().list().first(where: { $0.name == structureName }) else {
        throw HomeError.notFound("no structure \(structureName)")
    }
    _ = try await structure.setAddress("1 Main Street, Springfield")
    try await app.checkAddressSetup()
    report.toastsAfterAddress = app.toasts.count

    report.blindsAutomation = try await app.createBlindsAutomation(structureName: structureName, scheduledTime: seven)
    report.dimmableLightAutomation = try await app.createDimmableLightAutomation(structureName: structureName)
    try await app.checkLevel(55, structure: structure)
    report.levelBounds = app.levelChecks.last.map { [$0.lowerBound, $0.upperBound] } ?? []

    // The automations run here, on a clock the run drives: 06:59 UTC, then past 07:00.
    let clock = ManualClock(wallClockOrigin: ISO8601DateFormatter().date(from: "2026-03-02T06:59:00Z")!)
    let runner = await home.startAutomations(clock: clock, timeZone: TimeZone(identifier: "UTC")!, pollInterval: .milliseconds(50))
    func target() async -> UInt16? {
        await (try? home.device(id: blinds.id))?.types.get(WindowCoveringDeviceType.self)?.matterTraits.windowCoveringTrait?
            .targetPositionLiftPercent100ths
    }
    await clock.advance(by: .seconds(30))
    await runner.fireScheduledStarters()
    report.blindsTargetBefore0700 = await target()
    await clock.advance(by: .seconds(60))
    await runner.fireScheduledStarters()
    report.blindsTargetAfter0700 = await waitFor(10000, within: .seconds(10), target)

    func level() async -> UInt8? {
        await (try? home.device(id: dimmer.id))?.types.get(DimmableLightDeviceType.self)?.matterTraits.levelControlTrait?.currentLevel
    }
    let light = await dimmer.types.get(DimmableLightDeviceType.self)?.matterTraits.onOffTrait
    func isOn() async -> Bool? {
        await (try? home.device(id: dimmer.id))?.types.get(DimmableLightDeviceType.self)?.matterTraits.onOffTrait?.onOff
    }
    try await light?.off()
    // The runner starts on the light turning on: it must have seen it off first.
    _ = await waitFor(false, within: .seconds(10), isOn)
    try await light?.on()
    report.levelAfterTurningOn = await waitFor(55, within: .seconds(10), level)
    await runner.stop()
    return report
}

var report: Report
do { report = try await run() } catch {
    report = Report()
    report.failure = "\(error)"
}
let encoder = JSONEncoder()
encoder.outputFormatting = [.sortedKeys]
print(String(decoding: try encoder.encode(report), as: UTF8.self))
exit(report.failure == nil ? 0 : 1)
