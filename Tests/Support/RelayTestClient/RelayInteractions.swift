import MatterController
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
import RelayClients

// Tests drive the relay with MatterController's InteractionClient over a relay
// channel, as HomeAPI does; these helpers only name the device and keep the call sites
// short.

extension RelayControllerClient {
    /// The Interaction Model client for one device; `timeout` bounds each answer and the
    /// wait for a connection.
    package func interactions(_ deviceID: String, timeout: Duration? = nil) -> InteractionClient {
        InteractionClient(channel: channel(to: deviceID, connectionWait: timeout), timeout: timeout ?? .seconds(10))
    }

    package func read(_ deviceID: String, _ request: ReadRequestMessage, timeout: Duration? = nil) async throws -> ReportDataMessage {
        try await interactions(deviceID, timeout: timeout).read(request)
    }

    package func read(_ deviceID: String, paths: [AttributePathIB], timeout: Duration? = nil) async throws -> ReportDataMessage {
        try await read(deviceID, ReadRequestMessage(attributeRequests: paths), timeout: timeout)
    }

    package func write(
        _ deviceID: String, _ request: WriteRequestMessage, timedTimeout: UInt16? = nil, timeout: Duration? = nil
    ) async throws -> WriteResponseMessage {
        try await interactions(deviceID, timeout: timeout).write(request, timed: timedTimeout.map { .milliseconds(Int64($0)) })
    }

    package func invoke(
        _ deviceID: String, _ request: InvokeRequestMessage, timedTimeout: UInt16? = nil, timeout: Duration? = nil
    ) async throws -> InvokeResponseMessage {
        try await interactions(deviceID, timeout: timeout).invoke(request, timed: timedTimeout.map { .milliseconds(Int64($0)) })
    }

    /// Subscribes through a router of its own (set as this client's incoming handler).
    package func subscribe(
        _ deviceID: String, _ request: SubscribeRequestMessage, timeout: Duration? = nil
    ) async throws -> TestSubscription {
        let router = SubscriptionRouter()
        setIncomingInteractions(router)
        let subscription = TestSubscription()
        let (id, maxInterval) = try await interactions(deviceID, timeout: timeout).subscribe(
            request, router: router, sink: { subscription.received($0) }, lost: { subscription.end($0) })
        subscription.established(id: id, maxInterval: maxInterval)
        return subscription
    }
}

/// A subscription as a test watches it: the priming reports, then later reports as a stream.
package final class TestSubscription: Sendable {
    private struct State {
        var subscriptionID: UInt32 = 0
        var maxInterval: UInt16 = 0
        var priming: [AttributeReport] = []
        var established = false
        var endReason: String?
    }

    private let state = NIOLockedValueBox(State())
    package let reports: AsyncStream<[AttributeReport]>
    private let sink: AsyncStream<[AttributeReport]>.Continuation

    package init() {
        (reports, sink) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(256))
    }

    package var subscriptionID: UInt32 { state.withLockedValue { $0.subscriptionID } }
    package var maxInterval: UInt16 { state.withLockedValue { $0.maxInterval } }
    package var priming: [AttributeReport] { state.withLockedValue { $0.priming } }
    package var endReason: String? { state.withLockedValue { $0.endReason } }
    /// Whether the carrier still holds the subscription (the relay or hub did not end it).
    package var isActive: Bool { state.withLockedValue { $0.endReason == nil } }

    package func received(_ reports: [AttributeReport]) {
        let later = state.withLockedValue { s -> Bool in
            if !s.established { s.priming += reports }
            return s.established
        }
        if later { sink.yield(reports) }
    }

    package func established(id: UInt32, maxInterval: UInt16) {
        state.withLockedValue {
            $0.subscriptionID = id
            $0.maxInterval = maxInterval
            $0.established = true
        }
    }

    package func end(_ reason: String) {
        state.withLockedValue { $0.endReason = reason }
        sink.finish()
    }

    package func cancel() { sink.finish() }
}

extension [AttributeReport] {
    /// The value reported for a concrete attribute, if any (the last one).
    package func value(_ path: AttributePath) -> TLVValue? {
        last { $0.path == path }?.value
    }
}
