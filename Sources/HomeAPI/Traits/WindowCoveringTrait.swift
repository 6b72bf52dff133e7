import MatterModel
import MatterTLV

extension Matter {
    /// The Window Covering cluster (0x0102, Application Cluster spec 5.3).
    @dynamicMemberLookup
    public struct WindowCoveringTrait: Trait, ClusterTrait {
        public static let identifier = traitIdentifier(cluster: 0x0102)
        static let clusterID = ClusterID(0x0102)

        public struct Attributes: Sendable, Hashable {
            public var type: UInt8?
            public var configStatus: UInt8?
            public var currentPositionLiftPercentage: UInt8?
            public var operationalStatus: UInt8?
            public var targetPositionLiftPercent100ths: UInt16?
            public var endProductType: UInt8?
            public var currentPositionLiftPercent100ths: UInt16?
            public var installedOpenLimitLift: UInt16?
            public var installedClosedLimitLift: UInt16?
            public var mode: UInt8?
        }

        let context: TraitContext
        public let attributes: Attributes
        public var metadata: TraitMetadata { context.metadata }

        /// Attributes read straight off the trait (`trait.onOff` for `trait.attributes.onOff`).
        public subscript<Value>(dynamicMember keyPath: KeyPath<Attributes, Value>) -> Value { attributes[keyPath: keyPath] }

        init(context: TraitContext) {
            self.context = context
            attributes = Attributes(
                type: context.uint(0x0000), configStatus: context.uint(0x0007), currentPositionLiftPercentage: context.uint(0x0008),
                operationalStatus: context.uint(0x000A), targetPositionLiftPercent100ths: context.uint(0x000B),
                endProductType: context.uint(0x000D), currentPositionLiftPercent100ths: context.uint(0x000E),
                installedOpenLimitLift: context.uint(0x0010), installedClosedLimitLift: context.uint(0x0011), mode: context.uint(0x0017))
        }

        public var supportsGoToLiftPercentageCommand: Bool { context.accepts(0x05) }

        public func upOrOpen() async throws { try await context.invoke(0x00) }
        public func downOrClose() async throws { try await context.invoke(0x01) }
        public func stopMotion() async throws { try await context.invoke(0x02) }

        /// Moves the lift to a position in 0.01 % (0 fully open, 10000 fully closed).
        public func goToLiftPercentage(_ liftPercent100thsValue: UInt16) async throws {
            try await context.invoke(0x05, [field(0, liftPercent100thsValue)])
        }

        public func goToLiftPercentage(liftPercent100thsValue: UInt16) async throws {
            try await goToLiftPercentage(liftPercent100thsValue)
        }
    }
}

// MARK: Discovery and automations

extension Matter.WindowCoveringTrait: AutomatableTrait {
    public enum Attribute: UInt32, Field, CaseIterable {
        case type = 0x0000
        case configStatus = 0x0007
        case currentPositionLiftPercentage = 0x0008
        case operationalStatus = 0x000A
        case targetPositionLiftPercent100ths = 0x000B
        case endProductType = 0x000D
        case currentPositionLiftPercent100ths = 0x000E
        case installedOpenLimitLift = 0x0010
        case installedClosedLimitLift = 0x0011
        case mode = 0x0017
        public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .attribute)
    }

    public enum UpOrOpenCommand: CommandDescriptor {
        public typealias CommandRequestFields = NoFields<UpOrOpenCommand>
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x00
        public static let name = "UpOrOpen"
    }

    public enum DownOrCloseCommand: CommandDescriptor {
        public typealias CommandRequestFields = NoFields<DownOrCloseCommand>
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x01
        public static let name = "DownOrClose"
    }

    public enum StopMotionCommand: CommandDescriptor {
        public typealias CommandRequestFields = NoFields<StopMotionCommand>
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x02
        public static let name = "StopMotion"
    }

    public enum GoToLiftPercentageCommand: CommandDescriptor {
        public enum CommandRequestFields: UInt32, Field {
            case liftPercent100thsValue = 0
            public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .command(commandID))
        }
        public static let traitIdentifier = identifier
        public static let commandID: UInt32 = 0x05
        public static let name = "GoToLiftPercentage"
    }

    static let commandTypes: [any CommandDescriptor.Type] = [
        UpOrOpenCommand.self, DownOrCloseCommand.self, StopMotionCommand.self, GoToLiftPercentageCommand.self,
    ]

    static func attributeID(_ keyPath: PartialKeyPath<Attributes>) -> UInt32? {
        let table: [PartialKeyPath<Attributes>: Attribute] = [
            \.type: .type,
            \.configStatus: .configStatus,
            \.currentPositionLiftPercentage: .currentPositionLiftPercentage,
            \.operationalStatus: .operationalStatus,
            \.targetPositionLiftPercent100ths: .targetPositionLiftPercent100ths,
            \.endProductType: .endProductType,
            \.currentPositionLiftPercent100ths: .currentPositionLiftPercent100ths,
            \.installedOpenLimitLift: .installedOpenLimitLift,
            \.installedClosedLimitLift: .installedClosedLimitLift,
            \.mode: .mode,
        ]
        return table[keyPath]?.rawValue
    }

    public static func upOrOpen() -> CommandAction { CommandAction(UpOrOpenCommand.self, clusterID: clusterID) }
    public static func downOrClose() -> CommandAction { CommandAction(DownOrCloseCommand.self, clusterID: clusterID) }
    public static func stopMotion() -> CommandAction { CommandAction(StopMotionCommand.self, clusterID: clusterID) }
    public static func goToLiftPercentage(liftPercent100thsValue: some BinaryInteger) -> CommandAction {
        CommandAction(
            GoToLiftPercentageCommand.self, clusterID: clusterID,
            fields: [(GoToLiftPercentageCommand.CommandRequestFields.liftPercent100thsValue, .integer(liftPercent100thsValue))])
    }
}
