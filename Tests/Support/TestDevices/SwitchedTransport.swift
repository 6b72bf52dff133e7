import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore

/// A datagram transport that drops everything both ways while the LAN is down (a pulled
/// cable: nothing is closed politely, sessions just stop hearing from each other).
package final class SwitchedTransport: DatagramTransport {
    package let base: UDPTransport
    package let inbound: AsyncStream<InboundDatagram>
    private let up = NIOLockedValueBox(true)
    private let forwarder: Task<Void, Never>

    package init(_ base: UDPTransport) {
        self.base = base
        let (stream, sink) = AsyncStream.makeStream(of: InboundDatagram.self, bufferingPolicy: .bufferingNewest(1024))
        inbound = stream
        let up = self.up
        forwarder = Task {
            for await datagram in base.inbound where up.withLockedValue({ $0 }) { sink.yield(datagram) }
            sink.finish()
        }
    }

    package var isUp: Bool { up.withLockedValue { $0 } }

    package func setUp(_ value: Bool) { up.withLockedValue { $0 = value } }

    package func send(_ bytes: [UInt8], to address: SocketAddress) {
        guard isUp else { return }
        base.send(bytes, to: address)
    }

    package var inboundOverflowCount: UInt64 { base.inboundOverflowCount }
}
