import Logging
import MatterDNSSD
import MatterModel

/// A node's DNS-SD advertisements through the Avahi daemon (Core spec 4.3):
/// `_matterc._udp` while a commissioning window is open and one `_matter._tcp` per
/// fabric. Without a reachable daemon it logs why and carries on: the node still
/// answers on its UDP port, controllers just cannot discover it.
actor NodeAdvertiser {
    enum Key: Hashable, Sendable, CustomStringConvertible {
        case commissionable
        case operational(FabricIndex)

        var description: String {
            switch self {
            case .commissionable: "commissionable"
            case .operational(let fabric): "operational (fabric \(fabric))"
            }
        }
    }

    /// How long a publication may wait for the daemon before a warning says so.
    static let slowDaemonWarning: Duration = .seconds(5)
    /// A publication the daemon failed for want of time is tried again after this, doubling
    /// up to `lastRetry` (each with ±50 % jitter, so a fleet's retries do not come at once).
    static let firstRetry: Duration = .seconds(2)
    static let lastRetry: Duration = .seconds(60)

    private let publisher: DNSSDPublisher?
    /// A publisher several nodes share (one Avahi client for many nodes) is not shut
    /// down with this node.
    private let ownsPublisher: Bool
    private let logger: Logger
    private struct Publication {
        var service: DNSSDService
        /// Publishing waits for the daemon to announce the service, so it runs in a task
        /// of its own and never holds up the node.
        var task: Task<DNSSDRegistration?, Never>
    }

    private var published: [Key: Publication] = [:]
    /// What the node wants advertised, kept while the LAN is down so it returns with it.
    private var wanted: [Key: DNSSDService] = [:]
    /// The LAN is down (a pulled cable): nothing is on the air.
    private var suspended = false
    /// Nothing goes to the daemon before this (`AnnouncementPacing`).
    // real time: external: the Avahi daemon's packets, paced on the wall clock they go out on.
    private var firstPublication: ContinuousClock.Instant?
    /// The home's slots shared across processes: the first publication takes one
    /// (`AnnouncementSlots`), in place of `firstPublication`.
    private var slots: AnnouncementSlots?

    /// - Parameter enabled: false never touches Avahi (tests on loopback).
    /// - Parameter shared: a publisher to use instead of a connection of this node's own.
    // real time: external: `firstPublication` paces the Avahi daemon's packets.
    init(
        enabled: Bool, shared: DNSSDPublisher? = nil, firstPublication: ContinuousClock.Instant? = nil,
        slots: AnnouncementSlots? = nil, logger: Logger
    ) {
        self.logger = logger
        self.firstPublication = firstPublication
        self.slots = slots
        ownsPublisher = shared == nil
        guard enabled else {
            publisher = nil
            return
        }
        if let shared {
            publisher = shared
            return
        }
        do {
            publisher = try DNSSDPublisher(logger: logger)
        } catch {
            logger.warning("mDNS advertising disabled, Avahi is not reachable (\(error)); controllers must be given the node's address")
            publisher = nil
        }
    }

    /// Publishes `service` under `key`, replacing what was there (the same service again,
    /// say after a fabric label change, stays as it is).
    func advertise(_ service: DNSSDService, as key: Key) async {
        wanted[key] = service
        await publish(service, as: key)
    }

    private func publish(_ service: DNSSDService, as key: Key) async {
        guard let publisher, !suspended, published[key]?.service != service else { return }
        // Withdrawing suspends; whatever was advertised under the key meanwhile goes too.
        while published[key] != nil { await unpublish(key) }
        // The LAN may have gone down meanwhile.
        guard !suspended, wanted[key] == service else { return }
        let logger = logger
        if let slots {
            // Once, when the node is ready: the slot is the home's next, whenever that is.
            self.slots = nil
            // real time: external: the Avahi daemon's packets (AnnouncementSlots).
            firstPublication = ContinuousClock.now + slots.takeSlot { logger.warning("\($0)") }
        }
        let firstPublication = firstPublication
        let task = Task { () -> DNSSDRegistration? in
            // real time: external: the Avahi daemon's packets (AnnouncementPacing).
            if let firstPublication, ContinuousClock.now < firstPublication {
                try? await Task.sleep(until: firstPublication, clock: .continuous)
                if Task.isCancelled { return nil }
            }
            return await withTaskGroup(of: Void.self, returning: DNSSDRegistration?.self) { group in
                group.addTask {
                    // real time: external: the Avahi daemon's answer.
                    try? await Task.sleep(for: Self.slowDaemonWarning)
                    guard !Task.isCancelled else { return }
                    logger.warning(
                        "the Avahi daemon has not announced \(service.instanceName).\(service.type) after \(Self.slowDaemonWarning); is avahi-daemon running? Still waiting for it"
                    )
                }
                defer { group.cancelAll() }
                var retry = Self.firstRetry
                while true {
                    do {
                        let registration = try await publisher.publish(service)
                        logger.info("advertising \(registration)")
                        return registration
                    } catch is CancellationError {
                        return nil
                    } catch let error as DNSSDError where error.isTransient {
                        // A daemon too busy to answer within D-Bus's 25 s (a fleet's, issue #43:
                        // 158 of 5,000 nodes gave up for good) is asked again, later and spread out.
                        let pause = retry * Double.random(in: 0.5...1.5)
                        logger.warning("cannot advertise \(service.instanceName).\(service.type) yet: \(error); trying again in \(pause)")
                        // real time: external: the Avahi daemon's recovery.
                        guard (try? await Task.sleep(for: pause)) != nil else { return nil }
                        retry = min(retry * 2, Self.lastRetry)
                    } catch {
                        logger.warning("cannot advertise \(service.instanceName).\(service.type): \(error)")
                        return nil
                    }
                }
            }
        }
        published[key] = Publication(service: service, task: task)
    }

    /// Returns once the advertisement under `key` is on the daemon (or failed), or after
    /// `limit`, whichever comes first; at once when nothing is being published under it.
    func waitUntilPublished(_ key: Key, limit: Duration) async {
        guard let task = published[key]?.task else { return }
        await Self.wait(for: task, atMost: limit)
    }

    /// Returns once `task` has finished or `limit` has passed, whichever is first. Not a task
    /// group: a group returns only once every child has, and a child awaiting `task.value`
    /// ignores cancellation, so the limit never held and AddNOC's response waited for a busy
    /// daemon (issue #43: 40-112 of 300 AddNOCs timed out at 5,000 nodes).
    static func wait<T: Sendable>(for task: Task<T, Never>, atMost limit: Duration) async {
        let (done, finish) = AsyncStream<Void>.makeStream()
        let finished = Task {
            _ = await task.value
            finish.finish()
        }
        let timer = Task {
            // real time: external: the Avahi daemon's answer.
            try? await Task.sleep(for: limit)
            finish.finish()
        }
        for await _ in done {}
        timer.cancel()
        finished.cancel()
    }

    /// Withdraws the advertisement under `key` (a publication still waiting is abandoned).
    func withdraw(_ key: Key) async {
        wanted[key] = nil
        await unpublish(key)
    }

    /// The LAN went down: every record goes off the air, remembered for `resume()`.
    func suspend() async {
        suspended = true
        for key in Array(published.keys) { await unpublish(key) }
    }

    /// The LAN is back: what the node wants advertised is published again.
    func resume() async {
        suspended = false
        for (key, service) in wanted { await publish(service, as: key) }
    }

    private func unpublish(_ key: Key) async {
        guard let task = published.removeValue(forKey: key)?.task else { return }
        task.cancel()
        if let registration = await task.value {
            registration.withdraw()
            logger.info("withdrew \(key) advertisement \(registration)")
        }
    }

    /// Withdraws everything and disconnects from the daemon.
    func shutdown() async {
        wanted = [:]
        for key in Array(published.keys) { await unpublish(key) }
        if ownsPublisher { publisher?.shutdown() }
    }
}
