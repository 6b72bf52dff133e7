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
