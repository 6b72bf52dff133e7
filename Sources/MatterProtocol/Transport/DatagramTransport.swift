import NIOCore

/// One received datagram.
public struct InboundDatagram: Sendable {
    public var bytes: [UInt8]
    public var source: SocketAddress

    public init(bytes: [UInt8], source: SocketAddress) {
        self.bytes = bytes
        self.source = source
    }
}

/// What the exchange manager needs from a datagram transport (UDP, or an in-memory
/// network in tests).
public protocol DatagramTransport: Sendable {
    /// Received datagrams; finishes when the transport closes.
    var inbound: AsyncStream<InboundDatagram> { get }
    /// Sends without waiting; datagrams that cannot be sent are dropped (MRP recovers).
    func send(_ bytes: [UInt8], to address: SocketAddress)
    /// Datagrams dropped because the inbound queue was full.
    var inboundOverflowCount: UInt64 { get }
}
