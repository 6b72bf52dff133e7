import Foundation
import MatterDevice
import MatterProtocol
import NIOCore
import TestWaiting
import Testing

/// SplitMix64: a seeded generator, so a failing run can be replayed.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Datagrams that look more or less like Matter: random bytes, and real messages of a
/// whole commissioning (PASE, IM over PASE, CASE, IM over CASE) replayed and mutated.
struct DatagramFuzzer {
    var random: SeededGenerator
    let corpus: [[UInt8]]

    mutating func next() -> [UInt8] {
        let choice = Int.random(in: 0..<100, using: &random)
        switch choice {
        case 0..<15: return randomBytes(count: Int.random(in: 0...1280, using: &random))
        case 15..<25: return randomBytes(count: Int.random(in: 0...12, using: &random))
        case 25..<35: return unsecuredHeader() + randomBytes(count: Int.random(in: 0...200, using: &random))
        default: break
        }
        guard var datagram = corpus.randomElement(using: &random) else { return [] }
        switch choice {
        case 35..<45:
            return datagram  // an exact replay
        case 45..<65:
            for _ in 0..<Int.random(in: 1...4, using: &random) where !datagram.isEmpty {
                let index = Int.random(in: 0..<datagram.count, using: &random)
                datagram[index] ^= 1 << UInt8.random(in: 0...7, using: &random)
            }
        case 65..<75:
            datagram = Array(datagram.prefix(Int.random(in: 0...datagram.count, using: &random)))
        case 75..<85:
            let at = Int.random(in: 0...datagram.count, using: &random)
            datagram.insert(contentsOf: randomBytes(count: Int.random(in: 1...32, using: &random)), at: at)
        default:
            // Keep the message header, scramble what follows.
            let keep = min(datagram.count, Int.random(in: 8...24, using: &random))
            datagram = Array(datagram.prefix(keep)) + randomBytes(count: Int.random(in: 0...300, using: &random))
        }
        return datagram
    }

    private mutating func randomBytes(count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// An unsecured message header with a source node ID (session 0), then a protocol
    /// header of a random Secure Channel or Interaction Model opcode.
    private mutating func unsecuredHeader() -> [UInt8] {
        var bytes: [UInt8] = [0x04, 0x00, 0x00, 0x00]
        bytes += randomBytes(count: 4)  // message counter
        bytes += randomBytes(count: 8)  // source node ID
        let exchangeFlags: UInt8 = Bool.random(using: &random) ? 0x05 : 0x01  // initiator (+ reliable)
        let opcode = UInt8.random(in: 0...0x40, using: &random)
        let exchangeID = randomBytes(count: 2)
        let protocolID: [UInt8] = Bool.random(using: &random) ? [0x00, 0x00] : [0x01, 0x00]
        return bytes + [exchangeFlags, opcode] + exchangeID + protocolID
    }
}

@Suite("NodeServer: robustness against hostile datagrams")
struct NodeServerRobustnessTests {
    static let datagramCount = 10_000

    @Test func survivesTenThousandRandomAndMutatedDatagramsThenCommissions() async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Wrong passcodes close a window after 20 failures (Core spec 5.4.2.5); replayed
        // PASE messages can count as such, and this test is about surviving, not lockout.
        let target = try await RunningNode.start(stateDirectory: directory) { $0.secureChannel.maxPASEFailures = .max }
        #expect(await target.commissionable())
        let address = try target.address

        // A corpus of real traffic to this node: a whole commissioning (PASE, the IM over
        // PASE, CASE, the IM over CASE) by a first administrator, whose CASE session stays
        // open, so mutated copies of its messages meet a live session.
        let first = try await LoopbackCommissioner.start()
        let administrator = try await first.commission(address, passcode: testPasscode)
        #expect(try await first.status(administrator.caseSession, 1, ClusterIDs.onOff, 0x02) == .success)  // Toggle
        #expect(try await first.read(administrator.caseSession, 1, ClusterIDs.onOff, 0x0000) == .success(.bool(true)))
        // It opens the basic window (OpenBasicCommissioningWindow, 180 s, a timed command) for a
        // second commissioner.
        #expect(
            try await first.status(
                administrator.caseSession, 0, ClusterIDs.administratorCommissioning, 0x01,
                fields((0, u(180))), timed: true) == .success)
        #expect(await target.commissionable())
        let corpus = first.transport.sent
        #expect(corpus.count > 20)

        let sender = try await UDPTransport.bind(UDPTransport.Configuration(port: 0, binding: .addresses(["127.0.0.1"])))
        var fuzzer = DatagramFuzzer(random: SeededGenerator(state: 0x4D41_5454_4552), corpus: corpus)
        // In batches, each waited for (boundedly), so the node processes the datagrams rather
        // than the socket dropping them when the machine is busy.
        let batch = 100
        for sent in stride(from: batch, through: Self.datagramCount, by: batch) {
            for _ in 0..<batch { sender.send(fuzzer.next(), to: address) }
            _ = await until(target.server.exchangeManager.metricsChanges(), within: .seconds(2)) {
                await target.server.exchangeManager.metrics().datagramsReceived >= UInt64(sent - batch / 10)
            }
        }
        await sender.close()

        // The administrator's session still works. Its request queued behind every fuzzed
        // datagram the socket kept, and the node takes datagrams in order: once it answers,
        // the node has worked through them all.
        #expect(try await first.read(administrator.caseSession, 1, ClusterIDs.onOff, 0x0000) == .success(.bool(true)))
        let metrics = await target.server.exchangeManager.metrics()
        #expect(metrics.datagramsReceived > UInt64(Self.datagramCount / 2))
        #expect(metrics.droppedMalformed > 0)
        #expect(metrics.droppedAuthenticationFailed > 0)
        #expect(metrics.droppedDuplicate > 0)

        // A second commissioner commissions the node normally.
        #expect(await target.commissionable())
        let second = try await LoopbackCommissioner.start()
        let commissioned = try await second.commission(address, passcode: testPasscode)
        #expect(commissioned.fabricIndex == 2)
        #expect(try await second.status(commissioned.caseSession, 1, ClusterIDs.onOff, 0x00) == .success)  // Off
        #expect(try await second.read(commissioned.caseSession, 1, ClusterIDs.onOff, 0x0000) == .success(.bool(false)))

        await target.stop()
        await first.stop()
        await second.stop()
    }
}
