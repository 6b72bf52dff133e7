import MatterTLV

/// An Interaction Model Information Block (Matter Core spec 10.6): a TLV
/// structure or list whose members carry context tags. Every IB encodes and
/// decodes, so the device and the controller share one codec.
public protocol InformationBlock: Sendable, Hashable {
    /// The block as a TLV value (its members carry the spec's context tags).
    var tlvValue: TLVValue { get }
    /// Decodes the block; unknown context tags are ignored for forward compatibility.
    init(tlvValue: TLVValue) throws(IMDecodingError)
}

extension InformationBlock {
    /// The block as an element with the given tag.
    public func element(tag: TLVTag = .anonymous) -> TLVElement {
        TLVElement(tag: tag, tlvValue)
    }
}

/// The Interaction Model protocol's revision this implementation speaks
/// (connectedhomeip's `kInteractionModelRevision`, Matter 1.4: 12), sent in
/// every message under context tag 0xFF.
public let currentInteractionModelRevision: UInt8 = 12

/// Context tag of the InteractionModelRevision field in every IM message.
let interactionModelRevisionTag: UInt8 = 0xFF

/// The Interaction Model protocol's message types (spec 10.2, protocol ID 0x0001).
public enum InteractionOpcode: UInt8, Sendable, Hashable, CaseIterable {
    case statusResponse = 0x01
    case readRequest = 0x02
    case subscribeRequest = 0x03
    case subscribeResponse = 0x04
    case reportData = 0x05
    case writeRequest = 0x06
    case writeResponse = 0x07
    case invokeRequest = 0x08
    case invokeResponse = 0x09
    case timedRequest = 0x0A
}

/// A top-level Interaction Model message: an anonymous TLV structure whose
/// last member is the InteractionModelRevision (tag 0xFF).
public protocol InteractionMessage: InformationBlock {
    static var opcode: InteractionOpcode { get }
    var interactionModelRevision: UInt8 { get set }
}

extension InteractionMessage {
    /// The message payload as sent on an exchange.
    public func encoded() -> [UInt8] {
        element().encoded()
    }

    /// Decodes a message payload.
    public init(payload: some Collection<UInt8>) throws(IMDecodingError) {
        let element: TLVElement
        do throws(TLVError) {
            element = try TLVElement.decode(payload)
        } catch {
            throw IMDecodingError(.notTLV(error), field: String(describing: Self.self))
        }
        do throws(IMDecodingError) {
            try self.init(tlvValue: element.value)
        } catch {
            throw error.within(String(describing: Self.self))
        }
    }
}
