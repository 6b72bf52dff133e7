import Foundation
import CloudRelay
import NIOConcurrencyHelpers
import RelayProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Issue #37 item 7's attacker, for `matter-relay bench --flood-connections N`: N controller
/// connections of one home, each a plain socket on its own thread sending masked frames for a
/// device nobody has at `rate` a second, never reading. Loopback only (the bench checks the
/// URL); it stops when told or after `limit`, whichever comes first.
final class BenchFlood: Sendable {
    let port: Int
    let token: String
    let connections: Int
    let rate: Int
    // The locks guard the stop flag and the counts.
    private let stopped = NIOLockedValueBox(false)
    private let counts = NIOLockedValueBox((sent: 0, closedByRelay: 0, finished: 0))

    init(port: Int, token: String, connections: Int, rate: Int) {
        self.port = port
        self.token = token
        self.connections = connections
        self.rate = rate
    }

    var sent: Int { counts.withLockedValue { $0.sent } }
    /// Flood connections the relay ended (a send failed) before the flood stopped.
    var closedByRelay: Int { counts.withLockedValue { $0.closedByRelay } }

    func start(limit: Duration) {
        for index in 0..<connections {
            Thread { self.flood(index, limit: limit) }.start()
        }
    }

    /// Stops the senders and waits (at most five seconds) until each has.
    func stop() async {
        stopped.withLockedValue { $0 = true }
        // real time: external: threads of our own ending their blocking sends.
        for _ in 0..<250 where counts.withLockedValue({ $0.finished }) < connections { try? await Task.sleep(for: .milliseconds(20)) }
    }

    private func flood(_ index: Int, limit: Duration) {
        defer { counts.withLockedValue { $0.finished += 1 } }
        guard let fd = Self.upgradedSocket(port: port, token: token) else { return }
        defer { close(fd) }
        // Frames go out in batches every 10 ms.
        // real time: benchmark: a load generator paces real traffic at a real rate.
        let clock = ContinuousClock()
        let start = clock.now
        let batch = max(1, rate / 100)
        // One batch, made once and sent again and again: the sender costs little beside the relay.
        let bytes = (0..<batch).flatMap { n in
            Self.masked(
                RelayFrame.message(
                    RelayMessage(
                        deviceID: "flood-nobody", exchangeID: UInt32(index) << 24 | UInt32(n), fromInitiator: true, opcode: 8, payload: [])
                ).encoded())
        }
        var next = start
        while !stopped.withLockedValue({ $0 }), clock.now - start < limit {
            let written = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written == bytes.count else {
                counts.withLockedValue { $0.closedByRelay += 1 }
                return
            }
            counts.withLockedValue { $0.sent += batch }
            next = next + .milliseconds(10)
            let wait = next - clock.now
            if wait > .zero { usleep(UInt32(wait.components.attoseconds / 1_000_000_000_000 + wait.components.seconds * 1_000_000)) }
        }
    }

    /// A client frame: binary, masked with a fixed key (the relay only checks that it is masked).
    private static func masked(_ payload: [UInt8]) -> [UInt8] {
        let key: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        var out: [UInt8] = [WebSocketFrame.fin | WebSocketFrame.binary]
        if payload.count < 126 {
            out.append(WebSocketFrame.masked | UInt8(payload.count))
        } else {
            out += [WebSocketFrame.masked | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        out += key
        for (i, byte) in payload.enumerated() { out.append(byte ^ key[i & 3]) }
        return out
    }

    /// A TCP connection to 127.0.0.1:`port` upgraded to the controller WebSocket; nil when refused.
    private static func upgradedSocket(port: Int, token: String) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let request = Array(
            ("GET /v1/controller HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Authorization: Bearer \(token)\r\n\r\n").utf8)
        guard connected == 0, request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count
        else {
            close(fd)
            return nil
        }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 12, String(decoding: buffer[0..<12], as: UTF8.self) == "HTTP/1.1 101" else {
            close(fd)
            return nil
        }
        return fd
    }
}
