import Foundation
import HomeAPI
import HomeRelayLink
import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore
import OpenCombine
import TestDevices
import TestWaiting
import Testing

/// A home on a fresh SQLite file, its controller on loopback, with short timeouts.
func testConfiguration() -> HomeConfiguration {
    var c = HomeConfiguration()
    c.controllerBinding = .addresses(["127.0.0.1"])
    c.commandTimeout = .seconds(4)
    c.responseTimeout = .seconds(2)
    c.subscriptionMaxInterval = 2
    c.maxResubscribeDelay = .seconds(2)
    c.allowUntrustedAttestation = false
    c.relayLinks = HomeRelayLinks.webSocket
    return c
}

/// `clock`: the home's one clock (a test that times the home measures on it).
func openHome(_ directory: URL, trustStore: URL? = nil, clock: any MatterClock = SystemClock()) async throws -> Home {
    var c = testConfiguration()
    c.clock = clock
    c.paaTrustStore = trustStore
    c.allowUntrustedAttestation = trustStore == nil
    return try await Home.open(at: directory.appendingPathComponent("home.sqlite"), configuration: c)
}

extension TestDevice {
    /// The device's manual pairing code.
    var setupCode: String {
        get throws {
            try OnboardingPayload(vendorID: 0xFFF1, productID: 0x8001, discriminator: discriminator, passcode: passcode)
                .manualPairingCode()
        }
    }
}

/// Commissions `device` into `structureID` and waits until it reported what Discovery and
/// the guides read (AcceptedCommandList, the level and its bounds, the covering's mode, OnOff).
func commissionReporting(_ device: TestDevice, into home: Home, structureID: String, name: String) async throws -> HomeDevice {
    let d = try await home.commissionDevice(
        setupCode: try device.setupCode, address: device.address,
        structureID: structureID, name: name)
    let reported = await until(signals(home.devices().batched())) {
        guard let dev = try? await home.device(id: d.id) else { return false }
        if dev.types.contains(DimmableLightDeviceType.self) {
            return await dev.types.get(DimmableLightDeviceType.self)?.matterTraits.levelControlTrait?.currentLevel != nil
        }
        if dev.types.contains(WindowCoveringDeviceType.self) {
            return await dev.types.get(WindowCoveringDeviceType.self)?.matterTraits.windowCoveringTrait?.mode != nil
        }
        if dev.types.contains(ContactSensorDeviceType.self) {
            return await dev.types.get(ContactSensorDeviceType.self)?.matterTraits.booleanStateTrait?.stateValue != nil
        }
        if dev.types.contains(TemperatureSensorDeviceType.self) {
            return await dev.types.get(TemperatureSensorDeviceType.self)?.matterTraits.temperatureMeasurementTrait?.measuredValue != nil
        }
        if dev.types.contains(OccupancySensorDeviceType.self) {
            return await dev.types.get(OccupancySensorDeviceType.self)?.matterTraits.occupancySensingTrait?.occupancy != nil
        }
        if dev.types.contains(DoorLockDeviceType.self) {
            return await dev.types.get(DoorLockDeviceType.self)?.matterTraits.doorLockTrait?.lockState != nil
        }
        if dev.types.contains(ThermostatDeviceType.self) {
            return await dev.types.get(ThermostatDeviceType.self)?.matterTraits.thermostatTrait?.localTemperature != nil
        }
        // ColorCapabilities (0x400A) comes late in the cluster's priming report.
        if dev.types.contains(ColorTemperatureLightDeviceType.self) {
            return await dev.types.get(ColorTemperatureLightDeviceType.self)?.matterTraits.colorControlTrait?.colorCapabilities != nil
        }
        if dev.types.contains(ExtendedColorLightDeviceType.self) {
            return await dev.types.get(ExtendedColorLightDeviceType.self)?.matterTraits.colorControlTrait?.colorCapabilities != nil
        }
        if dev.types.contains(GenericSwitchDeviceType.self) {
            return await dev.types.get(GenericSwitchDeviceType.self)?.matterTraits.switchTrait?.numberOfPositions != nil
        }
        if dev.types.contains(FanDeviceType.self) {
            return await dev.types.get(FanDeviceType.self)?.matterTraits.fanControlTrait?.percentCurrent != nil
        }
        if dev.types.contains(AirQualitySensorDeviceType.self) {
            return await dev.types.get(AirQualitySensorDeviceType.self)?.matterTraits.airQualityTrait?.airQuality != nil
        }
        if dev.types.contains(SmokeCoAlarmDeviceType.self) {
            return await dev.types.get(SmokeCoAlarmDeviceType.self)?.matterTraits.powerSourceTrait?.batPercentRemaining != nil
        }
        if dev.types.contains(WaterLeakDetectorDeviceType.self) {
            return await dev.types.get(WaterLeakDetectorDeviceType.self)?.matterTraits.booleanStateConfigurationTrait?.alarmsSupported
                != nil
        }
        if dev.types.contains(DimmablePlugInUnitDeviceType.self) {
            return await dev.types.get(DimmablePlugInUnitDeviceType.self)?.matterTraits.levelControlTrait?.currentLevel != nil
        }
        if dev.types.contains(RoboticVacuumCleanerDeviceType.self) {
            return await dev.types.get(RoboticVacuumCleanerDeviceType.self)?.matterTraits.rvcOperationalStateTrait?.operationalState != nil
        }
        if dev.types.contains(PumpDeviceType.self) {
            return await dev.types.get(PumpDeviceType.self)?.matterTraits.pumpConfigurationAndControlTrait?.effectiveOperationMode != nil
        }
        if dev.types.contains(SpeakerDeviceType.self) {
            return await dev.types.get(SpeakerDeviceType.self)?.matterTraits.levelControlTrait?.currentLevel != nil
        }
        return await dev.types.get(OnOffLightDeviceType.self)?.matterTraits.onOffTrait?.onOff != nil
    }
    #expect(reported, "device \(name) never reported")
    return try await home.device(id: d.id)
}

/// One `Void` per value `publisher` sends (coalesced while unread), so `until` wakes on what
/// a home publishes (`home.devices().batched()`, `rooms()`, `deviceGroups()`) instead of polling it.
func signals<P: Publisher>(_ publisher: P) -> AsyncStream<Void> {
    let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let subscription = PublisherSubscription(
        publisher.sink(receiveCompletion: { _ in continuation.finish() }, receiveValue: { _ in continuation.yield() }))
    continuation.onTermination = { _ in subscription.cancel() }
    return stream
}

/// Keeps a Combine subscription alive until the stream that carries it ends.
private final class PublisherSubscription: @unchecked Sendable {
    // @unchecked: set once in init, then only cancelled (AnyCancellable.cancel is thread-safe).
    private let cancellable: AnyCancellable
    init(_ cancellable: AnyCancellable) { self.cancellable = cancellable }
    func cancel() { cancellable.cancel() }
}

/// Records every value a publisher emits (and its completion).
final class Recorder<Output: Sendable>: @unchecked Sendable {
    // @unchecked: `state` is a lock-protected box; `cancellable` is set once in init and only cancelled.
    private struct State {
        var values: [Output] = []
        var completion: String?
        /// Counts values and the completion recorded.
        var version: UInt64 = 0
        /// Waiters for the next value or completion.
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }
    private let state = NIOLockedValueBox(State())
    private var cancellable: AnyCancellable?

    init<P: Publisher>(_ publisher: P) where P.Output == Output {
        let state = self.state
        cancellable = publisher.sink(
            receiveCompletion: { completion in Self.record(in: state) { $0.completion = "\(completion)" } },
            receiveValue: { value in Self.record(in: state) { $0.values.append(value) } })
    }

    private static func record(in state: NIOLockedValueBox<State>, _ change: (inout State) -> Void) {
        let waiters = state.withLockedValue { s -> [CheckedContinuation<Void, Never>] in
            change(&s)
            s.version += 1
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    var values: [Output] { state.withLockedValue { $0.values } }
    var completion: String? { state.withLockedValue { $0.completion } }

    /// Waits until `predicate` holds for the recorded values, checking at each new value; gives
    /// up after `limit` of real time (a bound on a broken run, not a pace); returns whether it held.
    func wait(within limit: Duration = .seconds(5), until predicate: ([Output]) -> Bool) async -> Bool {
        // One clock for the whole wait: a SystemClock counts from when it was made.
        let clock = SystemClock()
        let deadline = clock.now + limit
        while true {
            let (ready, version) = state.withLockedValue { ($0.values, $0.version) }
            if predicate(ready) { return true }
            let remaining = deadline - clock.now
            guard remaining > .zero else { return false }
            let state = state
            let woke =
                (try? await withTimeLimit(remaining, on: clock, orThrow: { CancellationError() }) {
                    await Self.nextChange(in: state, after: version)
                    return true
                }) ?? false
            if !woke { return predicate(values) }
        }
    }

    /// Returns once something is recorded after `version`, or when cancelled.
    private static func nextChange(in state: NIOLockedValueBox<State>, after version: UInt64) async {
        let id = state.withLockedValue { s -> UInt64 in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLockedValue { s -> Bool in
                    if s.version > version || Task.isCancelled { return true }
                    s.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLockedValue { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    func cancel() { cancellable?.cancel() }
}

enum MatterProtocolCode {
    static func manual(passcode: UInt32, discriminator: UInt16) throws -> String {
        try OnboardingPayload(vendorID: 0xFFF1, productID: 0x8001, discriminator: discriminator, passcode: passcode).manualPairingCode()
    }
}

/// A home in a temporary directory with one structure, into which tests commission devices
/// (reporting before they are handed back); `close()` removes it.
struct Rig {
    let dir: URL
    let home: Home
    let structure: Structure

    static func make() async throws -> Rig {
        let dir = try temporaryDirectory()
        let home = try await openHome(dir)
        return Rig(dir: dir, home: home, structure: try await home.createStructure(name: "Home"))
    }

    func add(_ device: TestDevice, name: String, structure: Structure? = nil) async throws -> HomeDevice {
        try await commissionReporting(device, into: home, structureID: (structure ?? self.structure).id, name: name)
    }

    func close() async {
        await home.close()
        try? FileManager.default.removeItem(at: dir)
    }
}
