import MatterProtocol
import NIOConcurrencyHelpers
import RelayProtocol

/// When the answers awaited on one controller connection's exchanges are due, kept by one
/// sweeper task that sleeps until the earliest: a receive costs an entry in a table, not a
/// timer and a task of its own (at 5,000 commands/s those were about a tenth of the relay
/// bench's CPU; issue #42). A receive whose deadline comes before the sweeper's next wake (a
/// shorter timeout than those waiting) gets a timer of its own. A missed deadline closes the
/// exchange's mailbox with `RelayError.timeout`: whoever waits gives the exchange up.
final class RelayExchangeDeadlines: Sendable {
    private struct Waiting {
        var deadline: Duration
        var mailbox: Mailbox<IMEnvelope>
    }

    private struct State {
        var waiting: [ControllerLink.Key: Waiting] = [:]
        /// When the sweeper wakes next; nil while it waits for a first deadline or is not running.
        var wakes: Duration?
        var running = false
        var closed = false
    }

    let clock: any MatterClock
    private let spawn: @Sendable (@escaping RelayConnector.Job) -> Void
    // The lock guards the table; mailboxes are closed outside it.
    private let state = NIOLockedValueBox(State())
    private let signals: AsyncStream<Void>
    private let signalSink: AsyncStream<Void>.Continuation

    init(clock: any MatterClock, spawn: @escaping @Sendable (@escaping RelayConnector.Job) -> Void) {
        self.clock = clock
        self.spawn = spawn
        (signals, signalSink) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// An answer for `key` must be in `mailbox` by `deadline`.
    func expect(_ key: ControllerLink.Key, in mailbox: Mailbox<IMEnvelope>, by deadline: Duration) {
        enum Then { case nothing, start, signal, timer }
        let then = state.withLockedValue { s -> Then in
            // A closed connection closed its mailboxes already.
            guard !s.closed else { return .nothing }
            s.waiting[key] = Waiting(deadline: deadline, mailbox: mailbox)
            guard s.running else {
                s.running = true
                return .start
            }
            guard let wakes = s.wakes else { return .signal }
            return deadline < wakes ? .timer : .nothing
        }
        switch then {
        case .nothing: break
        case .start: spawn { await self.sweep() }
        case .signal: signalSink.yield()
        case .timer: _ = clock.schedule(at: deadline) { _ = self.expireDue(settingWakes: false) }
        }
    }

    /// The answer came (or the receive ended otherwise).
    func met(_ key: ControllerLink.Key) {
        _ = state.withLockedValue { $0.waiting.removeValue(forKey: key) }
    }

    /// The connection is gone: the sweeper stops at its next wake.
    func close() {
        state.withLockedValue {
            $0.closed = true
            $0.waiting = [:]
        }
        signalSink.finish()
    }

    /// Closes the mailboxes whose deadline passed; the next deadline, if any.
    @discardableResult
    private func expireDue(settingWakes: Bool) -> (next: Duration?, closed: Bool) {
        let now = clock.now
        let (expired, next, closed) = state.withLockedValue { s -> ([(ControllerLink.Key, Mailbox<IMEnvelope>)], Duration?, Bool) in
            guard !s.closed else { return ([], nil, true) }
            var expired: [(ControllerLink.Key, Mailbox<IMEnvelope>)] = []
            var next: Duration? = nil
            for (key, waiting) in s.waiting {
                if waiting.deadline <= now {
                    expired.append((key, waiting.mailbox))
                } else if next.map({ waiting.deadline < $0 }) ?? true {
                    next = waiting.deadline
                }
            }
            for (key, _) in expired { s.waiting[key] = nil }
            if settingWakes { s.wakes = next }
            return (expired, next, false)
        }
        for (key, mailbox) in expired { mailbox.close(.timeout("an answer from \(key.deviceID)")) }
        return (next, closed)
    }

    private func sweep() async {
        var signals = signals.makeAsyncIterator()
        while true {
            let (next, closed) = expireDue(settingWakes: true)
            if closed { return }
            if let next {
                do { try await clock.sleep(until: next) } catch { break }
            } else if await signals.next() == nil {
                break
            }
        }
        // Cancelled: a later receive starts another.
        state.withLockedValue {
            $0.running = false
            $0.wakes = nil
        }
    }
}
