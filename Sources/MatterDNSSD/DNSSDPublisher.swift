import CAvahi
import Logging
import Synchronization

/// Publishes DNS-SD services through the Avahi daemon (libavahi-client over D-Bus).
///
/// Each published service gets an entry group of its own, so it can be updated or withdrawn
/// alone. The publisher keeps what it published: when the daemon goes away it reconnects
/// (AVAHI_CLIENT_NO_FAIL) and publishes everything again once the daemon runs; when a name
/// collides on the network it moves to Avahi's alternative name (`Name #2`, ...).
/// Dropping the publisher (or `shutdown()`) withdraws everything it published.
public final class DNSSDPublisher: Sendable {
    let engine: PublisherEngine

    /// Connects to the daemon (which may start later). Throws only when the system D-Bus
    /// cannot be reached at all.
    public init(logger: Logger = Logger(label: "MatterDNSSD.publisher")) throws(DNSSDError) {
        engine = try PublisherEngine(logger: logger)
    }

    deinit {
        engine.shutdown()
    }

    /// Publishes `service` and returns once the daemon has established it (probed the name
    /// and announced it), possibly under an alternative name after a collision: see
    /// `DNSSDRegistration.instanceName`. While the daemon is away this waits for it.
    /// Cancelling the calling task withdraws the service and throws `CancellationError`.
    public func publish(_ service: DNSSDService) async throws -> DNSSDRegistration {
        try await engine.publish(service)
    }

    /// Withdraws everything and disconnects. Later calls throw `DNSSDError.shutDown`.
    public func shutdown() {
        engine.shutdown()
    }
}

/// One published service. It stays published until `withdraw()` or until its publisher
/// shuts down; dropping this handle does not withdraw it.
public final class DNSSDRegistration: Sendable, CustomStringConvertible {
    let engine: PublisherEngine
    let id: UInt64
    /// The service as it was first published.
    public let service: DNSSDService
    /// Read without the poll mutex, which a daemon slow to answer holds for seconds: a name
    /// in a log line must not stop the task that logs it (issue #43: a fleet's AddNOC answers).
    private let seen: PublishedRecord.Seen

    init(engine: PublisherEngine, record: PublishedRecord, service: DNSSDService) {
        self.engine = engine
        self.id = record.id
        self.seen = record.seen
        self.service = service
    }

    /// The instance name in use now: `service.instanceName`, or an alternative after a
    /// collision.
    public var instanceName: String {
        seen.withLock { $0.withdrawn ? nil : $0.name } ?? service.instanceName
    }

    /// Whether the daemon has the service established right now (false while it is being
    /// re-published after a daemon restart or a collision).
    public var isEstablished: Bool {
        seen.withLock { $0.established && !$0.withdrawn }
    }

    /// Replaces the TXT record. The daemon announces the new one at once.
    public func update(txt: DNSSDTXTRecord) throws(DNSSDError) {
        try engine.update(id, txt: txt)
    }

    /// Replaces the whole service: TXT only is a TXT update; anything else (subtypes, say
    /// `_CM` when a commissioning window closes, or port, name, host) fills the entry group
    /// again, and the daemon probes and announces it anew.
    public func update(service: DNSSDService) throws(DNSSDError) {
        try engine.update(id, service: service)
    }

    /// The service as published now: the latest update, under the name in use.
    public var currentService: DNSSDService {
        seen.withLock { seen -> DNSSDService? in
            guard !seen.withdrawn else { return nil }
            var current = seen.service
            current.instanceName = seen.name
            return current
        } ?? service
    }

    /// Withdraws the service (the daemon sends goodbye packets), soon and in order with the
    /// publisher's other work, without waiting for the daemon. Idempotent.
    public func withdraw() {
        engine.withdraw(id, because: .withdrawn)
    }

    public var description: String {
        "\(instanceName).\(service.type) port \(service.port)"
    }
}

/// The published service's bookkeeping. Guarded by the poll mutex (see AvahiConnection).
final class PublishedRecord: @unchecked Sendable {
    enum State {
        /// Waiting for the daemon (not yet added, or reset after a restart or host collision).
        case pending
        /// Committed, the daemon is probing.
        case registering
        case established
        case failed(DNSSDError)
        case withdrawn

        var isEstablished: Bool {
            if case .established = self { return true }
            return false
        }

        var isWithdrawn: Bool {
            if case .withdrawn = self { return true }
            return false
        }
    }

    /// What registrations read from outside the poll mutex, kept in step with the fields
    /// below under a lock of its own that is never held across a call into Avahi.
    struct Snapshot: Sendable {
        var service: DNSSDService
        var name: String
        var established = false
        var withdrawn = false
    }
    /// Shared by the record and its registration handle.
    final class Seen: Sendable {
        private let snapshot: Mutex<Snapshot>
        init(_ snapshot: Snapshot) { self.snapshot = Mutex(snapshot) }
        func withLock<T>(_ body: (inout Snapshot) -> T) -> T { snapshot.withLock { body(&$0) } }
    }

    let id: UInt64
    unowned let engine: PublisherEngine
    let seen: Seen
    var service: DNSSDService {
        didSet { seen.withLock { [service] in $0.service = service } }
    }
    /// The name in use: the service's, or an alternative after collisions.
    var name: String {
        didSet { seen.withLock { [name] in $0.name = name } }
    }
    var group: OpaquePointer?
    var state: State = .pending {
        didSet {
            let (established, withdrawn) = (state.isEstablished, state.isWithdrawn)
            seen.withLock {
                $0.established = established
                $0.withdrawn = withdrawn
            }
        }
    }
    var waiters: [CheckedContinuation<Void, any Error>] = []
    var renames = 0

    init(id: UInt64, engine: PublisherEngine, service: DNSSDService) {
        self.id = id
        self.engine = engine
        self.service = service
        self.name = service.instanceName
        seen = Seen(Snapshot(service: service, name: service.instanceName))
    }
}

final class PublisherEngine: AvahiClientOwner, @unchecked Sendable {
    let connection: AvahiConnection
    private let logger: Logger
    /// A name that keeps colliding after this many alternatives is given up.
    private static let maximumRenames = 64

    // Guarded by the poll mutex.
    private var records: [UInt64: PublishedRecord] = [:]
    private var nextID: UInt64 = 1

    init(logger: Logger) throws(DNSSDError) {
        self.logger = logger
        connection = try AvahiConnection(logger: logger)
        try connection.start(owner: self)
    }

    func publish(_ service: DNSSDService) async throws -> DNSSDRegistration {
        try service.validate()
        // Registering waits for the daemon's replies: off the tasks' shared threads.
        let record = try await connection.withLockOffThePool { client throws(DNSSDError) -> PublishedRecord in
            let record = PublishedRecord(id: self.nextID, engine: self, service: service)
            self.nextID += 1
            self.records[record.id] = record
            if let client, avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING {
                do throws(DNSSDError) {
                    try self.register(record, client: client)
                } catch {
                    self.discard(record)
                    throw error
                }
            }
            return record
        }
        let id = record.id
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    // Queued behind other nodes' registrations, not waiting for the mutex here.
                    connection.withLockSoonOrFail({ continuation.resume(throwing: $0) }) { _ throws(DNSSDError) in
                        guard let record = self.records[id] else { throw .withdrawn }
                        switch record.state {
                        case .established: continuation.resume()
                        case let .failed(error): continuation.resume(throwing: error)
                        case .withdrawn: continuation.resume(throwing: DNSSDError.withdrawn)
                        case .pending, .registering: record.waiters.append(continuation)
                        }
                    }
                }
            } onCancel: {
                // Not waiting for the poll mutex here (see AvahiConnection).
                self.connection.withLockSoon { _ in self.withdrawLocked(id, because: .withdrawn) }
            }
        } catch {
            withdraw(id, because: .withdrawn)
            if Task.isCancelled { throw CancellationError() }
            throw error
        }
        return DNSSDRegistration(engine: self, record: record, service: service)
    }

    func update(_ id: UInt64, txt: DNSSDTXTRecord) throws(DNSSDError) {
        try txt.validate()
        try connection.withLock { _ throws(DNSSDError) in
            guard let record = records[id] else { throw .withdrawn }
            try updateTXT(of: record, to: txt)
        }
    }

    func update(_ id: UInt64, service: DNSSDService) throws(DNSSDError) {
        try service.validate()
        try connection.withLock { client throws(DNSSDError) in
            guard let record = records[id] else { throw .withdrawn }
            var sameButTXT = record.service
            sameButTXT.txt = service.txt
            if sameButTXT == service {
                try updateTXT(of: record, to: service.txt)
                return
            }
            if service.instanceName != record.service.instanceName {
                record.name = service.instanceName
                record.renames = 0
            }
            record.service = service
            // Subtypes, port, name or host changed: the entry group is filled again. While
            // the daemon is away the new service simply waits for it.
            switch record.state {
            case .registering, .established:
                guard let client, avahi_client_get_state(client) == AVAHI_CLIENT_S_RUNNING else {
                    record.state = .pending
                    return
                }
                try register(record, client: client)
            default:
                return
            }
        }
    }

    private func updateTXT(of record: PublishedRecord, to txt: DNSSDTXTRecord) throws(DNSSDError) {
        record.service.txt = txt
        // Not committed yet: the new TXT goes out with the next registration.
        guard let group = record.group else { return }
        switch record.state {
        case .registering, .established: break
        default: return
        }
        var failed = false
        let list = AvahiTXT.make(txt, failed: &failed)
        defer { avahi_string_list_free(list) }
        guard !failed else {
            throw .avahi(operation: "TXT update", code: Int32(AVAHI_ERR_NO_MEMORY), message: "out of memory")
        }
        let service = record.service
        let result = withOptionalCString(service.domain) { domain in
            avahi_entry_group_update_service_txt_strlst(
                group, service.avahiInterface, AvahiProtocol(AVAHI_PROTO_UNSPEC), AvahiPublishFlags(0),
                record.name, service.type, domain, list)
        }
        guard result >= 0 else {
            throw .avahi(operation: "TXT update of \(record.name)", code: result, message: AvahiConnection.message(result))
        }
        logger.debug("updated TXT of \(record.name): \(txt)")
    }

    /// Queued behind the connection's other work: freeing the entry group waits for the daemon.
    func withdraw(_ id: UInt64, because reason: DNSSDError) {
        connection.withLockSoon { _ in self.withdrawLocked(id, because: reason) }
    }

    func shutdown() {
        connection.shutdown()
        connection.withLockEvenIfStopped {
            for record in records.values {
                record.state = .withdrawn
                for waiter in record.waiters { waiter.resume(throwing: DNSSDError.shutDown) }
                record.waiters = []
            }
            records = [:]
        }
    }

    // MARK: - Mutex held

    func clientStateChanged(_ client: OpaquePointer, state: AvahiClientState) {
        switch state {
        case AVAHI_CLIENT_S_RUNNING:
            // First connection, daemon back after a restart, or host name settled again.
            for record in records.values.sorted(by: { $0.id < $1.id }) {
                switch record.state {
                case .pending, .failed: break
                default: continue
                }
                do {
                    try register(record, client: client)
                } catch {
                    fail(record, error)
                }
            }
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            // The host name is being (re)probed: records go back once it runs again.
            for record in records.values {
                if let group = record.group { avahi_entry_group_reset(group) }
                if case .withdrawn = record.state { continue }
                record.state = .pending
            }
        default:
            break
        }
    }

    func clientWillBeFreed() {
        for record in records.values {
            // Freed together with the client.
            record.group = nil
            switch record.state {
            case .withdrawn: break
            default: record.state = .pending
            }
        }
    }

    /// Adds the record's service and subtypes to its entry group and commits it.
    private func register(_ record: PublishedRecord, client: OpaquePointer) throws(DNSSDError) {
        let group: OpaquePointer
        if let existing = record.group {
            avahi_entry_group_reset(existing)
            group = existing
        } else {
            let made = avahi_entry_group_new(
                client,
                { group, state, userdata in
                    guard let group, let userdata else { return }
                    let record = Unmanaged<PublishedRecord>.fromOpaque(userdata).takeUnretainedValue()
                    record.engine.groupChanged(record, group: group, state: state)
                }, Unmanaged.passUnretained(record).toOpaque())
            guard let made else { throw AvahiConnection.error("avahi_entry_group_new", client: client) }
            record.group = made
            group = made
        }
        while true {
            let result = addService(record, to: group)
            if result == Int32(AVAHI_ERR_COLLISION), record.renames < Self.maximumRenames {
                // Another group of this daemon already has the name.
                avahi_entry_group_reset(group)
                rename(record)
                continue
            }
            guard result >= 0 else {
                throw .avahi(operation: "adding \(record.name)", code: result, message: AvahiConnection.message(result))
            }
            break
        }
        let result = avahi_entry_group_commit(group)
        guard result >= 0 else {
            throw .avahi(operation: "committing \(record.name)", code: result, message: AvahiConnection.message(result))
        }
        record.state = .registering
    }

    private func addService(_ record: PublishedRecord, to group: OpaquePointer) -> Int32 {
        guard record.service.probe else { return addUnprobedRecords(record, to: group) }
        var failed = false
        let list = AvahiTXT.make(record.service.txt, failed: &failed)
        defer { avahi_string_list_free(list) }
        guard !failed else { return Int32(AVAHI_ERR_NO_MEMORY) }
        let service = record.service
        let protocolFamily = AvahiProtocol(AVAHI_PROTO_UNSPEC)
        return withOptionalCString(service.domain) { domain in
            withOptionalCString(service.hostName) { host in
                var result = avahi_entry_group_add_service_strlst(
                    group, service.avahiInterface, protocolFamily, AvahiPublishFlags(0), record.name, service.type,
                    domain, host, service.port, list)
                guard result >= 0 else { return result }
                for subtype in service.subtypeServiceTypes {
                    result = avahi_entry_group_add_service_subtype(
                        group, service.avahiInterface, protocolFamily, AvahiPublishFlags(0), record.name,
                        service.type, domain, subtype)
                    guard result >= 0 else { return result }
                }
                return addHostAddresses(service, to: group)
            }
        }
    }

    /// The A/AAAA records of the service's own host name. Avahi adds them unique but allowing
    /// the same record in another group (a node's commissionable and operational services
    /// both carry its host); no reverse PTR, which would be unique per address and so collide
    /// between the nodes of one host.
    private func addHostAddresses(_ service: DNSSDService, to group: OpaquePointer) -> Int32 {
        guard let hostName = service.hostName else { return 0 }
        let flags = AvahiPublishFlags(AVAHI_PUBLISH_NO_REVERSE.rawValue | (service.probe ? 0 : AVAHI_PUBLISH_NO_PROBE.rawValue))
        for address in service.hostAddresses {
            var parsed = AvahiAddress()
            guard avahi_address_parse(address.text, AvahiProtocol(AVAHI_PROTO_UNSPEC), &parsed) != nil else {
                return Int32(AVAHI_ERR_INVALID_ADDRESS)
            }
            let result = avahi_entry_group_add_address(
                group, AvahiIfIndex(address.interfaceIndex), AvahiProtocol(AVAHI_PROTO_UNSPEC), flags, hostName, &parsed)
            guard result >= 0 else { return result }
        }
        return 0
    }

    /// The records `avahi_entry_group_add_service` would add (RFC 6763 §4, §7.1, §9), added
    /// one by one so the unique ones (SRV, TXT) can carry AVAHI_PUBLISH_NO_PROBE, which the
    /// service call does not take.
    private func addUnprobedRecords(_ record: PublishedRecord, to group: OpaquePointer) -> Int32 {
        let service = record.service
        let domain = service.domain ?? "local"
        let hostName: String
        if let name = service.hostName {
            hostName = name.hasSuffix(".") ? String(name.dropLast()) : name
        } else {
            guard let client = avahi_entry_group_get_client(group), let fqdn = avahi_client_get_host_name_fqdn(client) else {
                return Int32(AVAHI_ERR_BAD_STATE)
            }
            hostName = String(cString: fqdn)
        }
        var fullName = [CChar](repeating: 0, count: Int(AVAHI_DOMAIN_NAME_MAX))
        let joined = avahi_service_name_join(&fullName, fullName.count, record.name, service.type, domain)
        guard joined >= 0 else { return joined }
        let instance = String(decoding: fullName.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)

        var failed = false
        let list = AvahiTXT.make(service.txt, failed: &failed)
        defer { avahi_string_list_free(list) }
        guard !failed else { return Int32(AVAHI_ERR_NO_MEMORY) }
        var txt = [UInt8](repeating: 0, count: max(1, avahi_string_list_serialize(list, nil, 0)))
        let txtSize = avahi_string_list_serialize(list, &txt, txt.count)
        var srv: [UInt8] = [0, 0, 0, 0, UInt8(service.port >> 8), UInt8(service.port & 0xFF)]
        srv += DNSWireName.encode(labels: DNSWireName.labels(hostName))

        let unique = AvahiPublishFlags(AVAHI_PUBLISH_UNIQUE.rawValue | AVAHI_PUBLISH_NO_PROBE.rawValue)
        let shared = AvahiPublishFlags(0)
        var records: [(name: String, type: Int32, ttl: UInt32, flags: AvahiPublishFlags, rdata: [UInt8])] = [
            (instance, Int32(AVAHI_DNS_TYPE_SRV), UInt32(AVAHI_DEFAULT_TTL_HOST_NAME), unique, srv),
            (instance, Int32(AVAHI_DNS_TYPE_TXT), UInt32(AVAHI_DEFAULT_TTL), unique, Array(txt[0..<txtSize])),
        ]
        for pointer in Self.sharedPointers(service, instance: record.name, domain: domain) {
            records.append((pointer.name, Int32(AVAHI_DNS_TYPE_PTR), UInt32(AVAHI_DEFAULT_TTL), shared, pointer.target))
        }
        for r in records {
            let result = r.rdata.withUnsafeBytes { bytes in
                avahi_entry_group_add_record(
                    group, service.avahiInterface, AvahiProtocol(AVAHI_PROTO_UNSPEC), r.flags,
                    r.name, UInt16(AVAHI_DNS_CLASS_IN), UInt16(r.type), r.ttl,
                    bytes.baseAddress, bytes.count)
            }
            guard result >= 0 else { return result }
        }
        return addHostAddresses(service, to: group)
    }

    /// The shared PTR records of a service (RFC 6763 §4.1, §7.1, §9): its type and each subtype
    /// point at the instance; service type enumeration points at the type and, where the
    /// service asks for it, at each subtype, as connectedhomeip's responder does (TC-SC-4.3
    /// step 10 finds a node's fabric there, `_I<fabric>._sub._matter._tcp`).
    static func sharedPointers(_ service: DNSSDService, instance: String, domain: String) -> [(name: String, target: [UInt8])] {
        let instanceWire = DNSWireName.encode(labels: [instance] + DNSWireName.labels(service.type) + DNSWireName.labels(domain))
        let enumeration = "_services._dns-sd._udp.\(domain)"
        let wire = { (type: String) in DNSWireName.encode(labels: DNSWireName.labels(type) + DNSWireName.labels(domain)) }
        var pointers = [("\(service.type).\(domain)", instanceWire), (enumeration, wire(service.type))]
        for subtype in service.subtypeServiceTypes {
            pointers.append(("\(subtype).\(domain)", instanceWire))
            if service.enumeratesSubtypes { pointers.append((enumeration, wire(subtype))) }
        }
        return pointers
    }

    /// Avahi's rule for the next name to try: `Name` → `Name #2` → `Name #3` ...
    private func rename(_ record: PublishedRecord) {
        guard let alternative = avahi_alternative_service_name(record.name) else { return }
        let old = record.name
        record.name = String(cString: alternative)
        avahi_free(alternative)
        record.renames += 1
        logger.notice("service name '\(old)' is taken; using '\(record.name)'")
    }

    private func groupChanged(_ record: PublishedRecord, group: OpaquePointer, state: AvahiEntryGroupState) {
        guard record.group == group else { return }
        switch state {
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            record.state = .established
            logger.debug("established \(record.name).\(record.service.type)")
            for waiter in record.waiters { waiter.resume() }
            record.waiters = []
        case AVAHI_ENTRY_GROUP_COLLISION:
            // Someone on the network has this name: probe again under the alternative.
            guard record.renames < Self.maximumRenames, let client = connection.client else {
                fail(record, .avahi(operation: "publishing \(record.name)", code: Int32(AVAHI_ERR_COLLISION), message: "name collision"))
                return
            }
            rename(record)
            do {
                try register(record, client: client)
            } catch {
                fail(record, error)
            }
        case AVAHI_ENTRY_GROUP_FAILURE:
            fail(record, AvahiConnection.error("publishing \(record.name)", client: connection.client))
        default:
            break
        }
    }

    private func fail(_ record: PublishedRecord, _ error: DNSSDError) {
        logger.error("\(error)")
        record.state = .failed(error)
        for waiter in record.waiters { waiter.resume(throwing: error) }
        record.waiters = []
    }

    /// Forgets the record, its waiters told `reason`.
    private func withdrawLocked(_ id: UInt64, because reason: DNSSDError) {
        guard let record = records[id] else { return }
        discard(record)
        for waiter in record.waiters { waiter.resume(throwing: reason) }
        record.waiters = []
        logger.debug("withdrew \(record.name)")
    }

    /// Frees the entry group (the daemon withdraws its records) and forgets the record.
    private func discard(_ record: PublishedRecord) {
        if let group = record.group { avahi_entry_group_free(group) }
        record.group = nil
        record.state = .withdrawn
        records[record.id] = nil
    }
}

extension DNSSDService {
    var avahiInterface: AvahiIfIndex {
        interfaceIndex ?? AvahiIfIndex(AVAHI_IF_UNSPEC)
    }
}

/// Passes `nil` through as a NULL C string.
func withOptionalCString<T>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}

/// Names in DNS wire format (RFC 1035 §3.1): length-prefixed labels, then a zero byte.
enum DNSWireName {
    /// The labels of a dotted name (a trailing dot ignored). Service types and host names
    /// have no escaped dots; instance labels are passed whole, never split.
    static func labels(_ dotted: String) -> [String] {
        dotted.split(separator: ".").map(String.init)
    }

    static func encode(labels: [String]) -> [UInt8] {
        var out: [UInt8] = []
        for label in labels {
            let bytes = Array(label.utf8.prefix(63))
            out.append(UInt8(bytes.count))
            out += bytes
        }
        out.append(0)
        return out
    }
}
