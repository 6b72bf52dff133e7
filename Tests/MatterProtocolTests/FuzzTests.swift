import MatterCrypto
@testable import MatterProtocol
import NIOCore
import TestWaiting
import Testing

/// A small deterministic generator, so a failing case can be replayed from its seed.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

enum Fuzz {
    /// Valid-looking seeds: the captured PBKDFParamRequest, a secured message, a standalone ack, header variants.
    static let seeds: [[UInt8]] = {
        var s: [[UInt8]] = [MessageCodecTests.capturedPBKDFParamRequest]
        s.append(try! MessageHeader(sessionID: 0x1234, messageCounter: 99).encoded() + SecureRandom.bytes(40))
        s.append(
            try! MessageHeader(sessionID: 0, messageCounter: 5, sourceNodeID: 77).encoded()
                + (try! ProtocolHeader(
                    isInitiator: true, acknowledgedMessageCounter: 3, opcode: 0x10, exchangeID: 1,
                    protocolID: .secureChannel
                ).encoded()))
        s.append(
            try! MessageHeader(
                sessionID: 0, messageCounter: 1, sourceNodeID: 1, destination: .node(2),
                messageExtensions: [1, 2]
            ).encoded()
                + (try! ProtocolHeader(
                    isInitiator: true, needsAcknowledgement: true, opcode: 0x30, exchangeID: 2,
                    protocolID: .secureChannel, securedExtensions: [5]
                ).encoded(payload: [0x15, 0x18])))
        return s
    }()

    /// A random datagram: pure noise, or a seed with bytes flipped, inserted, removed or truncated.
    static func datagram(_ rng: inout SplitMix64) -> [UInt8] {
        if Int.random(in: 0..<5, using: &rng) == 0 {
            return (0..<Int.random(in: 0..<120, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
        }
        var d = seeds[Int.random(in: 0..<seeds.count, using: &rng)]
        for _ in 0..<Int.random(in: 1...4, using: &rng) {
            switch Int.random(in: 0..<4, using: &rng) {
            case 0 where !d.isEmpty:
                d[Int.random(in: 0..<d.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
            case 1:
                d.insert(UInt8.random(in: 0...255, using: &rng), at: Int.random(in: 0...d.count, using: &rng))
            case 2 where !d.isEmpty:
                d.remove(at: Int.random(in: 0..<d.count, using: &rng))
            default:
                d = Array(d.prefix(Int.random(in: 0...d.count, using: &rng)))
            }
        }
        return d
    }
}

@Suite("Malformed datagrams")
struct FuzzTests {
    @Test func codecNeverTrapsOnTenThousandDatagrams() throws {
        var rng = SplitMix64(state: 0x5EED_0001)
        var headerErrors = 0
        var decoded = 0
        for _ in 0..<10_000 {
            let d = Fuzz.datagram(&rng)
            do {
                let (header, length) = try MessageHeader.decode(d)
                #expect(length <= d.count)
                // Whatever decodes survives a re-encode (reserved bits aside, which are ignored).
                #expect(try MessageHeader.decode(header.encoded()).header == header)
                if let (ph, payload) = try? ProtocolHeader.decode(Array(d[length...])) {
                    let again = try ProtocolHeader.decode(ph.encoded(payload: payload))
                    #expect(again.header == ph && again.payload == payload)
                    _ = try? PBKDFParamRequest(decoding: payload)
                    _ = try? Sigma1(decoding: payload)
                    _ = try? StatusReport.decode(payload)
                }
                decoded += 1
            } catch {
                headerErrors += 1
            }
        }
        #expect(headerErrors + decoded == 10_000)
        #expect(headerErrors > 0 && decoded > 0)
    }

    @Test func liveResponderSurvivesAndCountsTenThousandDatagrams() async throws {
        let device = try await LoopbackNode.start()
        let attacker = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])))
        let controller = try await LoopbackNode.start()
        defer {
            PendingCleanups.run {
                await device.stop(); await attacker.close(); await controller.stop()
            }
        }
        let server = SecureChannelServer(manager: device.manager, configuration: .init(stepTimeout: .seconds(2)))
        await device.manager.register(server, for: .secureChannel)
        await device.manager.register(EchoHandler(), for: .interactionModel)
        await server.openCommissioningWindow(try PASEVerifierParameters(passcode: 20202021, salt: PASETests.salt))
        // Also give it a secure session to aim at.
        _ = try await installSessionPair(
            initiator: controller.manager, aAddress: controller.address,
            responder: device.manager, bAddress: device.address)

        var rng = SplitMix64(state: 0x5EED_0002)
        let total = 10_000
        for i in 0..<total {
            attacker.send(Fuzz.datagram(&rng), to: device.address)
            // Pace the sender (at most ~40 datagrams in flight) so the kernel's socket buffer never
            // overflows: only datagrams the node saw can be counted.
            if i % 20 == 19 {
                let sent = UInt64(i + 1)
                _ = await until(device.manager.metricsChanges()) {
                    await device.manager.metrics().datagramsReceived + 20 >= sent
                }
            }
        }
        let arrived = await until(device.manager.metricsChanges(), within: .seconds(20)) {
            await device.manager.metrics().datagramsReceived >= UInt64(total)
        }
        let m = await device.manager.metrics()
        #expect(arrived, "received \(m.datagramsReceived), queue overflows \(m.inboundQueueOverflows)")
        #expect(m.datagramsReceived == UInt64(total))
        // Every datagram is either accepted or dropped under exactly one reason.
        #expect(m.messagesAccepted + m.droppedTotal == m.datagramsReceived)
        #expect(m.droppedMalformed > 0)
        #expect(m.droppedUnknownSession > 0)
        // Garbled PBKDFParamRequests are not passcode attempts: the window stays open.
        #expect(await server.isCommissioningWindowOpen)

        // Still serving: a full PASE and an exchange on the new session.
        await server.closeCommissioningWindow()
        await server.openCommissioningWindow(try PASEVerifierParameters(passcode: 20202021, salt: PASETests.salt))
        let session = try await PASEInitiator(manager: controller.manager, stepTimeout: .seconds(5))
            .establish(with: device.address, passcode: 20202021)
        let exchange = try await controller.manager.openExchange(session: session.handle, protocolID: .interactionModel)
        let reply = try await exchange.request(opcode: 2, payload: [1, 2], timeout: .seconds(5))
        #expect(reply.payload == [2, 1])
    }
}
