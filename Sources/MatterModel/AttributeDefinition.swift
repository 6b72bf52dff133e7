// One attribute of a cluster (Core spec 7.13), as in the spec's attribute table.
import MatterTLV

public struct AttributeDefinition: Sendable, Hashable {
    public var id: AttributeID
    public var name: String
    public var type: DataType
    /// Quality X: the attribute may hold null.
    public var nullable: Bool
    public var readPrivilege: Privilege
    /// nil: not writable.
    public var writePrivilege: Privilege?
    /// T: writes must use a timed interaction.
    public var timedWrite: Bool
    /// F: a fabric-scoped list; reads are filtered by the accessing fabric.
    public var fabricScoped: Bool
    /// S: fabric-sensitive; members of other fabrics' entries are omitted.
    public var fabricSensitive: Bool
    public var quality: AttributeQuality
    /// The spec's default; nil where the default is manufacturer-specific or prose.
    public var defaultValue: TLVValue?
    public var constraint: Constraint?
    public var conformance: Conformance

    public init(
        id: AttributeID, name: String, type: DataType, nullable: Bool = false,
        readPrivilege: Privilege = .view, writePrivilege: Privilege? = nil,
        timedWrite: Bool = false, fabricScoped: Bool = false, fabricSensitive: Bool = false,
        quality: AttributeQuality = [], defaultValue: TLVValue? = nil,
        constraint: Constraint? = nil, conformance: Conformance = .mandatory
    ) {
        self.id = id
        self.name = name
        self.type = type
        self.nullable = nullable
        self.readPrivilege = readPrivilege
        self.writePrivilege = writePrivilege
        self.timedWrite = timedWrite
        self.fabricScoped = fabricScoped
        self.fabricSensitive = fabricSensitive
        self.quality = quality
        self.defaultValue = defaultValue
        self.constraint = constraint
        self.conformance = conformance
    }

    public var isWritable: Bool { writePrivilege != nil }
    /// "currentLevel" for "CurrentLevel".
    public var lowerCamelName: String { Naming.lowerCamel(name) }
    /// Global attributes live in the global suffixes of the standard prefix (Core spec 7.18.2.15).
    public var isGlobal: Bool { id.isGlobal }
}
