/// What a field belongs to: a trait's attributes, one of its commands or one of its events.
public struct FieldScope: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case attribute
        case command(UInt32)
        case event(UInt32)
    }

    public let traitIdentifier: String
    public let kind: Kind

    public init(traitIdentifier: String, kind: Kind) {
        self.traitIdentifier = traitIdentifier
        self.kind = kind
    }

    public var description: String {
        switch kind {
        case .attribute: "\(traitIdentifier) attributes"
        case .command(let c): "\(traitIdentifier) command \(c)"
        case .event(let e): "\(traitIdentifier) event \(e)"
        }
    }
}

/// A field of a trait: an attribute (`Matter.OnOffTrait.Attribute.onOff`), a command's
/// request field (`…MoveToLevelCommand.CommandRequestFields.level`) or an event field.
public protocol Field: Hashable, Sendable {
    static var fieldScope: FieldScope { get }
    /// The attribute ID or the field's context tag.
    var fieldID: UInt32 { get }
    var fieldName: String { get }
}

extension Field where Self: RawRepresentable, RawValue == UInt32 {
    public var fieldID: UInt32 { rawValue }
    public var fieldName: String { "\(self)" }
}

/// A type-erased field, the key of `fieldDetails`. Two fields are equal when they belong
/// to the same scope and have the same ID.
public struct AnyField: Hashable, Sendable, CustomStringConvertible {
    public let scope: FieldScope
    public let id: UInt32
    public let name: String

    public init<F: Field>(erasing field: F) {
        scope = F.fieldScope
        id = field.fieldID
        name = field.fieldName
    }

    init(scope: FieldScope, id: UInt32, name: String) {
        self.scope = scope
        self.id = id
        self.name = name
    }

    public static func == (a: AnyField, b: AnyField) -> Bool { a.scope == b.scope && a.id == b.id }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(scope)
        hasher.combine(id)
    }

    public var description: String { name }
}

/// A command of a trait, as a type (`Matter.WindowCoveringTrait.DownOrCloseCommand.self`).
public protocol CommandDescriptor: Sendable {
    associatedtype CommandRequestFields: Field
    static var traitIdentifier: String { get }
    static var commandID: UInt32 { get }
    /// The command's name in the data model ("MoveToLevel").
    static var name: String { get }
}

/// The request fields of a command that has none (On, Off, UpOrOpen…): no values exist.
public enum NoFields<Command: CommandDescriptor>: Field {
    public static var fieldScope: FieldScope {
        FieldScope(traitIdentifier: Command.traitIdentifier, kind: .command(Command.commandID))
    }
    public var fieldID: UInt32 { switch self {} }
    public var fieldName: String { switch self {} }
}

/// An event of a trait, as a type (`Google.TimeTrait.ScheduledEvent.self`).
public protocol EventDescriptor: Sendable {
    associatedtype EventFields: Field
    static var traitIdentifier: String { get }
    static var eventID: UInt32 { get }
    static var name: String { get }
}

/// What the field details of every kind of candidate have.
public protocol FieldDetails: Sendable, Hashable {
    var constraint: Constraint { get }
}

/// Details of an attribute in a `TraitAttributesCandidate`.
public struct AttributeFieldDetails: FieldDetails {
    /// Whether a change of the attribute can start an automation.
    public let isSubscribable: Bool
    /// Whether an automation can write it.
    public let isModifiable: Bool
    public let isNullable: Bool
    public let constraint: Constraint
}

/// Details of a command field in a `CommandCandidate`.
public struct CommandFieldDetails: FieldDetails {
    public let isOptional: Bool
    public let isNullable: Bool
    public let constraint: Constraint
}

/// Details of an event field in an `EventCandidate`.
public struct EventFieldDetails: FieldDetails {
    public let isOptional: Bool
    public let constraint: Constraint
}
