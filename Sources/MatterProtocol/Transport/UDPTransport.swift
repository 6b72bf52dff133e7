import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Matter over UDP (spec 4.3.1) on SwiftNIO datagram channels.
public final class UDPTransport: DatagramTransport {
    /// Which sockets to open.
    public enum Binding: Sendable, Hashable {
        /// One IPv6 socket on `::` that also receives IPv4 (v4-mapped addresses); where the
        /// host has no IPv6 (a container on a network without it), one IPv4 socket instead.
        case dualStack
        /// Only IPv4, on 0.0.0.0.
        case ipv4
        /// Only IPv6, on `::` (IPV6_V6ONLY).
        case ipv6Only
        /// Specific local addresses, e.g. ["127.0.0.1"] or ["::1"], all on the same port.
        case addresses([String])
    }

    public struct Configuration: Sendable {
        /// UDP port; 0 picks an ephemeral one (the actual port is `port` after binding).
        public var port: Int
        public var binding: Binding
        /// Datagrams queued for the exchange manager before new ones are dropped.
        public var inboundQueueLimit: Int

        public init(port: Int = 5540, binding: Binding = .dualStack, inboundQueueLimit: Int = 1024) {
            self.port = port
            self.binding = binding
            self.inboundQueueLimit = inboundQueueLimit
        }
    }

    public let inbound: AsyncStream<InboundDatagram>
    private let continuation: AsyncStream<InboundDatagram>.Continuation
    private let channels: [any Channel]
    /// Local addresses the sockets are bound to.
    public let localAddresses: [SocketAddress]
    private let overflow: NIOLockedValueBox<UInt64>

    /// Why `.dualStack` fell back to IPv4 only (the error binding `::` gave), or nil.
    public let ipv6Unavailable: String?

    /// The bound UDP port.
    public var port: Int { localAddresses.first?.port ?? 0 }

    public var inboundOverflowCount: UInt64 { overflow.withLockedValue { $0 } }

    private init(channels: [any Channel], inbound: AsyncStream<InboundDatagram>,
                 continuation: AsyncStream<InboundDatagram>.Continuation, overflow: NIOLockedValueBox<UInt64>,
                 ipv6Unavailable: String?) {
        self.channels = channels
        self.ipv6Unavailable = ipv6Unavailable
        self.inbound = inbound
        self.continuation = continuation
        self.overflow = overflow
        self.localAddresses = channels.compactMap(\.localAddress)
    }

    /// Opens the sockets. With several of them they share the port of the first. A `.dualStack`
    /// binding that cannot open `::` opens `0.0.0.0` and says why in one line on `logger`
    /// (and in `ipv6Unavailable`): a device without IPv6 still serves IPv4 controllers.
    public static func bind(_ configuration: Configuration = Configuration(),
                            group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
                            logger: Logger? = nil) async throws -> UDPTransport {
        guard configuration.binding == .dualStack else { return try await open(configuration, group: group, ipv6Unavailable: nil) }
        do {
            return try await open(configuration, group: group, ipv6Unavailable: nil)
        } catch let error as IOError where error.errnoCode == EADDRINUSE {
            throw error  // the port is taken: IPv4 would not help
        } catch {
            var ipv4 = configuration
            ipv4.binding = .ipv4
            let transport = try await open(ipv4, group: group, ipv6Unavailable: "\(error)")
            logger?.notice("IPv6 is unavailable here (\(error)): UDP port \(transport.port) serves IPv4 only")
            return transport
        }
    }

    private static func open(_ configuration: Configuration, group: any EventLoopGroup,
                             ipv6Unavailable: String?) async throws -> UDPTransport {
        let (stream, continuation) = AsyncStream<InboundDatagram>.makeStream(
            bufferingPolicy: .bufferingNewest(max(1, configuration.inboundQueueLimit)))
        let overflow = NIOLockedValueBox<UInt64>(0)
        let targets: [(host: String, v6Only: Bool?)]
        switch configuration.binding {
        case .dualStack: targets = [("::", false)]
        case .ipv4: targets = [("0.0.0.0", nil)]
        case .ipv6Only: targets = [("::", true)]
        case .addresses(let hosts): targets = hosts.map { ($0, $0.contains(":") ? true : nil) }
        }
        var channels: [any Channel] = []
        var port = configuration.port
        do {
            for target in targets {
                // No SO_REUSEADDR: with it Linux lets two UDP sockets share a port, and two simulated
                // devices on one port would silently split each other's traffic.
                var bootstrap = DatagramBootstrap(group: group)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                InboundDatagramHandler(continuation: continuation, overflow: overflow))
                        }
                    }
                if let v6Only = target.v6Only {
                    bootstrap = bootstrap.channelOption(
                        ChannelOptions.Types.SocketOption(level: .ipv6, name: .init(rawValue: IPV6_V6ONLY)),
                        value: v6Only ? 1 : 0)
                }
                let channel = try await bootstrap.bind(host: target.host, port: port).get()
                channels.append(channel)
                if port == 0, let bound = channel.localAddress?.port { port = bound }
            }
        } catch {
            for c in channels { try? await c.close() }
            continuation.finish()
            throw error
        }
        return UDPTransport(channels: channels, inbound: stream, continuation: continuation, overflow: overflow,
                            ipv6Unavailable: ipv6Unavailable)
    }

    public func send(_ bytes: [UInt8], to address: SocketAddress) {
        guard let channel = channel(for: address) else { return }
        var destination = address
        // An IPv4 peer reached through the dual-stack IPv6 socket needs its v4-mapped form.
        if address.protocol == .inet, channel.localAddress?.protocol == .inet6,
           let ip = address.ipAddress, let port = address.port,
           let mapped = try? SocketAddress(ipAddress: "::ffff:" + ip, port: port) {
            destination = mapped
        }
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: destination, data: buffer), promise: nil)
    }

    /// Picks the socket of the address's family (an IPv6 dual-stack socket serves IPv4 too).
    private func channel(for address: SocketAddress) -> (any Channel)? {
        let family = address.protocol
        if let exact = channels.first(where: { $0.localAddress?.protocol == family }) { return exact }
        return channels.first
    }

    /// Closes the sockets; `inbound` finishes.
    public func close() async {
        for c in channels { try? await c.close() }
        continuation.finish()
    }
}

/// Feeds received datagrams into the transport's stream.
private final class InboundDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    private let continuation: AsyncStream<InboundDatagram>.Continuation
    private let overflow: NIOLockedValueBox<UInt64>

    init(continuation: AsyncStream<InboundDatagram>.Continuation, overflow: NIOLockedValueBox<UInt64>) {
        self.continuation = continuation
        self.overflow = overflow
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        var buffer = envelope.data
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        if case .dropped = continuation.yield(InboundDatagram(bytes: bytes, source: envelope.remoteAddress)) {
            overflow.withLockedValue { $0 += 1 }
        }
    }

    /// ICMP errors surface here (e.g. port unreachable); UDP carries on.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {}

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }
}
