// Who may use the control socket (issue #37 item 9). The socket can power nodes off and
// act at them, so it is the owner's alone: the file is 0600 in a directory made 0700, and
// each connection's peer credentials (SO_PEERCRED) are checked, so a socket left reachable
// (a shared directory, a umask of 000) still takes no command from another user.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import NIOCore
import Synchronization

/// The process at the other end of a control connection.
struct ControlPeer: Sendable, Hashable {
    var uid: UInt32
    var pid: Int32
}

/// Which users may send commands: the socket's owner (the simulator's effective uid) and root.
struct ControlPeerPolicy: Sendable {
    var owner: UInt32

    static var ownerAndRoot: ControlPeerPolicy { ControlPeerPolicy(owner: geteuid()) }

    func allows(_ peer: ControlPeer) -> Bool { peer.uid == owner || peer.uid == 0 }

    /// The answer a refused peer gets.
    func refusal(_ peer: ControlPeer) -> String {
        "refused: uid \(peer.uid) may not use this control socket (only its owner, uid \(owner), or root may)"
    }
}

extension ControlPeer {
    /// The credentials of a Unix-domain connection's peer; nil when the channel cannot say
    /// (then the connection is refused: no credentials, no commands).
    static func of(_ channel: any Channel) -> EventLoopFuture<ControlPeer?> {
        guard let provider = channel as? any SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(nil) }
        #if canImport(Glibc) || canImport(Musl)
        let credentials: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        return credentials.map { ControlPeer(uid: $0.uid, pid: $0.pid) }.recover { _ in nil }
        #else
        return channel.eventLoop.makeSucceededFuture(nil)
        #endif
    }
}

/// Linux's `struct ucred` (pid_t, uid_t, gid_t), which Glibc's module does not export
/// (it is behind _GNU_SOURCE): three 32-bit fields, laid out the same.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}

/// Connections refused for their peer, for the log and the tests.
final class ControlRefusals: Sendable {
    private let count = Mutex(0)

    var total: Int { count.withLock { $0 } }

    /// Counts one more; returns the new total.
    func record() -> Int {
        count.withLock {
            $0 += 1
            return $0
        }
    }
}
