@testable import MatterProtocol
import NIOCore
import Testing
import TestWaiting

/// A transport's inbound gate decides, as each datagram is received, what reaches `inbound`
/// (NodeLANLink's cable and impairments sit there).
@Suite("UDP inbound gate")
struct InboundGateTests {
    @Test func theGateDropsAndCopiesDatagramsBeforeTheyAreQueued() async throws {
        let receiver = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])))
        let sender = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])))
        defer { PendingCleanups.run { await sender.close(); await receiver.close() } }
        let gate = DropZeroesCopyTheRest()
        receiver.setInboundGate(gate)
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: receiver.port)
        sender.send([0, 1], to: target)
        sender.send([1, 2], to: target)
        var iterator = receiver.inbound.makeAsyncIterator()
        let first = await iterator.next()
        let second = await iterator.next()
        #expect(first?.bytes == [1, 2])
        #expect(second?.bytes == [1, 2])
        // Without a gate every datagram is queued once.
        receiver.setInboundGate(nil)
        sender.send([0, 3], to: target)
        sender.send([4], to: target)
        #expect(await iterator.next()?.bytes == [0, 3])
        #expect(await iterator.next()?.bytes == [4])
    }
}

/// Drops what starts with 0, queues the rest twice.
private final class DropZeroesCopyTheRest: InboundGate {
    func admit(_ datagram: InboundDatagram, into inbox: DatagramInbox) {
        guard datagram.bytes.first != 0 else { return }
        inbox.queue(datagram)
        inbox.queue(datagram)
    }
}
