/// The bookkeeping of one browse, kept apart from Avahi so it can be tested on its own.
///
/// Avahi reports a service once per interface and per mDNS transport (IPv4, IPv6) it was
/// seen on. The model folds those sightings into one service per instance name, asks for
/// one SRV/TXT resolver per interface and one address lookup per (interface, host name),
/// and turns what those report into `added` / `updated` / `removed` events. It answers
/// with effects (start or stop a lookup) that the browser performs on Avahi.
///
/// Only the first `followLimit` services announced are followed (their resolver and address
/// lookups stay open, so SRV, TXT and address changes become `updated`); past that, a service
/// is resolved once, announced, and its lookups freed: from then on only its removal is
/// reported. A service admitted when the followed places are all taken is resolved by one
/// Avahi resolver that also finds an address (`resolveOnce`), not by a resolver and two
/// address lookups: each object is a D-Bus round trip to make and one to free, and at 10,000
/// services those round trips were what paced the browse. Every open lookup is an object of
/// the client in the Avahi daemon, and Debian's
/// avahi-daemon 0.8 keeps one timer per object in a list it walks on every turn of its event
/// loop: at 5,000 services (three objects each) that walk took three quarters of the daemon's
/// CPU and held resolving back for minutes (issue #43). For the same reason at most
/// `resolveLimit` services are being resolved at once; the others wait their turn in the order
/// they appeared (a fleet's records arrive by the thousand).
public struct BrowseModel {
    /// How many announced services a browse follows by default.
    public static let defaultFollowLimit = 256
    /// How many services a browse resolves at once.
    static let defaultResolveLimit = 256

    struct ServiceKey: Hashable, Sendable, Comparable {
        var name: String
        var domain: String

        static func < (a: ServiceKey, b: ServiceKey) -> Bool {
            (a.name, a.domain) < (b.name, b.domain)
        }
    }

    /// A host name looked up on one interface. The name is compared in lower case without a
    /// trailing dot, as DNS names are.
    struct HostKey: Hashable, Sendable {
        var interface: Int32
        var hostName: String

        init(interface: Int32, hostName: String) {
            self.interface = interface
            var name = hostName.lowercased()
            if name.hasSuffix(".") { name.removeLast() }
            self.hostName = name
        }
    }

    enum Effect: Hashable, Sendable {
        case startResolver(ServiceKey, interface: Int32)
        /// A resolver that reports one address with SRV/TXT, for a service not followed.
        case resolveOnce(ServiceKey, interface: Int32)
        case stopResolver(ServiceKey, interface: Int32)
        case startHostLookup(HostKey)
        case stopHostLookup(HostKey)
    }

    struct Outcome: Sendable {
        var effects: [Effect] = []
        var events: [DNSSDEvent] = []
    }

    private struct Resolution {
        var hostName: String
        var port: UInt16
        var txt: DNSSDTXTRecord
        /// Which resolution is newest, when two interfaces disagree (say, mid TXT update).
        var sequence: UInt64
    }

    private struct ServiceState {
        /// Interface → the mDNS transports (AvahiProtocol) it was seen on there.
        var sightings: [Int32: Set<Int32>] = [:]
        /// Interface → the latest SRV/TXT resolved there.
        var resolutions: [Int32: Resolution] = [:]
        /// What the last event said, `nil` before `added`.
        var emitted: DNSSDResolvedService?
        /// Its resolvers and address lookups stay open (see `followLimit`).
        var followed = true
        /// Being resolved once (`resolveOnce`), not followed.
        var once = false
    }

    private struct HostState {
        /// Address → the mDNS transports it was seen on (the same A record can arrive over
        /// IPv4 and IPv6 multicast; it is gone only when gone from both).
        var addresses: [DNSSDAddress: Set<Int32>] = [:]
        /// Families whose lookup has reported everything it has for now.
        var settled: Set<DNSSDAddress.Family> = []
        var users: Set<ServiceKey> = []

        /// Each family has either given an address or finished looking.
        var isReady: Bool {
            [DNSSDAddress.Family.ipv4, .ipv6].allSatisfy { family in
                settled.contains(family) || addresses.keys.contains { $0.family == family }
            }
        }
    }

    let type: String
    let followLimit: Int
    let resolveLimit: Int
    private var services: [ServiceKey: ServiceState] = [:]
    private var hosts: [HostKey: HostState] = [:]
    private var sequence: UInt64 = 0
    /// Announced services still followed.
    private var followedAnnounced = 0
    /// Announced past `followLimit`: their lookups are freed at the end of the current change.
    private var toUnfollow: [ServiceKey] = []
    /// Services whose resolvers run and which are not announced yet (at most `resolveLimit`).
    private var resolving: Set<ServiceKey> = []
    /// Services seen but not resolved yet for want of a place in `resolving`, oldest first.
    private var waiting: [ServiceKey] = []
    /// Services whose resolving failed, until `retryFailed` queues them again.
    private var failed: [ServiceKey] = []

    init(
        type: String, followLimit: Int = BrowseModel.defaultFollowLimit,
        resolveLimit: Int = BrowseModel.defaultResolveLimit
    ) {
        self.type = type
        self.followLimit = max(0, followLimit)
        self.resolveLimit = max(1, resolveLimit)
    }

    /// The services announced so far (as in their last event), by name.
    var announcedServices: [DNSSDResolvedService] {
        services.values.compactMap(\.emitted).sorted { $0.instanceName < $1.instanceName }
    }

    /// The (interface, host) pairs being looked up.
    var hostLookups: Set<HostKey> { Set(hosts.keys) }

    /// How many services are followed (announced or not yet).
    var followedServices: Int { services.values.filter(\.followed).count }

    /// Services seen and waiting for a place among those being resolved.
    var waitingServices: Int { waiting.count }

    mutating func serviceAppeared(_ key: ServiceKey, interface: Int32, protocol transport: Int32) -> Outcome {
        var outcome = Outcome()
        let isNew = services[key] == nil
        var state = services[key] ?? ServiceState()
        let newInterface = state.sightings[interface, default: []].isEmpty
        state.sightings[interface, default: []].insert(transport)
        services[key] = state
        if isNew {
            waiting.append(key)
        } else if newInterface && hasResolvers(key, state) {
            // A service no longer followed is not resolved again on another interface (its
            // sightings are kept only to report its removal); one still waiting starts on
            // all its interfaces when its turn comes.
            outcome.effects.append(resolverEffect(key, state, interface: interface))
        }
        outcome.effects += admitWaiting()
        return outcome
    }

    /// The resolvers of `key` on `interface` gave up (Avahi found no SRV/TXT in time, or the
    /// daemon did not answer their creation): its place among those being resolved goes to the
    /// next, and it waits for `retryFailed` to go back in line. A daemon busy with a fleet's
    /// announcements misses answers; a service it still lists is not given up for that.
    mutating func resolveFailed(_ key: ServiceKey, interface: Int32) -> Outcome {
        guard var state = services[key], state.emitted == nil, resolving.remove(key) != nil else { return Outcome() }
        failed.append(key)
        // Followed or not is decided again when its turn comes back.
        state.once = false
        state.followed = true
        services[key] = state
        let stops = state.sightings.keys.sorted().map { Effect.stopResolver(key, interface: $0) }
        return Outcome(effects: stops + admitWaiting())
    }

    /// Services whose resolving failed, waiting for `retryFailed`.
    var hasFailedServices: Bool { !failed.isEmpty }

    /// Puts the services whose resolving failed back in line, behind those waiting.
    mutating func retryFailed() -> Outcome {
        waiting += failed
        failed = []
        return Outcome(effects: admitWaiting())
    }

    mutating func serviceDisappeared(_ key: ServiceKey, interface: Int32, protocol transport: Int32) -> Outcome {
        var outcome = Outcome()
        guard var state = services[key], var transports = state.sightings[interface] else { return outcome }
        transports.remove(transport)
        guard transports.isEmpty else {
            state.sightings[interface] = transports
            services[key] = state
            return outcome
        }
        state.sightings[interface] = nil
        if hasResolvers(key, state) {
            outcome.effects.append(.stopResolver(key, interface: interface))
        }
        if let old = state.resolutions.removeValue(forKey: interface) {
            outcome.effects += release(HostKey(interface: interface, hostName: old.hostName), by: key, keeping: state)
        }
        if state.sightings.isEmpty {
            services[key] = nil
            resolving.remove(key)
            if state.emitted != nil {
                outcome.events.append(.removed(instanceName: key.name))
                if state.followed { followedAnnounced -= 1 }
            }
        } else {
            services[key] = state
            outcome.events += reevaluate(key)
        }
        outcome.effects += afterChange()
        return outcome
    }

    /// A `resolveOnce` resolver found the service: it is announced with the one address found
    /// (none when Avahi found none) and its resolvers go.
    mutating func serviceResolvedOnce(
        _ key: ServiceKey, interface: Int32, hostName: String, port: UInt16, txt: DNSSDTXTRecord, address: DNSSDAddress?
    ) -> Outcome {
        guard var state = services[key], state.sightings[interface] != nil, state.once, state.emitted == nil,
            resolving.remove(key) != nil
        else { return Outcome() }
        let view = DNSSDResolvedService(
            instanceName: key.name, type: type, domain: key.domain, hostName: hostName, port: port,
            addresses: address.map { [$0] } ?? [], txt: txt)
        state.emitted = view
        state.once = false
        services[key] = state
        let stops = state.sightings.keys.sorted().map { Effect.stopResolver(key, interface: $0) }
        return Outcome(effects: stops + afterChange(), events: [.added(view)])
    }

    mutating func serviceResolved(
        _ key: ServiceKey, interface: Int32, hostName: String, port: UInt16, txt: DNSSDTXTRecord
    ) -> Outcome {
        var outcome = Outcome()
        // A late answer for a sighting that has gone already, or for a service let go.
        guard var state = services[key], state.sightings[interface] != nil, state.followed else { return outcome }
        sequence += 1
        let newHost = HostKey(interface: interface, hostName: hostName)
        let old = state.resolutions[interface]
        state.resolutions[interface] = Resolution(hostName: hostName, port: port, txt: txt, sequence: sequence)
        services[key] = state
        if let old, HostKey(interface: interface, hostName: old.hostName) != newHost {
            outcome.effects += release(HostKey(interface: interface, hostName: old.hostName), by: key, keeping: state)
        }
        if hosts[newHost] == nil {
            hosts[newHost] = HostState()
            outcome.effects.append(.startHostLookup(newHost))
        }
        hosts[newHost]?.users.insert(key)
        outcome.events += reevaluate(key)
        outcome.effects += afterChange()
        return outcome
    }

    mutating func addressAppeared(_ host: HostKey, _ address: DNSSDAddress, protocol transport: Int32) -> Outcome {
        guard hosts[host] != nil else { return Outcome() }
        hosts[host]?.addresses[address, default: []].insert(transport)
        let events = reevaluateUsers(of: host)
        return Outcome(effects: afterChange(), events: events)
    }

    mutating func addressDisappeared(_ host: HostKey, _ address: DNSSDAddress, protocol transport: Int32) -> Outcome {
        guard var state = hosts[host], var transports = state.addresses[address] else { return Outcome() }
        transports.remove(transport)
        state.addresses[address] = transports.isEmpty ? nil : transports
        hosts[host] = state
        let events = reevaluateUsers(of: host)
        return Outcome(effects: afterChange(), events: events)
    }

    /// The lookup of `family` addresses for `host` has reported all it has (or failed).
    mutating func hostLookupSettled(_ host: HostKey, family: DNSSDAddress.Family) -> Outcome {
        guard hosts[host] != nil else { return Outcome() }
        hosts[host]?.settled.insert(family)
        let events = reevaluateUsers(of: host)
        return Outcome(effects: afterChange(), events: events)
    }

    /// The daemon connection is gone and with it every browser, resolver and lookup: each
    /// service announced so far is reported removed; they come back as `added` once found
    /// again.
    mutating func connectionLost() -> Outcome {
        let removed = services.filter { $0.value.emitted != nil }.keys.sorted()
        services = [:]
        hosts = [:]
        followedAnnounced = 0
        toUnfollow = []
        resolving = []
        waiting = []
        failed = []
        return Outcome(events: removed.map { .removed(instanceName: $0.name) })
    }

    /// Resolvers run for a service being resolved or followed, not for one still waiting or
    /// let go.
    private func hasResolvers(_ key: ServiceKey, _ state: ServiceState) -> Bool {
        (state.followed || state.once) && (resolving.contains(key) || state.emitted != nil)
    }

    private func resolverEffect(_ key: ServiceKey, _ state: ServiceState, interface: Int32) -> Effect {
        state.once ? .resolveOnce(key, interface: interface) : .startResolver(key, interface: interface)
    }

    /// What every change ends with: services announced past `followLimit` let go, then the
    /// places freed given to those waiting.
    private mutating func afterChange() -> [Effect] {
        unfollowAnnounced() + admitWaiting()
    }

    /// Starts the resolvers of the services waiting longest, while places are free.
    private mutating func admitWaiting() -> [Effect] {
        var effects: [Effect] = []
        var taken = 0
        while resolving.count < resolveLimit && taken < waiting.count {
            let key = waiting[taken]
            taken += 1
            // Gone meanwhile (a service seen again later queues again).
            guard var state = services[key], state.emitted == nil, !resolving.contains(key) else { continue }
            // Followed while announced and resolving followed services leave a place.
            let followedResolving = resolving.count(where: { services[$0]?.followed == true })
            state.once = followedAnnounced + followedResolving >= followLimit
            state.followed = !state.once
            services[key] = state
            resolving.insert(key)
            for interface in state.sightings.keys.sorted() {
                effects.append(resolverEffect(key, state, interface: interface))
            }
        }
        waiting.removeFirst(taken)
        return effects
    }

    /// Frees the resolvers and address lookups of the services announced past `followLimit`
    /// in this change (after its events, which needed their addresses).
    private mutating func unfollowAnnounced() -> [Effect] {
        var effects: [Effect] = []
        for key in toUnfollow {
            guard var state = services[key], state.followed else { continue }
            state.followed = false
            let resolved = state.resolutions
            state.resolutions = [:]
            services[key] = state
            for interface in state.sightings.keys.sorted() {
                effects.append(.stopResolver(key, interface: interface))
            }
            for (interface, resolution) in resolved.sorted(by: { $0.key < $1.key }) {
                effects += release(HostKey(interface: interface, hostName: resolution.hostName), by: key, keeping: state)
            }
        }
        toUnfollow = []
        return effects
    }

    private mutating func release(_ host: HostKey, by key: ServiceKey, keeping state: ServiceState) -> [Effect] {
        // `state` is the service after the change; if it still points at this host here,
        // the lookup stays. Otherwise the lookup goes when no other service needs it.
        let stillUsed = state.resolutions.contains { HostKey(interface: $0.key, hostName: $0.value.hostName) == host }
        guard !stillUsed, var hostState = hosts[host] else { return [] }
        hostState.users.remove(key)
        if hostState.users.isEmpty {
            hosts[host] = nil
            return [.stopHostLookup(host)]
        }
        hosts[host] = hostState
        return []
    }

    private mutating func reevaluateUsers(of host: HostKey) -> [DNSSDEvent] {
        guard let users = hosts[host]?.users else { return [] }
        return users.sorted().flatMap { reevaluate($0) }
    }

    /// Emits `added` once a service has SRV/TXT and a ready address lookup, `updated` when
    /// what it looks like changes after that.
    private mutating func reevaluate(_ key: ServiceKey) -> [DNSSDEvent] {
        guard var state = services[key],
            let latest = state.resolutions.values.max(by: { $0.sequence < $1.sequence })
        else { return [] }
        let hostKeys = state.resolutions.map { HostKey(interface: $0.key, hostName: $0.value.hostName) }
        let hostStates = hostKeys.compactMap { hosts[$0] }
        guard state.emitted != nil || hostStates.contains(where: \.isReady) else { return [] }
        let addresses = Set(hostStates.flatMap { $0.addresses.keys })
        let view = DNSSDResolvedService(
            instanceName: key.name, type: type, domain: key.domain, hostName: latest.hostName,
            port: latest.port, addresses: addresses.sorted(), txt: latest.txt)
        let event: DNSSDEvent?
        switch state.emitted {
        case nil:
            event = .added(view)
            resolving.remove(key)
            if followedAnnounced < followLimit {
                followedAnnounced += 1
            } else {
                toUnfollow.append(key)
            }
        case let previous? where previous != view: event = .updated(view)
        default: event = nil
        }
        state.emitted = view
        services[key] = state
        return event.map { [$0] } ?? []
    }
}
