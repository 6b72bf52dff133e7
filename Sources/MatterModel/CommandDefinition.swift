// Commands (Core spec 7.15): requests a client sends and responses a server generates.

public enum CommandDirection: String, Sendable, Hashable {
    /// Client → server ("Direction: client ⇒ server").
    case request
    /// Server → client: a response command.
    case response
}

public struct CommandDefinition: Sendable, Hashable {
    public var id: CommandID
    public var name: String
    public var direction: CommandDirection
    public var fields: [FieldDefinition]
    /// For requests: the response command's name; nil when the reply is a plain status.
    public var responseName: String?
    public var invokePrivilege: Privilege
    /// T: must be invoked inside a timed interaction.
    public var timed: Bool
    /// F: the command acts on the accessing fabric and needs one.
    public var fabricScoped: Bool
    public var conformance: Conformance

    public init(
        id: CommandID, name: String, direction: CommandDirection = .request, fields: [FieldDefinition] = [],
        responseName: String? = nil, invokePrivilege: Privilege = .operate, timed: Bool = false,
        fabricScoped: Bool = false, conformance: Conformance = .mandatory
    ) {
        self.id = id
        self.name = name
        self.direction = direction
        self.fields = fields
        self.responseName = responseName
        self.invokePrivilege = invokePrivilege
        self.timed = timed
        self.fabricScoped = fabricScoped
        self.conformance = conformance
    }

    public var lowerCamelName: String { Naming.lowerCamel(name) }

    public func field(_ id: UInt8) -> FieldDefinition? { fields.first { $0.id == id } }
    public func field(named name: String) -> FieldDefinition? { fields.first { Naming.matches($0.name, name) } }
}
