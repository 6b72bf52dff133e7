import MatterModel
import MatterTLV

extension Matter {
    /// The Basic Information cluster (0x0028, Core spec 11.1) of the device's root endpoint.
    @dynamicMemberLookup
    public struct BasicInformationTrait: Trait, ClusterTrait {
        public static let identifier = traitIdentifier(cluster: 0x0028)
        static let clusterID = ClusterID(0x0028)

        public struct Attributes: Sendable, Hashable {
            public var dataModelRevision: UInt16?
            public var vendorName: String?
            public var vendorID: UInt16?
            public var productName: String?
            public var productID: UInt16?
            public var nodeLabel: String?
            public var location: String?
            public var hardwareVersion: UInt16?
            public var hardwareVersionString: String?
            public var softwareVersion: UInt32?
            public var softwareVersionString: String?
            public var serialNumber: String?
            public var uniqueID: String?
            public var reachable: Bool?
        }

        let context: TraitContext
        public let attributes: Attributes
        public var metadata: TraitMetadata { context.metadata }

        /// Attributes read straight off the trait (`trait.onOff` for `trait.attributes.onOff`).
        public subscript<Value>(dynamicMember keyPath: KeyPath<Attributes, Value>) -> Value { attributes[keyPath: keyPath] }

        init(context: TraitContext) {
            self.context = context
            attributes = Attributes(
                dataModelRevision: context.uint(0x0000), vendorName: context.string(0x0001), vendorID: context.uint(0x0002),
                productName: context.string(0x0003), productID: context.uint(0x0004), nodeLabel: context.string(0x0005),
                location: context.string(0x0006), hardwareVersion: context.uint(0x0007),
                hardwareVersionString: context.string(0x0008), softwareVersion: context.uint(0x0009),
                softwareVersionString: context.string(0x000A), serialNumber: context.string(0x000F),
                uniqueID: context.string(0x0012), reachable: context.bool(0x0011))
        }
    }
}
