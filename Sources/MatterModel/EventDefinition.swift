// Events (Core spec 7.14).

public enum EventPriority: String, Sendable, Hashable, Comparable {
    case debug, info, critical

    public var rawLevel: UInt8 {
        switch self {
        case .debug: 0
        case .info: 1
        case .critical: 2
        }
    }

    public static func < (a: Self, b: Self) -> Bool { a.rawLevel < b.rawLevel }
}

public struct EventDefinition: Sendable, Hashable {
    public var id: EventID
    public var name: String
    public var priority: EventPriority
    public var readPrivilege: Privilege
    public var fields: [FieldDefinition]
    /// S: only readable by the fabric the event is associated with.
    public var fabricSensitive: Bool
    public var conformance: Conformance

    public init(
        id: EventID, name: String, priority: EventPriority, readPrivilege: Privilege = .view,
        fields: [FieldDefinition] = [], fabricSensitive: Bool = false, conformance: Conformance = .mandatory
    ) {
        self.id = id
        self.name = name
        self.priority = priority
        self.readPrivilege = readPrivilege
        self.fields = fields
        self.fabricSensitive = fabricSensitive
        self.conformance = conformance
    }

    public var lowerCamelName: String { Naming.lowerCamel(name) }

    public func field(_ id: UInt8) -> FieldDefinition? { fields.first { $0.id == id } }
    public func field(named name: String) -> FieldDefinition? { fields.first { Naming.matches($0.name, name) } }
}
