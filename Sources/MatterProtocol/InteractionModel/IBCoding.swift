import MatterTLV

// Small helpers shared by every IB codec: a reader that looks fields up by
// context tag with checked conversions, and a builder that appends members
// in tag order. Nothing here traps on input.

/// The container form an IB uses on the wire (spec 10.6: paths are lists, the rest structures).
enum IBContainer {
    case structure, list

    var name: String { self == .structure ? "a structure" : "a list" }
}

/// Reads the members of one IB. Decoding accepts a structure where a list is
/// expected and vice versa, since both carry the same context-tagged members.
struct IBReader {
    let members: [TLVElement]

    init(_ value: TLVValue, _ container: IBContainer) throws(IMDecodingError) {
        switch value {
        case .structure(let m), .list(let m): members = m
        default: throw IMDecodingError(.wrongType(expected: container.name), field: "")
        }
    }

    /// The first member with this context tag.
    func value(_ tag: UInt8) -> TLVValue? {
        members.first { $0.tag == .context(tag) }?.value
    }

    func uint<T: FixedWidthInteger & UnsignedInteger>(
        _ tag: UInt8, _ field: String, as type: T.Type = T.self
    ) throws(IMDecodingError) -> T? {
        guard let value = value(tag) else { return nil }
        guard case .unsigned(let raw) = value else {
            throw IMDecodingError(.wrongType(expected: "an unsigned integer"), field: field)
        }
        guard let narrowed = T(exactly: raw) else { throw IMDecodingError(.outOfRange, field: field) }
        return narrowed
    }

    func requiredUInt<T: FixedWidthInteger & UnsignedInteger>(
        _ tag: UInt8, _ field: String, as type: T.Type = T.self
    ) throws(IMDecodingError) -> T {
        guard let v: T = try uint(tag, field) else { throw IMDecodingError(.missingField, field: field) }
        return v
    }

    func bool(_ tag: UInt8, _ field: String) throws(IMDecodingError) -> Bool? {
        guard let value = value(tag) else { return nil }
        guard case .bool(let b) = value else {
            throw IMDecodingError(.wrongType(expected: "a boolean"), field: field)
        }
        return b
    }

    func block<B: InformationBlock>(_ tag: UInt8, _ field: String, as type: B.Type = B.self) throws(IMDecodingError) -> B? {
        guard let value = value(tag) else { return nil }
        do throws(IMDecodingError) {
            return try B(tlvValue: value)
        } catch {
            throw error.within(field)
        }
    }

    func requiredBlock<B: InformationBlock>(_ tag: UInt8, _ field: String, as type: B.Type = B.self) throws(IMDecodingError) -> B {
        guard let b: B = try block(tag, field) else { throw IMDecodingError(.missingField, field: field) }
        return b
    }

    /// An array of IBs (spec: TLV array; a list is accepted too).
    func blocks<B: InformationBlock>(_ tag: UInt8, _ field: String, as type: B.Type = B.self) throws(IMDecodingError) -> [B]? {
        guard let value = value(tag) else { return nil }
        let items: [TLVElement]
        switch value {
        case .array(let m), .list(let m): items = m
        default: throw IMDecodingError(.wrongType(expected: "an array"), field: field)
        }
        var result: [B] = []
        result.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            do throws(IMDecodingError) {
                result.append(try B(tlvValue: item.value))
            } catch {
                throw error.within("\(field)[\(index)]")
            }
        }
        return result
    }

    func requiredBlocks<B: InformationBlock>(_ tag: UInt8, _ field: String, as type: B.Type = B.self) throws(IMDecodingError) -> [B] {
        guard let b: [B] = try blocks(tag, field) else { throw IMDecodingError(.missingField, field: field) }
        return b
    }

    /// The InteractionModelRevision of a message; older peers may omit it.
    func revision() throws(IMDecodingError) -> UInt8 {
        try uint(interactionModelRevisionTag, "interactionModelRevision") ?? currentInteractionModelRevision
    }
}

/// Builds the members of one IB in the order fields are added (ascending tags).
struct IBBuilder {
    private(set) var members: [TLVElement] = []

    mutating func add(_ tag: UInt8, _ value: TLVValue?) {
        if let value { members.append(.context(tag, value)) }
    }

    mutating func add<T: FixedWidthInteger & UnsignedInteger>(_ tag: UInt8, uint value: T?) {
        if let value { members.append(.context(tag, .unsigned(UInt64(value)))) }
    }

    mutating func add(_ tag: UInt8, bool value: Bool?) {
        if let value { members.append(.context(tag, .bool(value))) }
    }

    mutating func add(_ tag: UInt8, block: (some InformationBlock)?) {
        if let block { members.append(.context(tag, block.tlvValue)) }
    }

    /// An array of IBs; omitted when `omitIfEmpty` and there are none.
    mutating func add(_ tag: UInt8, blocks: [some InformationBlock], omitIfEmpty: Bool) {
        if blocks.isEmpty && omitIfEmpty { return }
        members.append(.context(tag, .array(blocks.map { $0.element() })))
    }

    mutating func addRevision(_ revision: UInt8) {
        members.append(.context(interactionModelRevisionTag, .unsigned(UInt64(revision))))
    }

    var structure: TLVValue { .structure(members) }
    var list: TLVValue { .list(members) }
}
