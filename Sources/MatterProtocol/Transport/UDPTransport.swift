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
    private let inbox: DatagramInbox
    private let channels: [any Channel]
    /// Each channel's socket, to send on from the caller's thread (same order as `channels`).
    private let senders: [DirectDatagramSender?]
    /// Local addresses the sockets are bound to.
    public let localAddresses: [SocketAddress]
    /// The group multicast addresses listened on, each with the socket bound to it (spec
    /// 4.16: port 5540) when one could be.
    private let groupChannels = NIOLockedValueBox<[String: (any Channel)?]>([:])
    private let group: any EventLoopGroup
    private let fanoutToken: GroupFanout.Token
    private let binding: Binding
    /// A transport off port 5540 that listens for groups: sockets on its own addresses, port
    /// 5540, for group messages sent there by unicast (see `setMulticastGroups`).
    private let groupPortChannels = NIOLockedValueBox<[any Channel]>([])
    /// Send-only IPv6 sockets for group messages, one per interface (IPV6_MULTICAST_IF).
    private let groupSenders = NIOLockedValueBox<[Int: any Channel]>([:])

    /// Why `.dualStack` fell back to IPv4 only (the error binding `::` gave), or nil.
    public let ipv6Unavailable: String?

    /// The bound UDP port.
    public var port: Int { localAddresses.first?.port ?? 0 }

    public var inboundOverflowCount: UInt64 { inbox.overflowCount }

    /// Decides, as each datagram is received (on the event loop), whether and when it reaches
    /// `inbound` (a node's pulled cable, an impaired link: NodeLANLink). Held weakly; nil or
    /// gone: every datagram is queued.
    public func setInboundGate(_ gate: (any InboundGate)?) { inbox.setGate(gate) }

    private init(
        channels: [any Channel], senders: [DirectDatagramSender?], inbound: AsyncStream<InboundDatagram>,
        inbox: DatagramInbox,
        ipv6Unavailable: String?, group: any EventLoopGroup, fanoutToken: GroupFanout.Token, binding: Binding
    ) {
        self.channels = channels
        self.senders = senders
        self.binding = binding
        self.group = group
        self.fanoutToken = fanoutToken
        self.ipv6Unavailable = ipv6Unavailable
        self.inbound = inbound
        self.inbox = inbox
        self.localAddresses = channels.compactMap(\.localAddress)
    }

    /// Opens the sockets. With several of them they share the port of the first. A `.dualStack`
    /// binding that cannot open `::` opens `0.0.0.0` and says why in one line on `logger`
    /// (and in `ipv6Unavailable`): a device without IPv6 still serves IPv4 controllers.
    public static func bind(
        _ configuration: Configuration = Configuration(),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger? = nil
    ) async throws -> UDPTransport {
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

    private static func open(
        _ configuration: Configuration, group: any EventLoopGroup,
        ipv6Unavailable: String?
    ) async throws -> UDPTransport {
        let (stream, continuation) = AsyncStream<InboundDatagram>.makeStream(
            bufferingPolicy: .bufferingNewest(max(1, configuration.inboundQueueLimit)))
        let inbox = DatagramInbox(continuation)
        let fanoutToken = GroupFanout.Token()
        let targets = bindTargets(configuration.binding)
        var channels: [any Channel] = []
        var senders: [DirectDatagramSender?] = []
        var port = configuration.port
        do {
            for target in targets {
                // No SO_REUSEADDR: with it Linux lets two UDP sockets share a port, and two simulated
                // devices on one port would silently split each other's traffic.
                let bootstrap = DatagramBootstrap(group: group)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                InboundDatagramHandler(
                                    inbox: inbox,
                                    role: .main(ObjectIdentifier(fanoutToken))))
                        }
                    }
                // Bound here rather than by the bootstrap, so the transport knows the descriptor
                // to send on from any thread (DirectDatagramSender).
                let socket = try BoundDatagramSocket.make(host: target.host, port: port, v6Only: target.v6Only)
                let channel = try await bootstrap.withBoundSocket(socket).get()
                channels.append(channel)
                senders.append(DirectDatagramSender(duplicating: socket))
                if port == 0, let bound = channel.localAddress?.port { port = bound }
            }
        } catch {
            for c in channels { try? await c.close() }
            for sender in senders { sender?.close() }
            inbox.finish()
            throw error
        }
        return UDPTransport(
            channels: channels, senders: senders, inbound: stream, inbox: inbox,
            ipv6Unavailable: ipv6Unavailable, group: group, fanoutToken: fanoutToken,
            binding: configuration.binding)
    }

    /// The addresses a binding opens sockets on, and IPV6_V6ONLY for each (nil: IPv4).
    private static func bindTargets(_ binding: Binding) -> [(host: String, v6Only: Bool?)] {
        switch binding {
        case .dualStack: [("::", false)]
        case .ipv4: [("0.0.0.0", nil)]
        case .ipv6Only: [("::", true)]
        case .addresses(let hosts): hosts.map { ($0, $0.contains(":") ? true : nil) }
        }
    }

    public func send(_ bytes: [UInt8], to address: SocketAddress) {
        guard let index = channelIndex(for: address) else { return }
        let channel = channels[index]
        var destination = address
        // An IPv4 peer reached through the dual-stack IPv6 socket needs its v4-mapped form.
        if address.protocol == .inet, channel.localAddress?.protocol == .inet6,
            let ip = address.ipAddress, let port = address.port,
            let mapped = try? SocketAddress(ipAddress: "::ffff:" + ip, port: port)
        {
            destination = mapped
        }
        switch senders[index]?.send(bytes, to: destination) {
        case .sent, .closed: return
        case .useChannel, nil: break
        }
        var buffer = channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: destination, data: buffer), promise: nil)
    }

    /// Picks the socket of the address's family (an IPv6 dual-stack socket serves IPv4 too).
    private func channelIndex(for address: SocketAddress) -> Int? {
        let family = address.protocol
        if let exact = channels.firstIndex(where: { $0.localAddress?.protocol == family }) { return exact }
        return channels.isEmpty ? nil : 0
    }

    /// Listens on exactly these IPv6 group multicast addresses (spec 2.5.6.2 and 4.16: group
    /// messages go to port 5540). Three ways in, because nodes of one host (and of one
    /// `matter-sim home` process) share that port:
    /// - the node's own IPv6 socket joins each group on every IPv6 interface: a node on port
    ///   5540 gets the messages there;
    /// - a node on another port also binds a socket to each address, port 5540, with
    ///   SO_REUSEADDR (possible while no socket holds 5540 exclusively, e.g. other processes);
    /// - such a node also listens on its own addresses, port 5540, SO_REUSEADDR, for group
    ///   messages sent there by unicast (a sender on loopback, where Linux has no multicast):
    ///   the kernel gives each such datagram to one of the sockets only, so its node hands it
    ///   to the process's other group listeners (issue #37: with no node on 5540 nobody got it);
    /// - and every transport of the process hands the group messages it receives to the
    ///   other transports that listen for groups (a node on 5540 holds the port exclusively).
    /// Copies that arrive twice are duplicates to the receiver's group counters.
    /// Returns the addresses that could not be joined at all, with why.
    @discardableResult
    public func setMulticastGroups(_ addresses: Set<String>) async -> [String: String] {
        let current = groupChannels.withLockedValue { $0 }
        for (address, channel) in current where !addresses.contains(address) {
            groupChannels.withLockedValue { $0[address] = nil }
            if let channel { try? await channel.close() }
            if let main = mainIPv6Channel as? any MulticastChannel,
                let target = try? SocketAddress(ipAddress: address, port: GroupMulticast.port)
            {
                for device in groupDevices() { try? await main.leaveGroup(target, device: device).get() }
            }
        }
        GroupFanout.shared.set(listening: !addresses.isEmpty, id: ObjectIdentifier(fanoutToken), inbox: inbox)
        if port != GroupMulticast.port { await setGroupPortListening(!addresses.isEmpty) }
        var failures: [String: String] = [:]
        for address in addresses.sorted() where current[address] == nil {
            do {
                let target = try SocketAddress(ipAddress: address, port: GroupMulticast.port)
                var joined = false
                if let main = mainIPv6Channel as? any MulticastChannel {
                    joined = await join(main, target)
                }
                var extra: (any Channel)?
                if port != GroupMulticast.port { extra = try? await groupSocket(target) }
                groupChannels.withLockedValue { $0[address] = .some(extra) }
                if !joined && extra == nil { failures[address] = "no IPv6 socket could join it" }
            } catch {
                failures[address] = "\(error)"
            }
        }
        return failures
    }

    /// Opens (or closes) the unicast sockets on port 5540; one that cannot be bound (a socket
    /// holds the port exclusively, e.g. a node on 5540, whose fan-out serves instead) is left out.
    private func setGroupPortListening(_ listening: Bool) async {
        let open = groupPortChannels.withLockedValue { $0 }
        if !listening {
            groupPortChannels.withLockedValue { $0 = [] }
            for channel in open { try? await channel.close() }
            return
        }
        guard open.isEmpty else { return }
        let (inbox, id) = (self.inbox, ObjectIdentifier(fanoutToken))
        var opened: [any Channel] = []
        for target in Self.bindTargets(binding) {
            var bootstrap = DatagramBootstrap(group: group)
                .channelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
                .channelOption(ChannelOptions.receivePacketInfo, value: true)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            InboundDatagramHandler(inbox: inbox, role: .groupPort(id)))
                    }
                }
            if let v6Only = target.v6Only {
                bootstrap = bootstrap.channelOption(
                    ChannelOptions.Types.SocketOption(level: .ipv6, name: .init(rawValue: IPV6_V6ONLY)), value: v6Only ? 1 : 0)
            }
            if let channel = try? await bootstrap.bind(host: target.host, port: GroupMulticast.port).get() { opened.append(channel) }
        }
        groupPortChannels.withLockedValue { $0 = opened }
    }

    /// The multicast addresses listened on now.
    public var multicastGroups: Set<String> { Set(groupChannels.withLockedValue { $0.keys }) }

    private var mainIPv6Channel: (any Channel)? {
        channels.first { $0.localAddress?.protocol == .inet6 }
    }

    /// Whether the sockets listen on every interface (a wildcard address).
    private var isWildcard: Bool {
        if case .addresses = binding { return false }
        return true
    }

    /// The IPv6 interfaces group messages may use: every one for a wildcard binding, else only
    /// those holding a bound address. A node bound to 127.0.0.1 stays on loopback: joining a
    /// group on another interface would announce it there (an MLD report on a real network).
    func groupDevices() -> [NIONetworkDevice] {
        let all = (try? System.enumerateDevices()) ?? []
        var allowed: Set<Int>?
        if case .addresses(let hosts) = binding {
            let bound = Set(hosts.compactMap { try? SocketAddress(ipAddress: $0, port: 0).ipAddress })
            allowed = Set(all.filter { $0.address?.ipAddress.map(bound.contains) ?? false }.map(\.interfaceIndex))
        }
        var seen: Set<Int> = []
        return all.filter {
            $0.address?.protocol == .inet6 && (allowed?.contains($0.interfaceIndex) ?? true)
                && seen.insert($0.interfaceIndex).inserted
        }
    }

    /// The addresses peers reach the node at, each with its interface index (what its host's
    /// A/AAAA records carry): the bound ones, or for a wildcard binding every address of the
    /// families it takes on every multicast interface but loopback.
    public func reachableAddresses() -> [(address: String, interfaceIndex: Int)] {
        let devices = (try? System.enumerateDevices()) ?? []
        var bound: Set<String>?
        if case .addresses(let hosts) = binding {
            bound = Set(hosts.compactMap { try? SocketAddress(ipAddress: $0, port: 0).ipAddress })
        }
        let families: Set<NIOBSDSocket.ProtocolFamily> =
            switch binding {
            case .ipv4: [.inet]
            case .ipv6Only: [.inet6]
            case .dualStack, .addresses: [.inet, .inet6]
            }
        var seen: Set<String> = []
        return devices.compactMap { device in
            guard let address = device.address, let ip = address.ipAddress, families.contains(address.protocol) else { return nil }
            if let bound {
                guard bound.contains(ip) else { return nil }
            } else {
                guard device.multicastSupported, ip != "::1", !ip.hasPrefix("127.") else { return nil }
            }
            guard seen.insert("\(ip)%\(device.interfaceIndex)").inserted else { return nil }
            return (ip, device.interfaceIndex)
        }
    }

    /// Joins on each interface of `groupDevices()` (loopback included: nodes of one host);
    /// true if any took it.
    private func join(_ channel: any MulticastChannel, _ target: SocketAddress) async -> Bool {
        var joined = 0
        for device in groupDevices() where (try? await channel.joinGroup(target, device: device).get()) != nil {
            joined += 1
        }
        // The kernel's choice of interface only where the binding leaves every one open.
        if joined == 0, isWildcard, (try? await channel.joinGroup(target).get()) != nil { joined = 1 }
        return joined > 0
    }

    /// Sends a group message to an IPv6 group address (spec 4.16: port 5540) on every
    /// interface of `groupDevices()` that can carry it; returns the names of those it left on.
    /// Nothing answers a group message, so the source port does not matter: each interface
    /// gets its own send-only socket. Loopback has no multicast route on Linux, so a binding
    /// that allows only loopback sends nothing (callers fall back to unicast).
    public func sendGroupMessage(_ bytes: [UInt8], to groupAddress: String) async -> [String] {
        guard let target = try? SocketAddress(ipAddress: groupAddress, port: GroupMulticast.port) else { return [] }
        var sentOn: [String] = []
        for device in groupDevices() where device.multicastSupported {
            guard let channel = try? await groupSender(device.interfaceIndex) else { continue }
            var buffer = channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            if (try? await channel.writeAndFlush(AddressedEnvelope(remoteAddress: target, data: buffer)).get()) != nil {
                sentOn.append(device.name)
            }
        }
        return sentOn
    }

    private func groupSender(_ interfaceIndex: Int) async throws -> any Channel {
        if let open = groupSenders.withLockedValue({ $0[interfaceIndex] }) { return open }
        let channel = try await DatagramBootstrap(group: group)
            .channelOption(ChannelOptions.Types.SocketOption(level: .ipv6, name: .init(rawValue: IPV6_V6ONLY)), value: 1)
            .channelOption(
                ChannelOptions.Types.SocketOption(level: .ipv6, name: .init(rawValue: IPV6_MULTICAST_IF)),
                value: SocketOptionValue(interfaceIndex)
            )
            .channelInitializer { channel in channel.eventLoop.makeSucceededVoidFuture() }
            .bind(host: "::", port: 0).get()
        let kept = groupSenders.withLockedValue { senders -> (any Channel)? in
            if let other = senders[interfaceIndex] { return other }
            senders[interfaceIndex] = channel
            return nil
        }
        if let kept { try? await channel.close(); return kept }
        return channel
    }

    private func groupSocket(_ target: SocketAddress) async throws -> any Channel {
        let inbox = inbox
        let channel = try await DatagramBootstrap(group: group)
            .channelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        InboundDatagramHandler(inbox: inbox, role: .group))
                }
            }
            .bind(to: target).get()
        guard let multicast = channel as? any MulticastChannel, await join(multicast, target) else {
            try? await channel.close()
            throw IOError(errnoCode: EADDRNOTAVAIL, reason: "joining \(target)")
        }
        return channel
    }

    /// Closes the sockets; `inbound` finishes.
    public func close() async {
        for sender in senders { sender?.close() }
        for c in channels { try? await c.close() }
        GroupFanout.shared.set(listening: false, id: ObjectIdentifier(fanoutToken), inbox: inbox)
        for c in groupChannels.withLockedValue({ $0.values.compactMap { $0 } }) { try? await c.close() }
        for c in groupPortChannels.withLockedValue({ $0 }) { try? await c.close() }
        for c in groupSenders.withLockedValue({ Array($0.values) }) { try? await c.close() }
        inbox.finish()
    }
}

/// Feeds received datagrams into the transport's stream.
private final class InboundDatagramHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>

    /// Which of the transport's sockets this is.
    enum Role {
        /// The node's own socket (its identity in the fan-out): a group message that came to it
        /// goes to the process's other group listeners too, which may not be able to bind the
        /// port it came to.
        case main(ObjectIdentifier)
        /// Bound to one group address on port 5540: what it gets is the node's alone (every
        /// listener binds its own), and closing it (the node left the group) ends nothing.
        case group
        /// The node's addresses on port 5540: group messages only (nothing else sent to 5540
        /// is the node's), and those sent by unicast go to the other listeners too, since the
        /// kernel gave the datagram to this socket alone. Multicast copies reach every
        /// listener's group sockets already: dropped here.
        case groupPort(ObjectIdentifier)
    }

    private let inbox: DatagramInbox
    private let role: Role

    init(inbox: DatagramInbox, role: Role) {
        self.inbox = inbox
        self.role = role
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        var buffer = envelope.data
        let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
        // A group session in the security flags (the fourth octet).
        let isGroupMessage = bytes.count > 3 && SessionType(rawValue: bytes[3] & SecurityFlag.sessionTypeMask) == .group
        var fanoutID: ObjectIdentifier?
        switch role {
        case .main(let id): fanoutID = id
        case .group: break
        case .groupPort(let id):
            guard isGroupMessage, envelope.metadata?.packetInfo?.destinationAddress.isMulticast != true else { return }
            fanoutID = id
        }
        let datagram = InboundDatagram(bytes: bytes, source: envelope.remoteAddress)
        inbox.take(datagram)
        if let fanoutID, isGroupMessage {
            GroupFanout.shared.forward(datagram, from: fanoutID)
        }
    }

    /// ICMP errors surface here (e.g. port unreachable); UDP carries on.
    func errorCaught(context: ChannelHandlerContext, error: any Error) {}

    func channelInactive(context: ChannelHandlerContext) {
        if case .main = role { inbox.finish() }
        context.fireChannelInactive()
    }
}

/// The transports of this process that listen for group messages: a group message one of
/// them receives on its own socket reaches the others (nodes of a `matter-sim home` share a
/// host, and only one of them can hold port 5540).
final class GroupFanout: Sendable {
    static let shared = GroupFanout()
    private let listeners = NIOLockedValueBox<[ObjectIdentifier: DatagramInbox]>([:])

    func set(listening: Bool, id: ObjectIdentifier, inbox: DatagramInbox) {
        listeners.withLockedValue { $0[id] = listening ? inbox : nil }
    }

    /// Hands `datagram` to every listener but the transport it came from.
    func forward(_ datagram: InboundDatagram, from origin: ObjectIdentifier) {
        let targets = listeners.withLockedValue { $0.filter { $0.key != origin }.map(\.value) }
        for target in targets { target.take(datagram) }
    }

    /// One transport's identity in the fan-out, known to its socket handlers too.
    final class Token: Sendable {}
}

/// Decides what becomes of each datagram a transport receives, on its event loop.
public protocol InboundGate: AnyObject, Sendable {
    /// Calls `inbox.queue` for each copy of `datagram` to queue, now or later, or not at all.
    func admit(_ datagram: InboundDatagram, into inbox: DatagramInbox)
}

/// Where a transport's received datagrams go: through its gate, if one is set, into the
/// `inbound` stream, counting those a full queue drops. The socket handlers and the group
/// fan-out hand datagrams here on the event loop, so a gate costs no task hop. (The gate is an
/// object, not a closure: a closure read through a lock's `inout` access was written back
/// wrapped in one more reabstraction thunk each time, and the chain grew with every datagram.)
public final class DatagramInbox: Sendable {
    private struct WeakGate { weak var gate: (any InboundGate)? }

    private let continuation: AsyncStream<InboundDatagram>.Continuation
    private let overflow = NIOLockedValueBox<UInt64>(0)
    private let gate = NIOLockedValueBox(WeakGate())

    init(_ continuation: AsyncStream<InboundDatagram>.Continuation) {
        self.continuation = continuation
    }

    var overflowCount: UInt64 { overflow.withLockedValue { $0 } }

    func setGate(_ gate: (any InboundGate)?) { self.gate.withLockedValue { $0.gate = gate } }

    func take(_ datagram: InboundDatagram) {
        if let gate = gate.withLockedValue({ $0.gate }) {
            gate.admit(datagram, into: self)
        } else {
            queue(datagram)
        }
    }

    /// Queues a datagram for `inbound` (a gate calls it, at once or after a delay).
    public func queue(_ datagram: InboundDatagram) {
        if case .dropped = continuation.yield(datagram) {
            overflow.withLockedValue { $0 += 1 }
        }
    }

    func finish() { continuation.finish() }
}
