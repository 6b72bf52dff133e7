import NIOConcurrencyHelpers
import NIOCore

/// A connection's bounded queue of encoded frames, taken by its writer all at once (issue #42).
/// Under load frames pile up while the writer waits for its turn; taking them together lets it
/// hand them to the socket in one write and one flush, where one each cost a wakeup of the
/// reader and a pass through the kernel's TCP stack per frame.
package final class RelayFrameQueue: Sendable {
    private struct State {
        var frames: [ByteBuffer] = []
        var waiter: CheckedContinuation<[ByteBuffer]?, Never>?
        var finished = false
    }

    package let capacity: Int
    // The lock guards the state; the waiter is resumed outside it.
    private let state = NIOLockedValueBox(State())

    package init(capacity: Int) {
        self.capacity = capacity
    }

    /// Queues a frame; false when the queue holds `capacity` frames or is finished.
    package func push(_ frame: ByteBuffer) -> Bool {
        let (accepted, waiter) = state.withLockedValue { s -> (Bool, CheckedContinuation<[ByteBuffer]?, Never>?) in
            guard !s.finished, s.frames.count < capacity else { return (false, nil) }
            if let waiter = s.waiter {
                s.waiter = nil
                return (true, waiter)
            }
            s.frames.append(frame)
            return (true, nil)
        }
        waiter?.resume(returning: [frame])
        return accepted
    }

    /// Every frame queued, oldest first, waiting for one if there is none; nil once the queue is
    /// finished and empty, or when the waiting task is cancelled.
    package func next() async -> [ByteBuffer]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[ByteBuffer]?, Never>) in
                let taken = state.withLockedValue { s -> [ByteBuffer]?? in
                    if !s.frames.isEmpty {
                        defer { s.frames.removeAll(keepingCapacity: true) }
                        return .some(s.frames)
                    }
                    if s.finished || Task.isCancelled { return .some(nil) }
                    s.waiter = continuation
                    return .none
                }
                if let taken { continuation.resume(returning: taken) }
            }
        } onCancel: {
            let waiter = state.withLockedValue { s in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// No more frames: the writer takes what is queued, then gets nil.
    package func finish() {
        let waiter = state.withLockedValue { s in
            s.finished = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume(returning: nil)
    }
}
