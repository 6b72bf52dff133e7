import Foundation
import HomeAPI
import MatterProtocol
import NIOCore
import TestDevices
import TestWaiting
import Testing

/// HomeAPI's public calls throw `HomeError` by type (`throws(HomeError)`): whatever fails
/// below (the controller, the store, the device), the caller's `catch` holds a `HomeError`
/// without a cast, with the code the failure means. Each `catch` here reads `error.code`
/// directly, which compiles only because the calls are typed.
@Suite("Typed HomeError", .serialized)
struct TypedHomeErrorTests {
    /// The controller's own error (a trust store it cannot read) was thrown through
    /// `commissionDevice` as a `ControllerError`; it is a HomeError now.
    @Test func aControllerFailureReachesTheCallerAsAHomeError() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = try await openHome(dir, trustStore: dir.appendingPathComponent("no-such-paa-store"))
        defer { PendingCleanups.run { await home.close() } }
        let code = try OnboardingPayload(vendorID: 0xFFF1, productID: 0x8001, discriminator: 3840, passcode: 20202021)
            .manualPairingCode()
        // Never reached: the trust store is read before anything is sent.
        let address = try SocketAddress(ipAddress: "127.0.0.1", port: 9)
        do {
            _ = try await home.commissionDevice(setupCode: code, address: address)
            Issue.record("commissioning went ahead without its trust store")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("no-such-paa-store"), "\(error)")
        }
    }

    /// A device's refusal (CONSTRAINT_ERROR on a malformed command) and its silence (powered
    /// off) reach a generated trait command's caller as the HomeError codes they mean.
    @Test func aDevicesRefusalAndSilenceAreHomeErrorsByType() async throws {
        let dir = try temporaryDirectory()
        let light = try await TestDevice.start(Fixture.dimmableLight(), deviceTypeID: 0x0101)
        let home = try await openHome(dir)
        defer {
            PendingCleanups.run {
                await home.close()
                await light.stop()
                try? FileManager.default.removeItem(at: dir)
            }
        }
        let structure = try await home.createStructure(name: "Home")
        let device = try await home.commissionDevice(
            setupCode: try light.setupCode, address: light.address, structureID: structure.id)
        let traits = try #require(await device.types.get(DimmableLightDeviceType.self)?.matterTraits)
        let level = try #require(traits.levelControlTrait)
        let onOff = try #require(traits.onOffTrait)
        do {
            // CurrentLevel's range is MinLevel...MaxLevel (1...254 for lights).
            try await level.moveToLevel(level: 255)
            Issue.record("the device accepted level 255")
        } catch {
            #expect(error.code == .invalidArgument, "\(error)")
        }
        await light.stop()
        do {
            try await onOff.on()
            Issue.record("a powered-off device answered")
        } catch {
            #expect(error.code == .unavailable || error.code == .deadlineExceeded, "\(error)")
        }
    }
}
