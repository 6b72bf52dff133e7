import Foundation
import HomeAPI
import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore
import OpenCombine
import TestDevices
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
    return c
}

func openHome(_ directory: URL, trustStore: URL? = nil) async throws -> Home {
    var c = testConfiguration()
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
    let reported = await eventually(within: .seconds(10)) {
        guard let dev = try? await home.device(id: d.id) else { return false }
        if dev.types.contains(DimmableLightDeviceType.self) {
            return await dev.types.get(DimmableLightDeviceType.self)?.matterTraits.levelControlTrait?.currentLevel != nil
        }
        if dev.types.contains(WindowCoveringDeviceType.self) {
            return await dev.types.get(WindowCoveringDeviceType.self)?.matterTraits.windowCoveringTrait?.mode != nil
        }
        return await dev.types.get(OnOffLightDeviceType.self)?.matterTraits.onOffTrait?.onOff != nil
    }
    #expect(reported, "device \(name) never reported")
    return try await home.device(id: d.id)
}

/// Records every value a publisher emits (and its completion).
final class Recorder<Output: Sendable>: @unchecked Sendable {
    // @unchecked: `state` is a lock-protected box; `cancellable` is set once in init and only cancelled.
    private let state = NIOLockedValueBox<(values: [Output], completion: String?)>(([], nil))
    private var cancellable: AnyCancellable?

    init<P: Publisher>(_ publisher: P) where P.Output == Output {
        let state = self.state
        cancellable = publisher.sink(
            receiveCompletion: { completion in state.withLockedValue { $0.completion = "\(completion)" } },
            receiveValue: { value in state.withLockedValue { $0.values.append(value) } })
    }

    var values: [Output] { state.withLockedValue { $0.values } }
    var completion: String? { state.withLockedValue { $0.completion } }

    /// Waits until `predicate` holds for the recorded values, up to `limit`; returns whether it did.
    func wait(within limit: Duration = .seconds(5), until predicate: ([Output]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            if predicate(values) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return predicate(values)
    }

    func cancel() { cancellable?.cancel() }
}

/// Polls `condition` for up to `limit`.
func eventually(within limit: Duration = .seconds(5), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return await condition()
}

enum MatterProtocolCode {
    static func manual(passcode: UInt32, discriminator: UInt16) throws -> String {
        try OnboardingPayload(vendorID: 0xFFF1, productID: 0x8001, discriminator: discriminator, passcode: passcode).manualPairingCode()
    }
}
