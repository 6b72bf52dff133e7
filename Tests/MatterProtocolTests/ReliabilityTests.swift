import MatterCrypto
@testable import MatterProtocol
import NIOCore
import TestWaiting
import Testing

@Suite("Message Reliability Protocol (spec 4.12)")
struct ReliabilityTests {
    @Test func backoffFormula() {
        func ms(_ d: Duration) -> Double { Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15 }
        let i = Duration.milliseconds(300)
        // n = 0 and 1: linear (i × 1.1); then × 1.6 per retransmission.
        #expect(abs(ms(ReliableMessageProtocol.backoff(baseInterval: i, retransmissions: 0, jitter: 0)) - 330) < 0.01)
        #expect(abs(ms(ReliableMessageProtocol.backoff(baseInterval: i, retransmissions: 1, jitter: 0)) - 330) < 0.01)
        #expect(abs(ms(ReliableMessageProtocol.backoff(baseInterval: i, retransmissions: 2, jitter: 0)) - 528) < 0.01)
        #expect(abs(ms(ReliableMessageProtocol.backoff(baseInterval: i, retransmissions: 3, jitter: 0)) - 844.8) < 0.01)
        #expect(abs(ms(ReliableMessageProtocol.backoff(baseInterval: i, retransmissions: 4, jitter: 0)) - 1351.68) < 0.01)
        // Full jitter adds 25 %.
        #expect(abs(ms(ReliableMessageProtocol.backoff(baseInterval: i, retransmissions: 0, jitter: 1)) - 412.5) < 0.01)
        // The peer counts as active within its active threshold of its last message.
        let peer = SessionParameters.default
        #expect(ReliableMessageProtocol.baseInterval(peer: peer, lastPeerActivity: .seconds(10), now: .seconds(13)) == .milliseconds(300))
        #expect(ReliableMessageProtocol.baseInterval(peer: peer, lastPeerActivity: .seconds(10), now: .seconds(15)) == .milliseconds(500))
        #expect(ReliableMessageProtocol.baseInterval(peer: peer, lastPeerActivity: nil, now: .zero) == .milliseconds(500))
    }

    /// Two nodes on an in-memory network with one shared, manually driven clock.
    struct Pair {
        let network = TestNetwork()
        let clock = MatterProtocol.ManualClock()
        let a: ExchangeManager
        let b: ExchangeManager
        let aTransport: TestTransport
        let bTransport: TestTransport
        let sessionA: SessionInfo
        let sessionB: SessionInfo

        init() async throws {
            aTransport = network.makeTransport(port: 1000)
            bTransport = network.makeTransport(port: 2000)
            let config = ExchangeManager.Configuration(jitter: { 0 })
            a = ExchangeManager(transport: aTransport, configuration: config, clock: clock)
            b = ExchangeManager(transport: bTransport, configuration: config, clock: clock)
            (sessionA, sessionB) = try await installSessionPair(
                initiator: a, aAddress: aTransport.address,
                responder: b, bAddress: bTransport.address)
        }

        func decodeFromA(_ index: Int) async throws -> (MessageHeader, ProtocolHeader) {
            let sent = network.sent(from: aTransport.address)[index]
            return try await decode(sent.bytes, receiverCipherOf: b)
        }

        func decodeFromB(_ index: Int) async throws -> (MessageHeader, ProtocolHeader) {
            let sent = network.sent(from: bTransport.address)[index]
            return try await decode(sent.bytes, receiverCipherOf: a)
        }

        private func decode(_ bytes: [UInt8], receiverCipherOf m: ExchangeManager) async throws -> (MessageHeader, ProtocolHeader) {
            let (header, length) = try MessageHeader.decode(bytes)
            // Both sessions share keys: decrypt with a cipher in the receiver's role.
            let sessions = await m.sessionsSnapshot()
            let s = try #require(sessions.first { $0.localSessionID == header.sessionID })
            let plain = try s.cipher.open(datagram: bytes, header: header, headerLength: length)
            return (header, try ProtocolHeader.decode(plain).header)
        }
    }

    @Test func retransmitsWithBackoffThenGivesUp() async throws {
        let p = try await Pair()
        p.network.setDropFilter { _ in true }  // total loss
        let runA = Task { await p.a.run() }
        let runB = Task { await p.b.run() }
        defer { runA.cancel(); runB.cancel() }

        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        try await exchange.send(opcode: 1, payload: [1, 2, 3], reliable: true)
        let receiving = Task { try await exchange.receive(timeout: .seconds(60)) }
        let aAddress = p.aTransport.address
        #expect(p.network.sent(from: aAddress).count == 1)

        // B was heard from at session establishment (within its 4 s active threshold), so the base is
        // its SAI (300 ms): 300 × 1.1 × 1.6^max(0, n−1), jitter pinned to 0.
        let schedule: [Duration] = [.milliseconds(330), .milliseconds(330), .milliseconds(528), .microseconds(844_800)]
        for (n, delay) in schedule.enumerated() {
            // The retransmission timer is a clock action: `advance` has run it when it returns.
            await p.clock.advance(by: delay - .milliseconds(2))
            #expect(p.network.sent(from: aAddress).count == n + 1, "no retransmission before its time (n=\(n))")
            await p.clock.advance(by: .milliseconds(2))
            #expect(p.network.sent(from: aAddress).count == n + 2, "retransmission \(n + 1)")
        }
        // Retransmissions repeat the first datagram byte for byte (same counter).
        let sent = p.network.sent(from: aAddress)
        #expect(Set(sent.map(\.bytes)).count == 1)
        #expect(await p.a.metrics().retransmissions == 4)

        // After the fifth transmission's backoff (1351.68 ms) MRP gives up.
        await p.clock.advance(by: .microseconds(1_351_000))
        #expect(await p.a.metrics().deliveryFailures == 0)
        await p.clock.advance(by: .microseconds(680))
        let result = await receiving.result
        #expect(throws: TransportError.deliveryFailed) { try result.get() }
        #expect(p.network.sent(from: aAddress).count == 5)
        #expect(await p.a.metrics().deliveryFailures == 1)
    }

    @Test func idlePeerGetsTheIdleInterval() async throws {
        let p = try await Pair()
        p.network.setDropFilter { _ in true }
        let runA = Task { await p.a.run() }
        defer { runA.cancel() }
        // Past B's active threshold (4 s) since it was last heard from: SII (500 ms) × 1.1.
        await p.clock.advance(by: .seconds(5))
        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        try await exchange.send(opcode: 1, payload: [], reliable: true)
        await p.clock.advance(by: .milliseconds(548))
        #expect(p.network.sent(from: p.aTransport.address).count == 1)
        await p.clock.advance(by: .milliseconds(2))
        #expect(p.network.sent(from: p.aTransport.address).count == 2)
    }

    @Test func ackIsPiggybackedOnTheResponse() async throws {
        let p = try await Pair()
        await p.b.register(EchoHandler(), for: .forTesting)
        let runA = Task { await p.a.run() }
        let runB = Task { await p.b.run() }
        defer { runA.cancel(); runB.cancel() }

        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        let reply = try await exchange.request(opcode: 7, payload: [1, 2, 3])
        #expect(reply.opcode == 8)
        #expect(reply.payload == [3, 2, 1])

        // B's only message is the response, and it carries the ack of A's request.
        let (requestHeader, requestPH) = try await p.decodeFromA(0)
        #expect(requestPH.needsAcknowledgement && requestPH.isInitiator)
        #expect(p.network.sent(from: p.bTransport.address).count == 1)
        let (_, responsePH) = try await p.decodeFromB(0)
        #expect(responsePH.acknowledgedMessageCounter == requestHeader.messageCounter)
        #expect(!responsePH.isInitiator && responsePH.needsAcknowledgement)
        #expect(await p.b.metrics().standaloneAcksSent == 0)

        // A has not answered B's reliable response: a standalone ack follows 200 ms later.
        await exchange.close()  // closing flushes the pending ack at once
        #expect(await until(p.network.changes()) { p.network.sent(from: p.aTransport.address).count == 2 })
        let (_, ackPH) = try await p.decodeFromA(1)
        #expect(ackPH.opcode == SecureChannelOpcode.standaloneAck.rawValue && ackPH.protocolID == .secureChannel)
        #expect(ackPH.acknowledgedMessageCounter != nil && !ackPH.needsAcknowledgement)
        // B's retransmission entry is cleared: nothing more is sent however long we wait.
        // (The clock moves only once B has taken in A's ack: its request and the ack.)
        #expect(await until(p.b.metricsChanges()) { await p.b.metrics().messagesAccepted == 2 })
        await p.clock.advance(by: .seconds(10))
        #expect(p.network.sent(from: p.bTransport.address).count == 1)
    }

    @Test func standaloneAckAfterTheAckTimeout() async throws {
        let p = try await Pair()
        let silent = SilentHandler(hold: .seconds(30))
        await p.b.register(silent, for: .forTesting)
        let runA = Task { await p.a.run() }
        let runB = Task { await p.b.run() }
        defer { runA.cancel(); runB.cancel() }

        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        try await exchange.send(opcode: 1, payload: [], reliable: true)
        #expect(await silent.received.until { $0.count == 1 })
        #expect(p.network.sent(from: p.bTransport.address).isEmpty, "no ack before MRP_STANDALONE_ACK_TIMEOUT")
        await p.clock.advance(by: .milliseconds(200))
        #expect(p.network.sent(from: p.bTransport.address).count == 1)
        let (_, ack) = try await p.decodeFromB(0)
        #expect(ack.opcode == SecureChannelOpcode.standaloneAck.rawValue)
        #expect(ack.isInitiator == false)
        // A's message is acknowledged (once A has taken the ack in), so A does not retransmit.
        #expect(await until(p.a.metricsChanges()) { await p.a.metrics().messagesAccepted == 1 })
        await p.clock.advance(by: .seconds(5))
        #expect(p.network.sent(from: p.aTransport.address).count == 1)
    }

    /// Issue #36: a reply slower than MRP_STANDALONE_ACK_TIMEOUT goes after the standalone ack,
    /// and that ack may be lost: the reply must still ack the request. Without it CHIP drops the
    /// reply, and A, still owed its ack, could send nothing reliable on the exchange (a PASE or
    /// CASE step failed with `.reliableMessageInFlight` when the node was slow under load).
    @Test func aLateReplyStillAcksTheRequestWhenTheStandaloneAckWasLost() async throws {
        let p = try await Pair()
        let late = LateAnswerHandler()
        await p.b.register(late, for: .forTesting)
        let runA = Task { await p.a.run() }
        let runB = Task { await p.b.run() }
        defer { runA.cancel(); runB.cancel() }
        let bAddress = p.bTransport.address
        p.network.setDropFilter { $0.from == bAddress }

        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        try await exchange.send(opcode: 1, payload: [], reliable: true)
        #expect(await late.received.until { $0.count == 1 })
        await p.clock.advance(by: .milliseconds(200))
        #expect(p.network.sent(from: bAddress).count == 1)
        let (_, lostAck) = try await p.decodeFromB(0)
        #expect(lostAck.opcode == SecureChannelOpcode.standaloneAck.rawValue)

        p.network.setDropFilter { _ in false }
        late.answer()
        let reply = try await exchange.receive(timeout: .seconds(30))
        #expect(reply.opcode == 2)
        let (request, _) = try await p.decodeFromA(0)
        let (_, replyHeader) = try await p.decodeFromB(1)
        #expect(replyHeader.acknowledgedMessageCounter == request.messageCounter)
        // A's request is acknowledged: its next reliable message on the exchange goes.
        try await exchange.send(opcode: 3, payload: [], reliable: true)
        #expect(await p.a.metrics().retransmissions == 0)
    }

    @Test func duplicatesAreReackedAndNotRedelivered() async throws {
        let p = try await Pair()
        let silent = SilentHandler(hold: .seconds(30))
        await p.b.register(silent, for: .forTesting)
        let runA = Task { await p.a.run() }
        let runB = Task { await p.b.run() }
        defer { runA.cancel(); runB.cancel() }

        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        try await exchange.send(opcode: 1, payload: [9], reliable: true)
        #expect(await silent.received.until { $0.count == 1 })
        let original = p.network.sent(from: p.aTransport.address)[0].bytes
        // Replay the datagram twice: each time an immediate standalone ack, no new exchange.
        p.network.inject(original, from: p.aTransport.address, to: p.bTransport.address)
        p.network.inject(original, from: p.aTransport.address, to: p.bTransport.address)
        #expect(await until(p.network.changes()) { p.network.sent(from: p.bTransport.address).count == 2 })
        for i in 0..<2 {
            let (_, ack) = try await p.decodeFromB(i)
            #expect(ack.opcode == SecureChannelOpcode.standaloneAck.rawValue)
        }
        let metrics = await p.b.metrics()
        #expect(metrics.droppedDuplicate == 2)
        #expect(silent.received.value.count == 1)
        #expect(metrics.exchangesOpened == 1)
    }

    /// A captured datagram replayed from another address is a duplicate: it must not move the
    /// session to that address (reports and retransmissions would follow it). A new,
    /// authenticated message from a new address is the peer roaming, and does.
    @Test func aReplayedDatagramDoesNotMoveThePeerAddress() async throws {
        let p = try await Pair()
        let silent = SilentHandler(hold: .seconds(30))
        await p.b.register(silent, for: .forTesting)
        await p.a.register(SilentHandler(hold: .seconds(30)), for: .forTesting)
        let runA = Task { await p.a.run() }
        let runB = Task { await p.b.run() }
        defer { runA.cancel(); runB.cancel() }

        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        try await exchange.send(opcode: 1, payload: [9], reliable: true)
        #expect(await silent.received.until { $0.count == 1 })
        let captured = p.network.sent(from: p.aTransport.address)[0].bytes
        let attacker = try SocketAddress(ipAddress: "127.0.0.1", port: 6666)
        p.network.inject(captured, from: attacker, to: p.bTransport.address)
        #expect(await until(p.b.metricsChanges()) { await p.b.metrics().droppedDuplicate == 1 })
        #expect(await p.b.sessionInfo(p.sessionB.handle)?.peerAddress == p.aTransport.address)

        // B's next message on the session still goes to A, and nothing ever went to the attacker.
        let fromB = try await p.b.openExchange(session: p.sessionB.handle, protocolID: .forTesting)
        try await fromB.send(opcode: 2, payload: [1], reliable: false)
        #expect(
            await until(p.network.changes()) { p.network.log.contains { $0.from == p.bTransport.address && $0.to == p.aTransport.address } }
        )
        #expect(!p.network.log.contains { $0.to == attacker })

        // A genuine new message from a new address moves the session there.
        let roamed = try SocketAddress(ipAddress: "127.0.0.1", port: 1001)
        let fresh = try await p.a.sealForTest(
            session: p.sessionA.handle,
            ProtocolHeader(isInitiator: true, needsAcknowledgement: false, opcode: 1, exchangeID: 777, protocolID: .forTesting))
        p.network.inject(fresh, from: roamed, to: p.bTransport.address)
        #expect(await until(p.b.metricsChanges()) { await p.b.sessionInfo(p.sessionB.handle)?.peerAddress == roamed })
    }

    /// Issue #22 item 5: exchanges a peer opens on one session are capped, so one session
    /// cannot fill the table; with the table full, session establishment still gets in.
    @Test func oneSessionCannotTakeTheWholeExchangeTable() async throws {
        let network = TestNetwork()
        let clock = MatterProtocol.ManualClock()
        let aTransport = network.makeTransport(port: 1000)
        let bTransport = network.makeTransport(port: 2000)
        let a = ExchangeManager(transport: aTransport, configuration: .init(jitter: { 0 }), clock: clock)
        let b = ExchangeManager(
            transport: bTransport,
            configuration: .init(maxExchanges: 8, maxExchangesPerSession: 4, jitter: { 0 }), clock: clock)
        var sessions: [SessionInfo] = []
        for _ in 0..<3 {
            sessions.append(
                try await installSessionPair(
                    initiator: a, aAddress: aTransport.address,
                    responder: b, bAddress: bTransport.address
                ).0)
        }
        let silent = SilentHandler(hold: .seconds(300))
        await b.register(silent, for: .forTesting)
        await b.register(silent, for: .secureChannel)
        let runA = Task { await a.run() }
        let runB = Task { await b.run() }
        defer { runA.cancel(); runB.cancel() }
        func open(_ count: Int, on session: SessionHandle, _ protocolID: ProtocolID = .forTesting) async throws {
            for _ in 0..<count {
                let exchange = try await a.openExchange(session: session, protocolID: protocolID)
                try await exchange.send(opcode: 0x20, payload: [], reliable: false)
            }
        }

        try await open(6, on: sessions[0].handle)  // 4 fit the session's share, 2 are refused
        #expect(await until(b.metricsChanges()) { await b.metrics().droppedOverload == 2 })
        #expect(await silent.received.until { $0.count == 4 })
        try await open(4, on: sessions[1].handle)  // another session still gets its share: the table is full
        #expect(await silent.received.until { $0.count == 8 })
        try await open(1, on: sessions[2].handle)
        #expect(await until(b.metricsChanges()) { await b.metrics().droppedOverload == 3 })

        // A new controller's session establishment still gets an exchange.
        let unsecured = await a.openUnsecuredSession(to: bTransport.address)
        try await open(1, on: unsecured, .secureChannel)
        #expect(await silent.received.until { $0.count == 9 })
        #expect(await b.metrics().droppedOverload == 3)
    }

    @Test func receiveTimesOutOnTheManagerClock() async throws {
        let p = try await Pair()
        let runA = Task { await p.a.run() }
        defer { runA.cancel() }
        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        let receiving = Task { try await exchange.receive(timeout: .seconds(5)) }
        #expect(await until(p.clock.registrations()) { p.clock.pendingCount > 0 })
        await p.clock.advance(by: .seconds(4))
        #expect(await p.a.metrics().exchangeTimeouts == 0)
        await p.clock.advance(by: .seconds(1))
        let result = await receiving.result
        #expect(throws: TransportError.timeout) { try result.get() }
        #expect(await p.a.metrics().exchangeTimeouts == 1)
    }

    @Test func unknownExchangeNonInitiatorMessagesAreAckedAndDropped() async throws {
        let p = try await Pair()
        let runB = Task { await p.b.run() }
        defer { runB.cancel() }
        // A "response" (I flag clear) on an exchange B never opened.
        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        _ = exchange
        let bytes = try await p.a.sealForTest(
            session: p.sessionA.handle,
            ProtocolHeader(isInitiator: false, needsAcknowledgement: true, opcode: 3, exchangeID: 4242, protocolID: .forTesting))
        p.network.inject(bytes, from: p.aTransport.address, to: p.bTransport.address)
        #expect(await until(p.network.changes()) { p.network.sent(from: p.bTransport.address).count == 1 })
        let (_, ack) = try await p.decodeFromB(0)
        #expect(ack.opcode == SecureChannelOpcode.standaloneAck.rawValue)
        #expect(ack.exchangeID == 4242 && ack.isInitiator)
        #expect(await p.b.metrics().droppedUnsolicited == 1)
    }

    @Test func closeSessionFromPeerRemovesTheSessionAndFailsItsExchanges() async throws {
        let p = try await Pair()
        let runA = Task { await p.a.run() }
        let runB = Task { await p.b.run() }
        defer { runA.cancel(); runB.cancel() }
        let events = p.b.sessionEvents()
        let exchangeOnB = try await p.b.openExchange(session: p.sessionB.handle, protocolID: .forTesting)
        let waiting = Task { try await exchangeOnB.receive(timeout: .seconds(30)) }
        await p.a.closeSession(p.sessionA.handle, notifyPeer: true)
        let result = await waiting.result
        #expect(throws: TransportError.sessionClosed) { try result.get() }
        #expect(await p.b.sessionInfo(p.sessionB.handle) == nil)
        var iterator = events.makeAsyncIterator()
        let event = await iterator.next()
        #expect(event == .closed(p.sessionB, .closedByPeer))
    }

    @Test func closeSessionsOfAFabric() async throws {
        let p = try await Pair()
        await p.a.bindFabric(3, toSession: p.sessionA.handle)
        #expect(await p.a.sessionInfo(p.sessionA.handle)?.fabricIndex == 3)
        await p.a.closeSessions(fabricIndex: 2)
        #expect(await p.a.sessionInfo(p.sessionA.handle) != nil)
        await p.a.closeSessions(fabricIndex: 3)
        #expect(await p.a.sessionInfo(p.sessionA.handle) == nil)
    }
}

extension ExchangeManager {
    /// Secure sessions as the manager holds them (tests decrypt captured traffic with them).
    func sessionsSnapshot() -> [SecureSession] { Array(sessions.secure.values) }

    /// A datagram on a session with an arbitrary protocol header (tests craft unusual messages).
    func sealForTest(session: SessionHandle, _ header: ProtocolHeader, payload: [UInt8] = []) throws -> [UInt8] {
        try sealDatagram(session: session, protocolHeader: header, payload: payload).0
    }
}

@Suite("A node's own service time per request (issue #43)")
struct ServiceTimeTests {
    @Test func percentilesAreBucketEdgesAtMostAQuarterHigh() throws {
        var h = ServiceTimeHistogram()
        #expect(h.percentile(0.5) == nil)
        for us in 1...100 { h.record(.microseconds(us)) }
        #expect(h.count == 100)
        #expect(h.maximum == .microseconds(100))
        let p50 = try #require(h.percentile(0.5))
        let p99 = try #require(h.percentile(0.99))
        #expect(p50 >= .microseconds(50) && p50 <= .microseconds(50) * 1.25)
        #expect(p99 >= .microseconds(99) && p99 <= .microseconds(100))
        var merged = ServiceTimeHistogram()
        merged.merge(h)
        merged.record(.seconds(2))
        #expect(merged.count == 101)
        #expect(merged.percentile(1) == .seconds(2))
        // Nothing a clock hands over breaks it: a negative time counts as zero.
        merged.record(.microseconds(-5))
        #expect(merged.count == 102)
    }

    /// A benchmark's phase between two marks: slow commissioning steps before the first mark
    /// must not show in the percentiles of the fast invokes after it.
    @Test func whatWasRecordedSinceAMarkLeavesOutWhatCameBefore() throws {
        var h = ServiceTimeHistogram()
        for _ in 0..<50 { h.record(.milliseconds(20)) }
        let mark = h
        for _ in 0..<10 { h.record(.microseconds(40)) }
        let phase = h.since(mark)
        #expect(phase.count == 10)
        #expect(phase.total == .microseconds(400))
        let p99 = try #require(phase.percentile(0.99))
        #expect(p99 >= .microseconds(40) && p99 <= .microseconds(50))
        #expect(h.percentile(0.5) == .milliseconds(20))
        #expect(h.since(h).percentile(0.5) == nil)
        // A mark from another histogram (more of a kind than now) never goes below zero.
        var other = ServiceTimeHistogram()
        for _ in 0..<100 { other.record(.microseconds(40)) }
        #expect(h.since(other).count == 50)
    }

    /// From the message layer taking the request to the response leaving: the standalone ack
    /// the node sends meanwhile is not the response.
    @Test func aRequestIsTimedFromItsDatagramToItsResponse() async throws {
        let p = try await ReliabilityTests.Pair()
        let late = LateAnswerHandler()
        await p.b.register(late, for: .forTesting)
        let runA = Task { await p.a.run() }
        let runB = Task { await p.b.run() }
        defer { runA.cancel(); runB.cancel() }

        let exchange = try await p.a.openExchange(session: p.sessionA.handle, protocolID: .forTesting)
        try await exchange.send(opcode: 1, payload: [], reliable: true)
        #expect(await late.received.until { $0.count == 1 })
        await p.clock.advance(by: .milliseconds(200))  // the standalone ack goes
        #expect(await p.b.serviceTimes().isEmpty)
        late.answer()
        _ = try await exchange.receive(timeout: .seconds(30))
        let served = await p.b.serviceTimes()
        let kind = ServedRequest.kind(protocolID: .forTesting, opcode: 1)
        #expect(Array(served.keys) == [kind])
        #expect(served[kind]?.count == 1)
        #expect(served[kind]?.maximum == .milliseconds(200))
        #expect(ServedRequest.kind(protocolID: .interactionModel, opcode: InteractionOpcode.invokeRequest.rawValue) == "invoke")
        #expect(ServedRequest.kind(protocolID: .secureChannel, opcode: SecureChannelOpcode.sigma1.rawValue) == "sigma1")
    }
}
