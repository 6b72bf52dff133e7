import MatterCrypto

/// Failures of the message layer as seen by exchange users.
public enum TransportError: Error, Equatable, Sendable {
    case codec(MessageCodecError)
    case crypto(MatterCryptoError)
    /// The session is gone (closed, evicted, or never existed).
    case sessionClosed
    /// The exchange was closed (locally, or because its session closed).
    case exchangeClosed
    /// No message arrived on the exchange within the timeout.
    case timeout
    /// A reliable message was not acknowledged after MRP_MAX_TRANSMISSIONS.
    case deliveryFailed
    /// A reliable message is still waiting for its acknowledgement (one at a time per exchange, spec 4.12.5.1).
    case reliableMessageInFlight
    /// The session's message counter is used up; the session must be re-established.
    case counterExhausted
    /// Another task is already receiving on this exchange.
    case concurrentReceive
    /// The node is not running (its transport is closed).
    case notRunning
}
