import NIOCore
import NIOPosix
import TestWaiting

/// TCP to a local server on NIO, for what URLSession will not send (another Host, a WebSocket
/// upgrade from a foreign Origin) and for holding many silent connections, without blocking a
/// thread the server needs. Every connection is closed by us after `limit` at the latest.
enum RawHTTPClient {
    /// Connected from `source` (any of 127/8 is loopback) to 127.0.0.1:`port`; `closed` counts
    /// it when it closes.
    static func connect(
        port: Int, from source: String = "127.0.0.1", closed: Watched<Int>? = nil, reader: StatusLineReader? = nil,
        limit: TimeAmount = .seconds(10)
    ) async throws -> any Channel {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let reader { try channel.pipeline.syncOperations.addHandler(reader) }
                }
            }
            .bind(to: try SocketAddress(ipAddress: source, port: 0))
            .connect(host: "127.0.0.1", port: port).get()
        channel.closeFuture.whenComplete { _ in closed?.update { $0 += 1 } }
        channel.eventLoop.scheduleTask(in: limit) { channel.close(promise: nil) }
        return channel
    }

    /// One request head (its blank line added): the status of the answer, 0 when none came.
    static func status(port: Int, _ head: String) async throws -> Int {
        let reader = StatusLineReader()
        let channel = try await connect(port: port, reader: reader)
        try await channel.writeAndFlush(ByteBuffer(string: head + "\r\n"))
        let line = try await reader.line.get()
        try? await channel.close()
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

/// The first line a server answers (its status line), or what came before it closed.
final class StatusLineReader: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = ByteBuffer
    // Only its event loop touches these; `line` is a promise any thread may wait on.
    private var text = ""
    private var promise: EventLoopPromise<String>?
    let line: EventLoopFuture<String>

    init() {
        let promise = MultiThreadedEventLoopGroup.singleton.next().makePromise(of: String.self)
        self.promise = promise
        line = promise.futureResult
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        text += String(buffer: unwrapInboundIn(data))
        if let end = text.range(of: "\r\n") { answer(String(text[..<end.lowerBound])) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        answer(text)
        context.fireChannelInactive()
    }

    private func answer(_ line: String) {
        promise?.succeed(line)
        promise = nil
    }
}
