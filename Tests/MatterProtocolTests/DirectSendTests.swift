import Foundation
@testable import MatterProtocol
import NIOCore
import NIOPosix
import Synchronization
import Testing
import TestWaiting

/// UDPTransport sends from the caller's thread on a duplicate of its socket
/// (DirectDatagramSender), not through its channel's event loop.
@Suite("UDP sends without the event loop")
struct DirectSendTests {
    @Test func aDatagramGoesOutWhileTheChannelsEventLoopIsBusy() async throws {
        let senderLoop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let sender = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])), group: senderLoop)
        let receiver = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])))
        defer {
            PendingCleanups.run {
                await sender.close(); await receiver.close()
                try? await senderLoop.shutdownGracefully()
            }
        }
        // The sender's only event loop is held until the datagram arrives (or 10 s pass).
        let arrived = DispatchSemaphore(value: 0)
        let heldUntilArrival = Mutex<Bool?>(nil)
        let holding = DispatchSemaphore(value: 0)
        senderLoop.next().execute {
            holding.signal()
            let released = arrived.wait(timeout: .now() + 10) == .success
            heldUntilArrival.withLock { $0 = released }
        }
        holding.wait()
        sender.send([1, 2, 3], to: try SocketAddress(ipAddress: "127.0.0.1", port: receiver.port))
        var iterator = receiver.inbound.makeAsyncIterator()
        let datagram = await iterator.next()
        arrived.signal()
        #expect(datagram?.bytes == [1, 2, 3])
        #expect(datagram?.source.port == sender.port)
        // Wait for the loop to let go, then check it was the arrival that released it.
        try await senderLoop.next().submit {}.get()
        #expect(heldUntilArrival.withLock { $0 } == true)
    }

    @Test func aClosedTransportSendsNothing() async throws {
        let sender = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])))
        let marker = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])))
        let receiver = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])))
        defer { PendingCleanups.run { await marker.close(); await receiver.close() } }
        let target = try SocketAddress(ipAddress: "127.0.0.1", port: receiver.port)
        await sender.close()
        sender.send([9, 9], to: target)
        // Loopback delivers within the send call: had the closed transport sent, its datagram
        // would come before the marker sent after it.
        marker.send([7], to: target)
        var iterator = receiver.inbound.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.bytes == [7])
        #expect(first?.source.port == marker.port)
    }
}
