import NIOConcurrencyHelpers

/// A bounded queue with one receiver at a time, for the messages of one exchange.
/// `next()` honours task cancellation, so a deadline around it ends it.
package final class Mailbox<Element: Sendable>: Sendable {
    private struct State {
        var queue: [Element] = []
        var head = 0
        var waiter: (id: UInt64, continuation: CheckedContinuation<Element, any Error>)?
        var nextWaiterID: UInt64 = 0
        var closedWith: RelayError?

        var isEmpty: Bool { head >= queue.count }

        mutating func pop() -> Element? {
            guard head < queue.count else { return nil }
            let element = queue[head]
            head += 1
            if head > 32 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            return element
        }
    }

    // The lock guards every field; continuations are resumed outside it.
    private let state = NIOLockedValueBox(State())
    package let capacity: Int

    package init(capacity: Int = 64) {
        self.capacity = capacity
    }

    /// Delivers an element; false when the mailbox is closed or full.
    @discardableResult
    package func put(_ element: Element) -> Bool {
        let (waiter, accepted) = state.withLockedValue { s -> (CheckedContinuation<Element, any Error>?, Bool) in
            if s.closedWith != nil { return (nil, false) }
            if let w = s.waiter {
                s.waiter = nil
                return (w.continuation, true)
            }
            guard s.queue.count - s.head < capacity else { return (nil, false) }
            s.queue.append(element)
            return (nil, true)
        }
        waiter?.resume(returning: element)
        return accepted
    }

    /// Ends the mailbox: queued elements can still be taken, then `next()` throws `error`.
    package func close(_ error: RelayError) {
        let waiter = state.withLockedValue { s -> CheckedContinuation<Element, any Error>? in
            if s.closedWith == nil { s.closedWith = error }
            defer { s.waiter = nil }
            return s.waiter?.continuation
        }
        waiter?.resume(throwing: error)
    }

    package var isClosed: Bool { state.withLockedValue { $0.closedWith != nil } }

    /// The next element; throws the close reason, or CancellationError when cancelled.
    package func next() async throws -> Element {
        let id = state.withLockedValue { s -> UInt64 in
            s.nextWaiterID &+= 1
            return s.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element, any Error>) in
                let action = state.withLockedValue { s -> MailboxAction<Element> in
                    if let element = s.pop() { return .value(element) }
                    if let error = s.closedWith { return .fail(error) }
                    // Checked under the lock: the cancellation handler takes the same lock,
                    // so either it sees this waiter or this sees the cancellation.
                    if Task.isCancelled { return .fail(CancellationError()) }
                    if s.waiter != nil { return .fail(RelayError.invalidArgument("two receivers on one exchange")) }
                    s.waiter = (id, continuation)
                    return .wait
                }
                switch action {
                case .value(let element): continuation.resume(returning: element)
                case .fail(let error): continuation.resume(throwing: error)
                case .wait: break
                }
            }
        } onCancel: {
            let waiter = state.withLockedValue { s -> CheckedContinuation<Element, any Error>? in
                guard let w = s.waiter, w.id == id else { return nil }
                s.waiter = nil
                return w.continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

private enum MailboxAction<Element> {
    case value(Element)
    case fail(any Error)
    case wait
}

/// A value that tasks can wait to become present (the current relay link).
package final class AwaitableSlot<Value: Sendable>: Sendable {
    private struct State {
        var value: Value?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
        var nextID: UInt64 = 0
    }

    // The lock guards the value and the waiters; continuations are resumed outside it.
    private let state = NIOLockedValueBox(State())

    package init() {}

    package var value: Value? { state.withLockedValue { $0.value } }

    package func set(_ value: Value?) {
        let waiters = state.withLockedValue { s -> [CheckedContinuation<Value, any Error>] in
            s.value = value
            guard value != nil else { return [] }
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        if let value {
            for w in waiters { w.resume(returning: value) }
        }
    }

    /// Replaces the value only while it still is the expected one (by identity of the check).
    package func clear(if matches: (Value) -> Bool) {
        state.withLockedValue { s in
            if let v = s.value, matches(v) { s.value = nil }
        }
    }

    /// The value, waiting for one while absent; cancellable.
    package func wait() async throws -> Value {
        if let v = value { return v }
        let id = state.withLockedValue { s -> UInt64 in
            s.nextID &+= 1
            return s.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let ready = state.withLockedValue { s -> Result<Value, any Error>? in
                    if let v = s.value { return .success(v) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    s.waiters[id] = continuation
                    return nil
                }
                if let ready { continuation.resume(with: ready) }
            }
        } onCancel: {
            let w = state.withLockedValue { $0.waiters.removeValue(forKey: id) }
            w?.resume(throwing: CancellationError())
        }
    }
}

/// One IM message as an exchange carries it.
package struct IMEnvelope: Sendable, Hashable {
    package var opcode: UInt8
    package var payload: [UInt8]

    package init(opcode: UInt8, payload: [UInt8]) {
        self.opcode = opcode
        self.payload = payload
    }
}
