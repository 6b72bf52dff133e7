import MatterTLV

/// Why an Interaction Model payload was rejected. Decoding never traps: every
/// malformed input ends here, and the server answers it with INVALID_ACTION
/// (Matter Core spec chapter 8: a message that cannot be parsed is an invalid action).
public struct IMDecodingError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Reason: Hashable, Sendable {
        /// The payload is not one well-formed TLV element.
        case notTLV(TLVError)
        /// A field holds a TLV type other than the one the spec gives it.
        case wrongType(expected: String)
        /// A mandatory field is absent.
        case missingField
        /// An integer does not fit the field's width (e.g. an endpoint above 0xFFFF).
        case outOfRange
        /// The fields are individually valid but do not make a valid block
        /// (e.g. an AttributeReportIB holding both a status and data).
        case invalidCombination(String)
    }

    public var reason: Reason
    /// Where in the message, e.g. `ReadRequestMessage.attributeRequests[1].endpoint`.
    public var field: String

    public init(_ reason: Reason, field: String) {
        self.reason = reason
        self.field = field
    }

    /// The same error seen from an enclosing block.
    func within(_ parent: String) -> IMDecodingError {
        IMDecodingError(reason, field: field.isEmpty ? parent : parent + "." + field)
    }

    public var description: String {
        switch reason {
        case .notTLV(let error): "\(field): not TLV (\(error))"
        case .wrongType(let expected): "\(field): expected \(expected)"
        case .missingField: "\(field): missing"
        case .outOfRange: "\(field): out of range"
        case .invalidCombination(let why): "\(field): \(why)"
        }
    }
}
