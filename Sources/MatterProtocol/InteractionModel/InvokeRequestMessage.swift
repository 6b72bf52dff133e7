import MatterModel
import MatterTLV

/// InvokeRequestMessage (Matter Core spec 10.7.9, opcode 0x08).
public struct InvokeRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.invokeRequest

    enum Tag {
        static let suppressResponse: UInt8 = 0
        static let timedRequest: UInt8 = 1
        static let invokeRequests: UInt8 = 2
    }

    public var suppressResponse: Bool
    /// This invoke follows a Timed Request on the same exchange.
    public var timedRequest: Bool
    public var invokeRequests: [CommandDataIB]
    public var interactionModelRevision: UInt8

    public init(
        suppressResponse: Bool = false, timedRequest: Bool = false, invokeRequests: [CommandDataIB],
        interactionModelRevision: UInt8 = currentInteractionModelRevision
    ) {
        self.suppressResponse = suppressResponse
        self.timedRequest = timedRequest
        self.invokeRequests = invokeRequests
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.suppressResponse, bool: suppressResponse)
        b.add(Tag.timedRequest, bool: timedRequest)
        b.add(Tag.invokeRequests, blocks: invokeRequests, omitIfEmpty: false)
        b.addRevision(interactionModelRevision)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        suppressResponse = try r.bool(Tag.suppressResponse, "suppressResponse") ?? false
        timedRequest = try r.bool(Tag.timedRequest, "timedRequest") ?? false
        invokeRequests = try r.requiredBlocks(Tag.invokeRequests, "invokeRequests")
        interactionModelRevision = try r.revision()
    }
}

/// InvokeResponseMessage (spec 10.7.10, opcode 0x09).
public struct InvokeResponseMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.invokeResponse

    enum Tag {
        static let suppressResponse: UInt8 = 0
        static let invokeResponses: UInt8 = 1
        static let moreChunkedMessages: UInt8 = 2
    }

    public var suppressResponse: Bool
    public var invokeResponses: [InvokeResponseIB]
    public var moreChunkedMessages: Bool
    public var interactionModelRevision: UInt8

    public init(
        suppressResponse: Bool = false, invokeResponses: [InvokeResponseIB], moreChunkedMessages: Bool = false,
        interactionModelRevision: UInt8 = currentInteractionModelRevision
    ) {
        self.suppressResponse = suppressResponse
        self.invokeResponses = invokeResponses
        self.moreChunkedMessages = moreChunkedMessages
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.suppressResponse, bool: suppressResponse)
        b.add(Tag.invokeResponses, blocks: invokeResponses, omitIfEmpty: false)
        b.add(Tag.moreChunkedMessages, bool: moreChunkedMessages ? true : nil)
        b.addRevision(interactionModelRevision)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        suppressResponse = try r.bool(Tag.suppressResponse, "suppressResponse") ?? false
        invokeResponses = try r.requiredBlocks(Tag.invokeResponses, "invokeResponses")
        moreChunkedMessages = try r.bool(Tag.moreChunkedMessages, "moreChunkedMessages") ?? false
        interactionModelRevision = try r.revision()
    }
}
