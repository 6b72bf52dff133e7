import Foundation

/// A value in an automation: a literal of a condition or a command field.
public enum AutomationValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case bool(Bool)
    case uint(UInt64)
    case int(Int64)
    case string(String)
    case null

    static func integer(_ v: some BinaryInteger) -> AutomationValue {
        if let u = UInt64(exactly: v) { return .uint(u) }
        return .int(Int64(clamping: v))
    }

    var uint64: UInt64? {
        switch self {
        case .uint(let u): u
        case .int(let i): UInt64(exactly: i)
        default: nil
        }
    }

    var int64: Int64? {
        switch self {
        case .uint(let u): Int64(exactly: u)
        case .int(let i): i
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .bool(let b): "\(b)"
        case .uint(let u): "\(u)"
        case .int(let i): "\(i)"
        case .string(let s): "\"\(s)\""
        case .null: "null"
        }
    }
}

/// Values a condition can compare an attribute with.
public protocol AutomationLiteral: Sendable {
    var automationValue: AutomationValue { get }
}

extension Bool: AutomationLiteral { public var automationValue: AutomationValue { .bool(self) } }
extension String: AutomationLiteral { public var automationValue: AutomationValue { .string(self) } }
extension Int: AutomationLiteral { public var automationValue: AutomationValue { .integer(self) } }
extension UInt8: AutomationLiteral { public var automationValue: AutomationValue { .integer(self) } }
extension UInt16: AutomationLiteral { public var automationValue: AutomationValue { .integer(self) } }
extension UInt32: AutomationLiteral { public var automationValue: AutomationValue { .integer(self) } }
extension UInt64: AutomationLiteral { public var automationValue: AutomationValue { .integer(self) } }
extension Int64: AutomationLiteral { public var automationValue: AutomationValue { .integer(self) } }

/// The stored, validated form of an automation: what the runner executes.
struct AutomationDefinition: Sendable, Hashable, Codable {
    var starters: [StarterSpec]
    var conditions: [ConditionSpec]
    var actions: [ActionSpec]
}

struct StarterSpec: Sendable, Hashable, Codable {
    enum Kind: Sendable, Hashable, Codable {
        /// Google.TimeTrait.ScheduledEvent on the structure: every day at this time.
        case scheduled(clockTime: TimeOfDay)
        /// A change of any attribute of a device's trait.
        case attributeChange(deviceID: String, endpoint: UInt16, cluster: UInt32, traitIdentifier: String)
        /// An event a device's trait raises (a switch press, a door opening).
        case deviceEvent(deviceID: String, endpoint: UInt16, cluster: UInt32, eventID: UInt32, fields: [EventFieldValue] = [])
    }
    var id: String
    var kind: Kind
    /// For history: "ScheduledEvent 07:00:00" or "Kitchen light OnOffTrait".
    var label: String
}

/// A value an event starter wants in one field of the event.
struct EventFieldValue: Sendable, Hashable, Codable {
    var tag: UInt8
    var name: String
    var value: AutomationValue
}

enum ComparisonOperator: String, Sendable, Hashable, Codable {
    case equals, notEquals, greaterThan, greaterThanOrEquals, lessThan, lessThanOrEquals
}

struct ConditionSpec: Sendable, Hashable, Codable {
    var deviceID: String
    var endpoint: UInt16
    var cluster: UInt32
    var attribute: UInt32
    var attributeName: String
    var op: ComparisonOperator
    var value: AutomationValue
}

struct ActionSpec: Sendable, Hashable, Codable {
    struct FieldValue: Sendable, Hashable, Codable {
        var tag: UInt8
        var name: String
        var value: AutomationValue
    }
    var deviceID: String
    var deviceName: String
    var endpoint: UInt16
    var cluster: UInt32
    var commandID: UInt32
    var commandName: String
    var fields: [FieldValue]

    var label: String {
        "\(deviceName): \(commandName)(\(fields.map { "\($0.name): \($0.value)" }.joined(separator: ", ")))"
    }
}

/// An automation stored in a structure.
public struct Automation: Sendable, Hashable, Identifiable {
    public let id: String
    public let structureID: String
    public let name: String
    public let description: String
    /// Whether the automation runs when its starters fire.
    public let isActive: Bool
    public let createdAt: Date
    let definition: AutomationDefinition

    init(_ r: AutomationRecord) {
        id = r.id
        structureID = r.structureID
        name = r.name
        description = r.description
        isActive = r.isActive
        createdAt = r.createdAt
        definition = r.definition
    }

    /// The starters, conditions and actions in words.
    public var starterDescriptions: [String] { definition.starters.map(\.label) }
    public var conditionDescriptions: [String] {
        definition.conditions.map { "\($0.attributeName) \($0.op.rawValue) \($0.value)" }
    }
    public var actionDescriptions: [String] { definition.actions.map(\.label) }
}

/// One run of an automation: when, what started it, what it did and how it ended.
public struct AutomationRun: Sendable, Hashable {
    public enum Outcome: String, Sendable, Hashable {
        /// Every action succeeded.
        case success
        /// A condition did not hold: no action was sent.
        case conditionsNotMet
        /// An action failed (the message says which and why).
        case failure
    }

    public let id: Int64
    public let automationID: String
    public let automationName: String
    /// On the runner's clock (a driven clock in tests).
    public let time: Date
    public let starter: String
    public let actions: [String]
    public let outcome: Outcome
    public let message: String
}
