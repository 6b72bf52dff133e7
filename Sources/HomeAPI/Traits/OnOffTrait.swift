import MatterModel
import MatterTLV

extension Matter {
    /// The On/Off cluster (0x0006, Application Cluster spec 1.5).
    @dynamicMemberLookup
    public struct OnOffTrait: Trait, ClusterTrait {
        public static let identifier = traitIdentifier(cluster: 0x0006)
        static let clusterID = ClusterID(0x0006)

        public struct Attributes: Sendable, Hashable {
            public var onOff: Bool?
            public var globalSceneControl: Bool?
            public var onTime: UInt16?
            public var offWaitTime: UInt16?
            /// StartUpOnOffEnum: 0 off, 1 on, 2 toggle; nil when null.
            public var startUpOnOff: UInt8?
        }

        let context: TraitContext
        public let attributes: Attributes
        public var metadata: TraitMetadata { context.metadata }

        /// Attributes read straight off the trait (`trait.onOff` for `trait.attributes.onOff`).
        public subscript<Value>(dynamicMember keyPath: KeyPath<Attributes, Value>) -> Value { attributes[keyPath: keyPath] }

        init(context: TraitContext) {
            self.context = context
            attributes = Attributes(
                onOff: context.bool(0x0000), globalSceneControl: context.bool(0x4000),
                onTime: context.uint(0x4001), offWaitTime: context.uint(0x4002),
                startUpOnOff: context.uint(0x4003))
        }

        /// Whether the device accepts Toggle (the Lighting/dead-front variants always do;
        /// devices without the feature may omit it).
        public var supportsToggleCommand: Bool { context.accepts(0x02) }
        public var supportsOnCommand: Bool { context.accepts(0x01) }
        public var supportsOffCommand: Bool { context.accepts(0x00) }

        public func off() async throws { try await context.invoke(0x00) }
        public func on() async throws { try await context.invoke(0x01) }
        public func toggle() async throws { try await context.invoke(0x02) }
    }
}

// MARK: Discovery and automations

extension Matter.OnOffTrait: AutomatableTrait {
    public enum Attribute: UInt32, Field, CaseIterable {
        case onOff = 0x0000
        case globalSceneControl = 0x4000
        case onTime = 0x4001
        case offWaitTime = 0x4002
        case startUpOnOff = 0x4003
        public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .attribute)
    }

    public enum OffCommand: CommandDescriptor {
        public typealias CommandRequestFields = NoFields<OffCommand>
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x00
        public static let name = "Off"
    }

    public enum OnCommand: CommandDescriptor {
        public typealias CommandRequestFields = NoFields<OnCommand>
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x01
        public static let name = "On"
    }

    public enum ToggleCommand: CommandDescriptor {
        public typealias CommandRequestFields = NoFields<ToggleCommand>
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x02
        public static let name = "Toggle"
    }

    static let commandTypes: [any CommandDescriptor.Type] = [OffCommand.self, OnCommand.self, ToggleCommand.self]

    static func attributeID(_ keyPath: PartialKeyPath<Attributes>) -> UInt32? {
        let table: [PartialKeyPath<Attributes>: Attribute] = [
            \.onOff: .onOff,
            \.globalSceneControl: .globalSceneControl,
            \.onTime: .onTime,
            \.offWaitTime: .offWaitTime,
            \.startUpOnOff: .startUpOnOff,
        ]
        return table[keyPath]?.rawValue
    }

    /// Actions for an automation (`action(device, OnOffLightDeviceType.self) { Matter.OnOffTrait.on() }`).
    public static func off() -> CommandAction { CommandAction(OffCommand.self, clusterID: clusterID) }
    public static func on() -> CommandAction { CommandAction(OnCommand.self, clusterID: clusterID) }
    public static func toggle() -> CommandAction { CommandAction(ToggleCommand.self, clusterID: clusterID) }
}
