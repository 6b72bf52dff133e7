import MatterModel
import MatterTLV

/// WriteRequestMessage (Matter Core spec 10.7.6, opcode 0x06).
public struct WriteRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.writeRequest

    enum Tag {
        static let suppressResponse: UInt8 = 0
        static let timedRequest: UInt8 = 1
        static let writeRequests: UInt8 = 2
        static let moreChunkedMessages: UInt8 = 3
    }

    public var suppressResponse: Bool
    /// This write follows a Timed Request on the same exchange.
    public var timedRequest: Bool
    public var writeRequests: [AttributeDataIB]
    public var moreChunkedMessages: Bool
    public var interactionModelRevision: UInt8

    public init(
        suppressResponse: Bool = false, timedRequest: Bool = false, writeRequests: [AttributeDataIB],
        moreChunkedMessages: Bool = false, interactionModelRevision: UInt8 = currentInteractionModelRevision
    ) {
        self.suppressResponse = suppressResponse
        self.timedRequest = timedRequest
        self.writeRequests = writeRequests
        self.moreChunkedMessages = moreChunkedMessages
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.suppressResponse, bool: suppressResponse)
        b.add(Tag.timedRequest, bool: timedRequest)
        b.add(Tag.writeRequests, blocks: writeRequests, omitIfEmpty: false)
        b.add(Tag.moreChunkedMessages, bool: moreChunkedMessages ? true : nil)
        b.addRevision(interactionModelRevision)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        suppressResponse = try r.bool(Tag.suppressResponse, "suppressResponse") ?? false
        timedRequest = try r.bool(Tag.timedRequest, "timedRequest") ?? false
        writeRequests = try r.requiredBlocks(Tag.writeRequests, "writeRequests")
        moreChunkedMessages = try r.bool(Tag.moreChunkedMessages, "moreChunkedMessages") ?? false
        interactionModelRevision = try r.revision()
    }
}

/// WriteResponseMessage (spec 10.7.7, opcode 0x07): one status per written path.
public struct WriteResponseMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.writeResponse

    enum Tag {
        static let writeResponses: UInt8 = 0
    }

    public var writeResponses: [AttributeStatusIB]
    public var interactionModelRevision: UInt8

    public init(writeResponses: [AttributeStatusIB], interactionModelRevision: UInt8 = currentInteractionModelRevision) {
        self.writeResponses = writeResponses
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.writeResponses, blocks: writeResponses, omitIfEmpty: false)
        b.addRevision(interactionModelRevision)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        writeResponses = try r.blocks(Tag.writeResponses, "writeResponses") ?? []
        interactionModelRevision = try r.revision()
    }
}
