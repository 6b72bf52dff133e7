// Everything `matter-sim run` decides before the node goes on the network: onboarding
// codes, the state directory, attestation credentials and the node itself.
import ArgumentParser
import DeviceProfile
import Foundation
import Logging
import MatterDevice
import MatterModel
import MatterProtocol

/// What the command line decides for one node.
struct NodeLaunchOptions {
    var passcode: UInt32?
    var discriminator: UInt16?
    var port: Int
    var stateDir: String?
    var authority: AttestationAuthority
    /// How long the boot commissioning window stays open; nil: until commissioned.
    var commissioningWindow: Duration? = NodeServerConfiguration.defaultBootWindowTimeout
    /// `--trace`: log each commissioning's phases with their times.
    var traceCommissioning = false
    /// `--test-event-key`: General Diagnostics' TestEventTrigger enable key (certification runs).
    var testEventTriggerKey: [UInt8]?
    /// The node's clock: real time, or a scenario's faster one (shared by the home's nodes).
    var clock: any MatterClock = SystemClock()
    /// Its place in a home (from 0): when its first advertisement goes out (`AnnouncementPacing`).
    var homeIndex: Int?
    /// `home --process-per-device`: the file whose slots the home's processes share
    /// (`AnnouncementSlots`), in place of `homeIndex`'s slot.
    var announcementSlots: String?
    /// `home --announce-rate`: the wait before the first advertisement, in place of `homeIndex`'s slot.
    var advertisementWait: Duration?
}

struct NodeLaunch {
    let device: ResolvedDeviceProfile
    let node: MatterNode
    let serverConfiguration: NodeServerConfiguration
    let stateDirectory: URL
    let passcode: UInt32
    let discriminator: UInt16

    init(device: ResolvedDeviceProfile, model: MatterModel, command: NodeLaunchOptions, logger: Logger) throws {
        self.device = device
        passcode = command.passcode ?? device.commissioning.passcode
        discriminator = command.discriminator ?? device.commissioning.discriminator
        stateDirectory = Self.stateDirectory(command.stateDir, serialNumber: device.identity.serialNumber)

        let store: NodeStateStore
        do {
            store = try NodeStateStore(directory: stateDirectory)
        } catch {
            printError("\(stateDirectory.path): cannot use as state directory: \(error)")
            throw ExitCode(1)
        }
        let authority = command.authority
        let deviceType = device.primaryDeviceType?.rawValue ?? DeviceTypes.rootNode.rawValue
        let commissioning: CommissioningConfiguration
        do {
            let attestation = try DeviceAttestationProvisioning.loadOrMint(
                store: store, vendorID: device.identity.vendorID, productID: device.identity.productID,
                deviceTypeID: deviceType, authority: authority)
            var configured = CommissioningConfiguration(stateStore: store, attestation: attestation)
            configured.testEventTriggerKey = command.testEventTriggerKey
            commissioning = configured
        } catch {
            printError("cannot provision attestation credentials: \(error)")
            throw ExitCode(1)
        }
        do {
            node = try MatterNode(
                description: device.nodeDescription(model: model), model: model, clock: command.clock,
                logger: Logger(label: "matter.node"), commissioning: commissioning)
        } catch {
            printError("\(device.source): cannot build the node: \(error)")
            throw ExitCode(1)
        }
        var configuration = NodeServerConfiguration(
            port: command.port, passcode: passcode, discriminator: discriminator,
            bootWindowTimeout: command.commissioningWindow,
            advertisement: NodeServerConfiguration.Advertisement(
                vendorID: device.identity.vendorID, productID: device.identity.productID, deviceType: deviceType,
                deviceName: device.name, hostSeed: device.identity.serialNumber),
            cloudOnlyClusters: Set(device.cloudOnlyClusters))
        configuration.traceCommissioning = command.traceCommissioning
        configuration.exchange.traceServiceTimes = command.traceCommissioning
        if let path = command.announcementSlots {
            configuration.announcementSlots = AnnouncementSlots(path: path)
        } else {
            configuration.advertisementSlot = command.advertisementWait ?? command.homeIndex.map(AnnouncementPacing.slot(ofNode:)) ?? .zero
        }
        serverConfiguration = configuration
    }

    /// `--attestation-dir`, else the published test authority built in (test only).
    static func authority(_ directory: String?) throws -> AttestationAuthority {
        guard let directory else { return .connectedhomeipTest }
        do {
            return try AttestationAuthority.load(fromDirectory: URL(fileURLWithPath: directory))
        } catch {
            printError("--attestation-dir \(directory): \(error)")
            throw ExitCode(1)
        }
    }

    /// `--state-dir`, else `.matter-sim/<serial number>` under $INTEROP_DEVICE_DIR or the
    /// current directory.
    static func stateDirectory(_ option: String?, serialNumber: String, base stateRoot: String? = nil) -> URL {
        if let option { return URL(fileURLWithPath: option, isDirectory: true) }
        let safeSerial = String(serialNumber.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
        if let stateRoot {
            return URL(fileURLWithPath: stateRoot, isDirectory: true)
                .appendingPathComponent(safeSerial.isEmpty ? "device" : safeSerial, isDirectory: true)
        }
        let base =
            ProcessInfo.processInfo.environment["INTEROP_DEVICE_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            ?? FileManager.default.currentDirectoryPath
        return URL(fileURLWithPath: base, isDirectory: true)
            .appendingPathComponent(".matter-sim", isDirectory: true)
            .appendingPathComponent(safeSerial.isEmpty ? "device" : safeSerial, isDirectory: true)
    }

    var onboardingPayload: OnboardingPayload {
        OnboardingPayload(
            vendorID: device.identity.vendorID, productID: device.identity.productID,
            discriminator: discriminator, passcode: passcode)
    }

    var manualCode: String {
        (try? onboardingPayload.manualPairingCode()).map(OnboardingPayload.grouped) ?? "(invalid passcode)"
    }

    func summary(port: Int) -> String {
        let manual = manualCode
        let qr = (try? onboardingPayload.qrCode()) ?? "(invalid passcode)"
        return """
            \(device.name)
              profile:       \(device.source)
              UDP port:      \(port)
              discriminator: \(discriminator)
              passcode:      \(passcode)
              manual code:   \(manual)
              QR payload:    \(qr)
              state:         \(stateDirectory.path)
            """
    }
}
