import Dispatch
import Logging
import Synchronization
import Testing

@testable import MatterDNSSD

/// The poll mutex rule for cancellation handlers, without a daemon (the mutex exists as soon
/// as the poll does): their work must not wait for the mutex, which the poll thread holds
/// while it resumes continuations (see `AvahiConnection`).
@Suite struct AvahiConnectionTests {
    /// A thread holding the connection's mutex until `release()`.
    final class Holder: Sendable {
        let held = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)

        init(_ connection: AvahiConnection) {
            // A plain thread (not a Swift task), as the poll thread is.
            DispatchQueue.global().async { [self] in
                try? connection.withLock { _ in
                    held.signal()
                    go.wait()
                }
            }
            held.wait()
        }

        func release() { go.signal() }
    }

    @Test func workForLaterDoesNotWaitForTheMutexAndRunsOnceItIsFreeInOrder() async throws {
        let connection = try AvahiConnection(logger: Logger(label: "test"))
        let ran = Mutex<[Int]>([])
        let holder = Holder(connection)
        let stillHeld = Mutex(true)
        // Each call returns while another thread holds the mutex.
        for n in 1...3 {
            connection.withLockSoon { _ in
                ran.withLock { $0.append(n) }
                #expect(!stillHeld.withLock { $0 }, "ran while the holder still had the mutex")
            }
        }
        #expect(ran.withLock { $0 }.isEmpty)
        stillHeld.withLock { $0 = false }
        holder.release()
        connection.waitForSoonWork()
        #expect(ran.withLock { $0 } == [1, 2, 3])
    }

    @Test func nothingRunsAfterShutdown() throws {
        let connection = try AvahiConnection(logger: Logger(label: "test"))
        connection.shutdown()
        let ran = Mutex(false)
        connection.withLockSoon { _ in ran.withLock { $0 = true } }
        connection.waitForSoonWork()
        #expect(!ran.withLock { $0 })
    }
}
