// `matter-sim home --process-per-device`: each device of the home as its own
// `matter-sim run HOME --home-device N` child, on the port, with the setup code and state
// directory the in-process mode gives it (both read them from HomeLaunchPlan), so a
// controller cannot tell the two modes apart.
import ArgumentParser
import DeviceProfile
import Dispatch
import Foundation
import MatterDevice
import MatterProtocol
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

struct DeviceProcessLauncher {
    let homeFile: String
    let home: ResolvedHome
    let plan: [HomeNodePlan]
    let stateRoot: String
    let attestationDir: String?
    /// The relay settings of the command line, handed to every child.
    let cloud: CloudOptions
    let logLevel: String
    /// How long a child may take to print its summary (it is listening by then).
    static let startTimeout: Duration = .seconds(60)
    /// How long a child may take to withdraw its records and stop after SIGTERM.
    static let stopTimeout: Duration = .seconds(15)

    func run(table: ([(ResolvedHomeDevice, String, Int)], ResolvedHome) -> String) async throws {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var children: [DeviceProcess] = []
        let stopping = StopRequest()
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM]) { _, count in
            // The first signal stops every child cleanly; a second one leaves at once.
            if count == 1 { stopping.request() } else { Foundation.exit(1) }
        }
        defer { signals.stop() }

        for node in plan {
            let arguments = arguments(for: node, executable: executable)
            // The token goes in the child's environment: its command line is visible in `ps`.
            let environment = cloud.homeToken.map { [CloudOptions.homeTokenVariable: $0] } ?? [:]
            // Each child has its own control socket, in its state directory (`matter-sim fault --control`).
            do {
                let child = try DeviceProcess(arguments, environment: environment)
                children.append(child)
                printOut("[\(node.index + 1)/\(plan.count)] starting \(node.device.name) (pid \(child.pid))")
            } catch {
                printError("\(node.device.name): cannot start \(executable): \(error)")
                await stopAll(children)
                throw ExitCode(1)
            }
        }
        // Ready once each has printed its summary; any that exits first fails the home.
        // real time: external: the device's child process.
        let deadline = ContinuousClock.now + Self.startTimeout
        var ready = 0
        for (node, child) in zip(plan, children) {
            while !child.isReady {
                if let status = child.exitStatus {
                    printError("\(node.device.name): `matter-sim run` exited with status \(status) before it was listening")
                    await stopAll(children)
                    throw ExitCode(1)
                }
                if ContinuousClock.now > deadline || stopping.isRequested {
                    if !stopping.isRequested { printError("\(node.device.name): not listening after \(Self.startTimeout)") }
                    await stopAll(children)
                    throw ExitCode(1)
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
            ready += 1
            printOut("[\(ready)/\(plan.count)] \(node.device.name) listening on UDP port \(node.port)")
        }
        printOut(table(plan.map { ($0.device, Self.manualCode($0), $0.port) }, home))

        // Until a signal, or until every child has gone on its own.
        var reported: Set<Int> = []
        while !stopping.isRequested {
            for (node, child) in zip(plan, children) where !reported.contains(node.index) {
                if let status = child.exitStatus {
                    printError("\(node.device.name) (pid \(child.pid)) exited with status \(status)")
                    reported.insert(node.index)
                }
            }
            if reported.count == children.count { break }
            try? await Task.sleep(for: .milliseconds(100))
        }
        await stopAll(children)
        printOut("\(home.name): \(children.count) device processes stopped")
    }

    /// The command line of `node`'s child: `matter-sim run HOME --home-device N` with the
    /// port, state directory and discriminator the in-process mode gives it. Handed the
    /// home's spread discriminator, the child resolves only its own device (#43).
    func arguments(for node: HomeNodePlan, executable: String) -> [String] {
        var arguments = [
            executable, "run", homeFile, "--home-device", String(node.index), "--exit-with-parent", String(getpid()),
            "--port", String(node.port), "--discriminator", String(node.discriminator),
            "--state-dir", URL(fileURLWithPath: stateRoot).appendingPathComponent(node.stateDirectoryName).path,
            "--log-level", logLevel,
            // One slot at a time across the children (`AnnouncementSlots`): each paced from its
            // own start, two that started apart under load registered together.
            "--announcement-slots", URL(fileURLWithPath: stateRoot).appendingPathComponent(AnnouncementSlots.fileName).path,
        ]
        if let attestationDir { arguments += ["--attestation-dir", attestationDir] }
        if let relay = cloud.relay { arguments += ["--relay", relay] }
        return arguments
    }

    static func manualCode(_ node: HomeNodePlan) -> String {
        let payload = OnboardingPayload(
            vendorID: node.vendorID, productID: node.productID,
            discriminator: node.discriminator, passcode: node.passcode)
        return (try? payload.manualPairingCode()).map(OnboardingPayload.grouped) ?? "(invalid passcode)"
    }

    /// SIGTERM to every child (each withdraws its records), then SIGKILL to any still
    /// running after `stopTimeout`.
    private func stopAll(_ children: [DeviceProcess]) async {
        await DeviceProcess.stop(children, within: Self.stopTimeout)
    }
}

final class StopRequest: Sendable {
    private let flag = Atomic(false)
    func request() { flag.store(true, ordering: .releasing) }
    var isRequested: Bool { flag.load(ordering: .acquiring) }
}

/// One child (`matter-sim run`, or the `matter-relay serve` of `--start-relay`): its own
/// process group (a terminal's Ctrl-C reaches only the parent, which stops each child once),
/// signals at their defaults, stderr shared with the parent, stdout read until `readyMarker`
/// (by default the last line of `run`'s summary) marks it listening; with `forwardOutput`
/// its stdout is copied to ours.
final class DeviceProcess: Sendable {
    let pid: pid_t
    private let ready = Atomic(false)
    private let status = Mutex<Int32?>(nil)

    /// `environment` is added to this process's (replacing variables of the same name).
    init(
        _ arguments: [String], environment: [String: String] = [:], readyMarker: String = "\n  state:", forwardOutput: Bool = false
    ) throws {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw POSIXFailure(call: "pipe", code: errno) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var variables = ProcessInfo.processInfo.environment
        variables.merge(environment) { _, given in given }
        let envp: [UnsafeMutablePointer<CChar>?] = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, &attributes, argv, envp)
        close(fds[1])
        guard result == 0 else {
            close(fds[0])
            throw POSIXFailure(call: "posix_spawn", code: result)
        }
        pid = child
        let childPID = child
        let readFD = fds[0]
        // Reads stdout to EOF (the child's exit), then reaps the child.
        Thread { [self] in
            var pending = ""
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let n = read(readFD, &buffer, buffer.count)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { break }
                if forwardOutput { FileHandle.standardOutput.write(Data(buffer[0..<n])) }
                guard !ready.load(ordering: .acquiring) else { continue }
                pending += String(decoding: buffer[0..<n], as: UTF8.self)
                if pending.contains(readyMarker) { ready.store(true, ordering: .releasing) }
            }
            close(readFD)
            var raw: Int32 = 0
            while waitpid(childPID, &raw, 0) < 0 && errno == EINTR {}
            let signal = raw & 0x7F
            status.withLock { $0 = signal == 0 ? (raw >> 8) & 0xFF : 128 + signal }
        }.start()
    }

    /// SIGTERM to each of `processes` still running, then SIGKILL to any still running
    /// after `timeout`; returns once all have been reaped.
    static func stop(_ processes: [DeviceProcess], within timeout: Duration) async {
        for process in processes where process.exitStatus == nil { kill(process.pid, SIGTERM) }
        // real time: external: the devices' child processes.
        let deadline = ContinuousClock.now + timeout
        while processes.contains(where: { $0.exitStatus == nil }), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        for process in processes where process.exitStatus == nil {
            printError("pid \(process.pid) did not stop within \(timeout); killing it")
            kill(process.pid, SIGKILL)
        }
        for process in processes { process.waitForExit() }
    }

    var isReady: Bool { ready.load(ordering: .acquiring) }
    var exitStatus: Int32? { status.withLock { $0 } }

    /// Blocks until the reaper has recorded the exit (bounded: only after SIGKILL or exit).
    func waitForExit() {
        for _ in 0..<500 where exitStatus == nil { usleep(10_000) }
    }
}

struct POSIXFailure: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}
