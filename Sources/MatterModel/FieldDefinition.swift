// A field of a struct, command or event (context tag + type).
import MatterTLV

public struct FieldDefinition: Sendable, Hashable {
    /// Context tag number.
    public var id: UInt8
    public var name: String
    public var type: DataType
    public var nullable: Bool
    /// The field may be omitted (conformance other than plain M).
    public var optional: Bool
    public var constraint: Constraint?
    public var defaultValue: TLVValue?
    public var conformance: Conformance
    /// S: omitted when an entry of another fabric is read (Core spec 7.13.6).
    public var fabricSensitive: Bool

    public init(
        id: UInt8, name: String, type: DataType, nullable: Bool = false, optional: Bool? = nil,
        constraint: Constraint? = nil, defaultValue: TLVValue? = nil, conformance: Conformance = .mandatory,
        fabricSensitive: Bool = false
    ) {
        self.id = id
        self.name = name
        self.type = type
        self.nullable = nullable
        self.optional = optional ?? (conformance != .mandatory)
        self.constraint = constraint
        self.defaultValue = defaultValue
        self.conformance = conformance
        self.fabricSensitive = fabricSensitive
    }

    public var lowerCamelName: String { Naming.lowerCamel(name) }

    /// The FabricIndex field of a fabric-scoped struct (Core spec 7.13.7) uses tag 0xFE.
    public static let fabricIndexTag = Clusters.Global.Field.fabricIndex
}
