import Foundation
import Logging
import MatterProtocol
import NIOConcurrencyHelpers
import ServiceLifecycle

/// Tells every live connection that some credential stopped working, so each checks its own.
final class RevocationSignal: Sendable {
    // The lock guards the listeners; yielding never blocks.
    private let listeners = NIOLockedValueBox<[UUID: AsyncStream<Void>.Continuation]>([:])

    /// A stream that yields once per revocation, until its iterating task ends.
    func stream() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        listeners.withLockedValue { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.listeners.withLockedValue { _ = $0.removeValue(forKey: id) } }
        return stream
    }

    func fire() {
        for continuation in listeners.withLockedValue({ Array($0.values) }) { continuation.yield() }
    }
}

/// Polls the store's revocation counter, which `rotate-token`, `device remove` and a
/// re-issued credential bump also from another process (the CLI writes the same file).
struct RevocationWatch: Service {
    let store: RelayStore
    let signal: RevocationSignal
    let interval: Duration
    let clock: any MatterClock
    let logger: Logger

    func run() async throws {
        // Ends quietly on shutdown: an error here would cancel the relay's other services.
        try? await cancelWhenGracefulShutdown {
            var seen = try? await store.revocationCounter()
            while true {
                try await clock.sleep(until: clock.now + interval)
                guard let now = try? await store.revocationCounter() else { continue }
                if now != seen {
                    seen = now
                    logger.debug("credentials revoked; checking live connections")
                    signal.fire()
                }
            }
        }
    }
}
