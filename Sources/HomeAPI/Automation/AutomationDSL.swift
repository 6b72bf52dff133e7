import Foundation
import MatterModel
import NIOConcurrencyHelpers

// The automation DSL (the Google Home APIs' `automation(name:description:) { … }`):
// result builders collect starters, conditions and actions into a draft that
// `structure.createAutomation(_:)` validates against the structure's candidates.

/// An automation not yet created.
public struct DraftAutomation: Sendable {
    public var name: String
    public var description: String
    public var isActive: Bool = true
    let nodes: [AutomationNode]
}

/// One element of an automation: a starter, a condition or an action.
public struct AutomationNode: Sendable {
    enum Spec: Sendable {
        case scheduledStarter(id: UUID, structureID: String, parameters: [StarterParameter])
        case traitStarter(id: UUID, deviceID: String, deviceName: String, deviceType: any DeviceType.Type, trait: any Trait.Type)
        case eventStarter(
            id: UUID, deviceID: String, deviceName: String, deviceType: any DeviceType.Type, event: any Event.Type,
            parameters: [StarterParameter])
        case condition(AutomationExpression)
        case action(deviceID: String, deviceName: String, deviceType: any DeviceType.Type, commands: [CommandAction])
    }
    let spec: Spec

    var starterID: UUID? {
        switch spec {
        case .scheduledStarter(let id, _, _), .traitStarter(let id, _, _, _, _), .eventStarter(let id, _, _, _, _, _): id
        default: nil
        }
    }
}

/// A command an action sends (`Matter.LevelControlTrait.moveToLevel(…)`).
public struct CommandAction: Sendable {
    let traitIdentifier: String
    let clusterID: UInt32
    let commandID: UInt32
    let commandName: String
    let fields: [(field: AnyField, value: AutomationValue)]

    init<C: CommandDescriptor>(_ command: C.Type, clusterID: ClusterID, fields: [(C.CommandRequestFields, AutomationValue)] = []) {
        traitIdentifier = C.traitIdentifier
        self.clusterID = clusterID.rawValue
        commandID = C.commandID
        commandName = C.name
        self.fields = fields.map { (AnyField(erasing: $0.0), $0.1) }
    }
}

/// A starter on a device's trait; `starter.onOff` names an attribute for a condition.
@dynamicMemberLookup
public struct TraitStarter<T: TraitWithAttributes>: Sendable {
    let node: AutomationNode
    let id: UUID

    public subscript<Value>(dynamicMember keyPath: KeyPath<T.Attributes, Value>) -> AttributeReference {
        AttributeReference(starterID: id, traitType: T.self, attributeID: attributeID(of: keyPath), keyPathName: "\(keyPath)")
    }

    private func attributeID(of keyPath: KeyPath<T.Attributes, some Any>) -> UInt32? {
        func open<A: AutomatableTrait>(_ type: A.Type) -> UInt32? {
            (keyPath as? PartialKeyPath<A.Attributes>).flatMap { A.attributeID($0) }
        }
        guard let automatable = T.self as? any AutomatableTrait.Type else { return nil }
        return open(automatable)
    }
}

/// Traits with an `Attributes` struct (the ones automations can read).
public protocol TraitWithAttributes: Trait {
    associatedtype Attributes
}

extension Matter.OnOffTrait: TraitWithAttributes {}
extension Matter.LevelControlTrait: TraitWithAttributes {}
extension Matter.WindowCoveringTrait: TraitWithAttributes {}

/// An attribute of a starter's trait, to compare in a condition.
public struct AttributeReference: Sendable {
    let starterID: UUID
    let traitType: any Trait.Type
    let attributeID: UInt32?
    let keyPathName: String

    public func equals(_ value: some AutomationLiteral) -> AutomationExpression { compare(.equals, value) }
    public func notEquals(_ value: some AutomationLiteral) -> AutomationExpression { compare(.notEquals, value) }
    public func greaterThan(_ value: some AutomationLiteral) -> AutomationExpression { compare(.greaterThan, value) }
    public func greaterThanOrEquals(_ value: some AutomationLiteral) -> AutomationExpression { compare(.greaterThanOrEquals, value) }
    public func lessThan(_ value: some AutomationLiteral) -> AutomationExpression { compare(.lessThan, value) }
    public func lessThanOrEquals(_ value: some AutomationLiteral) -> AutomationExpression { compare(.lessThanOrEquals, value) }

    private func compare(_ op: ComparisonOperator, _ value: some AutomationLiteral) -> AutomationExpression {
        AutomationExpression(reference: self, op: op, value: value.automationValue)
    }
}

/// A comparison of an attribute with a value, for `condition { … }`.
public struct AutomationExpression: Sendable {
    let reference: AttributeReference
    let op: ComparisonOperator
    let value: AutomationValue
}

/// Starters made while an automation body runs, so `let s = starter(…)` counts even
/// when `s` is not listed on its own line.
final class StarterCollector: Sendable {
    @TaskLocal static var current: StarterCollector?
    private let nodes = NIOLockedValueBox<[AutomationNode]>([])
    func add(_ node: AutomationNode) { nodes.withLockedValue { $0.append(node) } }
    var all: [AutomationNode] { nodes.withLockedValue { $0 } }
}

/// Builds an automation from its starters, conditions and actions; as in the SDK, name and
/// description default to empty (`automation { … }`).
public func automation(name: String = "", description: String = "", @AutomationBuilder _ body: () -> [AutomationNode]) -> DraftAutomation {
    let collector = StarterCollector()
    let listed = StarterCollector.$current.withValue(collector) { body() }
    var nodes = listed
    let listedIDs = Set(listed.compactMap(\.starterID))
    nodes.insert(contentsOf: collector.all.filter { $0.starterID.map { !listedIDs.contains($0) } ?? false }, at: 0)
    return DraftAutomation(name: name, description: description, nodes: nodes)
}

/// A starter on a structure event: `starter(structure, Google.TimeTrait.ScheduledEvent.self) { …clockTime(…) }`.
public func starter<E: EventDescriptor>(
    _ structure: Structure, _ event: E.Type,
    @StarterParameterBuilder<E> _ parameters: () -> [TypedParameter<E>]
) -> AutomationNode {
    let node = AutomationNode(spec: .scheduledStarter(id: UUID(), structureID: structure.id, parameters: parameters().map(\.value)))
    StarterCollector.current?.add(node)
    return node
}

/// A starter on a change of a device's trait: `let s = starter(device, OnOffLightDeviceType.self, Matter.OnOffTrait.self)`.
public func starter<D: DeviceType, T: TraitWithAttributes>(_ device: HomeDevice, _ deviceType: D.Type, _ trait: T.Type) -> TraitStarter<T> {
    let id = UUID()
    let node = AutomationNode(
        spec: .traitStarter(id: id, deviceID: device.id, deviceName: device.name, deviceType: deviceType, trait: trait))
    StarterCollector.current?.add(node)
    return TraitStarter(node: node, id: id)
}

/// A starter on an event a device raises:
/// `starter(button, GenericSwitchDeviceType.self, Matter.SwitchTrait.InitialPressEvent.self)`.
public func starter<D: DeviceType, E: Event>(_ device: HomeDevice, _ deviceType: D.Type, _ event: E.Type) -> AutomationNode {
    starter(device, deviceType, event) {}
}

/// A starter on a device's event with some of its fields given: only an event whose fields
/// have those values fires it (`{ Matter.DoorLockTrait.LockOperationEvent.lockOperationType(.unlock) }`).
public func starter<D: DeviceType, E: Event>(
    _ device: HomeDevice, _ deviceType: D.Type, _ event: E.Type,
    @StarterParameterBuilder<E> _ parameters: () -> [TypedParameter<E>]
) -> AutomationNode {
    let node = AutomationNode(
        spec: .eventStarter(
            id: UUID(), deviceID: device.id, deviceName: device.name, deviceType: deviceType, event: event,
            parameters: parameters().map(\.value)))
    StarterCollector.current?.add(node)
    return node
}

/// A condition on current state: `condition { s.onOff.equals(true) }`.
public func condition(_ body: () -> AutomationExpression) -> AutomationNode {
    AutomationNode(spec: .condition(body()))
}

/// Commands sent to a device: `action(device, DimmableLightDeviceType.self) { Matter.LevelControlTrait.moveToLevel(…) }`.
public func action<D: DeviceType>(
    _ device: HomeDevice, _ deviceType: D.Type,
    @CommandActionBuilder _ commands: () -> [CommandAction]
) -> AutomationNode {
    AutomationNode(spec: .action(deviceID: device.id, deviceName: device.name, deviceType: deviceType, commands: commands()))
}

@resultBuilder
public enum AutomationBuilder {
    public static func buildExpression(_ node: AutomationNode) -> [AutomationNode] { [node] }
    public static func buildExpression<T>(_ starter: TraitStarter<T>) -> [AutomationNode] { [starter.node] }
    public static func buildBlock(_ parts: [AutomationNode]...) -> [AutomationNode] { parts.flatMap { $0 } }
    public static func buildOptional(_ part: [AutomationNode]?) -> [AutomationNode] { part ?? [] }
    public static func buildEither(first: [AutomationNode]) -> [AutomationNode] { first }
    public static func buildEither(second: [AutomationNode]) -> [AutomationNode] { second }
    public static func buildArray(_ parts: [[AutomationNode]]) -> [AutomationNode] { parts.flatMap { $0 } }
}

@resultBuilder
public enum StarterParameterBuilder<E: EventDescriptor> {
    public static func buildExpression(_ p: TypedParameter<E>) -> [TypedParameter<E>] { [p] }
    public static func buildBlock(_ parts: [TypedParameter<E>]...) -> [TypedParameter<E>] { parts.flatMap { $0 } }
    public static func buildBlock() -> [TypedParameter<E>] { [] }
}

@resultBuilder
public enum CommandActionBuilder {
    public static func buildExpression(_ c: CommandAction) -> [CommandAction] { [c] }
    public static func buildBlock(_ parts: [CommandAction]...) -> [CommandAction] { parts.flatMap { $0 } }
}
