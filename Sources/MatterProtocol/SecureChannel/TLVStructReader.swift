import MatterTLV

/// Typed access to the context-tagged fields of a Secure Channel TLV structure,
/// failing with `SecureChannelError.invalidMessage` on anything missing or ill-typed.
struct TLVStructReader {
    let fields: [TLVElement]
    let what: String

    /// Decodes `bytes` as one anonymous TLV structure.
    init(_ bytes: [UInt8], what: String) throws(SecureChannelError) {
        let element: TLVElement
        do { element = try TLVElement.decode(bytes) } catch {
            throw .invalidMessage("\(what): not TLV (\(error))")
        }
        try self.init(element.value, what: what)
    }

    init(_ value: TLVValue, what: String) throws(SecureChannelError) {
        guard case .structure(let fields) = value else { throw .invalidMessage("\(what): not a structure") }
        self.fields = fields
        self.what = what
    }

    func value(_ tag: UInt8) -> TLVValue? {
        fields.first { $0.tag == .context(tag) }?.value
    }

    func bytes(_ tag: UInt8, length: Int? = nil, lengths: ClosedRange<Int>? = nil) throws(SecureChannelError) -> [UInt8] {
        guard let v = value(tag) else { throw .invalidMessage("\(what): field \(tag) missing") }
        guard case .bytes(let b) = v else { throw .invalidMessage("\(what): field \(tag) is not an octet string") }
        if let length, b.count != length {
            throw .invalidMessage("\(what): field \(tag) has \(b.count) bytes, expected \(length)")
        }
        if let lengths, !lengths.contains(b.count) {
            throw .invalidMessage("\(what): field \(tag) has \(b.count) bytes, expected \(lengths)")
        }
        return b
    }

    func optionalBytes(_ tag: UInt8, length: Int? = nil, lengths: ClosedRange<Int>? = nil) throws(SecureChannelError) -> [UInt8]? {
        guard value(tag) != nil else { return nil }
        return try bytes(tag, length: length, lengths: lengths)
    }

    func unsigned(_ tag: UInt8, max: UInt64) throws(SecureChannelError) -> UInt64 {
        guard let v = value(tag) else { throw .invalidMessage("\(what): field \(tag) missing") }
        guard case .unsigned(let n) = v, n <= max else {
            throw .invalidMessage("\(what): field \(tag) is not an unsigned integer ≤ \(max)")
        }
        return n
    }

    func bool(_ tag: UInt8) throws(SecureChannelError) -> Bool {
        guard case .bool(let b)? = value(tag) else { throw .invalidMessage("\(what): field \(tag) is not a boolean") }
        return b
    }

    func structure(_ tag: UInt8) throws(SecureChannelError) -> TLVStructReader? {
        guard let v = value(tag) else { return nil }
        return try TLVStructReader(v, what: "\(what).\(tag)")
    }

    func sessionParameters(_ tag: UInt8) throws(SecureChannelError) -> SessionParameters? {
        guard let v = value(tag) else { return nil }
        return try SessionParameters(tlv: v)
    }
}
