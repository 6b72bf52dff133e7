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

    @Test func maxLostIsParsedShownAndRefusedWhenNotACount() throws {
        let impairment = try LinkImpairment.parse("loss=20%,seed=4,maxlost=2").get()
        #expect(impairment.maxLost == 2)
        #expect(impairment.description == "loss=20.0%,delay=0ms,jitter=0ms,duplicate=0.0%,seed=4,maxlost=2")
        guard case .failure(let error) = LinkImpairment.parse("loss=20%,maxlost=two") else {
            Issue.record("maxlost=two was taken")
            return
        }
        #expect(error.description == "maxlost=two: expected a whole number from 0 to 100")
    }

    /// maxlost counts losses per datagram, by its bytes: the same bytes again (an MRP
    /// retransmission) pass once lost that many times; other datagrams still meet the loss.
    @Test func maxLostSparesADatagramLostThatManyTimes() {
        var direction = ImpairedDirection(seed: 4)
        let total = LinkImpairment(loss: 1, seed: 4, maxLost: 2)
        let message: [UInt8] = [1, 2, 3]
        #expect(direction.fate(of: message, under: total).isEmpty)
        #expect(direction.fate(of: [9], under: total).isEmpty)
        #expect(direction.fate(of: message, under: total).isEmpty)
        #expect(direction.fate(of: message, under: total) == [.zero])
        #expect(direction.fate(of: [9], under: total).isEmpty)
        let none = LinkImpairment(loss: 1, seed: 4, maxLost: 0)
        #expect(direction.fate(of: [7], under: none) == [.zero])
    }

    /// Issue #36: seed 4 never loses three datagrams in a row, yet under load the lossy-LAN test
    /// lost a Toggle's response in all five of MRP's transmissions: between them the node sent
    /// other datagrams (earlier exchanges' retransmissions, acks), 3, 1, 1 and 0 of them, and
    /// the losses fell on the response. With maxlost=2 no datagram is lost a third time,
    /// whatever comes between.
    @Test func maxLostBoundsAMessagesLossesWhateverComesBetween() {
        func timesLost(_ impairment: LinkImpairment, after others: Int, gaps: [Int]) -> Int {
            var outbound = ImpairedDirection(seed: ~4)  // the node's sending side under seed=4
            var sent: UInt32 = 0
            func other() {
                sent += 1
                _ = outbound.fate(of: withUnsafeBytes(of: sent) { Array($0) }, under: impairment)
            }
            let response: [UInt8] = [0xFF, 0xFE, 0xFD, 0xFC, 0xFB]
            var lost = 0
            for _ in 0..<others { other() }
            for transmission in 0..<5 {
                if outbound.fate(of: response, under: impairment).isEmpty { lost += 1 }
                if transmission < 4 { for _ in 0..<gaps[transmission] { other() } }
            }
            return lost
        }
        var impairment = LinkImpairment(loss: 0.2, jitter: .milliseconds(20), seed: 4)
        #expect(timesLost(impairment, after: 57, gaps: [3, 1, 1, 0]) == 5)
        impairment.maxLost = 2
        #expect(timesLost(impairment, after: 57, gaps: [3, 1, 1, 0]) == 2)
        var most = 0
        for others in stride(from: 0, to: 120, by: 3) {
            for gaps in 0..<256 {
                let lost = timesLost(impairment, after: others, gaps: (0..<4).map { gaps >> (2 * $0) & 3 })
                most = max(most, lost)
            }
        }
        #expect(most == 2)
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
