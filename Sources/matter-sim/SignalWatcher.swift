// Turns SIGINT/SIGTERM into a callback (on a queue of its own, not in a signal handler).
import Dispatch
import Foundation
import Synchronization

final class SignalWatcher: Sendable {
    // Dispatch sources are thread-safe; the mutex only guards the array's lifetime.
    private let sources: Mutex<[any DispatchSourceSignal]>

    /// Calls `handler` with the signal and how many signals have arrived so far.
    init(signals: [Int32], handler: @escaping @Sendable (Int32, Int) -> Void) {
        let queue = DispatchQueue(label: "matter-sim.signals")
        let count = Mutex(0)
        var made: [any DispatchSourceSignal] = []
        for number in signals {
            #if !os(Linux)
            // Darwin's kqueue sees an ignored signal; the default action would kill the process first.
            signal(number, SIG_IGN)
            #endif
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            // On Linux libdispatch installs its own handler once the source is registered, later
            // on its own thread. Ignoring the signal first, as on Darwin, lost one that came in
            // between: a node sent SIGINT right after it started kept running (durability.sh
            // waited 20 minutes). Until registered the default action applies; once `init`
            // returns, every signal reaches `handler`.
            let registered = DispatchSemaphore(value: 0)
            source.setRegistrationHandler { registered.signal() }
            source.setEventHandler {
                let seen = count.withLock { value in
                    value += 1
                    return value
                }
                handler(number, seen)
            }
            source.resume()
            _ = registered.wait(timeout: .now() + .seconds(2))
            made.append(source)
        }
        sources = Mutex(made)
    }

    func stop() {
        sources.withLock { all in
            for source in all { source.cancel() }
            all.removeAll()
        }
    }
}
