import NIOCore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Sends a node's datagrams with `sendto` on a duplicate of its socket, from the calling
/// thread. A write through the channel from off its event loop wakes that loop's thread; on
/// this 2-core machine that hand-off was a fifth of an invoke's service time (sealed → handed
/// on: 17–21 µs of 95). The socket is non-blocking and shared with the channel, which still
/// reads it; when `sendto` cannot take a datagram now (EAGAIN) or fails, the caller falls back
/// to the channel, which queues and reports as before.
final class DirectDatagramSender: Sendable {
    /// The duplicate descriptor, nil once closed: a send after `close` goes nowhere, as a
    /// closed channel's would, and never reaches a descriptor number reused since.
    private let descriptor: Mutex<CInt?>

    /// Nil when the descriptor cannot be duplicated (the channel then sends everything).
    init?(duplicating socket: CInt) {
        // Close-on-exec, as the socket itself: a process the node starts must not hold its port.
        let copy = fcntl(socket, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { return nil }
        descriptor = Mutex(copy)
    }

    deinit { close() }

    enum Outcome { case sent, closed, useChannel }

    func send(_ bytes: [UInt8], to address: SocketAddress) -> Outcome {
        descriptor.withLock { fd in
            guard let fd else { return .closed }
            let sent = bytes.withUnsafeBytes { payload in
                address.withSockAddr { sockaddr, length in
                    sendto(fd, payload.baseAddress, payload.count, Int32(MSG_DONTWAIT), sockaddr, socklen_t(length))
                }
            }
            return sent == bytes.count ? .sent : .useChannel
        }
    }

    func close() {
        descriptor.withLock { fd in
            if let open = fd { closeDescriptor(open) }
            fd = nil
        }
    }
}

/// A non-blocking UDP socket bound to `host:port` (0: an ephemeral port), for
/// `DatagramBootstrap.withBoundSocket`: the transport keeps its descriptor to send on
/// (`DirectDatagramSender`). Errors are `IOError`s with the call's errno, as the bootstrap's
/// own bind throws (EADDRINUSE stays recognisable).
enum BoundDatagramSocket {
    static func make(host: String, port: Int, v6Only: Bool?) throws -> CInt {
        // Resolved as the bootstrap's own bind resolves it: where the host has no IPv6 address,
        // `::` fails here (AI_ADDRCONFIG) and the transport falls back to IPv4 as before.
        let address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        let family = address.protocol == .inet6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
        do {
            if let v6Only {
                var value: CInt = v6Only ? 1 : 0
                guard setsockopt(fd, CInt(IPPROTO_IPV6), IPV6_V6ONLY, &value, socklen_t(MemoryLayout<CInt>.size)) == 0 else {
                    throw IOError(errnoCode: errno, reason: "setsockopt(IPV6_V6ONLY)")
                }
            }
            let bound = address.withSockAddr { sockaddr, length in bind(fd, sockaddr, socklen_t(length)) }
            guard bound == 0 else { throw IOError(errnoCode: errno, reason: "bind(descriptor:ptr:bytes:)") }
        } catch {
            closeDescriptor(fd)
            throw error
        }
        return fd
    }
}

/// `close(2)` (inside the sender, `close` is its own method).
private func closeDescriptor(_ fd: CInt) { _ = close(fd) }
