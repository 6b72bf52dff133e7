import CAvahi
import Logging
import Synchronization

/// Browses for DNS-SD services through the Avahi daemon and resolves each one to its host,
/// port, addresses and TXT record.
///
/// Every `browse` is an independent `AsyncStream` of `DNSSDEvent`s; ending the iteration
/// (or cancelling its task) stops the Avahi browser and its resolvers. When the daemon goes
/// away every service seen so far is reported `removed`, and browsing resumes by itself once
/// the daemon is back.
public final class DNSSDBrowser: Sendable {
    let engine: BrowserEngine

    /// Connects to the daemon (which may start later). Throws only when the system D-Bus
    /// cannot be reached at all.
    public init(logger: Logger = Logger(label: "MatterDNSSD.browser")) throws(DNSSDError) {
        engine = try BrowserEngine(logger: logger)
    }

    deinit {
        engine.shutdown()
    }

    /// The services of `type` (e.g. `_matterc._udp`), or only those registered under
    /// `subtype` (e.g. `_L3840`, browsed as `_L3840._sub._matterc._udp`).
    ///
    /// The first `following` services announced are followed: their SRV, TXT and address
    /// changes are reported as `updated`. Past that, each is resolved once and then only its
    /// removal is reported (each followed service holds three objects in the Avahi daemon,
    /// which slow its every step as they grow: see `BrowseModel`).
    public func browse(
        type: String, subtype: String? = nil, domain: String? = nil,
        following: Int = BrowseModel.defaultFollowLimit
    ) throws(DNSSDError)
        -> AsyncStream<DNSSDEvent>
    {
        try engine.browse(type: type, subtype: subtype, domain: domain, instance: nil, following: following)
    }

    /// The service named `instanceName` of `type`, resolved within `timeout` on whichever
    /// interface has it. Looked up by name: no browse of the whole type, so resolving one of
    /// 10,000 operational nodes opens one resolver and two address lookups, not 30,000.
    public func resolve(
        instanceName: String, type: String, domain: String? = nil, timeout: Duration = .seconds(10)
    ) async throws -> DNSSDResolvedService {
        let events = try engine.browse(type: type, subtype: nil, domain: domain, instance: instanceName, following: 1)
        let wanted = instanceName.lowercased()
        return try await withThrowingTaskGroup(of: DNSSDResolvedService?.self) { group in
            group.addTask {
                for await event in events {
                    switch event {
                    case let .added(service), let .updated(service):
                        if service.instanceName.lowercased() == wanted { return service }
                    case .removed:
                        continue
                    }
                }
                return nil
            }
            group.addTask {
                // real time: external: the Avahi daemon's answer.
                try await Task.sleep(for: timeout)
                throw DNSSDError.timedOut
            }
            defer { group.cancelAll() }
            guard let found = try await group.next(), let service = found else {
                throw DNSSDError.shutDown
            }
            return service
        }
    }

    /// Stops every browse (their streams finish) and disconnects.
    public func shutdown() {
        engine.shutdown()
    }
}

final class BrowserEngine: AvahiClientOwner, @unchecked Sendable {
    let connection: AvahiConnection
    let logger: Logger

    // Guarded by the poll mutex.
    private var sessions: [UInt64: BrowseSession] = [:]
    private let nextID = Atomic<UInt64>(0)

    init(logger: Logger) throws(DNSSDError) {
        self.logger = logger
        connection = try AvahiConnection(logger: logger)
        try connection.start(owner: self)
    }

    /// A browse of `type` (or `subtype` of it), or with `instance` the lookup of that one
    /// service by name.
    func browse(type: String, subtype: String?, domain: String?, instance: String?, following: Int) throws(DNSSDError)
        -> AsyncStream<DNSSDEvent>
    {
        try DNSSDService.validateServiceType(type)
        if let subtype { try DNSSDService.validateSubtype(subtype) }
        if let domain { try DNSSDService.validateDomain(domain, field: "domain") }
        if let instance { try DNSSDService.validateInstanceName(instance) }
        guard !connection.hasShutDown else { throw .shutDown }
        let (stream, continuation) = AsyncStream<DNSSDEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextID.add(1, ordering: .relaxed).newValue
        // Started on the connection's queue: creating the Avahi browser waits for the daemon's
        // D-Bus reply with the poll mutex held, seconds when it is busy (issue #43: a
        // controller commissioning a fleet looks each node up), and the caller is a task on
        // one of the few shared threads. Stopping is queued behind it, so it finds the session.
        connection.withLockSoonOrFail({ _ in continuation.finish() }) { [self] client in
            let session = BrowseSession(
                id: id, engine: self, type: type, subtype: subtype, domain: domain, instance: instance,
                following: following, continuation: continuation)
            sessions[id] = session
            if let client, Self.isConnected(client) { session.start(client: client) }
        }
        // A cancelled consumer runs this in its cancellation handler: not waiting for the
        // poll mutex there (see AvahiConnection).
        continuation.onTermination = { [weak self] _ in self?.stopSoon(id) }
        return stream
    }

    private func stopSoon(_ id: UInt64) {
        connection.withLockSoon { [self] _ in
            sessions.removeValue(forKey: id)?.freeAll()
        }
    }

    func shutdown() {
        connection.shutdown()
        // Finished outside the mutex (onTermination's work takes it, on the connection's queue).
        let continuations = connection.withLockEvenIfStopped {
            let all = sessions.values.map(\.continuation)
            sessions = [:]
            return all
        }
        for continuation in continuations { continuation.finish() }
    }

    static func isConnected(_ client: OpaquePointer) -> Bool {
        let state = avahi_client_get_state(client)
        return state == AVAHI_CLIENT_S_RUNNING || state == AVAHI_CLIENT_S_REGISTERING
            || state == AVAHI_CLIENT_S_COLLISION
    }

    // MARK: - Mutex held

    func clientStateChanged(_ client: OpaquePointer, state: AvahiClientState) {
        for session in sessions.values.sorted(by: { $0.id < $1.id }) where !session.isStarted {
            session.start(client: client)
        }
    }

    func clientWillBeFreed() {
        for session in sessions.values { session.connectionLost() }
    }
}

/// One browse: an Avahi service browser (or, to look up one service by name, none) plus the
/// resolvers and address lookups its model asks for. Guarded by the poll mutex.
final class BrowseSession: @unchecked Sendable {
    let id: UInt64
    unowned let engine: BrowserEngine
    let type: String
    let subtype: String?
    let domain: String?
    /// Set: no service browser; this one service is resolved on any interface.
    let instance: String?
    let continuation: AsyncStream<DNSSDEvent>.Continuation

    var browser: OpaquePointer?
    /// Started on the daemon's current connection (a browser made, or the named service asked for).
    private(set) var isStarted = false
    private var model: BrowseModel
    private var resolvers: [ResolverKey: ServiceResolver] = [:]
    private var addressLookups: [BrowseModel.HostKey: [AddressLookup]] = [:]

    /// A resolver that fails (Avahi times out after a few seconds) is tried again this often.
    private static let resolveAttempts = 4
    /// How long a service whose resolving failed waits before it goes back in line.
    private static let retryMilliseconds: UInt32 = 5000
    /// Fires `retryMilliseconds` after a service's resolving failed; nil before the first.
    private var retryTimer: PollTimer?
    /// Resolvers the daemon did not create, handled once the current change is applied (not
    /// inside it: each failure admits the next service, whose creation can fail too).
    private var failedStarts: [ResolverKey] = []
    private var isApplying = false

    struct ResolverKey: Hashable {
        var service: BrowseModel.ServiceKey
        var interface: Int32
    }

    /// The SRV/TXT resolver of one service on one interface. It stays open, so Avahi reports
    /// TXT and SRV changes through it.
    final class ServiceResolver {
        unowned let session: BrowseSession
        let key: ResolverKey
        /// Also finds one address, for a service resolved once (`BrowseModel.Effect.resolveOnce`).
        let withAddress: Bool
        var resolver: OpaquePointer?
        var attempts = 0

        init(session: BrowseSession, key: ResolverKey, withAddress: Bool = false) {
            self.session = session
            self.key = key
            self.withAddress = withAddress
        }
    }

    /// The A or AAAA records of one host name on one interface.
    final class AddressLookup {
        unowned let session: BrowseSession
        let host: BrowseModel.HostKey
        let family: DNSSDAddress.Family
        var browser: OpaquePointer?

        init(session: BrowseSession, host: BrowseModel.HostKey, family: DNSSDAddress.Family) {
            self.session = session
            self.host = host
            self.family = family
        }
    }

    init(
        id: UInt64, engine: BrowserEngine, type: String, subtype: String?, domain: String?, instance: String?,
        following: Int, continuation: AsyncStream<DNSSDEvent>.Continuation
    ) {
        self.id = id
        self.engine = engine
        self.type = type
        self.subtype = subtype
        self.domain = domain
        self.instance = instance
        self.continuation = continuation
        self.model = BrowseModel(type: type, followLimit: following)
    }

    private var logger: Logger { engine.logger }

    private var browsedType: String {
        subtype.map { DNSSDService.subtypeServiceType($0, of: type) } ?? type
    }

    func start(client: OpaquePointer) {
        guard !isStarted else { return }
        isStarted = true
        if let instance {
            // Avahi resolves on every interface (AVAHI_IF_UNSPEC) and reports where it found
            // the service; the model treats that as one sighting.
            let key = BrowseModel.ServiceKey(name: instance, domain: domain ?? "local")
            apply(model.serviceAppeared(key, interface: Int32(AVAHI_IF_UNSPEC), protocol: Int32(AVAHI_PROTO_UNSPEC)))
            return
        }
        browser = makeBrowser(client)
        if browser == nil {
            isStarted = false
            logger.error("\(AvahiConnection.error("browsing \(browsedType)", client: client))")
        }
    }

    private func makeBrowser(_ client: OpaquePointer) -> OpaquePointer? {
        withOptionalCString(domain) { domain in
            avahi_service_browser_new(
                client, AvahiIfIndex(AVAHI_IF_UNSPEC), AvahiProtocol(AVAHI_PROTO_UNSPEC), browsedType, domain,
                AvahiLookupFlags(0),
                { _, interface, transport, event, name, _, domain, _, userdata in
                    guard let userdata else { return }
                    let session = Unmanaged<BrowseSession>.fromOpaque(userdata).takeUnretainedValue()
                    session.browserEvent(
                        interface: interface, transport: transport, event: event,
                        name: name.map { String(cString: $0) }, domain: domain.map { String(cString: $0) })
                }, Unmanaged.passUnretained(self).toOpaque())
        }
    }

    /// Frees every Avahi object of this browse (the stream has ended). Each free is a D-Bus
    /// call answered by the daemon; once the connection is shutting down they are left to
    /// `avahi_client_free`, which disconnects first and frees them without asking.
    func freeAll() {
        let connection = engine.connection
        for resolver in resolvers.values {
            if let r = resolver.resolver, !connection.isShuttingDown { avahi_service_resolver_free(r) }
            resolver.resolver = nil
        }
        resolvers = [:]
        for lookups in addressLookups.values {
            for lookup in lookups {
                if let b = lookup.browser, !connection.isShuttingDown { avahi_record_browser_free(b) }
                lookup.browser = nil
            }
        }
        addressLookups = [:]
        if let browser { avahi_service_browser_free(browser) }
        browser = nil
        isStarted = false
        retryTimer = nil
    }

    /// The client and every object made from it are being freed by Avahi.
    func connectionLost() {
        browser = nil
        isStarted = false
        for resolver in resolvers.values { resolver.resolver = nil }
        resolvers = [:]
        for lookups in addressLookups.values { for lookup in lookups { lookup.browser = nil } }
        addressLookups = [:]
        failedStarts = []
        retryTimer?.disarm()
        apply(model.connectionLost())
    }

    private func browserEvent(interface: Int32, transport: Int32, event: AvahiBrowserEvent, name: String?, domain: String?) {
        switch event {
        case AVAHI_BROWSER_NEW, AVAHI_BROWSER_REMOVE:
            guard let name, let domain else { return }
            let key = BrowseModel.ServiceKey(name: name, domain: domain)
            if event == AVAHI_BROWSER_NEW {
                apply(model.serviceAppeared(key, interface: interface, protocol: transport))
            } else {
                apply(model.serviceDisappeared(key, interface: interface, protocol: transport))
            }
        case AVAHI_BROWSER_FAILURE:
            logger.error("\(AvahiConnection.error("browsing \(browsedType)", client: engine.connection.client))")
        default:
            break
        }
    }

    private func apply(_ outcome: BrowseModel.Outcome) {
        for effect in outcome.effects { perform(effect) }
        for event in outcome.events { continuation.yield(event) }
        guard !isApplying else { return }
        isApplying = true
        defer { isApplying = false }
        while !failedStarts.isEmpty {
            let key = failedStarts.removeFirst()
            apply(model.resolveFailed(key.service, interface: key.interface))
        }
        if model.hasFailedServices, isStarted {
            if retryTimer == nil {
                retryTimer = engine.connection.makeTimer { [unowned self] in apply(model.retryFailed()) }
            }
            if retryTimer?.isArmed == false { retryTimer?.arm(afterMilliseconds: Self.retryMilliseconds) }
        }
    }

    private func perform(_ effect: BrowseModel.Effect) {
        switch effect {
        case let .startResolver(service, interface):
            let handle = ServiceResolver(session: self, key: ResolverKey(service: service, interface: interface))
            resolvers[handle.key] = handle
            startResolver(handle)
        case let .resolveOnce(service, interface):
            let handle = ServiceResolver(session: self, key: ResolverKey(service: service, interface: interface), withAddress: true)
            resolvers[handle.key] = handle
            startResolver(handle)
        case let .stopResolver(service, interface):
            if let handle = resolvers.removeValue(forKey: ResolverKey(service: service, interface: interface)),
                let resolver = handle.resolver
            {
                avahi_service_resolver_free(resolver)
                handle.resolver = nil
            }
        case let .startHostLookup(host):
            addressLookups[host] = [DNSSDAddress.Family.ipv4, .ipv6].map { family in
                let lookup = AddressLookup(session: self, host: host, family: family)
                startAddressLookup(lookup)
                return lookup
            }
        case let .stopHostLookup(host):
            for lookup in addressLookups.removeValue(forKey: host) ?? [] {
                if let browser = lookup.browser { avahi_record_browser_free(browser) }
                lookup.browser = nil
            }
        }
    }

    private func startResolver(_ handle: ServiceResolver) {
        guard let client = engine.connection.client else { return }
        handle.attempts += 1
        // NO_ADDRESS for a followed service: addresses come from the host lookups, which see
        // all of them (a resolver reports one) and report when they change.
        handle.resolver = avahi_service_resolver_new(
            client, handle.key.interface, AvahiProtocol(AVAHI_PROTO_UNSPEC), handle.key.service.name, type,
            handle.key.service.domain, AvahiProtocol(AVAHI_PROTO_UNSPEC),
            handle.withAddress ? AvahiLookupFlags(0) : AVAHI_LOOKUP_NO_ADDRESS,
            { _, interface, _, event, _, _, _, hostName, address, port, txt, _, userdata in
                guard let userdata else { return }
                let handle = Unmanaged<ServiceResolver>.fromOpaque(userdata).takeUnretainedValue()
                handle.session.resolverEvent(
                    handle, event: event, hostName: hostName.map { String(cString: $0) }, port: port,
                    txt: AvahiTXT.strings(txt), address: address.flatMap { DNSSDAddress(avahi: $0.pointee, interfaceIndex: interface) })
            }, Unmanaged.passUnretained(handle).toOpaque())
        if handle.resolver == nil {
            logger.warning("\(AvahiConnection.error("resolving \(handle.key.service.name)", client: client)); trying again later")
            failedStarts.append(handle.key)
        }
    }

    private func resolverEvent(
        _ handle: ServiceResolver, event: AvahiResolverEvent, hostName: String?, port: UInt16, txt: [[UInt8]],
        address: DNSSDAddress?
    ) {
        guard resolvers[handle.key] === handle else { return }
        switch event {
        case AVAHI_RESOLVER_FOUND where handle.withAddress:
            guard let hostName else { return }
            apply(
                model.serviceResolvedOnce(
                    handle.key.service, interface: handle.key.interface, hostName: hostName, port: port,
                    txt: DNSSDTXTRecord(decoding: txt), address: address))
        case AVAHI_RESOLVER_FOUND:
            guard let hostName else { return }
            apply(
                model.serviceResolved(
                    handle.key.service, interface: handle.key.interface, hostName: hostName, port: port,
                    txt: DNSSDTXTRecord(decoding: txt)))
        case AVAHI_RESOLVER_FAILURE:
            let error = AvahiConnection.error("resolving \(handle.key.service.name)", client: engine.connection.client)
            if let resolver = handle.resolver { avahi_service_resolver_free(resolver) }
            handle.resolver = nil
            if handle.attempts < Self.resolveAttempts {
                logger.debug("\(error); trying again")
                startResolver(handle)
                apply(BrowseModel.Outcome())  // should its creation have failed
            } else {
                logger.warning("\(error)")
                apply(model.resolveFailed(handle.key.service, interface: handle.key.interface))
            }
        default:
            break
        }
    }

    private func startAddressLookup(_ lookup: AddressLookup) {
        guard let client = engine.connection.client else { return }
        let recordType = UInt16(lookup.family == .ipv4 ? AVAHI_DNS_TYPE_A : AVAHI_DNS_TYPE_AAAA)
        lookup.browser = avahi_record_browser_new(
            client, lookup.host.interface, AvahiProtocol(AVAHI_PROTO_UNSPEC), lookup.host.hostName,
            UInt16(AVAHI_DNS_CLASS_IN), recordType, AvahiLookupFlags(0),
            { _, interface, transport, event, _, _, _, rdata, size, _, userdata in
                guard let userdata else { return }
                let lookup = Unmanaged<AddressLookup>.fromOpaque(userdata).takeUnretainedValue()
                let bytes = rdata.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) } ?? []
                lookup.session.addressEvent(lookup, interface: interface, transport: transport, event: event, rdata: bytes)
            }, Unmanaged.passUnretained(lookup).toOpaque())
        if lookup.browser == nil {
            logger.error("\(AvahiConnection.error("looking up \(lookup.host.hostName)", client: client))")
            apply(model.hostLookupSettled(lookup.host, family: lookup.family))
        }
    }

    private func addressEvent(_ lookup: AddressLookup, interface: Int32, transport: Int32, event: AvahiBrowserEvent, rdata: [UInt8]) {
        guard addressLookups[lookup.host]?.contains(where: { $0 === lookup }) == true else { return }
        switch event {
        case AVAHI_BROWSER_NEW, AVAHI_BROWSER_REMOVE:
            // A record of the wrong length is dropped, never trusted.
            guard let address = DNSSDAddress(family: lookup.family, bytes: rdata, interfaceIndex: interface) else {
                logger.debug("ignoring a malformed address record for \(lookup.host.hostName)")
                return
            }
            if event == AVAHI_BROWSER_NEW {
                apply(model.addressAppeared(lookup.host, address, protocol: transport))
            } else {
                apply(model.addressDisappeared(lookup.host, address, protocol: transport))
            }
        case AVAHI_BROWSER_ALL_FOR_NOW, AVAHI_BROWSER_FAILURE:
            apply(model.hostLookupSettled(lookup.host, family: lookup.family))
        default:
            break
        }
    }
}

extension DNSSDAddress {
    /// An address Avahi reports (a resolver's), on `interfaceIndex`.
    init?(avahi address: AvahiAddress, interfaceIndex: Int32) {
        var copy = address
        switch Int(address.proto) {
        case AVAHI_PROTO_INET:
            let bytes = withUnsafeBytes(of: &copy.data.ipv4.address) { Array($0) }
            self.init(family: .ipv4, bytes: bytes, interfaceIndex: interfaceIndex)
        case AVAHI_PROTO_INET6:
            let bytes = withUnsafeBytes(of: &copy.data.ipv6.address) { Array($0) }
            self.init(family: .ipv6, bytes: bytes, interfaceIndex: interfaceIndex)
        default:
            return nil
        }
    }
}
