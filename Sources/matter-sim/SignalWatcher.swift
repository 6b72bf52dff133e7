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
            // The default action would kill the process before the source sees the signal.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                let seen = count.withLock { value in
                    value += 1
                    return value
                }
                handler(number, seen)
            }
            source.resume()
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
