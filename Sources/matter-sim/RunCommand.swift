// `matter-sim run PROFILE`: one device profile as a real Matter node on UDP, advertised
// over mDNS through Avahi, until SIGINT or SIGTERM.
import ArgumentParser
import DeviceProfile
import Foundation
import Logging
import MatterCrypto
import MatterDevice
import MatterModel
import MatterProtocol

struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run a device profile as a Matter node that controllers can commission and control.",
        discussion: """
            The node listens on UDP (default port 5540), advertises itself as commissionable
            (_matterc._udp) through the Avahi daemon while it is on no fabric, and keeps its
            fabrics, ACL and non-volatile attributes in a state directory, so a restarted
            node is still commissioned. SIGINT or SIGTERM shut it down cleanly.
            """)

    @Argument(help: ArgumentHelp("A device profile (YAML), or a home with --home-device.", valueName: "profile"))
    var profile: String

    @Option(
        help: ArgumentHelp(
            "Run device INDEX (from 0, in file order) of the home file given as the profile, with the home's overrides.",
            discussion: "What `home --process-per-device` starts for each device.", valueName: "index"))
    var homeDevice: Int?

    @Option(
        help: ArgumentHelp(
            "Stop at once, as at a power cut, when the process PID (the home that started this node) is gone.",
            visibility: .hidden))
    var exitWithParent: Int32?

    @Option(
        help: ArgumentHelp(
            "Take the first advertisement's slot from FILE, shared with the other processes of the home (what `home --process-per-device` passes).",
            visibility: .hidden))
    var announcementSlots: String?

    @Option(help: "Setup passcode (overrides the profile's).")
    var passcode: UInt32?

    @Option(help: "Long discriminator, 0...4095 (overrides the profile's).")
    var discriminator: UInt16?

    @Option(help: "UDP port; 0 picks a free one.")
    var port: Int = 5540

    @Option(
        help: ArgumentHelp(
            "Seconds the commissioning window opened at boot stays open, 180...86400; 0 keeps it open until commissioned.",
            discussion:
                "Default 900, the longest announcement the Matter spec allows (Core 5.4.2.4). `matter-sim fault power-off` then `power-on` opens it again.",
            valueName: "seconds"))
    var commissioningWindow: Int = 900

    @Option(
        help: ArgumentHelp(
            "Where the node keeps its state.",
            discussion: "Default: .matter-sim/<serial number> under $INTEROP_DEVICE_DIR, else the current directory.",
            valueName: "dir"))
    var stateDir: String?

    @Option(
        help: ArgumentHelp(
            "A directory with the PAA and CD signing certificates and keys to mint the device's attestation under.",
            discussion:
                "Files: Chip-Test-PAA-NoVID-Cert.pem, Chip-Test-PAA-NoVID-Key.pem, Chip-Test-CD-Signing-Cert.pem, Chip-Test-CD-Signing-Key.pem. Default: the published Matter test credentials built into matter-sim (test only).",
            valueName: "dir"))
    var attestationDir: String?

    @OptionGroup(title: "Cloud relay")
    var cloud: CloudOptions

    @Option(
        name: .customLong("relay-credential-file"),
        help: ArgumentHelp(
            "A file holding the device credential from `matter-relay device add` (else $\(Self.credentialVariable); overrides the profile's cloud.credential).",
            valueName: "file"),
        transform: CommandLineSecrets.read(file:))
    var relayCredentialFile: String?

    @Option(
        name: .customLong("relay-credential"),
        help: ArgumentHelp(
            "The device credential on the command line, where `ps` shows it: use --relay-credential-file or $\(Self.credentialVariable).",
            valueName: "credential"))
    var relayCredentialArgument: String?

    static let credentialVariable = "MATTER_RELAY_CREDENTIAL"

    /// The device credential: an option's, else the environment's.
    var relayCredential: String? {
        relayCredentialArgument ?? relayCredentialFile ?? CommandLineSecrets.environment(Self.credentialVariable)
    }

    @Option(
        help: ArgumentHelp(
            "The control socket `matter-sim fault` talks to.", discussion: "Default: control.sock in the state directory.",
            valueName: "path"))
    var control: String?

    @Option(
        help: ArgumentHelp(
            "Enable General Diagnostics' test event triggers with this 16-byte key, in hex (32 digits).",
            discussion:
                "For certification runs (scripts/cert.sh): a trigger then does what an operator would at the device (an alarm, a leak). A shipped device has none.",
            valueName: "hex"))
    var testEventKey: String?

    /// --test-event-key as bytes (validate() has checked it).
    var testEventTriggerKey: [UInt8]? {
        guard let testEventKey else { return nil }
        let digits = Array(testEventKey.utf8)
        return stride(from: 0, to: digits.count, by: 2).compactMap { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16) }
    }

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    @Flag(
        name: .customLong("trace"),
        help: ArgumentHelp(
            "Log each commissioning's phases (PBKDFParamRequest, PASE, each command, the operational record, Sigma1, CommissioningComplete) with milliseconds since it began, and each served request's service time (datagram in to response out)."
        ))
    var traceCommissioning = false

    func validate() throws {
        if relayCredentialArgument != nil, relayCredentialFile != nil {
            throw ValidationError("--relay-credential and --relay-credential-file: give the credential once (the file)")
        }
        if let passcode, !OnboardingPayload.isValidPasscode(passcode) {
            throw ValidationError(
                "--passcode \(passcode) is not a valid setup passcode (1...99999998, not a trivial one such as 11111111 or 12345678).")
        }
        if let discriminator, discriminator > 0xFFF {
            throw ValidationError("--discriminator \(discriminator) does not fit 12 bits (0...4095).")
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port \(port) is not a UDP port.") }
        guard commissioningWindow == 0 || (180...86400).contains(commissioningWindow) else {
            throw ValidationError("--commissioning-window \(commissioningWindow): use 0 (until commissioned) or 180...86400 seconds.")
        }
        if let testEventKey, testEventKey.count != 32 || !testEventKey.allSatisfy(\.isHexDigit) {
            throw ValidationError("--test-event-key: 16 bytes in hex (32 digits 0-9, a-f), not '\(testEventKey)'")
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level \(logLevel): use trace, debug, info, notice, warning, error or critical.")
        }
    }

    func run() async throws {
        bootstrapLogging(Logger.Level(rawValue: logLevel) ?? .info)
        let logger = Logger(label: "matter-sim")
        if let exitWithParent { followParent(exitWithParent) }

        let loader = ProfileLoader()
        let device: ResolvedDeviceProfile
        do {
            device = try Self.device(profile: profile, homeDevice: homeDevice, homeGaveDiscriminator: discriminator != nil, loader: loader)
        } catch let error as ProfileErrors {
            for diagnostic in error.diagnostics { printError(diagnostic.description) }
            printError("\(profile): cannot run: \(error.diagnostics.count) error\(error.diagnostics.count == 1 ? "" : "s")")
            throw ExitCode(1)
        }
        var options = NodeLaunchOptions(
            passcode: passcode, discriminator: discriminator, port: port,
            stateDir: stateDir, authority: try NodeLaunch.authority(attestationDir),
            commissioningWindow: commissioningWindow == 0 ? nil : .seconds(commissioningWindow),
            traceCommissioning: traceCommissioning, testEventTriggerKey: testEventTriggerKey)
        // `home --process-per-device`: the nodes' first advertisements go out one slot apart,
        // as in one process, from slots the home's processes share.
        options.homeIndex = homeDevice
        options.announcementSlots = announcementSlots
        let launch = try NodeLaunch(device: device, model: loader.model, command: options, logger: logger)
        let server: NodeServer
        do {
            server = try await NodeServer(
                node: launch.node, configuration: launch.serverConfiguration,
                logger: Logger(label: "matter.node"))
        } catch {
            printError("cannot listen on UDP port \(port): \(error)")
            await launch.node.stop()
            throw ExitCode(1)
        }
        printOut(launch.summary(port: server.port))
        // What the state directory held: a node that lost power mid-commissioning comes back
        // either on the fabric or with none (the fail-safe's rule), and says which.
        let fabrics = await launch.node.fabrics
        printOut(
            "  fabrics:       "
                + (fabrics.isEmpty
                    ? "none (commissionable)"
                    : fabrics.map {
                        "\($0.index) (fabric ID 0x\(String($0.fabricID, radix: 16, uppercase: true)), node ID 0x\(String($0.nodeID, radix: 16, uppercase: true)))"
                    }
                    .joined(separator: ", ")))

        try await Simulator.serve(
            [LaunchedNode(name: device.name, launch: launch, server: server)], cloud: cloud, credential: relayCredential,
            controlPath: control ?? NodeControlServer.defaultPath(in: launch.stateDirectory.path), controlRequired: control != nil,
            logger: logger)
        printOut("\(device.name): stopped")
    }
}

extension RunCommand {
    /// The device a process runs: a device profile, or device `homeDevice` of a home. Given
    /// the home's discriminator (`home --process-per-device` passes the spread one), only that
    /// device is resolved: resolving the whole home in each of its 28 processes was most of
    /// their start-up after a power cut (#43). Without it (run by hand), the whole home, so the
    /// node has the discriminator the home gives it.
    static func device(profile: String, homeDevice: Int?, homeGaveDiscriminator: Bool, loader: ProfileLoader) throws -> ResolvedDeviceProfile {
        guard let homeDevice else { return try loader.loadDevice(file: profile) }
        if homeGaveDiscriminator { return try loader.loadHomeDevice(file: profile, index: homeDevice).profile }
        let devices = try loader.loadHome(file: profile).allDevices
        guard devices.indices.contains(homeDevice) else {
            printError("--home-device \(homeDevice): \(profile) has \(devices.count) devices (0...\(devices.count - 1))")
            throw ExitCode(1)
        }
        return devices[homeDevice].profile
    }
}

/// Writes a line to standard output at once (unbuffered), so a log file shows it even
/// while the node keeps running.
func printOut(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
}

/// A node of `home --process-per-device` lives in a process group of its own (Ctrl-C reaches
/// only the home), so a SIGKILL of the home (a power cut, `kill -9`) would leave it running
/// as an orphan. It watches its parent and, once reparented, ends at once without a clean
/// shutdown, as the home did.
private func followParent(_ parent: Int32) {
    let watcher = Thread {
        while getppid() == parent { usleep(100_000) }
        _exit(137)
    }
    watcher.start()
}
