import Foundation
import Synchronization
import Testing
@testable import matter_sim

#if canImport(Glibc)
import Glibc
#endif

/// A signal that arrives as soon as the watcher exists is handled, never lost: a node sent
/// SIGINT right after it started kept running (scripts/durability.sh waited 20 minutes).
@Suite(.serialized) struct SignalWatcherTests {
    @Test func aSignalRightAfterTheWatcherIsMadeReachesItsHandler() async throws {
        for round in 1...20 {
            let seen = Mutex(0)
            let watcher = SignalWatcher(signals: [SIGUSR2]) { _, _ in seen.withLock { $0 += 1 } }
            kill(getpid(), SIGUSR2)
            // real time: watchdog: a lost signal fails the round instead of waiting for ever.
            let deadline = ContinuousClock.now + .seconds(2)
            while seen.withLock({ $0 }) == 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            watcher.stop()
            #expect(seen.withLock { $0 } == 1, "round \(round): the signal was lost")
        }
    }
}
