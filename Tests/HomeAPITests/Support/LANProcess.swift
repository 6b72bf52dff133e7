import ChildProcess
import Foundation

#if canImport(Glibc)
import Glibc
#endif

// Child processes for the fake-LAN tests come from the shared ChildProcess test support;
// these are the names the HomeAPI tests use.

typealias LANCommandResult = CommandResult
typealias LANCommand = Command
typealias LANProcess = Subprocess
typealias LANPipeCollector = PipeCollector
typealias LANSpawnError = SpawnError

extension LANCommand {
    /// `run` on a thread of its own: the blocking wait must not hold one of the few threads
    /// of Swift's cooperative pool, which the in-process devices of other tests need.
    static func runOffPool(_ arguments: [String], timeout: TimeInterval = 60) async throws -> LANCommandResult {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try LANCommand.run(arguments, timeout: timeout) }) }.start()
        }
    }
}

extension LANProcess {
    /// `wait(timeout:)` on a thread of its own (see `LANCommand.runOffPool`).
    @discardableResult
    func waitOffPool(timeout: TimeInterval) async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.wait(timeout: timeout)) }.start()
        }
    }
}
