import Hummingbird
import HummingbirdCore
import Logging
import NIOConcurrencyHelpers
import NIOCore

/// Open TCP connections per client address, capped: one address cannot take every file
/// descriptor the relay has (1,100 idle sockets once stopped `/health` from answering).
final class ConnectionLimiter: Sendable {
    let maxPerAddress: Int
    // The lock guards the counts.
    private let counts = NIOLockedValueBox<[String: Int]>([:])

    init(maxPerAddress: Int) { self.maxPerAddress = maxPerAddress }

    /// Counts a new connection from `address`; false (not counted) when it has its share.
    func admit(_ address: String) -> Bool {
        counts.withLockedValue { counts in
            let open = counts[address, default: 0]
            guard open < maxPerAddress else { return false }
            counts[address] = open + 1
            return true
        }
    }

    func release(_ address: String) {
        counts.withLockedValue { counts in
            let left = counts[address, default: 1] - 1
            counts[address] = left > 0 ? left : nil
        }
    }

    func open(from address: String) -> Int { counts.withLockedValue { $0[address, default: 0] } }
}

/// First in every connection's pipeline: gives the connection's slot back when it closes,
/// and closes a connection that has not sent a whole HTTP request head (ended by an empty
/// line) within the timeout, the way a slow or silent client holds a socket forever. Once
/// the relay answered 101 (a WebSocket), it reads each frame header the client sends and
/// closes (1002) on an unmasked one, as RFC 6455 5.1 requires of a server; the WebSocket
/// library below accepts them.
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let limiter: ConnectionLimiter
    private let address: String
    private let headTimeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// Bytes of the request head seen so far, up to its end.
    private var recent: [UInt8] = []
    private var headComplete = false
    /// Set once the response head "HTTP/1.1 101" went out: the client now sends frames.
    private var upgraded = false
    private var sawResponse = false
    private var frames = ClientFrameReader()

    init(limiter: ConnectionLimiter, address: String, headTimeout: TimeAmount) {
        self.limiter = limiter
        self.address = address
        self.headTimeout = headTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: headTimeout) { loopBound.value.close(promise: nil) }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !sawResponse {
            sawResponse = true
            let buffer = unwrapOutboundIn(data)
            upgraded = buffer.readableBytesView.starts(with: Array("HTTP/1.1 101".utf8))
        }
        context.write(data, promise: promise)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if upgraded {
            guard frames.read(unwrapInboundIn(data)) else {
                // Close 1002 (protocol error), written here, below the WebSocket layer.
                let close = context.channel.allocator.buffer(bytes: [0x88, 0x02, 0x03, 0xEA])
                let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
                context.writeAndFlush(wrapOutboundOut(close)).whenComplete { _ in loopBound.value.close(promise: nil) }
                upgraded = false
                return
            }
        }
        if !headComplete {
            let buffer = unwrapInboundIn(data)
            recent.append(contentsOf: buffer.readableBytesView)
            if recent.count > 3, Self.containsHeadEnd(recent) {
                headComplete = true
                timer?.cancel()
                recent = []
            } else if recent.count > 3 {
                recent.removeFirst(recent.count - 3)  // "\r\n\r\n" may straddle two reads
            }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        limiter.release(address)
        context.fireChannelInactive()
    }

    private static func containsHeadEnd(_ bytes: [UInt8]) -> Bool {
        let end: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4 else { return false }
        for start in 0...(bytes.count - 4) where bytes[start] == 13 && Array(bytes[start..<start + 4]) == end { return true }
        return false
    }
}

/// Follows the frames a WebSocket client sends, header by header, across reads.
struct ClientFrameReader {
    private var header: [UInt8] = []
    private var payloadLeft = 0

    /// Consumes `buffer`; false as soon as a frame header without the mask bit is seen.
    mutating func read(_ buffer: ByteBuffer) -> Bool {
        var bytes = buffer.readableBytesView[...]
        while !bytes.isEmpty {
            if payloadLeft > 0 {
                let n = min(payloadLeft, bytes.count)
                payloadLeft -= n
                bytes = bytes.dropFirst(n)
                continue
            }
            header.append(bytes.removeFirst())
            guard header.count >= 2 else { continue }
            guard header[1] & 0x80 != 0 else { return false }
            let short = Int(header[1] & 0x7F)
            let extended = short == 126 ? 2 : short == 127 ? 8 : 0
            guard header.count == 2 + extended + 4 else { continue }  // length, then the masking key
            payloadLeft = extended == 0 ? short : header[2..<(2 + extended)].reduce(0) { $0 << 8 | Int($1) }
            header = []
        }
        return true
    }
}

/// A server child channel that puts `ConnectionGuardHandler` before `Base`'s pipeline,
/// refusing (closing at once) a connection whose address has its share of connections.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let limiter: ConnectionLimiter
    let headTimeout: Duration

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        guard limiter.admit(address) else {
            logger.notice("connection refused: \(address) holds \(limiter.maxPerAddress) already")
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        do {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGuardHandler(limiter: limiter, address: address, headTimeout: TimeAmount(headTimeout)), position: .first)
        } catch {
            limiter.release(address)
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
