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
/// library below accepts them. There too it counts each data message as it arrives against
/// the connection's, its address's and its home's frame limits (`RelayTraffic`): a message
/// past one is cut out of the byte stream here, before anything decodes or queues it, and a
/// sustained flood closes the connection (1008) however fast the relay reads the rest. Every
/// read's bytes and data frames, shed or not, count against the address's and the home's
/// budgets as they arrive; while one is spent the connection is not read
/// (its bytes wait in the kernel and TCP pushes back), and one held back time after time for
/// `overLimitCloseAfter` is closed (1008).
final class ConnectionGuardHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let limiter: ConnectionLimiter
    private let traffic: RelayTraffic
    private let connection: ConnectionTraffic
    private let headTimeout: TimeAmount
    private var timer: Scheduled<Void>?
    /// Bytes of the request head seen so far, up to its end.
    private var recent: [UInt8] = []
    private var headComplete = false
    /// Set once the response head "HTTP/1.1 101" went out: the client now sends frames.
    private var upgraded = false
    private var sawResponse = false
    private var frames = ClientFrameReader()
    private var frameLimiter: RelayFrameLimiter
    /// Closing after a protocol error or a flood: nothing more is passed on.
    private var closing = false
    /// Reading is paused: the connection's home or address is over its limit, so its bytes
    /// wait in the kernel (TCP pushes back on the sender) instead of costing the relay a read.
    private var paused = false
    private var readWanted = false
    /// A held read is looked at again this often at most, whatever the debt (the limits'
    /// clock may be a test's, standing still).
    static let longestPause = TimeAmount.milliseconds(100)
    /// Since when this connection has been held back, each time within a second of the
    /// last (`lastHeld`): held back that long in a row (`overLimitCloseAfter`), it is closed.
    private var heldSince: Duration?
    private var lastHeld: Duration = .zero

    init(limiter: ConnectionLimiter, traffic: RelayTraffic, connection: ConnectionTraffic, headTimeout: TimeAmount) {
        self.limiter = limiter
        self.traffic = traffic
        self.connection = connection
        self.headTimeout = headTimeout
        frameLimiter = RelayFrameLimiter(framesPerSecond: traffic.framesPerSecond, burst: traffic.frameBurst, now: traffic.clock.now)
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        let (connection, log) = (connection, traffic.headTimeouts)
        timer = context.eventLoop.scheduleTask(in: headTimeout) {
            // Its end is not an error of the server's: counted and summarized instead.
            connection.timedOut = true
            log.record()
            loopBound.value.close(promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if !sawResponse {
            sawResponse = true
            let buffer = unwrapOutboundIn(data)
            upgraded = buffer.readableBytesView.starts(with: Array("HTTP/1.1 101".utf8))
            if upgraded {
                // The connection's burst starts with its WebSocket.
                frameLimiter = RelayFrameLimiter(
                    framesPerSecond: traffic.framesPerSecond, burst: traffic.frameBurst, now: traffic.clock.now)
            }
        }
        context.write(data, promise: promise)
    }

    func read(context: ChannelHandlerContext) {
        guard !paused else {
            readWanted = true
            return
        }
        guard !closing else { return }
        let now = traffic.clock.now
        if let (limit, debt) = traffic.holdOff(connection, at: now) {
            // Its home or address sent more bytes than it may: nothing more is read until that is paid.
            hold(context: context, for: limit, pause: TimeAmount(debt), at: now)
            return
        }
        context.read()
    }

    /// Pauses reading for `pause` (at most `longestPause`, then looked at again), and closes
    /// the connection once it has been held back, time after time, for `overLimitCloseAfter`.
    private func hold(context: ChannelHandlerContext, for limit: RelaySharedLimit, pause: TimeAmount, at now: Duration) {
        guard !closedForStayingOver(limit, context: context, at: now) else { return }
        traffic.metrics.readHeld(limit)
        guard !paused else { return }
        paused = true
        readWanted = true
        let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let wait = max(.milliseconds(1), min(pause, Self.longestPause))
        context.eventLoop.scheduleTask(in: wait) {
            let (handler, context) = loopBound.value
            handler.paused = false
            if handler.readWanted {
                handler.readWanted = false
                handler.read(context: context)  // looked at again: still over, it waits again
            }
        }
    }

    /// Notes that the connection met its home's or address's limit (held back, or frames of
    /// it shed); one that met it within a second of the last time, again and again for
    /// `overLimitCloseAfter`, is closed (true).
    private func closedForStayingOver(_ limit: RelaySharedLimit, context: ChannelHandlerContext, at now: Duration) -> Bool {
        if let since = heldSince, now - lastHeld <= .seconds(1) {
            if now - since >= traffic.overLimitCloseAfter {
                traffic.metrics.closedForStayingOverLimit()
                traffic.logger.notice(
                    "over its \(limit.rawValue)'s traffic limit for \(traffic.overLimitCloseAfter); closing the connection",
                    metadata: ["address": "\(connection.address)"])
                close(context: context, code: 1008, reason: "traffic limit exceeded")
                return true
            }
        } else {
            heldSince = now
        }
        lastHeld = now
        return false
    }

    /// Writes a close frame (upgraded connections; written here, below the WebSocket layer) and closes.
    private func close(context: ChannelHandlerContext, code: UInt16, reason: String) {
        closing = true
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        guard upgraded else {
            context.close(promise: nil)
            return
        }
        let frame = context.channel.allocator.buffer(bytes: Self.closeFrame(code: code, reason: reason))
        context.writeAndFlush(wrapOutboundOut(frame)).whenComplete { _ in loopBound.value.close(promise: nil) }
        // A peer that reads nothing never lets the close frame out: closed anyway.
        context.eventLoop.scheduleTask(in: .seconds(1)) { loopBound.value.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !closing else { return }
        let buffer = unwrapInboundIn(data)
        if upgraded {
            readFrames(context: context, buffer)
            return
        }
        // Counted as it arrives, before anything decodes it.
        traffic.arrived(bytes: buffer.readableBytes, frames: 0, on: connection, at: traffic.clock.now)
        if !headComplete {
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

    /// Passes on the frames of `buffer` within the limits; closes on an unmasked frame or a flood.
    private func readFrames(context: ChannelHandlerContext, _ buffer: ByteBuffer) {
        let now = traffic.clock.now
        var dropped: [RelayRejection: Int] = [:]
        var flooded = false
        var arrived = 0
        let kept = frames.read(buffer) { () -> Bool in
            switch frameLimiter.admit(at: now) {
            case .pass:
                // Within its own limit: its home and address pay for it, shed by them or not
                // (past its own, the connection's flood rule deals with it).
                arrived += 1
            case .drop:
                dropped[.rateLimited, default: 0] += 1
                return false
            case .close:
                dropped[.rateLimited, default: 0] += 1
                flooded = true
                return false
            }
            guard traffic.addresses.take(connection.address, at: now) else {
                dropped[.addressRateLimited, default: 0] += 1
                return false
            }
            if let home = connection.home, !traffic.homes.take(home, at: now) {
                dropped[.homeRateLimited, default: 0] += 1
                return false
            }
            return true
        }
        // Counted as they arrive, before anything decodes them.
        traffic.arrived(bytes: buffer.readableBytes, frames: arrived, on: connection, at: now)
        for (reason, count) in dropped {
            traffic.metrics.rejected(reason, count: count)
            if let home = connection.home, let limit = RelayRateLimit(reason) {
                traffic.metrics.rateLimitDrops(home: home, limit, count: count)
            }
        }
        guard let kept, !flooded else {
            if flooded {
                traffic.logger.notice("frame flood; closing the connection", metadata: ["address": "\(connection.address)"])
            }
            // Close 1008 (policy violation) or 1002 (protocol error).
            close(context: context, code: flooded ? 1008 : 1002, reason: flooded ? "frame rate limit exceeded" : "")
            return
        }
        // Reads come as fast as the routing behind takes frames, so a flood may be shed here
        // without ever being held back: that, second after second, closes it too.
        if let limit: RelaySharedLimit = dropped[.addressRateLimited] != nil ? .address : dropped[.homeRateLimited] != nil ? .home : nil,
            closedForStayingOver(limit, context: context, at: now)
        {
            return
        }
        if kept.count == 1, kept[0].count == buffer.readableBytes {
            context.fireChannelRead(wrapInboundOut(buffer))
            return
        }
        for range in kept {
            if let slice = buffer.getSlice(at: buffer.readerIndex + range.lowerBound, length: range.count) {
                context.fireChannelRead(wrapInboundOut(slice))
            }
        }
    }

    /// An unmasked server frame closing the connection with `code`.
    static func closeFrame(code: UInt16, reason: String) -> [UInt8] {
        let payload = [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8.prefix(123))
        return [WebSocketFrame.fin | WebSocketFrame.close, UInt8(payload.count)] + payload
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        limiter.release(connection.address)
        context.fireChannelInactive()
    }

    private static func containsHeadEnd(_ bytes: [UInt8]) -> Bool {
        let end: [UInt8] = [13, 10, 13, 10]
        guard bytes.count >= 4 else { return false }
        for start in 0...(bytes.count - 4) where bytes[start] == 13 && Array(bytes[start..<start + 4]) == end { return true }
        return false
    }
}

/// Follows the frames a WebSocket client sends, header by header, across reads, and cuts
/// out the data messages (every frame of a fragmented one) the caller refuses.
struct ClientFrameReader {
    private var header: [UInt8] = []
    private var payloadLeft = 0
    /// The frame being read is cut out.
    private var dropping = false
    /// The data message being read (its continuation frames) is cut out.
    private var droppingMessage = false

    /// Consumes `buffer`; `admit` is asked once per data message, at its first byte. Returns
    /// the byte ranges (offsets into the readable bytes) to pass on, nil as soon as a frame
    /// header without the mask bit is seen. Control frames are always passed on.
    mutating func read(_ buffer: ByteBuffer, admit: () -> Bool) -> [Range<Int>]? {
        var kept: [Range<Int>] = []
        func keep(_ range: Range<Int>) {
            guard !range.isEmpty else { return }
            if let last = kept.last, last.upperBound == range.lowerBound {
                kept[kept.count - 1] = last.lowerBound..<range.upperBound
            } else {
                kept.append(range)
            }
        }
        let unmasked = buffer.withUnsafeReadableBytes { bytes -> Bool in
            var i = 0
            while i < bytes.count {
                if payloadLeft > 0 {
                    let n = min(payloadLeft, bytes.count - i)
                    if !dropping { keep(i..<i + n) }
                    payloadLeft -= n
                    i += n
                    continue
                }
                let byte = bytes[i]
                if header.isEmpty {
                    // A frame starts: control frames pass, continuations follow their message.
                    let opcode = byte & WebSocketFrame.opcodeMask
                    if opcode & WebSocketFrame.control != 0 {
                        dropping = false
                    } else if opcode == 0 {
                        dropping = droppingMessage
                    } else {
                        dropping = !admit()
                        droppingMessage = dropping
                    }
                }
                header.append(byte)
                if !dropping { keep(i..<i + 1) }
                i += 1
                guard header.count >= 2 else { continue }
                guard header[1] & WebSocketFrame.masked != 0 else { return true }
                let short = Int(header[1] & WebSocketFrame.lengthMask)
                let extended = short == 126 ? 2 : short == 127 ? 8 : 0
                guard header.count == 2 + extended + 4 else { continue }  // length, then the masking key
                payloadLeft = extended == 0 ? short : header[2..<(2 + extended)].reduce(0) { $0 << 8 | Int($1) }
                header = []
            }
            return false
        }
        return unmasked ? nil : kept
    }
}

/// A server child channel that puts `ConnectionGuardHandler` before `Base`'s pipeline,
/// refusing (closing at once) a connection whose address has its share of connections.
struct GuardedChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let limiter: ConnectionLimiter
    let traffic: RelayTraffic
    let headTimeout: Duration

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        guard limiter.admit(address) else {
            logger.notice("connection refused: \(address) holds \(limiter.maxPerAddress) already")
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        let connection = traffic.opened(channel, address: address)
        do {
            try channel.pipeline.syncOperations.addHandler(
                ConnectionGuardHandler(limiter: limiter, traffic: traffic, connection: connection, headTimeout: TimeAmount(headTimeout)),
                position: .first)
        } catch {
            limiter.release(address)
            traffic.closed(channel)
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        // A connection the request-head timeout closed ends without an error line of its own.
        // Its entry stays until here: the server may get round to handling it after it closed.
        let connection = traffic.connection(value.channel)
        await base.handle(value: value, logger: connection.map { logger.silencedAfterTimeout(of: $0) } ?? logger)
        traffic.closed(value.channel)
    }
}
