@testable import CloudRelay
import NIOCore
import Testing

/// Issue #42: a connection's writer takes every frame queued for it at once, in order, so one
/// socket write and one flush carry what piled up while the last went out.
@Suite struct RelayFrameQueueTests {
    static func frame(_ byte: UInt8) -> ByteBuffer { ByteBuffer(bytes: [byte]) }

    @Test func theWriterTakesEverythingQueuedInOrder() async {
        let queue = RelayFrameQueue(capacity: 8)
        for byte in UInt8(1)...3 { #expect(queue.push(Self.frame(byte))) }
        let batch = await queue.next()
        #expect(batch?.map { $0.readableBytesView.first } == [1, 2, 3])
        #expect(queue.push(Self.frame(4)))
        #expect(await queue.next()?.count == 1, "what came after the last take is the next batch")
    }

    @Test func aFullQueueRefusesAndAFinishedOneIsDrainedThenEnds() async {
        let queue = RelayFrameQueue(capacity: 2)
        #expect(queue.push(Self.frame(1)) && queue.push(Self.frame(2)))
        #expect(!queue.push(Self.frame(3)), "past its capacity")
        queue.finish()
        #expect(!queue.push(Self.frame(4)), "finished")
        #expect(await queue.next()?.count == 2, "what was queued still goes out")
        #expect(await queue.next() == nil)
    }

    @Test func aWaitingWriterWakesForAFrameAndForTheEnd() async {
        let queue = RelayFrameQueue(capacity: 4)
        async let first = queue.next()
        // The writer is waiting (or about to): the frame reaches it either way.
        #expect(queue.push(Self.frame(7)))
        #expect(await first?.map { $0.readableBytesView.first } == [7])
        async let end = queue.next()
        queue.finish()
        #expect(await end == nil)
    }

    @Test func aCancelledWriterStopsWaiting() async {
        let queue = RelayFrameQueue(capacity: 4)
        let writer = Task { await queue.next() }
        writer.cancel()
        #expect(await writer.value == nil)
        // The queue still works for the next writer.
        #expect(queue.push(Self.frame(1)))
        #expect(await queue.next()?.count == 1)
    }
}
