/// A streaming, non-trapping reader of Matter TLV (spec Appendix A).
///
/// Walk a container like this:
///
///     var reader = TLVReader(bytes)
///     guard let header = try reader.next(), header.type == .structure else { … }
///     try reader.enterContainer()
///     while let member = try reader.next() {
///         if member.tag == .context(0) { let v = try reader.readValue() } // others skipped by next()
///     }
///     try reader.exitContainer()
///
/// `next()` skips whatever part of the previous element was not consumed. It
/// returns nil at the End of Container of the entered container (until
/// `exitContainer()`), and at the end of input when no container is open.
/// After a thrown error the reader's state is unspecified; discard it.
public struct TLVReader: Sendable {
    private let bytes: [UInt8]
    /// Position of the next unread octet.
    public private(set) var offset: Int = 0
    /// Most containers that may be open at once.
    public let maxDepth: Int
    /// The profile that implicit-profile tags belong to, if the caller knows it.
    /// Tags are reported as read (`.implicitProfile(n)`); resolve them with
    /// `TLVTag.resolvingImplicitProfile(_:)`.
    public let implicitProfile: UInt32?

    /// Types of the containers entered and not yet exited, innermost last.
    private var containers: [TLVElementType] = []
    /// The End of Container of the innermost container has been consumed.
    private var containerEnded = false
    /// The element `next()` returned whose value is not yet consumed.
    private var current: Current?

    private struct Current: Sendable {
        var header: TLVElementHeader
        var typeCode: UInt8
        /// Start and end of the value octets (for strings, after the length field).
        var valueStart: Int
        var valueEnd: Int
    }

    public init(_ bytes: some Collection<UInt8>, maxDepth: Int = 16, implicitProfile: UInt32? = nil) {
        self.bytes = Array(bytes)
        self.maxDepth = maxDepth
        self.implicitProfile = implicitProfile
    }

    /// Containers entered and not yet exited.
    public var depth: Int { containers.count }

    /// True when all input has been consumed.
    public var isAtEnd: Bool { offset >= bytes.count && current == nil }

    /// The header of the element last returned by `next()` and not yet consumed.
    public var currentHeader: TLVElementHeader? { current?.header }

    // MARK: Walking

    /// Reads the next element's control octet, tag and length field.
    public mutating func next() throws(TLVError) -> TLVElementHeader? {
        if current != nil { try skip() }
        if containerEnded { return nil }
        guard offset < bytes.count else {
            if containers.isEmpty { return nil }
            throw .missingEndOfContainer
        }
        let control = bytes[offset]
        let typeCode = control & TLVElementTypeCode.mask
        if typeCode == TLVElementTypeCode.endOfContainer {
            guard control & TLVTagControl.mask == TLVTagControl.anonymous else { throw .badControlOctet(control) }
            guard !containers.isEmpty else { throw .unexpectedEndOfContainer }
            offset += 1
            containerEnded = true
            return nil
        }
        guard let type = Self.elementType(typeCode) else { throw .badControlOctet(control) }

        var position = offset + 1
        let tag = try readTag(control: control, at: &position)
        try checkTagAllowed(tag)

        let valueStart: Int
        let valueEnd: Int
        switch typeCode {
        case TLVElementTypeCode.utf8Length1...TLVElementTypeCode.utf8Length1 + 3,
            TLVElementTypeCode.octetsLength1...TLVElementTypeCode.octetsLength1 + 3:
            let length = try readLittleEndian(octets: 1 << TLVElementTypeCode.widthCode(typeCode), at: &position)
            guard length <= UInt64(bytes.count - position) else { throw .lengthPastEnd }
            valueStart = position
            valueEnd = position + Int(length)
        default:
            let size = Self.fixedValueSize(typeCode)
            guard size <= bytes.count - position else { throw .truncated }
            valueStart = position
            valueEnd = position + size
        }
        offset = valueStart
        let header = TLVElementHeader(tag: tag, type: type)
        current = Current(header: header, typeCode: typeCode, valueStart: valueStart, valueEnd: valueEnd)
        return header
    }

    /// Enters the current element, which must be a container; `next()` then
    /// walks its members.
    public mutating func enterContainer() throws(TLVError) {
        guard let element = current else { throw .noCurrentElement }
        guard element.header.type.isContainer else { throw .notAContainer }
        guard containers.count < maxDepth else { throw .nestingTooDeep(limit: maxDepth) }
        containers.append(element.header.type)
        current = nil
        containerEnded = false
    }

    /// Skips the rest of the innermost entered container, through its End of
    /// Container, and returns to the enclosing level.
    public mutating func exitContainer() throws(TLVError) {
        guard !containers.isEmpty else { throw .noOpenContainer }
        while try next() != nil {}
        containers.removeLast()
        containerEnded = false
    }

    /// Skips the current element, a container with everything inside it.
    /// Nesting is checked against `maxDepth` on the way.
    public mutating func skip() throws(TLVError) {
        guard let element = current else { throw .noCurrentElement }
        guard element.header.type.isContainer else {
            offset = element.valueEnd
            current = nil
            return
        }
        // Iterative: every member is consumed before the next `next()`, so
        // `next()` never re-enters `skip()` here.
        let outerDepth = containers.count
        try enterContainer()
        while containers.count > outerDepth {
            if let header = try next() {
                if header.type.isContainer {
                    try enterContainer()
                } else if let scalar = current {
                    offset = scalar.valueEnd
                    current = nil
                }
            } else {
                try exitContainer()
            }
        }
    }

    // MARK: Values

    /// Reads the current element's value; for a container, the whole subtree.
    public mutating func readValue() throws(TLVError) -> TLVValue {
        guard let element = current else { throw .noCurrentElement }
        guard element.header.type.isContainer else { return try readScalar(element) }

        // Iterative tree build: one frame per open container.
        var stack: [(tag: TLVTag, type: TLVElementType, members: [TLVElement])] = []
        stack.append((element.header.tag, element.header.type, []))
        try enterContainer()
        while true {
            if let header = try next() {
                if header.type.isContainer {
                    try enterContainer()
                    stack.append((header.tag, header.type, []))
                } else if let scalar = current {
                    let value = try readScalar(scalar)
                    stack[stack.count - 1].members.append(TLVElement(tag: header.tag, value))
                }
            } else {
                try exitContainer()
                let done = stack.removeLast()
                let value = try Self.containerValue(type: done.type, members: done.members)
                guard !stack.isEmpty else { return value }
                stack[stack.count - 1].members.append(TLVElement(tag: done.tag, value))
            }
        }
    }

    /// Reads the current element with its tag.
    public mutating func readElement() throws(TLVError) -> TLVElement {
        guard let element = current else { throw .noCurrentElement }
        let value = try readValue()
        return TLVElement(tag: element.header.tag, value)
    }

    private mutating func readScalar(_ element: Current) throws(TLVError) -> TLVValue {
        let start = element.valueStart
        let end = element.valueEnd
        var position = start
        let value: TLVValue
        switch element.typeCode {
        case TLVElementTypeCode.signedInt1...TLVElementTypeCode.signedInt1 + 3:
            let octets = end - start
            let raw = try readLittleEndian(octets: octets, at: &position)
            // Sign-extend from the element's width.
            let shift = UInt64(64 - 8 * octets)
            value = .signed(Int64(bitPattern: raw << shift) >> shift)
        case TLVElementTypeCode.unsignedInt1...TLVElementTypeCode.unsignedInt1 + 3:
            value = .unsigned(try readLittleEndian(octets: end - start, at: &position))
        case TLVElementTypeCode.booleanFalse:
            value = .bool(false)
        case TLVElementTypeCode.booleanTrue:
            value = .bool(true)
        case TLVElementTypeCode.float32:
            value = .float(Float(bitPattern: UInt32(truncatingIfNeeded: try readLittleEndian(octets: 4, at: &position))))
        case TLVElementTypeCode.float64:
            value = .double(Double(bitPattern: try readLittleEndian(octets: 8, at: &position)))
        case TLVElementTypeCode.utf8Length1...TLVElementTypeCode.utf8Length1 + 3:
            guard let string = String(validating: bytes[start..<end], as: UTF8.self) else { throw .invalidUTF8 }
            value = .utf8(string)
        case TLVElementTypeCode.octetsLength1...TLVElementTypeCode.octetsLength1 + 3:
            value = .bytes(Array(bytes[start..<end]))
        default:
            value = .null
        }
        offset = end
        current = nil
        return value
    }

    private static func containerValue(type: TLVElementType, members: [TLVElement]) throws(TLVError) -> TLVValue {
        switch type {
        case .array: return .array(members)
        case .list: return .list(members)
        default:
            // Spec A.11: the members of a structure carry distinct tags.
            if members.count > 1 {
                var seen = Set<TLVTag>(minimumCapacity: members.count)
                for member in members where !seen.insert(member.tag).inserted {
                    throw .duplicateTag(member.tag)
                }
            }
            return .structure(members)
        }
    }

    // MARK: Wire details

    private static func elementType(_ code: UInt8) -> TLVElementType? {
        switch code {
        case TLVElementTypeCode.signedInts: .signedInteger
        case TLVElementTypeCode.unsignedInts: .unsignedInteger
        case TLVElementTypeCode.booleanFalse, TLVElementTypeCode.booleanTrue: .boolean
        case TLVElementTypeCode.float32: .float
        case TLVElementTypeCode.float64: .double
        case TLVElementTypeCode.utf8Strings: .utf8String
        case TLVElementTypeCode.octetStrings: .octetString
        case TLVElementTypeCode.null: .null
        case TLVElementTypeCode.structure: .structure
        case TLVElementTypeCode.array: .array
        case TLVElementTypeCode.list: .list
        default: nil  // End of Container is handled by the caller; 0x19...0x1F reserved
        }
    }

    /// Octets of value after the tag for element types without a length field.
    private static func fixedValueSize(_ code: UInt8) -> Int {
        switch code {
        case TLVElementTypeCode.signedInts, TLVElementTypeCode.unsignedInts: 1 << Int(TLVElementTypeCode.widthCode(code))
        case TLVElementTypeCode.float32: 4
        case TLVElementTypeCode.float64: 8
        default: 0  // booleans, null, containers
        }
    }

    private func readTag(control: UInt8, at position: inout Int) throws(TLVError) -> TLVTag {
        let tagControl = control & TLVTagControl.mask
        guard TLVTagControl.tagLength(control) <= bytes.count - position else { throw .truncated }
        switch tagControl {
        case TLVTagControl.anonymous:
            return .anonymous
        case TLVTagControl.contextSpecific:
            return .context(UInt8(truncatingIfNeeded: try readLittleEndian(octets: 1, at: &position)))
        case TLVTagControl.commonProfile2, TLVTagControl.commonProfile4:
            let octets = tagControl == TLVTagControl.commonProfile2 ? 2 : 4
            return .commonProfile(UInt32(truncatingIfNeeded: try readLittleEndian(octets: octets, at: &position)))
        case TLVTagControl.implicitProfile2, TLVTagControl.implicitProfile4:
            let octets = tagControl == TLVTagControl.implicitProfile2 ? 2 : 4
            return .implicitProfile(UInt32(truncatingIfNeeded: try readLittleEndian(octets: octets, at: &position)))
        default:
            let vendorID = UInt16(truncatingIfNeeded: try readLittleEndian(octets: 2, at: &position))
            let profileNumber = UInt16(truncatingIfNeeded: try readLittleEndian(octets: 2, at: &position))
            let octets = tagControl == TLVTagControl.fullyQualified6 ? 2 : 4
            let number = UInt32(truncatingIfNeeded: try readLittleEndian(octets: octets, at: &position))
            return .fullyQualified(vendorID: vendorID, profileNumber: profileNumber, tagNumber: number)
        }
    }

    /// Spec A.2, A.11: structure members are tagged, array
    /// members anonymous; list members and top-level elements may be either.
    private func checkTagAllowed(_ tag: TLVTag) throws(TLVError) {
        switch containers.last {
        case .structure? where tag == .anonymous: throw .invalidTagInContainer(tag)
        case .array? where tag != .anonymous: throw .invalidTagInContainer(tag)
        default: return
        }
    }

    /// Reads `octets` (at most 8) little-endian octets, bounds-checked.
    private func readLittleEndian(octets: Int, at position: inout Int) throws(TLVError) -> UInt64 {
        guard octets >= 0, octets <= 8, octets <= bytes.count - position else { throw .truncated }
        var value: UInt64 = 0
        for i in 0..<octets {
            value |= UInt64(bytes[position + i]) << UInt64(8 * i)
        }
        position += octets
        return value
    }
}
