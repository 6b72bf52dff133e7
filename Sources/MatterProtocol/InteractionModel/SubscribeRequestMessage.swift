import MatterModel
import MatterTLV

/// SubscribeRequestMessage (Matter Core spec 10.7.4, opcode 0x03).
public struct SubscribeRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.subscribeRequest

    enum Tag {
        static let keepSubscriptions: UInt8 = 0
        static let minIntervalFloor: UInt8 = 1
        static let maxIntervalCeiling: UInt8 = 2
        static let attributeRequests: UInt8 = 3
        static let eventRequests: UInt8 = 4
        static let eventFilters: UInt8 = 5
        // Tag 6 is reserved.
        static let isFabricFiltered: UInt8 = 7
        static let dataVersionFilters: UInt8 = 8
    }

    /// False: the publisher ends this subscriber's other subscriptions first.
    public var keepSubscriptions: Bool
    /// Seconds.
    public var minIntervalFloor: UInt16
    /// Seconds.
    public var maxIntervalCeiling: UInt16
    public var attributeRequests: [AttributePathIB]
    public var eventRequests: [EventPathIB]
    public var eventFilters: [EventFilterIB]
    public var isFabricFiltered: Bool
    public var dataVersionFilters: [DataVersionFilterIB]
    public var interactionModelRevision: UInt8

    public init(
        keepSubscriptions: Bool = true, minIntervalFloor: UInt16, maxIntervalCeiling: UInt16,
        attributeRequests: [AttributePathIB] = [], eventRequests: [EventPathIB] = [],
        eventFilters: [EventFilterIB] = [], isFabricFiltered: Bool = true,
        dataVersionFilters: [DataVersionFilterIB] = [],
        interactionModelRevision: UInt8 = currentInteractionModelRevision
    ) {
        self.keepSubscriptions = keepSubscriptions
        self.minIntervalFloor = minIntervalFloor
        self.maxIntervalCeiling = maxIntervalCeiling
        self.attributeRequests = attributeRequests
        self.eventRequests = eventRequests
        self.eventFilters = eventFilters
        self.isFabricFiltered = isFabricFiltered
        self.dataVersionFilters = dataVersionFilters
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.keepSubscriptions, bool: keepSubscriptions)
        b.add(Tag.minIntervalFloor, uint: minIntervalFloor)
        b.add(Tag.maxIntervalCeiling, uint: maxIntervalCeiling)
        b.add(Tag.attributeRequests, blocks: attributeRequests, omitIfEmpty: true)
        b.add(Tag.eventRequests, blocks: eventRequests, omitIfEmpty: true)
        b.add(Tag.eventFilters, blocks: eventFilters, omitIfEmpty: true)
        b.add(Tag.isFabricFiltered, bool: isFabricFiltered)
        b.add(Tag.dataVersionFilters, blocks: dataVersionFilters, omitIfEmpty: true)
        b.addRevision(interactionModelRevision)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        keepSubscriptions = try r.bool(Tag.keepSubscriptions, "keepSubscriptions") ?? false
        minIntervalFloor = try r.requiredUInt(Tag.minIntervalFloor, "minIntervalFloor")
        maxIntervalCeiling = try r.requiredUInt(Tag.maxIntervalCeiling, "maxIntervalCeiling")
        attributeRequests = try r.blocks(Tag.attributeRequests, "attributeRequests") ?? []
        eventRequests = try r.blocks(Tag.eventRequests, "eventRequests") ?? []
        eventFilters = try r.blocks(Tag.eventFilters, "eventFilters") ?? []
        isFabricFiltered = try r.bool(Tag.isFabricFiltered, "isFabricFiltered") ?? false
        dataVersionFilters = try r.blocks(Tag.dataVersionFilters, "dataVersionFilters") ?? []
        interactionModelRevision = try r.revision()
    }
}

/// SubscribeResponseMessage (spec 10.7.5, opcode 0x04): ends the priming and
/// confirms the subscription.
public struct SubscribeResponseMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.subscribeResponse

    enum Tag {
        static let subscriptionID: UInt8 = 0
        // Tag 1 (MinInterval) was removed from the spec.
        static let maxInterval: UInt8 = 2
    }

    public var subscriptionID: UInt32
    /// Seconds: the publisher reports at least this often.
    public var maxInterval: UInt16
    public var interactionModelRevision: UInt8

    public init(subscriptionID: UInt32, maxInterval: UInt16, interactionModelRevision: UInt8 = currentInteractionModelRevision) {
        self.subscriptionID = subscriptionID
        self.maxInterval = maxInterval
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.subscriptionID, uint: subscriptionID)
        b.add(Tag.maxInterval, uint: maxInterval)
        b.addRevision(interactionModelRevision)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        subscriptionID = try r.requiredUInt(Tag.subscriptionID, "subscriptionID")
        maxInterval = try r.requiredUInt(Tag.maxInterval, "maxInterval")
        interactionModelRevision = try r.revision()
    }
}
