// The Avahi connections the nodes of one `matter-sim home` process share. A connection per
// node would mean a D-Bus connection and a poll thread per node (the system bus allows 256
// connections per user); one for all would hit the daemon's objects-per-client-max (1024
// entry groups by default). So every `nodesPerConnection` nodes share one.
import Logging
import MatterDNSSD
import Synchronization

final class SharedPublishers: Sendable {
    static let nodesPerConnection = 200
    private let logger: Logger
    private let publishers = Mutex<[Int: DNSSDPublisher]>([:])

    init(logger: Logger) {
        self.logger = logger
    }

    /// The connection node `index` advertises through; nil (the node then tries one of
    /// its own and says why it cannot) when the system bus is unreachable.
    func publisher(forNode index: Int) -> DNSSDPublisher? {
        let slot = index / Self.nodesPerConnection
        return publishers.withLock { all in
            if let existing = all[slot] { return existing }
            guard let made = try? DNSSDPublisher(logger: logger) else { return nil }
            all[slot] = made
            return made
        }
    }

    /// Disconnects, after every node has withdrawn its records.
    func shutdown() {
        let all = publishers.withLock { all in
            defer { all = [:] }
            return Array(all.values)
        }
        for publisher in all { publisher.shutdown() }
    }
}
