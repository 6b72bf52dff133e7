import MatterModel
import MatterTLV

extension Matter {
    /// The Level Control cluster (0x0008, Application Cluster spec 1.6).
    @dynamicMemberLookup
    public struct LevelControlTrait: Trait, ClusterTrait {
        public static let identifier = traitIdentifier(cluster: 0x0008)
        static let clusterID = ClusterID(0x0008)

        /// OptionsBitmap (spec 1.6.5.1).
        public struct OptionsBitmap: OptionSet, Sendable, Hashable {
            public let rawValue: UInt8
            public init(rawValue: UInt8) { self.rawValue = rawValue }
            public static let executeIfOff = OptionsBitmap(rawValue: 1 << 0)
            public static let coupleColorTempToLevel = OptionsBitmap(rawValue: 1 << 1)
        }

        /// MoveModeEnum / StepModeEnum.
        public enum MoveModeEnum: UInt8, Sendable, Hashable {
            case up = 0
            case down = 1
        }

        public struct Attributes: Sendable, Hashable {
            public var currentLevel: UInt8?
            public var remainingTime: UInt16?
            public var minLevel: UInt8?
            public var maxLevel: UInt8?
            public var options: OptionsBitmap?
            public var onOffTransitionTime: UInt16?
            public var onLevel: UInt8?
            public var onTransitionTime: UInt16?
            public var offTransitionTime: UInt16?
            public var defaultMoveRate: UInt8?
            public var startUpCurrentLevel: UInt8?
        }

        let context: TraitContext
        public let attributes: Attributes
        public var metadata: TraitMetadata { context.metadata }

        /// Attributes read straight off the trait (`trait.onOff` for `trait.attributes.onOff`).
        public subscript<Value>(dynamicMember keyPath: KeyPath<Attributes, Value>) -> Value { attributes[keyPath: keyPath] }

        init(context: TraitContext) {
            self.context = context
            attributes = Attributes(
                currentLevel: context.uint(0x0000), remainingTime: context.uint(0x0001), minLevel: context.uint(0x0002),
                maxLevel: context.uint(0x0003), options: context.uint(0x000F, as: UInt8.self).map(OptionsBitmap.init(rawValue:)),
                onOffTransitionTime: context.uint(0x0010), onLevel: context.uint(0x0011), onTransitionTime: context.uint(0x0012),
                offTransitionTime: context.uint(0x0013), defaultMoveRate: context.uint(0x0014),
                startUpCurrentLevel: context.uint(0x4000))
        }

        public var supportsMoveToLevelWithOnOffCommand: Bool { context.accepts(0x04) }

        public func moveToLevel(
            level: UInt8, transitionTime: UInt16? = nil, optionsMask: OptionsBitmap = [],
            optionsOverride: OptionsBitmap = []
        ) async throws {
            try await context.invoke(
                0x00,
                [
                    field(0, level), nullableField(1, transitionTime),
                    field(2, optionsMask.rawValue), field(3, optionsOverride.rawValue),
                ])
        }

        public func moveToLevelWithOnOff(
            level: UInt8, transitionTime: UInt16? = nil, optionsMask: OptionsBitmap = [],
            optionsOverride: OptionsBitmap = []
        ) async throws {
            try await context.invoke(
                0x04,
                [
                    field(0, level), nullableField(1, transitionTime),
                    field(2, optionsMask.rawValue), field(3, optionsOverride.rawValue),
                ])
        }

        public func move(
            moveMode: MoveModeEnum, rate: UInt8? = nil, optionsMask: OptionsBitmap = [],
            optionsOverride: OptionsBitmap = []
        ) async throws {
            try await context.invoke(
                0x01,
                [
                    field(0, moveMode.rawValue), nullableField(1, rate),
                    field(2, optionsMask.rawValue), field(3, optionsOverride.rawValue),
                ])
        }

        public func step(
            stepMode: MoveModeEnum, stepSize: UInt8, transitionTime: UInt16? = nil, optionsMask: OptionsBitmap = [],
            optionsOverride: OptionsBitmap = []
        ) async throws {
            try await context.invoke(
                0x02,
                [
                    field(0, stepMode.rawValue), field(1, stepSize), nullableField(2, transitionTime),
                    field(3, optionsMask.rawValue), field(4, optionsOverride.rawValue),
                ])
        }

        public func stop(optionsMask: OptionsBitmap = [], optionsOverride: OptionsBitmap = []) async throws {
            try await context.invoke(0x03, [field(0, optionsMask.rawValue), field(1, optionsOverride.rawValue)])
        }

        public func stopWithOnOff(optionsMask: OptionsBitmap = [], optionsOverride: OptionsBitmap = []) async throws {
            try await context.invoke(0x07, [field(0, optionsMask.rawValue), field(1, optionsOverride.rawValue)])
        }

        /// Writes the OnLevel attribute (nil writes null).
        public func setOnLevel(_ level: UInt8?) async throws {
            try await context.write(0x0011, level.map { .unsigned(UInt64($0)) } ?? .null)
        }
    }
}

// MARK: Discovery and automations

extension Matter.LevelControlTrait: AutomatableTrait {
    public enum Attribute: UInt32, Field, CaseIterable {
        case currentLevel = 0x0000
        case remainingTime = 0x0001
        case minLevel = 0x0002
        case maxLevel = 0x0003
        case options = 0x000F
        case onOffTransitionTime = 0x0010
        case onLevel = 0x0011
        case onTransitionTime = 0x0012
        case offTransitionTime = 0x0013
        case defaultMoveRate = 0x0014
        case startUpCurrentLevel = 0x4000
        public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .attribute)
    }

    public enum MoveToLevelCommand: CommandDescriptor {
        public enum CommandRequestFields: UInt32, Field {
            case level = 0, transitionTime = 1, optionsMask = 2, optionsOverride = 3
            public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .command(commandID))
        }
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x00
        public static let name = "MoveToLevel"
    }

    public enum MoveToLevelWithOnOffCommand: CommandDescriptor {
        public enum CommandRequestFields: UInt32, Field {
            case level = 0, transitionTime = 1, optionsMask = 2, optionsOverride = 3
            public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .command(commandID))
        }
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x04
        public static let name = "MoveToLevelWithOnOff"
    }

    public enum StopCommand: CommandDescriptor {
        public enum CommandRequestFields: UInt32, Field {
            case optionsMask = 0, optionsOverride = 1
            public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .command(commandID))
        }
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x03
        public static let name = "Stop"
    }

    static let commandTypes: [any CommandDescriptor.Type] = [
        MoveToLevelCommand.self, MoveToLevelWithOnOffCommand.self, StopCommand.self,
    ]

    static func attributeID(_ keyPath: PartialKeyPath<Attributes>) -> UInt32? {
        let table: [PartialKeyPath<Attributes>: Attribute] = [
            \.currentLevel: .currentLevel,
            \.remainingTime: .remainingTime,
            \.minLevel: .minLevel,
            \.maxLevel: .maxLevel,
            \.options: .options,
            \.onOffTransitionTime: .onOffTransitionTime,
            \.onLevel: .onLevel,
            \.onTransitionTime: .onTransitionTime,
            \.offTransitionTime: .offTransitionTime,
            \.defaultMoveRate: .defaultMoveRate,
            \.startUpCurrentLevel: .startUpCurrentLevel,
        ]
        return table[keyPath]?.rawValue
    }

    /// The MoveToLevel action of an automation. The level is checked against the device's
    /// constraint when the automation is created (not truncated to UInt8 here).
    public static func moveToLevel(
        level: some BinaryInteger, transitionTime: UInt16?, optionsMask: OptionsBitmap,
        optionsOverride: OptionsBitmap
    ) -> CommandAction {
        typealias F = MoveToLevelCommand.CommandRequestFields
        return CommandAction(
            MoveToLevelCommand.self, clusterID: clusterID,
            fields: [
                (F.level, .integer(level)), (F.transitionTime, transitionTime.map { .uint(UInt64($0)) } ?? .null),
                (F.optionsMask, .uint(UInt64(optionsMask.rawValue))), (F.optionsOverride, .uint(UInt64(optionsOverride.rawValue))),
            ])
    }

    public static func moveToLevelWithOnOff(
        level: some BinaryInteger, transitionTime: UInt16?, optionsMask: OptionsBitmap,
        optionsOverride: OptionsBitmap
    ) -> CommandAction {
        typealias F = MoveToLevelWithOnOffCommand.CommandRequestFields
        return CommandAction(
            MoveToLevelWithOnOffCommand.self, clusterID: clusterID,
            fields: [
                (F.level, .integer(level)), (F.transitionTime, transitionTime.map { .uint(UInt64($0)) } ?? .null),
                (F.optionsMask, .uint(UInt64(optionsMask.rawValue))), (F.optionsOverride, .uint(UInt64(optionsOverride.rawValue))),
            ])
    }
}
