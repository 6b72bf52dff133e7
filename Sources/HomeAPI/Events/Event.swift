import Foundation
import MatterController
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
import OpenCombine

/// How much an event matters, as the SDK grades it (Matter's priorities: critical, info, debug).
public enum EventImportance: Sendable, Hashable {
    case productionCritical, productionStandard, info, debug, unspecified

    init(_ priority: EventDataIB.Priority) {
        switch priority {
        case .critical: self = .productionCritical
        case .info: self = .info
        case .debug: self = .debug
        }
    }
}

/// An event a device raised (`Matter.SwitchTrait.InitialPressEvent`): what its type names
/// (trait, event ID, fields, as a starter's event), and when and in what order it happened.
/// The SDK's `name` is a `StaticString`; here it is the `EventDescriptor`'s `String`.
public protocol Event: EventDescriptor, CustomDebugStringConvertible {
    /// Seconds since 1970 (the node's epoch timestamp), or since the node booted when it
    /// has no wall-clock time.
    var timestamp: TimeInterval { get }
    var importance: EventImportance { get }
    /// The node's event number: rising, also across the node's restarts.
    var number: UInt { get }
}

extension Event {
    public var debugDescription: String { "\(Self.name) #\(number)" }
}

/// An event of a Matter cluster, decoded from the node's report.
protocol MatterEvent: Event {
    static var clusterID: ClusterID { get }
    var header: EventHeader { get }
    init(report: EventReport)
}

extension MatterEvent {
    public var timestamp: TimeInterval { header.timestamp }
    public var importance: EventImportance { header.importance }
    public var number: UInt { header.number }
}

/// When and in what order a node raised an event, and how much it matters.
struct EventHeader: Sendable, Hashable {
    let timestamp: TimeInterval
    let importance: EventImportance
    let number: UInt

    init(_ report: EventReport) {
        let milliseconds = report.epochTimestamp ?? report.systemTimestamp ?? 0
        timestamp = TimeInterval(milliseconds) / 1000
        importance = EventImportance(report.priority)
        number = UInt(report.number)
    }
}

/// The events of a device type: `device.types.subscribe(GenericSwitchDeviceType.self)`
/// then `$0.events.subscribe(Matter.SwitchTrait.InitialPressEvent.self)`.
public protocol EventController: Sendable {
    /// Whether the device type has the trait that raises `type`.
    func contains<E: Event>(_ type: E.Type) -> Bool
    /// The events of `type` the device raises from now on, each once, however many routes
    /// (LAN, hub, relay) report it; completes at once when the device type lacks the trait.
    func subscribe<E: Event>(_ type: E.Type) -> AnyPublisher<E, HomeError>
}

/// A device type's events, from its traits' contexts.
struct DeviceEventController: EventController {
    let traits: TraitCollection

    private func source<E: Event>(_ type: E.Type) -> (event: any MatterEvent.Type, trait: TraitContext)? {
        guard let matter = type as? any MatterEvent.Type, let trait = traits.contexts[matter.clusterID] else { return nil }
        return (matter, trait)
    }

    func contains<E: Event>(_ type: E.Type) -> Bool { source(type) != nil }

    func subscribe<E: Event>(_ type: E.Type) -> AnyPublisher<E, HomeError> {
        guard let (matter, trait) = source(type), let engine = trait.engine else {
            return Empty(completeImmediately: true).eraseToAnyPublisher()
        }
        let path = EventPath(endpoint: trait.endpoint, cluster: matter.clusterID, event: EventID(matter.eventID))
        return engine.deviceEvents.publisher()
            .compactMap { raised -> E? in
                guard raised.node == trait.nodeID, raised.report.path == path else { return nil }
                return matter.init(report: raised.report) as? E
            }
            .setFailureType(to: HomeError.self)
            .eraseToAnyPublisher()
    }
}

extension DeviceTypeContext {
    var events: any EventController { DeviceEventController(traits: traits) }
}

/// The events devices report, after the engine's deduplication: a publisher for app code
/// and an async stream for the automation runner.
final class DeviceEventHub: @unchecked Sendable {
    // @unchecked: `lock` serializes every send; the subject guards its own subscriber list.
    private let lock = NIOLock()
    private let subject = PassthroughSubject<DeviceEventReport, Never>()
    private let broadcaster = EventBroadcaster<DeviceEventReport>()

    func publish(_ event: DeviceEventReport) {
        lock.withLock { subject.send(event) }
        broadcaster.publish(event)
    }

    func publisher() -> AnyPublisher<DeviceEventReport, Never> { subject.eraseToAnyPublisher() }

    func stream() -> AsyncStream<DeviceEventReport> { broadcaster.subscribe() }
}

/// The typed fields of an event's data (a structure of context-tagged members).
struct EventFieldReader {
    private let members: [UInt8: TLVValue]

    init(_ data: TLVValue?) {
        var members: [UInt8: TLVValue] = [:]
        if case .structure(let elements)? = data {
            for element in elements { if case .context(let tag) = element.tag { members[tag] = element.value } }
        }
        self.members = members
    }

    func bool(_ tag: UInt8) -> Bool? { members[tag]?.boolValue }
    func uint<T: FixedWidthInteger>(_ tag: UInt8, as: T.Type) -> T? { members[tag]?.uintValue.flatMap { T(exactly: $0) } }
    func int<T: FixedWidthInteger>(_ tag: UInt8, as: T.Type) -> T? { members[tag]?.intValue.flatMap { T(exactly: $0) } }
    func string(_ tag: UInt8) -> String? { members[tag]?.stringValue }
    func bytes(_ tag: UInt8) -> Data? { members[tag]?.bytesValue.map { Data($0) } }
    func value(_ tag: UInt8) -> TLVValue? { members[tag] }
    /// A list member's elements (nil when absent, null or not a list).
    func list(_ tag: UInt8) -> [TLVValue]? {
        switch members[tag] {
        case .array(let elements)?, .list(let elements)?: return elements.map(\.value)
        default: return nil
        }
    }
}
