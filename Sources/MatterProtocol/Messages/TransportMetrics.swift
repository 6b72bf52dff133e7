/// Counters of the message layer, for health endpoints and tests. Every dropped
/// datagram lands in exactly one of the `dropped…` counters.
public struct TransportMetrics: Sendable, Hashable {
    public var datagramsReceived: UInt64 = 0
    /// Received messages that passed every check (delivered, dispatched, or an ack/CloseSession acted on).
    /// Invariant: `datagramsReceived == messagesAccepted + droppedTotal`.
    public var messagesAccepted: UInt64 = 0
    public var datagramsSent: UInt64 = 0
    /// Header or protocol header could not be decoded.
    public var droppedMalformed: UInt64 = 0
    /// Secure session ID not known here.
    public var droppedUnknownSession: UInt64 = 0
    /// MIC did not verify (wrong key, tampering).
    public var droppedAuthenticationFailed: UInt64 = 0
    /// Message counter already seen (re-acked when it asked for an ack).
    public var droppedDuplicate: UInt64 = 0
    /// Valid but not handled here: group messages, privacy, unsecured messages without an initiator node ID.
    public var droppedUnsupported: UInt64 = 0
    /// Not part of a known exchange and not an initiator message, or no handler for its protocol.
    public var droppedUnsolicited: UInt64 = 0
    /// The exchange's inbox was full (nobody is receiving on it), or a new exchange found no
    /// room (the table, or the session's share of it, was full).
    public var droppedOverload: UInt64 = 0
    /// Datagrams the transport dropped before the manager saw them (its queue was full); not in `datagramsReceived`.
    public var inboundQueueOverflows: UInt64 = 0
    public var retransmissions: UInt64 = 0
    public var standaloneAcksSent: UInt64 = 0
    /// Reliable messages given up after MRP_MAX_TRANSMISSIONS.
    public var deliveryFailures: UInt64 = 0
    public var exchangesOpened: UInt64 = 0
    public var exchangeTimeouts: UInt64 = 0
    public var sessionsEstablished: UInt64 = 0
    public var sessionsEvicted: UInt64 = 0
    /// CloseSession status reports sent to peers (spec 4.11.1.4).
    public var closeSessionsSent: UInt64 = 0

    public init() {}

    /// All datagrams that were dropped, for any reason.
    public var droppedTotal: UInt64 {
        droppedMalformed + droppedUnknownSession + droppedAuthenticationFailed + droppedDuplicate
            + droppedUnsupported + droppedUnsolicited + droppedOverload
    }
}
