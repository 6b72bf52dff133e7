import Foundation
import Logging
import MatterModel
import MatterProtocol
import MatterTLV

/// One event a cluster emitted (Core spec 7.14): numbered, prioritized, time-stamped.
public struct RecordedEvent: Sendable, Hashable {
    public let number: UInt64
    public let priority: EventDataIB.Priority
    public let endpoint: EndpointNumber
    public let cluster: ClusterID
    public let event: EventID
    /// Milliseconds since the Unix epoch.
    public let epochTimestamp: UInt64
    /// The event's fields (a structure).
    public let data: TLVValue

    public var path: EventPathIB { EventPathIB(endpoint: endpoint, cluster: cluster, event: event) }

    /// The event as a report carries it (EventDataIB, Core spec 10.6.9).
    public var dataIB: EventDataIB {
        EventDataIB(path: path, eventNumber: number, priority: priority, epochTimestamp: epochTimestamp, data: data)
    }
}

/// The node's event log (Core spec 7.14.2): a bounded buffer per priority, so a burst of
/// debug events never pushes out a critical one, and event numbers from one counter that
/// never goes back, across restarts too: the state directory keeps the end of the block of
/// numbers handed out (`events.json`), and a restart starts past it.
struct NodeEventLog {
    /// Events kept per priority (debug, info, critical).
    static let capacity: [EventDataIB.Priority: Int] = [.debug: 32, .info: 128, .critical: 64]
    /// Numbers reserved in the store at a time.
    static let block: UInt64 = 1_000

    private struct Reservation: Codable { var reservedUntil: UInt64 }

    private var buffers: [EventDataIB.Priority: [RecordedEvent]] = [:]
    private var next: UInt64
    private var reservedUntil: UInt64
    private let stateStore: NodeStateStore?

    init(stateStore: NodeStateStore?, logger: Logger) {
        self.stateStore = stateStore
        var start: UInt64 = 0
        if let stateStore {
            do {
                start = try stateStore.load(Reservation.self, "events")?.reservedUntil ?? 0
            } catch {
                // Unreadable: start past any number a node could have used in its lifetime so far,
                // so no number is used twice; the next reservation rewrites the file.
                logger.warning("event numbers: \(error)")
                start = 1 << 32
            }
        }
        next = start
        reservedUntil = start
    }

    /// Records an event and returns it (numbered).
    mutating func record(
        endpoint: EndpointNumber, cluster: ClusterID, event: EventID, priority: EventDataIB.Priority,
        data: TLVValue, logger: Logger
    ) -> RecordedEvent {
        if next >= reservedUntil {
            reservedUntil = next + Self.block
            do { try stateStore?.save(Reservation(reservedUntil: reservedUntil), "events") } catch {
                logger.warning("event numbers: cannot save the reservation: \(error)")
            }
        }
        let recorded = RecordedEvent(
            number: next, priority: priority, endpoint: endpoint, cluster: cluster, event: event,
            epochTimestamp: UInt64(max(0, Date().timeIntervalSince1970 * 1000)), data: data)
        next += 1
        var buffer = buffers[priority, default: []]
        buffer.append(recorded)
        if buffer.count > Self.capacity[priority, default: 32] { buffer.removeFirst(buffer.count - Self.capacity[priority, default: 32]) }
        buffers[priority] = buffer
        return recorded
    }

    /// Kept events at or above `minimumNumber`, in number order.
    func events(from minimumNumber: UInt64) -> [RecordedEvent] {
        buffers.values.joined().filter { $0.number >= minimumNumber }.sorted { $0.number < $1.number }
    }

    /// The number the next event gets.
    var nextNumber: UInt64 { next }
}
