import Foundation
import Synchronization

/// Cleanups that a test starts from `defer` (which cannot await): a device stopped, a home
/// closed. Each still runs after the test returns, so the test process must not exit before it
/// ends: a NIO loop or an Avahi client torn down while exit() runs the static destructors
/// crashed a process after every one of its tests had passed (seen when such a test was the
/// last of its process). The first cleanup registers an exit hook that waits for them all.
package enum PendingCleanups {
    private static let running = Mutex((count: 0, hooked: false))

    /// Runs `body` in a task of its own; the process waits for it at exit.
    package static func run(_ body: sending @escaping () async -> Void) {
        let firstUse = running.withLock { state -> Bool in
            state.count += 1
            defer { state.hooked = true }
            return !state.hooked
        }
        if firstUse { atexit { PendingCleanups.drain() } }
        Task {
            await body()
            running.withLock { $0.count -= 1 }
        }
    }

    /// Blocks the exiting thread (the cleanups run on the cooperative pool's other threads)
    /// until every cleanup ended, or 30 s passed: a bound on a broken run, never a pace.
    private static func drain() {
        var waited = 0
        while running.withLock({ $0.count }) > 0, waited < 3_000 {
            usleep(10_000)
            waited += 1
        }
    }
}
