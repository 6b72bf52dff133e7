import Testing

@testable import MatterDevice

@Suite("Link impairment settings and seeded fates")
struct LinkImpairmentTests {
    @Test func aSeedIsParsedShownAndRefusedWhenNotANumber() throws {
        let impairment = try LinkImpairment.parse("loss=20%,seed=4").get()
        #expect(impairment.seed == 4)
        #expect(impairment.description == "loss=20.0%,delay=0ms,jitter=0ms,duplicate=0.0%,seed=4")
        guard case .failure(let error) = LinkImpairment.parse("loss=20%,seed=-1") else {
            Issue.record("a negative seed was taken")
            return
        }
        #expect(error.description == "seed=-1: expected a whole number from 0 to \(UInt64.max)")
        #expect((try? LinkImpairment.parse("seed=4").get())?.isNone == true)
    }

    /// The same seed gives the same fates, datagram after datagram; another seed others; about
    /// the asked share is lost.
    @Test func theSameSeedRepeatsTheSameFates() {
        let impairment = LinkImpairment(loss: 0.2, jitter: .milliseconds(20), seed: 4)
        func fates(seed: UInt64) -> [[Duration]] {
            var random = SeededRandom(seed: seed)
            return (0..<1000).map { _ in impairment.fate { random.next() } }
        }
        #expect(fates(seed: 4) == fates(seed: 4))
        #expect(fates(seed: 4) != fates(seed: 5))
        let lost = fates(seed: 4).filter(\.isEmpty).count
        #expect((150...250).contains(lost))
    }
}
