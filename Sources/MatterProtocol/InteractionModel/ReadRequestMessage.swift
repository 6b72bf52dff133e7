import MatterModel
import MatterTLV

/// ReadRequestMessage (Matter Core spec 10.7.2, opcode 0x02).
public struct ReadRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.readRequest

    enum Tag {
        static let attributeRequests: UInt8 = 0
        static let eventRequests: UInt8 = 1
        static let eventFilters: UInt8 = 2
        static let isFabricFiltered: UInt8 = 3
        static let dataVersionFilters: UInt8 = 4
    }

    public var attributeRequests: [AttributePathIB]
    public var eventRequests: [EventPathIB]
    public var eventFilters: [EventFilterIB]
    /// Limits fabric-scoped lists to the accessing fabric's entries.
    public var isFabricFiltered: Bool
    public var dataVersionFilters: [DataVersionFilterIB]
    public var interactionModelRevision: UInt8

    public init(
        attributeRequests: [AttributePathIB] = [], eventRequests: [EventPathIB] = [],
        eventFilters: [EventFilterIB] = [], isFabricFiltered: Bool = true,
        dataVersionFilters: [DataVersionFilterIB] = [],
        interactionModelRevision: UInt8 = currentInteractionModelRevision
    ) {
        self.attributeRequests = attributeRequests
        self.eventRequests = eventRequests
        self.eventFilters = eventFilters
        self.isFabricFiltered = isFabricFiltered
        self.dataVersionFilters = dataVersionFilters
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
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
        attributeRequests = try r.blocks(Tag.attributeRequests, "attributeRequests") ?? []
        eventRequests = try r.blocks(Tag.eventRequests, "eventRequests") ?? []
        eventFilters = try r.blocks(Tag.eventFilters, "eventFilters") ?? []
        // connectedhomeip treats an absent IsFabricFiltered as false.
        isFabricFiltered = try r.bool(Tag.isFabricFiltered, "isFabricFiltered") ?? false
        dataVersionFilters = try r.blocks(Tag.dataVersionFilters, "dataVersionFilters") ?? []
        interactionModelRevision = try r.revision()
    }
}

/// ReportDataMessage (spec 10.7.3, opcode 0x05).
public struct ReportDataMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.reportData

    enum Tag {
        static let subscriptionID: UInt8 = 0
        static let attributeReports: UInt8 = 1
        static let eventReports: UInt8 = 2
        static let moreChunkedMessages: UInt8 = 3
        static let suppressResponse: UInt8 = 4
    }

    /// Present only in reports of a subscription.
    public var subscriptionID: UInt32?
    public var attributeReports: [AttributeReportIB]
    public var eventReports: [EventReportIB]
    /// More ReportData messages follow in this transaction.
    public var moreChunkedMessages: Bool
    /// The receiver sends no StatusResponse (only the last report of a Read).
    public var suppressResponse: Bool
    public var interactionModelRevision: UInt8

    public init(
        subscriptionID: UInt32? = nil, attributeReports: [AttributeReportIB] = [],
        eventReports: [EventReportIB] = [], moreChunkedMessages: Bool = false,
        suppressResponse: Bool = false, interactionModelRevision: UInt8 = currentInteractionModelRevision
    ) {
        self.subscriptionID = subscriptionID
        self.attributeReports = attributeReports
        self.eventReports = eventReports
        self.moreChunkedMessages = moreChunkedMessages
        self.suppressResponse = suppressResponse
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.subscriptionID, uint: subscriptionID)
        b.add(Tag.attributeReports, blocks: attributeReports, omitIfEmpty: true)
        b.add(Tag.eventReports, blocks: eventReports, omitIfEmpty: true)
        b.add(Tag.moreChunkedMessages, bool: moreChunkedMessages ? true : nil)
        b.add(Tag.suppressResponse, bool: suppressResponse ? true : nil)
        b.addRevision(interactionModelRevision)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        subscriptionID = try r.uint(Tag.subscriptionID, "subscriptionID")
        attributeReports = try r.blocks(Tag.attributeReports, "attributeReports") ?? []
        eventReports = try r.blocks(Tag.eventReports, "eventReports") ?? []
        moreChunkedMessages = try r.bool(Tag.moreChunkedMessages, "moreChunkedMessages") ?? false
        suppressResponse = try r.bool(Tag.suppressResponse, "suppressResponse") ?? false
        interactionModelRevision = try r.revision()
    }
}
