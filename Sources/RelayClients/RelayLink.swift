import Foundation
import HummingbirdWSClient
import Logging
import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle
import RelayProtocol

/// Connection settings shared by the device and controller clients.
public struct RelayClientSettings: Sendable {
    /// Largest frame sent; the relay closes connections that exceed its own limit.
    public var maxFrameSize: Int = 64 * 1024
    /// Frames queued for sending before `send` reports the link overloaded.
    public var queueCapacity: Int = 1024
    /// How long after the upgrade the relay's hello may take.
    public var helloTimeout: Duration = .seconds(10)
    public var pingInterval: Duration = .seconds(30)
    /// First wait before reconnecting; doubles per failed attempt up to `maximumBackoff`.
    public var minimumBackoff: Duration = .milliseconds(200)
    public var maximumBackoff: Duration = .seconds(15)
    /// A connection that lasted this long resets the backoff.
    public var stableConnection: Duration = .seconds(10)
    /// The time source of the hello timeout and the reconnection backoff.
    public var clock: any MatterClock = SystemClock()

    public init() {}

    /// The wait before reconnect attempt `attempt` (0-based), with jitter so a
    /// fleet that lost the relay together does not come back in lockstep.
    func backoff(attempt: Int) -> Duration {
        let base = minimumBackoff * (1 << min(attempt, 20))
        let capped = base < maximumBackoff ? base : maximumBackoff
        return capped * Double.random(in: 0.5...1.0)
    }
}

/// One live connection to the relay, after its hello: sends frames through a
/// bounded queue drained by the connection's writer.
final class RelayLink: Sendable {
    let hello: RelayHello
    let maxFrameSize: Int
    private let sink: AsyncStream<ByteBuffer>.Continuation
    private let closed = NIOLockedValueBox(false)

    init(hello: RelayHello, maxFrameSize: Int, sink: AsyncStream<ByteBuffer>.Continuation) {
        self.hello = hello
        self.maxFrameSize = maxFrameSize
        self.sink = sink
    }

    var isOpen: Bool { !closed.withLockedValue { $0 } }

    func send(_ frame: RelayFrame) throws(RelayError) {
        let bytes = frame.encoded()
        guard bytes.count <= maxFrameSize else {
            throw .invalidArgument("frame of \(bytes.count) bytes exceeds the \(maxFrameSize)-byte limit")
        }
        switch sink.yield(ByteBuffer(bytes: bytes)) {
        case .enqueued: return
        case .dropped: throw .undeliverable(.overloaded)
        case .terminated: throw .connectionLost
        @unknown default: throw .connectionLost
        }
    }

    /// Ends the connection (the writer stops, then the socket closes).
    func close() {
        closed.withLockedValue { $0 = true }
        sink.finish()
    }
}

/// Opens one WebSocket connection to a relay endpoint and runs it to its end.
struct RelayConnector: Sendable {
    /// The endpoint, e.g. `ws://127.0.0.1:8080/v1/device`.
    let url: String
    let token: String
    let settings: RelayClientSettings
    let logger: Logger

    var transportLimit: Int { max(settings.maxFrameSize * 16, 256 * 1024) }

    /// Connects, waits for the relay's hello, hands the link to `onOpen`, delivers
    /// every later frame to `onFrame` in order, and returns once the connection
    /// ended (by either side or `link.close()`), after calling `onClose`.
    /// A refused upgrade throws `.unauthorized`, `.forbidden` or `.upgradeFailed`.
    func run(
        onOpen: @escaping @Sendable (RelayLink) async -> Void,
        onFrame: @escaping @Sendable (RelayFrame, RelayLink) async -> Void,
        onClose: @escaping @Sendable (RelayLink) async -> Void
    ) async throws {
        let settings = settings
        let transportLimit = transportLimit
        let logger = logger
        let client = WebSocketClient(
            url: url,
            configuration: .init(
                maxFrameSize: transportLimit, additionalHeaders: [.authorization: "Bearer \(token)"], closeTimeout: .seconds(2),
                autoPing: .enabled(timePeriod: settings.pingInterval)),
            logger: logger
        ) { inbound, outbound, _ in
            let (outgoing, sink) = AsyncStream.makeStream(of: ByteBuffer.self, bufferingPolicy: .bufferingOldest(settings.queueCapacity))
            let current = NIOLockedValueBox<RelayLink?>(nil)
            defer { sink.finish() }
            do {
                // Each child says whether its end ends the connection.
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        for await buffer in outgoing { try await outbound.write(.binary(buffer)) }
                        return true
                    }
                    group.addTask {
                        try await settings.clock.sleep(until: settings.clock.now + settings.helloTimeout)
                        if current.withLockedValue({ $0 }) == nil { throw RelayError.timeout("relay hello") }
                        return false
                    }
                    group.addTask {
                        for try await message in inbound.messages(maxSize: transportLimit) {
                            guard case .binary(let buffer) = message,
                                let frame = try? RelayFrame(decoding: buffer.readableBytesView)
                            else {
                                logger.debug("ignoring an undecodable frame from the relay")
                                continue
                            }
                            if let link = current.withLockedValue({ $0 }) {
                                await onFrame(frame, link)
                            } else {
                                guard case .hello(let hello) = frame else {
                                    throw RelayError.invalidResponse("expected hello, got \(frame)")
                                }
                                let link = RelayLink(hello: hello, maxFrameSize: settings.maxFrameSize, sink: sink)
                                current.withLockedValue { $0 = link }
                                await onOpen(link)
                            }
                        }
                        return true
                    }
                    // Whichever ends first (relay closed, link closed, hello late) ends the connection.
                    defer { group.cancelAll() }
                    while let endsConnection = try await group.next() {
                        if endsConnection { break }
                    }
                }
            } catch {
                if let link = current.withLockedValue({ $0 }) {
                    link.close()
                    await onClose(link)
                }
                throw error
            }
            if let link = current.withLockedValue({ $0 }) {
                link.close()
                await onClose(link)
            }
        }
        do {
            try await client.run()
        } catch let error as WebSocketClientError where error == .webSocketUpgradeFailed {
            throw await refusal()
        }
    }

    /// Asks the endpoint over plain HTTP, with the same credential, why it refused the upgrade.
    private func refusal() async -> RelayError {
        let probeURL = url.hasPrefix("wss://") || url.hasPrefix("https://") ? nil : url
        guard let probeURL, let response = try? await RelayHTTP.request("GET", probeURL, bearer: token, timeout: .seconds(5)) else {
            return .upgradeFailed("no HTTP answer")
        }
        switch response.status {
        case 401: return .unauthorized
        case 403: return .forbidden
        default: return .upgradeFailed("HTTP \(response.status)")
        }
    }
}

// MARK: - What both clients run

extension RelayConnector {
    typealias Job = @Sendable () async -> Void

    /// Runs a client until graceful shutdown or cancellation: `connections` (its reconnect
    /// loop) and, beside it, the jobs its frames start (handler calls that may outlive a frame).
    static func runClient(
        connections: @escaping @Sendable () async -> Void, jobs: AsyncStream<Job>,
        jobSink: AsyncStream<Job>.Continuation
    ) async {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    await connections()
                    jobSink.finish()
                }
                for await job in jobs {
                    group.addTask { await job() }
                }
            }
        }
    }

    /// Connects until cancelled, one connection at a time, waiting a backoff with jitter between
    /// them (reset after a connection that lasted `stableConnection`). With `online`, the loop
    /// holds while it is empty (a device told to go offline) and does not count that as a failure.
    func reconnect(
        online: AwaitableSlot<Bool>? = nil,
        state: @escaping @Sendable (RelayConnectionState) -> Void,
        onOpen: @escaping @Sendable (RelayLink) async -> Void,
        onFrame: @escaping @Sendable (RelayFrame, RelayLink) async -> Void,
        onClose: @escaping @Sendable (RelayLink) async -> Void
    ) async {
        var attempt = 0
        while !Task.isCancelled {
            if let online {
                do { _ = try await online.wait() } catch { return }
            }
            state(.connecting)
            let clock = settings.clock
            let started = clock.now
            var failure: RelayError? = nil
            do {
                try await run(onOpen: onOpen, onFrame: onFrame, onClose: onClose)
            } catch let error as RelayError {
                failure = error
            } catch is CancellationError {
                return
            } catch {
                failure = .upgradeFailed("\(error)")
            }
            if Task.isCancelled { return }
            if let online, online.value == nil {
                state(.offline)
                attempt = 0
                continue
            }
            state(.disconnected(failure))
            attempt = clock.now - started >= settings.stableConnection ? 0 : attempt + 1
            logger.debug("relay connection ended; retrying", metadata: ["error": "\(failure.map { "\($0)" } ?? "none")"])
            do {
                try await clock.sleep(until: clock.now + settings.backoff(attempt: attempt))
            } catch {
                return
            }
        }
    }
}

/// Runs `operation`, abandoning it with `RelayError.timeout(what)` once `timeout` has passed
/// on `clock` (a client's `RelayClientSettings.clock`; real time where none is given).
package func withRelayTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String, clock: any MatterClock = SystemClock(),
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withTimeLimit(timeout, on: clock, orThrow: { RelayError.timeout(what) }, operation)
}
