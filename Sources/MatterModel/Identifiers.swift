// Strongly typed Matter identifiers, so an attribute ID is never passed where a
// cluster ID belongs. Raw values are the spec's numbers.

public struct ClusterID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { hex(rawValue, width: 4) }
}

public struct AttributeID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { hex(rawValue, width: 4) }
}

public struct CommandID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { hex(rawValue, width: 2) }
}

public struct EventID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { hex(rawValue, width: 2) }
}

public struct DeviceTypeID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public init(_ rawValue: UInt32) { self.rawValue = rawValue }
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    public var description: String { hex(rawValue, width: 4) }
}

public typealias EndpointNumber = UInt16
public typealias NodeID = UInt64
public typealias FabricIndex = UInt8
public typealias VendorID = UInt16
public typealias DataVersion = UInt32

/// A concrete attribute path (endpoint, cluster, attribute).
public struct AttributePath: Hashable, Sendable, CustomStringConvertible {
    public var endpoint: EndpointNumber
    public var cluster: ClusterID
    public var attribute: AttributeID
    public init(endpoint: EndpointNumber, cluster: ClusterID, attribute: AttributeID) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.attribute = attribute
    }
    public var description: String { "\(endpoint)/\(cluster)/\(attribute)" }
}

/// A concrete event of a cluster instance.
public struct EventPath: Hashable, Sendable, CustomStringConvertible {
    public var endpoint: EndpointNumber
    public var cluster: ClusterID
    public var event: EventID
    public init(endpoint: EndpointNumber, cluster: ClusterID, event: EventID) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.event = event
    }
    public var description: String { "\(endpoint)/\(cluster)/event \(event)" }
}

/// A concrete cluster instance on an endpoint.
public struct ClusterPath: Hashable, Sendable, CustomStringConvertible {
    public var endpoint: EndpointNumber
    public var cluster: ClusterID
    public init(endpoint: EndpointNumber, cluster: ClusterID) {
        self.endpoint = endpoint
        self.cluster = cluster
    }
    public var description: String { "\(endpoint)/\(cluster)" }
}

@inline(__always)
func hex<T: BinaryInteger>(_ value: T, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return "0x" + String(repeating: "0", count: max(0, width - digits.count)) + digits
}
