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
/// line) within the timeout, the way a slow or silent client holds a socket forever.
final class ConnectionGuardHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let limiter: ConnectionLimiter
    private let address: String
    private let headTimeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// Bytes of the request head seen so far, up to its end.
    private var recent: [UInt8] = []
    private var headComplete = false

    init(limiter: ConnectionLimiter, address: String, headTimeout: TimeAmount) {
        self.limiter = limiter
        self.address = address
        self.headTimeout = headTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(in: headTimeout) { loopBound.value.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
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
