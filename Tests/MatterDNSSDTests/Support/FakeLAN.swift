import ChildProcess
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Drives scripts/fakelan.sh and the dnssd-probe helper for the tests that need a real
/// Avahi daemon. Those tests run in the host namespace, which has no Avahi daemon (and must
/// not get one), so every DNS-SD operation happens in a probe process started on a host of
/// a private fake LAN, and the tests read the JSON lines it prints.
enum FakeLANEnvironment {
    static let isRoot = getuid() == 0

    /// The package root, found from this file's path (Tests/MatterDNSSDTests/Support/).
    static let packageRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let script = packageRoot.appendingPathComponent("scripts/fakelan.sh").path

    /// `$DNSSD_PROBE`, else the dnssd-probe built next to this test binary.
    static let probe: String = {
        if let path = ProcessInfo.processInfo.environment["DNSSD_PROBE"], !path.isEmpty { return path }
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("dnssd-probe").path
    }()

    private static let counter = Mutex(0)

    /// fl<pid><n> in base 36: unique per test process and LAN, short enough for names.
    static func uniqueName() -> String {
        let n = counter.withLock { value -> Int in
            value += 1
            return value
        }
        return "fl" + String(getpid(), radix: 36) + "x" + String(n, radix: 36)
    }

    /// LANs left by test processes that died (their owner is gone) are removed once.
    static let staleRemoved: Bool = {
        _ = try? Command.run([script, "cleanup", "--stale"])
        return true
    }()
}

/// One JSON line printed by dnssd-probe.
struct ProbeLine: Decodable, Sendable, CustomStringConvertible {
    struct Address: Decodable, Sendable, Hashable {
        var ip: String
        var interface: Int
        var family: Int
    }

    struct Registration: Decodable, Sendable {
        var index: Int
        var name: String
        var established: Bool
    }

    var event: String
    var t: Int?
    var ms: Int?
    var name: String?
    var index: Int?
    var count: Int?
    var port: Int?
    var host: String?
    var type: String?
    var txt: [String: String]?
    var subtypes: [String]?
    var addresses: [Address]?
    var registrations: [Registration]?
    var established: Bool?
    var message: String?
    var raw: String = ""

    enum CodingKeys: String, CodingKey {
        case event, t, ms, name, index, count, port, host, type, txt, subtypes, addresses, registrations, established, message
    }

    var description: String { raw }
}

struct ProbeTimeout: Error, CustomStringConvertible {
    var description: String
}

/// A dnssd-probe process running on a host of a fake LAN.
final class ProbeProcess: @unchecked Sendable {
    let label: String
    private let child: Subprocess
    private var stdoutReader: PipeCollector?
    private var stderrReader: PipeCollector?
    // Guarded by `lock`.
    private var lines: [ProbeLine] = []
    private let lock = NSLock()

    init(label: String, arguments: [String]) throws {
        self.label = label
        child = try Subprocess(arguments)
        stdoutReader = PipeCollector(child.output) { [weak self] line in self?.append(line) }
        stderrReader = PipeCollector(child.errors)
    }

    deinit {
        stop()
    }

    private func append(_ text: String) {
        guard var line = try? JSONDecoder().decode(ProbeLine.self, from: Data(text.utf8)) else { return }
        line.raw = text
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var allLines: [ProbeLine] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    var isRunning: Bool { child.isRunning }

    var pid: Int32 { child.pid }

    var errors: String { stderrReader?.text ?? "" }

    /// Sends one command line to the probe's stdin.
    func send(_ command: String) {
        child.write(command + "\n")
    }

    /// The first line at or after `start` that satisfies `predicate`, waiting up to `timeout`.
    @discardableResult
    func waitFor(
        _ what: String, from start: Int = 0, timeout: Duration = .seconds(20),
        where predicate: (ProbeLine) -> Bool
    ) async throws -> (index: Int, line: ProbeLine) {
        // real time: external: processes in the fake LAN's namespaces.
        let deadline = ContinuousClock.now + timeout
        var exitedChecks = 0
        while true {
            let snapshot = allLines
            if start < snapshot.count {
                for index in start..<snapshot.count where predicate(snapshot[index]) {
                    return (index, snapshot[index])
                }
            }
            // Once exited, give the reader a moment to drain the pipe, then give up.
            if !child.isRunning { exitedChecks += 1 }
            guard ContinuousClock.now < deadline, exitedChecks < 5 else {
                let why = child.isRunning ? "no \(what) within \(timeout)" : "exited (\(child.exitStatus ?? -1)) without \(what)"
                throw ProbeTimeout(
                    description: """
                        \(label): \(why)
                        stdout:
                        \(snapshot.map(\.raw).joined(separator: "\n"))
                        stderr:
                        \(errors.suffix(3000))
                        """)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Waits (bounded) for the process to exit by itself.
    func waitForExit(timeout: Duration = .seconds(60)) async throws -> Int32 {
        // real time: external: the process in the fake LAN.
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = child.exitStatus {
                _ = stdoutReader?.finish()
                return status
            }
            guard ContinuousClock.now < deadline else { throw ProbeTimeout(description: "\(label) did not exit") }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Closes stdin (publishers then withdraw and exit), then terminates if needed.
    func stop() {
        child.closeInput()
        child.wait(timeout: 3)
    }

    /// SIGTERM to the process itself.
    func terminate() {
        kill(child.pid, SIGTERM)
    }
}

/// One fake LAN, torn down by `down()` (call it in a `defer`).
final class FakeLAN {
    let name: String
    private var isDown = false
    /// The LAN's namespaces while it was up (see `leftovers`).
    private(set) var namespaces: Set<UInt64> = []

    /// `objectsPerClient`: hosts whose daemon allows each D-Bus client only that many
    /// objects (browsers, resolvers, entry groups; fakelan's FAKELAN_AVAHI_OBJECTS_MAX).
    init(hosts: [String], avahi: [String], objectsPerClient: [String: Int] = [:]) throws {
        _ = FakeLANEnvironment.staleRemoved
        name = FakeLANEnvironment.uniqueName()
        let up = try Command.run([FakeLANEnvironment.script, "up", name] + hosts)
        guard up.status == 0 else {
            down()
            throw ProbeTimeout(description: "fakelan up failed: \(up.errors)")
        }
        namespaces = FakeLAN.namespaceInodes(of: name)
        let plain = avahi.filter { objectsPerClient[$0] == nil }
        var starts: [(hosts: [String], environment: [String: String])] = plain.isEmpty ? [] : [(plain, [:])]
        for host in avahi {
            guard let objects = objectsPerClient[host] else { continue }
            starts.append(([host], ["FAKELAN_AVAHI_OBJECTS_MAX": String(objects)]))
        }
        for start in starts {
            let started = try Command.run(
                [FakeLANEnvironment.script, "avahi", name] + start.hosts, environment: start.environment)
            guard started.status == 0 else {
                down()
                throw ProbeTimeout(description: "fakelan avahi failed: \(started.errors)")
            }
        }
    }

    deinit {
        down()
    }

    /// Starts dnssd-probe with `arguments` on `host`.
    func probe(on host: String, _ arguments: [String]) throws -> ProbeProcess {
        try ProbeProcess(
            label: "dnssd-probe \(arguments.first ?? "") on \(host)",
            arguments: [FakeLANEnvironment.script, "exec", name, host, "--", FakeLANEnvironment.probe] + arguments)
    }

    /// Runs a command on `host` to completion.
    @discardableResult
    func run(on host: String, _ arguments: [String], timeout: TimeInterval = 30) throws -> CommandResult {
        try Command.run([FakeLANEnvironment.script, "exec", name, host, "--"] + arguments, timeout: timeout)
    }

    @discardableResult
    func fakelan(_ arguments: [String]) throws -> CommandResult {
        try Command.run([FakeLANEnvironment.script] + arguments)
    }

    func down() {
        guard !isDown else { return }
        isDown = true
        _ = try? Command.run([FakeLANEnvironment.script, "down", name])
    }

    /// Anything of this LAN still on the machine: namespaces, state, links, processes.
    func leftovers() -> [String] {
        FakeLAN.leftovers(of: name, namespaces: namespaces)
    }

    /// The network namespaces (nsfs inode numbers) of LAN `name` that exist now.
    static func namespaceInodes(of name: String) -> Set<UInt64> {
        var inodes: Set<UInt64> = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/run/netns")) ?? []
        where entry.hasPrefix(name + "-") {
            var info = stat()
            if stat("/run/netns/\(entry)", &info) == 0 { inodes.insert(UInt64(info.st_ino)) }
        }
        return inodes
    }

    /// Leftovers of LAN `name`; `namespaces` are its namespaces' inodes, recorded while it
    /// existed, so that a process still holding a deleted namespace is found too.
    static func leftovers(of name: String, namespaces: Set<UInt64>) -> [String] {
        var found: [String] = []
        let netnsList = (try? Command.run(["/usr/sbin/ip", "netns", "list"]).output) ?? ""
        for line in netnsList.split(separator: "\n") where line.hasPrefix(name + "-") {
            found.append("namespace \(line)")
        }
        let links = (try? Command.run(["/usr/sbin/ip", "-o", "link", "show"]).output) ?? ""
        for line in links.split(separator: "\n") where line.contains(name) {
            found.append("link \(line)")
        }
        if FileManager.default.fileExists(atPath: "/run/fakelan/\(name)") {
            found.append("state /run/fakelan/\(name)")
        }
        // A process is left over when it is in one of the LAN's network namespaces, or when
        // it names the LAN (`avahi-daemon: running [<lan>-a.local]`, `fakelan.sh ... <lan>`).
        let me = getpid()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != me else { continue }
            var info = stat()
            let inNamespace = stat("/proc/\(entry)/ns/net", &info) == 0 && namespaces.contains(UInt64(info.st_ino))
            let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") ?? Data()
            let commandLine = String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
            let named =
                commandLine.contains(name + "-") || commandLine.contains(" \(name) ")
                || commandLine.hasSuffix(" \(name)")
            if inNamespace || (named && !data.isEmpty) {
                found.append("process \(pid): \(commandLine)")
            }
        }
        return found
    }
}
