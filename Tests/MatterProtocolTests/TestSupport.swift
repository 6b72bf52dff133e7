import Foundation
import MatterCrypto
@testable import MatterProtocol
import NIOConcurrencyHelpers
import NIOCore
import TestWaiting
import Testing

/// An in-memory datagram network for tests driven by a ManualClock: every datagram is
/// logged, and a filter can drop chosen ones to simulate loss.
final class TestNetwork: Sendable {
    struct Sent: Sendable {
        let from: SocketAddress
        let to: SocketAddress
        let bytes: [UInt8]
    }

    private struct State {
        var endpoints: [SocketAddress: AsyncStream<InboundDatagram>.Continuation] = [:]
        var log: [Sent] = []
        var drop: @Sendable (Sent) -> Bool = { _ in false }
    }

    // The lock guards the routing table, the log and the filter.
    private let state = NIOLockedValueBox(State())
    private let logged = Watched(0)

    /// Yields after each datagram joins the log (coalesced while unread).
    func changes() -> AsyncStream<Void> { logged.changes() }

    func makeTransport(port: Int) -> TestTransport {
        let address = try! SocketAddress(ipAddress: "127.0.0.1", port: port)
        let (stream, continuation) = AsyncStream<InboundDatagram>.makeStream()
        state.withLockedValue { $0.endpoints[address] = continuation }
        return TestTransport(network: self, address: address, inbound: stream)
    }

    func setDropFilter(_ filter: @escaping @Sendable (Sent) -> Bool) {
        state.withLockedValue { $0.drop = filter }
    }

    var log: [Sent] { state.withLockedValue { $0.log } }

    func sent(from address: SocketAddress) -> [Sent] { log.filter { $0.from == address } }

    func route(_ bytes: [UInt8], from: SocketAddress, to: SocketAddress) {
        let sent = Sent(from: from, to: to, bytes: bytes)
        let target = state.withLockedValue { s -> AsyncStream<InboundDatagram>.Continuation? in
            s.log.append(sent)
            return s.drop(sent) ? nil : s.endpoints[to]
        }
        logged.update { $0 += 1 }
        target?.yield(InboundDatagram(bytes: bytes, source: from))
    }

    /// Delivers raw bytes to an endpoint as if `from` had sent them (not logged).
    func inject(_ bytes: [UInt8], from: SocketAddress, to: SocketAddress) {
        let target = state.withLockedValue { $0.endpoints[to] }
        target?.yield(InboundDatagram(bytes: bytes, source: from))
    }

    func closeAll() {
        let all = state.withLockedValue { Array($0.endpoints.values) }
        for c in all { c.finish() }
    }
}

final class TestTransport: DatagramTransport {
    let network: TestNetwork
    let address: SocketAddress
    let inbound: AsyncStream<InboundDatagram>
    var inboundOverflowCount: UInt64 { 0 }

    init(network: TestNetwork, address: SocketAddress, inbound: AsyncStream<InboundDatagram>) {
        self.network = network
        self.address = address
        self.inbound = inbound
    }

    func send(_ bytes: [UInt8], to address: SocketAddress) {
        network.route(bytes, from: self.address, to: address)
    }
}

/// Installs a matching PASE session pair in two managers (keys shared, IDs crossed).
func installSessionPair(
    initiator a: ExchangeManager, aAddress: SocketAddress,
    responder b: ExchangeManager, bAddress: SocketAddress,
    kind: SessionKind = .pase, initiatorNodeID: UInt64 = 0,
    responderNodeID: UInt64 = 0
) async throws -> (SessionInfo, SessionInfo) {
    let keys = SessionKeys(
        i2rKey: SecureRandom.bytes(16), r2iKey: SecureRandom.bytes(16),
        attestationChallenge: SecureRandom.bytes(16))
    let aID = try #require(await a.allocateSessionID())
    let bID = try #require(await b.allocateSessionID())
    let infoA = try await a.installSecureSession(
        SecureSessionParameters(
            kind: kind, role: .initiator, localSessionID: aID, peerSessionID: bID, keys: keys,
            localNodeID: initiatorNodeID, peerNodeID: responderNodeID, peerAddress: bAddress))
    let infoB = try await b.installSecureSession(
        SecureSessionParameters(
            kind: kind, role: .responder, localSessionID: bID, peerSessionID: aID, keys: keys,
            localNodeID: responderNodeID, peerNodeID: initiatorNodeID, peerAddress: aAddress))
    return (infoA, infoB)
}

/// Answers each first message with its payload reversed, opcode + 1; then echoes
/// further messages until the exchange ends.
struct EchoHandler: ProtocolHandler {
    let received = NIOLockedValueBox<[Message]>([])

    func handle(exchange: Exchange, first message: Message) async {
        received.withLockedValue { $0.append(message) }
        try? await exchange.send(opcode: message.opcode &+ 1, payload: message.payload.reversed(), reliable: true)
    }
}

/// Receives the first message and never answers (to observe standalone acks).
struct SilentHandler: ProtocolHandler {
    let received = Watched<[Message]>([])
    let hold: Duration

    func handle(exchange: Exchange, first message: Message) async {
        received.update { $0.append(message) }
        _ = try? await exchange.receive(timeout: hold)
    }
}

/// Receives the first message and answers it (opcode + 1, reliably) only when `answer()` is
/// called: a handler slower than MRP_STANDALONE_ACK_TIMEOUT.
final class LateAnswerHandler: ProtocolHandler {
    let received = Watched<[Message]>([])
    private let go: AsyncStream<Void>
    private let goAhead: AsyncStream<Void>.Continuation

    init() {
        (go, goAhead) = AsyncStream.makeStream()
    }

    func answer() { goAhead.yield() }

    func handle(exchange: Exchange, first message: Message) async {
        received.update { $0.append(message) }
        for await _ in go { break }
        try? await exchange.send(opcode: message.opcode &+ 1, payload: [], reliable: true)
    }
}
