import MatterProtocol
import NIOCore
import Synchronization

/// The node's network cable: its UDP transport as the exchange manager sees it, with a
/// switch that drops every datagram both ways while the cable is pulled (`lan-down`).
/// Nothing is told: sessions stay open on both sides and time out as they would on a
/// real LAN outage.
final class NodeLANLink: DatagramTransport {
    let udp: UDPTransport
    let inbound: AsyncStream<InboundDatagram>
    private let sink: AsyncStream<InboundDatagram>.Continuation
    private let state = Mutex(State())

    private struct State {
        var connected = true
        var droppedInbound: UInt64 = 0
        var droppedOutbound: UInt64 = 0
    }

    init(_ udp: UDPTransport) {
        self.udp = udp
        // The forwarder hands datagrams on as they come; UDPTransport's own queue bounds the backlog.
        (inbound, sink) = AsyncStream.makeStream(of: InboundDatagram.self, bufferingPolicy: .bufferingNewest(1024))
    }

    var isConnected: Bool { state.withLock { $0.connected } }

    /// Datagrams dropped while the cable was pulled (received, sent).
    var dropped: (inbound: UInt64, outbound: UInt64) {
        state.withLock { ($0.droppedInbound, $0.droppedOutbound) }
    }

    func setConnected(_ connected: Bool) {
        state.withLock { $0.connected = connected }
    }

    var inboundOverflowCount: UInt64 { udp.inboundOverflowCount }

    func send(_ bytes: [UInt8], to address: SocketAddress) {
        let connected = state.withLock { s -> Bool in
            if !s.connected { s.droppedOutbound += 1 }
            return s.connected
        }
        if connected { udp.send(bytes, to: address) }
    }

    /// Moves received datagrams to `inbound` while connected, until the socket closes or
    /// the task is cancelled; `inbound` then finishes. Run it beside the exchange manager.
    func forward() async {
        for await datagram in udp.inbound {
            let connected = state.withLock { s -> Bool in
                if !s.connected { s.droppedInbound += 1 }
                return s.connected
            }
            if connected { sink.yield(datagram) }
        }
        sink.finish()
    }
}
