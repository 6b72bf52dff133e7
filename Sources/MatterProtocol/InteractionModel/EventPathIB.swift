import MatterModel
import MatterTLV

/// EventPathIB (Matter Core spec 10.6.8), a TLV list. An absent endpoint,
/// cluster or event is a wildcard.
public struct EventPathIB: InformationBlock {
    enum Tag {
        static let node: UInt8 = 0
        static let endpoint: UInt8 = 1
        static let cluster: UInt8 = 2
        static let event: UInt8 = 3
        static let isUrgent: UInt8 = 4
    }

    public var node: NodeID?
    public var endpoint: EndpointNumber?
    public var cluster: ClusterID?
    public var event: EventID?
    public var isUrgent: Bool?

    public init(
        node: NodeID? = nil, endpoint: EndpointNumber? = nil, cluster: ClusterID? = nil,
        event: EventID? = nil, isUrgent: Bool? = nil
    ) {
        self.node = node
        self.endpoint = endpoint
        self.cluster = cluster
        self.event = event
        self.isUrgent = isUrgent
    }

    public var isWildcard: Bool { endpoint == nil || cluster == nil || event == nil }

    /// The path of one concrete event.
    public init(_ path: EventPath, isUrgent: Bool? = nil) {
        self.init(endpoint: path.endpoint, cluster: path.cluster, event: path.event, isUrgent: isUrgent)
    }

    /// The concrete event this path names, or nil when any part is a wildcard.
    public var concretePath: EventPath? {
        guard let endpoint, let cluster, let event else { return nil }
        return EventPath(endpoint: endpoint, cluster: cluster, event: event)
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.node, uint: node)
        b.add(Tag.endpoint, uint: endpoint)
        b.add(Tag.cluster, uint: cluster?.rawValue)
        b.add(Tag.event, uint: event?.rawValue)
        b.add(Tag.isUrgent, bool: isUrgent)
        return b.list
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .list)
        node = try r.uint(Tag.node, "node")
        endpoint = try r.uint(Tag.endpoint, "endpoint")
        cluster = try r.uint(Tag.cluster, "cluster", as: UInt32.self).map(ClusterID.init(rawValue:))
        event = try r.uint(Tag.event, "event", as: UInt32.self).map(EventID.init(rawValue:))
        isUrgent = try r.bool(Tag.isUrgent, "isUrgent")
    }
}

/// EventFilterIB (spec 10.6.6): only events numbered at or above `eventMin` are wanted.
public struct EventFilterIB: InformationBlock {
    enum Tag {
        static let node: UInt8 = 0
        static let eventMin: UInt8 = 1
    }

    public var node: NodeID?
    public var eventMin: UInt64

    public init(node: NodeID? = nil, eventMin: UInt64) {
        self.node = node
        self.eventMin = eventMin
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.node, uint: node)
        b.add(Tag.eventMin, uint: eventMin)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        node = try r.uint(Tag.node, "node")
        eventMin = try r.requiredUInt(Tag.eventMin, "eventMin")
    }
}

/// EventDataIB (spec 10.6.9): one event record.
public struct EventDataIB: InformationBlock {
    /// Event priority levels.
    public enum Priority: UInt8, Sendable, Hashable {
        case debug = 0, info = 1, critical = 2
    }

    enum Tag {
        static let path: UInt8 = 0
        static let eventNumber: UInt8 = 1
        static let priority: UInt8 = 2
        static let epochTimestamp: UInt8 = 3
        static let systemTimestamp: UInt8 = 4
        static let deltaEpochTimestamp: UInt8 = 5
        static let deltaSystemTimestamp: UInt8 = 6
        static let data: UInt8 = 7
    }

    public var path: EventPathIB
    public var eventNumber: UInt64
    public var priority: Priority
    /// Milliseconds since the Unix epoch.
    public var epochTimestamp: UInt64?
    /// Milliseconds since boot, when the node has no wall-clock time.
    public var systemTimestamp: UInt64?
    public var deltaEpochTimestamp: UInt64?
    public var deltaSystemTimestamp: UInt64?
    public var data: TLVValue?

    public init(
        path: EventPathIB, eventNumber: UInt64, priority: Priority,
        epochTimestamp: UInt64? = nil, systemTimestamp: UInt64? = nil,
        deltaEpochTimestamp: UInt64? = nil, deltaSystemTimestamp: UInt64? = nil, data: TLVValue? = nil
    ) {
        self.path = path
        self.eventNumber = eventNumber
        self.priority = priority
        self.epochTimestamp = epochTimestamp
        self.systemTimestamp = systemTimestamp
        self.deltaEpochTimestamp = deltaEpochTimestamp
        self.deltaSystemTimestamp = deltaSystemTimestamp
        self.data = data
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.path, block: path)
        b.add(Tag.eventNumber, uint: eventNumber)
        b.add(Tag.priority, uint: priority.rawValue)
        b.add(Tag.epochTimestamp, uint: epochTimestamp)
        b.add(Tag.systemTimestamp, uint: systemTimestamp)
        b.add(Tag.deltaEpochTimestamp, uint: deltaEpochTimestamp)
        b.add(Tag.deltaSystemTimestamp, uint: deltaSystemTimestamp)
        b.add(Tag.data, data)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        path = try r.requiredBlock(Tag.path, "path")
        eventNumber = try r.requiredUInt(Tag.eventNumber, "eventNumber")
        let rawPriority: UInt8 = try r.requiredUInt(Tag.priority, "priority")
        guard let priority = Priority(rawValue: rawPriority) else {
            throw IMDecodingError(.outOfRange, field: "priority")
        }
        self.priority = priority
        epochTimestamp = try r.uint(Tag.epochTimestamp, "epochTimestamp")
        systemTimestamp = try r.uint(Tag.systemTimestamp, "systemTimestamp")
        deltaEpochTimestamp = try r.uint(Tag.deltaEpochTimestamp, "deltaEpochTimestamp")
        deltaSystemTimestamp = try r.uint(Tag.deltaSystemTimestamp, "deltaSystemTimestamp")
        data = r.value(Tag.data)
    }
}

/// EventStatusIB (spec 10.6.15): the outcome for one event path.
public struct EventStatusIB: InformationBlock {
    enum Tag {
        static let path: UInt8 = 0
        static let status: UInt8 = 1
    }

    public var path: EventPathIB
    public var status: StatusIB

    public init(path: EventPathIB, status: StatusIB) {
        self.path = path
        self.status = status
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.path, block: path)
        b.add(Tag.status, block: status)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        path = try r.requiredBlock(Tag.path, "path")
        status = try r.requiredBlock(Tag.status, "status")
    }
}

/// EventReportIB (spec 10.6.10): either a status or an event, never both.
public enum EventReportIB: InformationBlock {
    case status(EventStatusIB)
    case data(EventDataIB)

    enum Tag {
        static let eventStatus: UInt8 = 0
        static let eventData: UInt8 = 1
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        switch self {
        case .status(let s): b.add(Tag.eventStatus, block: s)
        case .data(let d): b.add(Tag.eventData, block: d)
        }
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        let status: EventStatusIB? = try r.block(Tag.eventStatus, "eventStatus")
        let data: EventDataIB? = try r.block(Tag.eventData, "eventData")
        switch (status, data) {
        case (let s?, nil): self = .status(s)
        case (nil, let d?): self = .data(d)
        default:
            throw IMDecodingError(.invalidCombination("needs exactly one of eventStatus and eventData"), field: "")
        }
    }
}
