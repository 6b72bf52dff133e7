/// The bookkeeping of one browse, kept apart from Avahi so it can be tested on its own.
///
/// Avahi reports a service once per interface and per mDNS transport (IPv4, IPv6) it was
/// seen on. The model folds those sightings into one service per instance name, asks for
/// one SRV/TXT resolver per interface and one address lookup per (interface, host name),
/// and turns what those report into `added` / `updated` / `removed` events. It answers
/// with effects (start or stop a lookup) that the browser performs on Avahi.
struct BrowseModel {
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
    private var services: [ServiceKey: ServiceState] = [:]
    private var hosts: [HostKey: HostState] = [:]
    private var sequence: UInt64 = 0

    init(type: String) {
        self.type = type
    }

    /// The services announced so far (as in their last event), by name.
    var announcedServices: [DNSSDResolvedService] {
        services.values.compactMap(\.emitted).sorted { $0.instanceName < $1.instanceName }
    }

    /// The (interface, host) pairs being looked up.
    var hostLookups: Set<HostKey> { Set(hosts.keys) }

    mutating func serviceAppeared(_ key: ServiceKey, interface: Int32, protocol transport: Int32) -> Outcome {
        var outcome = Outcome()
        var state = services[key] ?? ServiceState()
        if state.sightings[interface, default: []].isEmpty {
            outcome.effects.append(.startResolver(key, interface: interface))
        }
        state.sightings[interface, default: []].insert(transport)
        services[key] = state
        return outcome
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
        outcome.effects.append(.stopResolver(key, interface: interface))
        if let old = state.resolutions.removeValue(forKey: interface) {
            outcome.effects += release(HostKey(interface: interface, hostName: old.hostName), by: key, keeping: state)
        }
        if state.sightings.isEmpty {
            services[key] = nil
            if state.emitted != nil { outcome.events.append(.removed(instanceName: key.name)) }
        } else {
            services[key] = state
            outcome.events += reevaluate(key)
        }
        return outcome
    }

    mutating func serviceResolved(
        _ key: ServiceKey, interface: Int32, hostName: String, port: UInt16, txt: DNSSDTXTRecord
    ) -> Outcome {
        var outcome = Outcome()
        // A late answer for a sighting that has gone already.
        guard var state = services[key], state.sightings[interface] != nil else { return outcome }
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
        return outcome
    }

    mutating func addressAppeared(_ host: HostKey, _ address: DNSSDAddress, protocol transport: Int32) -> Outcome {
        guard hosts[host] != nil else { return Outcome() }
        hosts[host]?.addresses[address, default: []].insert(transport)
        return Outcome(events: reevaluateUsers(of: host))
    }

    mutating func addressDisappeared(_ host: HostKey, _ address: DNSSDAddress, protocol transport: Int32) -> Outcome {
        guard var state = hosts[host], var transports = state.addresses[address] else { return Outcome() }
        transports.remove(transport)
        state.addresses[address] = transports.isEmpty ? nil : transports
        hosts[host] = state
        return Outcome(events: reevaluateUsers(of: host))
    }

    /// The lookup of `family` addresses for `host` has reported all it has (or failed).
    mutating func hostLookupSettled(_ host: HostKey, family: DNSSDAddress.Family) -> Outcome {
        guard hosts[host] != nil else { return Outcome() }
        hosts[host]?.settled.insert(family)
        return Outcome(events: reevaluateUsers(of: host))
    }

    /// The daemon connection is gone and with it every browser, resolver and lookup: each
    /// service announced so far is reported removed; they come back as `added` once found
    /// again.
    mutating func connectionLost() -> Outcome {
        let removed = services.filter { $0.value.emitted != nil }.keys.sorted()
        services = [:]
        hosts = [:]
        return Outcome(events: removed.map { .removed(instanceName: $0.name) })
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
        case nil: event = .added(view)
        case let previous? where previous != view: event = .updated(view)
        default: event = nil
        }
        state.emitted = view
        services[key] = state
        return event.map { [$0] } ?? []
    }
}
