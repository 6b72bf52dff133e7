import MatterProtocol
import NIOCore
import Synchronization

/// The node's network cable: its UDP transport as the exchange manager sees it, with a
/// switch that drops every datagram both ways while the cable is pulled (`lan-down`), and a
/// lossy, slow, jittery LAN when asked (`LinkImpairment`, `lan-impair`).
/// Nothing is told: sessions stay open on both sides and time out as they would on a
/// real LAN outage.
final class NodeLANLink: DatagramTransport, InboundGate {
    let udp: UDPTransport
    var inbound: AsyncStream<InboundDatagram> { udp.inbound }
    private let state = Mutex(State())

    private let clock: any MatterClock

    private struct State {
        var connected = true
        var droppedInbound: UInt64 = 0
        var droppedOutbound: UInt64 = 0
        var impairment = LinkImpairment.none
        /// Each direction's generator (when the impairment has a seed) and lost datagrams.
        var inboundFates = ImpairedDirection(seed: nil)
        var outboundFates = ImpairedDirection(seed: nil)
        var lostInbound: UInt64 = 0
        var lostOutbound: UInt64 = 0
    }

    init(_ udp: UDPTransport, clock: any MatterClock) {
        self.udp = udp
        self.clock = clock
        // The cable sits in the transport's receive path, on its event loop: a datagram costs
        // no task hop of its own on the way to the exchange manager.
        udp.setInboundGate(self)
    }

    func admit(_ datagram: InboundDatagram, into inbox: DatagramInbox) {
        _ = pass(inbound: true, datagram.bytes) { inbox.queue(datagram) }
    }

    var isConnected: Bool { state.withLock { $0.connected } }

    /// Datagrams dropped while the cable was pulled (received, sent).
    var dropped: (inbound: UInt64, outbound: UInt64) {
        state.withLock { ($0.droppedInbound, $0.droppedOutbound) }
    }

    func setConnected(_ connected: Bool) {
        state.withLock { $0.connected = connected }
    }

    var impairment: LinkImpairment {
        get { state.withLock { $0.impairment } }
        set {
            state.withLock {
                $0.impairment = newValue
                $0.inboundFates = ImpairedDirection(seed: newValue.seed)
                $0.outboundFates = ImpairedDirection(seed: newValue.seed.map { ~$0 })
            }
        }
    }

    /// Datagrams the impairment lost (received, sent).
    var lost: (inbound: UInt64, outbound: UInt64) { state.withLock { ($0.lostInbound, $0.lostOutbound) } }

    /// Hands `deliver` each copy of a datagram the impairment lets through, after its delay
    /// on the node's clock; false when the cable is out.
    private func pass(inbound: Bool, _ datagram: [UInt8], _ deliver: @escaping @Sendable () -> Void) -> Bool {
        let (connected, impairment) = state.withLock { s -> (Bool, LinkImpairment) in
            if !s.connected {
                if inbound { s.droppedInbound += 1 } else { s.droppedOutbound += 1 }
            }
            return (s.connected, s.impairment)
        }
        guard connected else { return false }
        if impairment.isNone {
            deliver()
            return true
        }
        let delays = state.withLock { s in
            let delays =
                inbound
                ? s.inboundFates.fate(of: datagram, under: impairment) : s.outboundFates.fate(of: datagram, under: impairment)
            if delays.isEmpty { if inbound { s.lostInbound += 1 } else { s.lostOutbound += 1 } }
            return delays
        }
        for delay in delays {
            if delay == .zero {
                deliver()
            } else {
                // A datagram still on the wire when the cable is pulled goes nowhere.
                _ = clock.schedule(at: clock.now + delay) { [self] in
                    if isConnected { deliver() }
                }
            }
        }
        return true
    }

    var inboundOverflowCount: UInt64 { udp.inboundOverflowCount }

    func send(_ bytes: [UInt8], to address: SocketAddress) {
        let udp = udp
        _ = pass(inbound: false, bytes) { udp.send(bytes, to: address) }
    }

}
