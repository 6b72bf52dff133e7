import MatterCrypto
@testable import MatterProtocol
import NIOCore
import Testing
import TestWaiting

/// A node on real UDP bound to loopback on an ephemeral port, its exchange manager running.
struct LoopbackNode {
    let transport: UDPTransport
    let manager: ExchangeManager
    let runner: Task<Void, Never>

    var address: SocketAddress { try! SocketAddress(ipAddress: host, port: transport.port) }
    let host: String

    static func start(
        host: String = "127.0.0.1",
        configuration: ExchangeManager.Configuration = .init()
    ) async throws -> LoopbackNode {
        let transport = try await UDPTransport.bind(.init(port: 0, binding: .addresses([host])))
        let manager = ExchangeManager(transport: transport, configuration: configuration)
        let runner = Task { await manager.run() }
        return LoopbackNode(transport: transport, manager: manager, runner: runner, host: host)
    }

    func stop() async {
        runner.cancel()
        await transport.close()
    }
}

@Suite("Exchanges over UDP on loopback")
struct LoopbackExchangeTests {
    @Test(arguments: ["127.0.0.1", "::1"])
    func exchangeRoundTrip(host: String) async throws {
        let device = try await LoopbackNode.start(host: host)
        let controller = try await LoopbackNode.start(host: host)
        defer {
            PendingCleanups.run {
                await device.stop(); await controller.stop()
            }
        }
        #expect(device.transport.port != 0)

        let echo = EchoHandler()
        await device.manager.register(echo, for: .forTesting)
        let (sessionC, _) = try await installSessionPair(
            initiator: controller.manager, aAddress: controller.address,
            responder: device.manager, bAddress: device.address)
        for round in 0..<3 {
            let exchange = try await controller.manager.openExchange(session: sessionC.handle, protocolID: .forTesting)
            let reply = try await exchange.request(
                opcode: UInt8(round), payload: Array(0..<UInt8(10 + round)),
                timeout: .seconds(5))
            #expect(reply.opcode == UInt8(round) + 1)
            #expect(reply.payload == Array((0..<UInt8(10 + round)).reversed()))
            #expect(reply.exchangeID == exchange.id)
            #expect(reply.session.kind == .pase)
            await exchange.close()
        }
        #expect(echo.received.withLockedValue { $0.count } == 3)
        #expect(echo.received.withLockedValue { $0.allSatisfy { $0.protocolHeader.isInitiator } })
        let m = await device.manager.metrics()
        #expect(m.datagramsReceived == m.messagesAccepted + m.droppedTotal)
    }

    @Test func aPortInUseIsRefused() async throws {
        let first = try await UDPTransport.bind(.init(port: 0, binding: .addresses(["127.0.0.1"])))
        defer { PendingCleanups.run { await first.close() } }
        await #expect(throws: (any Error).self) {
            let second = try await UDPTransport.bind(.init(port: first.port, binding: .addresses(["127.0.0.1"])))
            await second.close()
        }
    }

    @Test func dualStackSocketServesIPv4Peers() async throws {
        let device = try await UDPTransport.bind(.init(port: 0, binding: .dualStack))
        let manager = ExchangeManager(transport: device)
        let runner = Task { await manager.run() }
        let controller = try await LoopbackNode.start(host: "127.0.0.1")
        defer {
            PendingCleanups.run {
                runner.cancel(); await device.close(); await controller.stop()
            }
        }
        await manager.register(EchoHandler(), for: .forTesting)
        let deviceAddress = try SocketAddress(ipAddress: "127.0.0.1", port: device.port)
        // The device sees the IPv4 peer as a v4-mapped IPv6 address and answers through it.
        let mapped = try SocketAddress(ipAddress: "::ffff:127.0.0.1", port: controller.transport.port)
        let (sessionC, _) = try await installSessionPair(
            initiator: controller.manager, aAddress: mapped,
            responder: manager, bAddress: deviceAddress)
        let exchange = try await controller.manager.openExchange(session: sessionC.handle, protocolID: .forTesting)
        let reply = try await exchange.request(opcode: 1, payload: [4, 5], timeout: .seconds(5))
        #expect(reply.payload == [5, 4])
    }
}
