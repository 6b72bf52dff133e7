import MatterModel
import MatterTLV

/// StatusResponseMessage (Matter Core spec 10.7.1, opcode 0x01): acknowledges
/// a report chunk or a Timed Request, or rejects a whole action.
public struct StatusResponseMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.statusResponse

    enum Tag {
        static let status: UInt8 = 0
    }

    public var status: StatusCode
    public var interactionModelRevision: UInt8

    public init(status: StatusCode, interactionModelRevision: UInt8 = currentInteractionModelRevision) {
        self.status = status
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.status, uint: status.rawValue)
        b.addRevision(interactionModelRevision)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        status = StatusCode(wireValue: try r.requiredUInt(Tag.status, "status"))
        interactionModelRevision = try r.revision()
    }
}

/// TimedRequestMessage (spec 10.7.8, opcode 0x0A): the Write or Invoke that
/// follows on the same exchange must arrive within `timeout` milliseconds.
public struct TimedRequestMessage: InteractionMessage {
    public static let opcode = InteractionOpcode.timedRequest

    enum Tag {
        static let timeout: UInt8 = 0
    }

    /// Milliseconds.
    public var timeout: UInt16
    public var interactionModelRevision: UInt8

    public init(timeout: UInt16, interactionModelRevision: UInt8 = currentInteractionModelRevision) {
        self.timeout = timeout
        self.interactionModelRevision = interactionModelRevision
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.timeout, uint: timeout)
        b.addRevision(interactionModelRevision)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        timeout = try r.requiredUInt(Tag.timeout, "timeout")
        interactionModelRevision = try r.revision()
    }
}
