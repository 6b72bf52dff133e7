import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Child processes for tests that drive scripts/fakelan.sh and helper binaries: posix_spawn
// with every signal unblocked (the test runner blocks them, and a child would inherit
// that), pipes no other child inherits, bounded waits. Shared by the test targets.

public struct CommandResult {
    public var status: Int32
    public var output: String
    public var errors: String
}

public enum Command {
    /// Runs a command to completion (bounded by `timeout`), capturing stdout and stderr.
    @discardableResult
    public static func run(
        _ arguments: [String], environment: [String: String] = [:], timeout: TimeInterval = 60
    ) throws
        -> CommandResult
    {
        let child = try Subprocess(arguments, environment: environment)
        child.closeInput()
        let output = PipeCollector(child.output)
        let errors = PipeCollector(child.errors)
        let status = child.wait(timeout: timeout)
        return CommandResult(status: status, output: output.finish(), errors: errors.finish())
    }
}

public struct SpawnError: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

/// A child process started with posix_spawn, with every signal unblocked and at its default
/// disposition (the test runner's threads block most signals, and a child would inherit
/// that), and with pipes for stdin, stdout and stderr that no other child inherits.
public final class Subprocess: @unchecked Sendable {
    public let pid: pid_t
    public let output: FileHandle
    public let errors: FileHandle
    private let input: FileHandle
    // Guarded by `lock`.
    private var status: Int32?
    private let lock = NSLock()
    private static let spawnLock = NSLock()

    public init(_ arguments: [String], environment: [String: String] = [:]) throws {
        var env = ProcessInfo.processInfo.environment
        env["FAKELAN_OWNER"] = String(getpid())
        for (key, value) in environment { env[key] = value }

        // Pipes are made close-on-exec under one lock with the spawn, so that no child
        // started meanwhile by another test inherits (and keeps open) this one's pipes.
        Subprocess.spawnLock.lock()
        defer { Subprocess.spawnLock.unlock() }
        func makePipe() throws -> [Int32] {
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { throw SpawnError(description: "pipe: \(errno)") }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            return fds
        }
        let stdinPipe = try makePipe(), stdoutPipe = try makePipe(), stderrPipe = try makePipe()

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // dup2 clears close-on-exec on the copies; the originals close on exec.
        posix_spawn_file_actions_adddup2(&actions, stdinPipe[0], 0)
        posix_spawn_file_actions_adddup2(&actions, stdoutPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, stderrPipe[1], 2)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, arguments[0], &actions, &attributes, argv, envp)
        close(stdinPipe[0])
        close(stdoutPipe[1])
        close(stderrPipe[1])
        guard result == 0 else {
            close(stdinPipe[1])
            close(stdoutPipe[0])
            close(stderrPipe[0])
            throw SpawnError(description: "posix_spawn \(arguments[0]): \(result)")
        }
        pid = child
        input = FileHandle(fileDescriptor: stdinPipe[1], closeOnDealloc: true)
        output = FileHandle(fileDescriptor: stdoutPipe[0], closeOnDealloc: true)
        errors = FileHandle(fileDescriptor: stderrPipe[0], closeOnDealloc: true)
    }

    deinit {
        if exitStatus == nil {
            kill(pid, SIGKILL)
            _ = wait(timeout: 5)
        }
    }

    public func write(_ text: String) {
        try? input.write(contentsOf: Data(text.utf8))
    }

    public func closeInput() {
        try? input.close()
    }

    /// The exit status (128 + signal when killed by one), `nil` while running.
    public var exitStatus: Int32? {
        lock.lock()
        defer { lock.unlock() }
        if let status { return status }
        var raw: Int32 = 0
        guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
        let signal = raw & 0x7F
        status = signal == 0 ? (raw >> 8) & 0xFF : 128 + signal
        return status
    }

    public var isRunning: Bool { exitStatus == nil }

    /// Waits up to `timeout`, then SIGTERM, then SIGKILL; returns the exit status.
    @discardableResult
    public func wait(timeout: TimeInterval) -> Int32 {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status = exitStatus { return status }
            usleep(10_000)
        }
        kill(pid, SIGTERM)
        for _ in 0..<100 {
            if let status = exitStatus { return status }
            usleep(20_000)
        }
        kill(pid, SIGKILL)
        while true {
            if let status = exitStatus { return status }
            usleep(10_000)
        }
    }
}

/// Reads a pipe on a thread of its own until EOF.
public final class PipeCollector: @unchecked Sendable {
    // Guarded by `lock`.
    private var data = Data()
    private var done = false
    private let lock = NSCondition()
    private let onLine: (@Sendable (String) -> Void)?

    public init(_ handle: FileHandle, onLine: (@Sendable (String) -> Void)? = nil) {
        self.onLine = onLine
        let thread = Thread { [self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                lock.lock()
                data.append(chunk)
                lock.unlock()
                guard let onLine else { continue }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[pending.index(after: newline)...])
                    onLine(line)
                }
            }
            lock.lock()
            done = true
            lock.broadcast()
            lock.unlock()
        }
        thread.start()
    }

    public var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: data, as: UTF8.self)
    }

    /// Waits (bounded) for EOF and returns everything read.
    public func finish(timeout: TimeInterval = 10) -> String {
        lock.lock()
        let deadline = Date().addingTimeInterval(timeout)
        while !done && lock.wait(until: deadline) {}
        let result = String(decoding: data, as: UTF8.self)
        lock.unlock()
        return result
    }
}
