import Foundation
import MatterModel
import MatterTLV
import Testing

@testable import MatterProtocol

struct IMTestTimeout: Error {}

/// Runs `operation`, failing after a generous real-time bound so a broken
/// engine fails the test instead of hanging it.
func imWithin<T: Sendable>(_ seconds: Double = 10, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    // On the real clock: the engine's own time is the test's ManualClock.
    try await withTimeLimit(.seconds(seconds), on: SystemClock(), orThrow: { IMTestTimeout() }, operation)
}

typealias IMMessage = (opcode: UInt8, payload: [UInt8])

/// A queue between the server and the test. Unlike AsyncStream, a cancelled
/// `take()` leaves the queue open, so probing for "nothing arrived" is safe.
final class IMMailbox<Item: Sendable>: @unchecked Sendable {
    // `lock` guards `items`, `waiters` and `nextWaiter`.
    private let lock = NSLock()
    private var items: [Item] = []
    private var waiters: [Int: CheckedContinuation<Item?, Never>] = [:]
    private var nextWaiter = 0
    private var watchers: [CheckedContinuation<Void, Never>] = []

    func put(_ item: Item) {
        let waiter: CheckedContinuation<Item?, Never>? = lock.withLock {
            if let first = waiters.keys.min() { return waiters.removeValue(forKey: first) }
            items.append(item)
            return nil
        }
        waiter?.resume(returning: item)
    }

    /// The next item; nil when the waiting task is cancelled.
    func take() async -> Item? {
        let id = lock.withLock {
            nextWaiter += 1
            return nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Item?, Never>) in
                let watching = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                    if !items.isEmpty {
                        continuation.resume(returning: items.removeFirst())
                    } else if Task.isCancelled {
                        continuation.resume(returning: nil)
                    } else {
                        waiters[id] = continuation
                        defer { watchers = [] }
                        return watchers
                    }
                    return []
                }
                for watcher in watching { watcher.resume() }
            }
        } onCancel: {
            let waiter = lock.withLock { waiters.removeValue(forKey: id) }
            waiter?.resume(returning: nil)
        }
    }

    var count: Int { lock.withLock { items.count } }

    /// Returns once a task waits in `take()` (at once if one already does).
    func untilTaking() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = lock.withLock {
                if !waiters.isEmpty { return true }
                watchers.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}

/// One side of a test exchange: the server sends into `sent`, the test
/// answers through `deliver`.
final class IMFakeExchange: IMExchange {
    let subject: SubjectDescriptor
    let session: IMFakeSession
    private let sent = IMMailbox<IMMessage>()
    private let inbound = IMMailbox<Result<IMMessage, any Error>>()

    init(subject: SubjectDescriptor, session: IMFakeSession) {
        self.subject = subject
        self.session = session
    }

    func send(opcode: UInt8, payload: [UInt8]) async throws {
        sent.put((opcode, payload))
    }

    func receive() async throws -> (opcode: UInt8, payload: [UInt8]) {
        guard let next = await inbound.take() else { throw CancellationError() }
        return try next.get()
    }

    func openExchange() async throws -> any IMExchange {
        session.open(subject: subject)
    }

    func close() async {}

    // Test side.

    /// The next message the server sent on this exchange.
    func nextSent() async throws -> IMMessage {
        try await imWithin {
            guard let message = await self.sent.take() else { throw IMTestTimeout() }
            return message
        }
    }

    func nextSent<M: InteractionMessage>(_ type: M.Type) async throws -> M {
        let message = try await nextSent()
        #expect(message.opcode == M.opcode.rawValue, "expected \(M.self), got opcode \(message.opcode)")
        return try M(payload: message.payload)
    }

    func deliver<M: InteractionMessage>(_ message: M) {
        inbound.put(.success((M.opcode.rawValue, message.encoded())))
    }

    func deliver(opcode: UInt8, payload: [UInt8]) {
        inbound.put(.success((opcode, payload)))
    }

    /// The transport gave up on the peer (MRP exhausted, response timeout).
    func failReceive() {
        inbound.put(.failure(CancellationError()))
    }

    /// Whether the server sent something not yet taken (call once the server is done).
    var hasPendingSent: Bool { sent.count > 0 }

    /// Whether the server sent something not yet taken before it went on to wait for the
    /// peer's answer: what it sends before waiting has been sent by then.
    func hasPendingSentBeforeWaiting() async -> Bool {
        await inbound.untilTaking()
        return sent.count > 0
    }
}

/// A secure session: the exchanges the server opens on it.
final class IMFakeSession: Sendable {
    private let opened = IMMailbox<IMFakeExchange>()

    func open(subject: SubjectDescriptor) -> IMFakeExchange {
        let exchange = IMFakeExchange(subject: subject, session: self)
        opened.put(exchange)
        return exchange
    }

    /// The next exchange the server opened.
    func nextOpened() async throws -> IMFakeExchange {
        try await imWithin {
            guard let exchange = await self.opened.take() else { throw IMTestTimeout() }
            return exchange
        }
    }

    /// Whether the server opened an exchange not yet taken.
    var hasPendingOpened: Bool { opened.count > 0 }

    /// An exchange the peer opened towards the server.
    func peerExchange(subject: SubjectDescriptor) -> IMFakeExchange {
        IMFakeExchange(subject: subject, session: self)
    }
}

/// Fans attribute changes out to every stream handed out.
final class IMChangeBroadcaster: @unchecked Sendable {
    // `lock` guards `sinks` and `nextID`.
    private let lock = NSLock()
    private var sinks: [Int: AsyncStream<AttributePath>.Continuation] = [:]
    private var nextID = 0

    func stream() -> AsyncStream<AttributePath> {
        let (stream, sink) = AsyncStream.makeStream(of: AttributePath.self)
        let id = lock.withLock {
            nextID += 1
            sinks[nextID] = sink
            return nextID
        }
        sink.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.withLock { _ = self.sinks.removeValue(forKey: id) }
        }
        return stream
    }

    func publish(_ path: AttributePath) {
        for sink in lock.withLock({ Array(sinks.values) }) { sink.yield(path) }
    }

    var listenerCount: Int { lock.withLock { sinks.count } }
}

/// An in-memory node: endpoints → clusters → attributes, with data versions,
/// an access rule, write validators and command handlers.
actor IMFakeNode: InteractionDataProvider {
    struct Attribute {
        var metadata: AttributeMetadata
        var value: TLVValue
        var readStatus: InteractionStatus? = nil
    }

    struct Cluster {
        var dataVersion: DataVersion = 1
        var attributes: [AttributeID: Attribute] = [:]
        var commands: [CommandMetadata] = []
    }

    typealias Validator = @Sendable (TLVValue) -> InteractionStatus
    typealias CommandHandler = @Sendable (TLVValue?) -> CommandOutcome

    private var clusters: [ClusterPath: Cluster] = [:]
    private var endpointList: [EndpointNumber] = []
    /// Clusters the subject may not touch at all.
    private var deniedClusters: Set<ClusterPath> = []
    /// The highest privilege granted to everyone elsewhere.
    private var granted: Privilege = .administer
    private var validators: [AttributePath: Validator] = [:]
    private var handlers: [ConcreteCommandPath: CommandHandler] = [:]
    private(set) var writes: [(AttributePath, AttributeWriteOperation)] = []
    private(set) var invocations: [ConcreteCommandPath] = []
    /// Attribute reads served so far.
    private(set) var readCount = 0
    nonisolated let changes = IMChangeBroadcaster()
    /// The event log (numbered from 0) and its announcements.
    private var eventLog: [EventDataIB] = []
    private nonisolated let recorded = EventBroadcaster<EventPathIB>()

    func addCluster(
        _ path: ClusterPath, dataVersion: DataVersion = 1, attributes: [(AttributeMetadata, TLVValue)], commands: [CommandMetadata] = []
    ) {
        var cluster = Cluster(dataVersion: dataVersion, commands: commands)
        for (metadata, value) in attributes { cluster.attributes[metadata.id] = Attribute(metadata: metadata, value: value) }
        clusters[path] = cluster
        if !endpointList.contains(path.endpoint) { endpointList.append(path.endpoint) }
        endpointList.sort()
    }

    func deny(_ path: ClusterPath) { deniedClusters.insert(path) }
    func grant(_ privilege: Privilege) { granted = privilege }
    /// Events that need more than View to read (AccessControlEntryChanged: Administer).
    private var eventPrivileges: [EventPath: Privilege] = [:]
    func requirePrivilege(_ privilege: Privilege, toRead event: EventPath) { eventPrivileges[event] = privilege }
    func failReads(_ path: AttributePath, with status: InteractionStatus) {
        clusters[ClusterPath(endpoint: path.endpoint, cluster: path.cluster)]?.attributes[path.attribute]?.readStatus = status
    }
    func validate(_ path: AttributePath, _ validator: @escaping Validator) { validators[path] = validator }
    func handle(_ path: ConcreteCommandPath, _ handler: @escaping CommandHandler) { handlers[path] = handler }

    /// Changes a value as the device itself would, bumping the version and notifying.
    func set(_ path: AttributePath, _ value: TLVValue) {
        let clusterPath = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        clusters[clusterPath]?.attributes[path.attribute]?.value = value
        clusters[clusterPath]?.dataVersion &+= 1
        changes.publish(path)
    }

    /// Changes a value and records an event in one step, as a cluster does when an action
    /// changes its state and raises an event about it.
    func set(_ path: AttributePath, _ value: TLVValue, raising event: EventPathIB) {
        set(path, value)
        eventLog.append(EventDataIB(path: event, eventNumber: UInt64(eventLog.count), priority: .info, epochTimestamp: 0))
        recorded.publish(event)
    }

    func events(matching paths: [EventPathIB], minimumEventNumber: UInt64?, subject: SubjectDescriptor) -> [EventReportIB] {
        eventLog.filter { event in
            event.eventNumber >= minimumEventNumber ?? 0
                && paths.contains {
                    ($0.endpoint ?? event.path.endpoint) == event.path.endpoint && ($0.cluster ?? event.path.cluster) == event.path.cluster
                        && ($0.event ?? event.path.event) == event.path.event
                }
        }.map { .data($0) }
    }

    nonisolated func recordedEvents() -> AsyncStream<EventPathIB> { recorded.subscribe() }

    func value(_ path: AttributePath) -> TLVValue? {
        clusters[ClusterPath(endpoint: path.endpoint, cluster: path.cluster)]?.attributes[path.attribute]?.value
    }

    // MARK: InteractionDataProvider

    func endpoints() -> [EndpointNumber] { endpointList }

    func clusters(on endpoint: EndpointNumber) -> [ClusterID] {
        clusters.keys.filter { $0.endpoint == endpoint }.map(\.cluster).sorted()
    }

    func attributes(of cluster: ClusterPath) -> [AttributeMetadata] {
        (clusters[cluster]?.attributes.values.map(\.metadata) ?? []).sorted { $0.id < $1.id }
    }

    func commands(of cluster: ClusterPath) -> [CommandMetadata] { clusters[cluster]?.commands ?? [] }

    func dataVersion(of cluster: ClusterPath) -> DataVersion? { clusters[cluster]?.dataVersion }

    func eventReadPrivilege(_ event: EventID, of cluster: ClusterPath) -> Privilege {
        eventPrivileges[EventPath(endpoint: cluster.endpoint, cluster: cluster.cluster, event: event)] ?? .view
    }

    func checkAccess(_ subject: SubjectDescriptor, to cluster: ClusterPath, privilege: Privilege) -> Bool {
        !deniedClusters.contains(cluster) && privilege <= granted
    }

    func read(_ path: AttributePath, context: AttributeReadContext) -> Result<VersionedAttributeValue, InteractionStatus> {
        readCount += 1
        let clusterPath = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        guard let cluster = clusters[clusterPath], let attribute = cluster.attributes[path.attribute] else {
            return .failure(InteractionStatus(.unsupportedAttribute))
        }
        if let status = attribute.readStatus { return .failure(status) }
        var value = attribute.value
        // Fabric-scoped lists keep only the accessing fabric's entries (field 0xFE).
        if attribute.metadata.isFabricScoped, context.isFabricFiltered, case .array(let entries) = value {
            value = .array(entries.filter { $0.value[context: 0xFE] == .unsigned(UInt64(context.subject.fabricIndex)) })
        }
        return .success(VersionedAttributeValue(value, dataVersion: cluster.dataVersion))
    }

    func write(_ path: AttributePath, _ operation: AttributeWriteOperation, context: InteractionContext) -> InteractionStatus {
        writes.append((path, operation))
        let clusterPath = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        guard let current = clusters[clusterPath]?.attributes[path.attribute]?.value else {
            return InteractionStatus(.unsupportedAttribute)
        }
        let newValue: TLVValue
        switch operation {
        case .replace(let value): newValue = value
        case .appendItem(let item):
            guard case .array(let entries) = current else { return InteractionStatus(.invalidDataType) }
            newValue = .array(entries + [TLVElement(item)])
        }
        if let validator = validators[path] {
            let status = validator(newValue)
            guard status == .success else { return status }
        }
        set(path, newValue)
        return .success
    }

    func invoke(_ path: ConcreteCommandPath, fields: TLVValue?, context: InteractionContext) -> CommandOutcome {
        invocations.append(path)
        return handlers[path]?(fields) ?? .status(.success)
    }

    nonisolated func attributeChanges() -> AsyncStream<AttributePath> { changes.stream() }
}

let imAdmin = SubjectDescriptor(authMode: .case, fabricIndex: 1, subject: 0x1122_3344, caseAuthenticatedTags: [])

func ap(_ endpoint: EndpointNumber, _ cluster: UInt32, _ attribute: UInt32) -> AttributePath {
    AttributePath(endpoint: endpoint, cluster: ClusterID(cluster), attribute: AttributeID(attribute))
}

func apIB(_ endpoint: EndpointNumber?, _ cluster: UInt32?, _ attribute: UInt32?) -> AttributePathIB {
    AttributePathIB(endpoint: endpoint, cluster: cluster.map { ClusterID($0) }, attribute: attribute.map { AttributeID($0) })
}

extension ReportDataMessage {
    /// Attribute data by concrete path (for reports without list chunks).
    var dataByPath: [AttributePath: TLVValue] {
        var result: [AttributePath: TLVValue] = [:]
        for report in attributeReports {
            if case .data(let data) = report, let path = data.path.concretePath { result[path] = data.data }
        }
        return result
    }

    var statuses: [AttributePathIB: StatusCode] {
        var result: [AttributePathIB: StatusCode] = [:]
        for report in attributeReports {
            if case .status(let s) = report { result[s.path] = s.status.status.status }
        }
        return result
    }
}
