@testable import MatterDevice
import Synchronization
import Testing

/// AddNOC's response waits for the new operational record at most a moment
/// (`NodeAdvertiser.waitUntilPublished`). It once waited for the publication itself, however
/// long a busy Avahi daemon took (issue #43: 40-112 of 300 AddNOCs of a 5,000-node fleet timed
/// out): the limit is kept while the publication is still waiting.
@Suite struct NodeAdvertiserWaitTests {
    @Test func theWaitEndsAtItsLimitWhileThePublicationStillWaits() async throws {
        // A publication that ends only when the test lets it (after its check below).
        let (gate, open) = AsyncStream<Void>.makeStream()
        let publication = Task { () -> Int in
            for await _ in gate {}
            return 1
        }
        let returned = Mutex(false)
        let waiter = Task {
            await NodeAdvertiser.wait(for: publication, atMost: .milliseconds(20))
            returned.withLock { $0 = true }
        }
        // Generous for a loaded machine: the wait's limit is 20 ms.
        for _ in 0..<1000 where !returned.withLock({ $0 }) {
            // real time: external: the wait's own limit runs on real time.
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(returned.withLock { $0 }, "the wait outlived its limit while the publication was pending")
        open.finish()
        await waiter.value
        #expect(await publication.value == 1)
    }

    @Test func theWaitEndsAsSoonAsThePublicationIsDone() async {
        let publication = Task { 7 }
        _ = await publication.value
        // Done already: returns at once, well before a limit no test would wait out.
        await NodeAdvertiser.wait(for: publication, atMost: .seconds(3600))
    }
}
