/// Appends Matter TLV (spec Appendix A) to a byte buffer.
///
/// The writer always picks the shortest form: the narrowest integer width and
/// string length field, the 2-octet profile tag and 6-octet fully qualified tag
/// when the tag number fits in 16 bits. Multi-octet fields are little-endian
/// (spec A.6).
///
/// It writes what it is given: it does not check structure-member uniqueness or
/// that array members are anonymous; the reader does.
public struct TLVWriter: Sendable {
    /// Everything written so far.
    public private(set) var bytes: [UInt8]
    /// Containers started with `start…` and not yet ended.
    public private(set) var depth: Int = 0

    public init(reservingCapacity capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// True when every started container has been ended.
    public var isBalanced: Bool { depth == 0 }

    // MARK: Whole elements

    /// Appends `element` and, for containers, all of its members.
    public mutating func write(_ element: TLVElement) {
        put(tag: element.tag, value: element.value)
    }

    /// Appends one element. Containers are written whole, members included.
    public mutating func put(tag: TLVTag = .anonymous, value: TLVValue) {
        guard let members = value.members else {
            putScalar(tag: tag, value: value)
            return
        }
        // Iterative so that a deep tree cannot exhaust the stack.
        startContainer(tag: tag, type: Self.containerTypeCode(value))
        var stack: [(members: [TLVElement], next: Int)] = [(members, 0)]
        while let top = stack.last {
            guard top.next < top.members.count else {
                endContainer()
                stack.removeLast()
                continue
            }
            let member = top.members[top.next]
            stack[stack.count - 1].next += 1
            if let inner = member.value.members {
                startContainer(tag: member.tag, type: Self.containerTypeCode(member.value))
                stack.append((inner, 0))
            } else {
                putScalar(tag: member.tag, value: member.value)
            }
        }
    }

    // MARK: Streaming containers

    public mutating func startStructure(tag: TLVTag = .anonymous) {
        startContainer(tag: tag, type: TLVElementTypeCode.structure)
    }

    public mutating func startArray(tag: TLVTag = .anonymous) {
        startContainer(tag: tag, type: TLVElementTypeCode.array)
    }

    public mutating func startList(tag: TLVTag = .anonymous) {
        startContainer(tag: tag, type: TLVElementTypeCode.list)
    }

    /// Closes the innermost open container. Does nothing when none is open, so
    /// the output never holds an unmatched End of Container (check `isBalanced`).
    public mutating func endContainer() {
        guard depth > 0 else { return }
        depth -= 1
        bytes.append(TLVElementTypeCode.endOfContainer)
    }

    /// Writes a structure whose members `body` appends.
    public mutating func structure<E: Error>(
        tag: TLVTag = .anonymous, _ body: (inout TLVWriter) throws(E) -> Void
    ) throws(E) {
        startStructure(tag: tag)
        try body(&self)
        endContainer()
    }

    /// Writes an array whose members `body` appends (they must be anonymous).
    public mutating func array<E: Error>(
        tag: TLVTag = .anonymous, _ body: (inout TLVWriter) throws(E) -> Void
    ) throws(E) {
        startArray(tag: tag)
        try body(&self)
        endContainer()
    }

    /// Writes a list whose members `body` appends.
    public mutating func list<E: Error>(
        tag: TLVTag = .anonymous, _ body: (inout TLVWriter) throws(E) -> Void
    ) throws(E) {
        startList(tag: tag)
        try body(&self)
        endContainer()
    }

    // MARK: Encoding

    private static func containerTypeCode(_ value: TLVValue) -> UInt8 {
        switch value {
        case .array: TLVElementTypeCode.array
        case .list: TLVElementTypeCode.list
        default: TLVElementTypeCode.structure
        }
    }

    private mutating func startContainer(tag: TLVTag, type: UInt8) {
        putHeader(tag: tag, type: type)
        depth += 1
    }

    private mutating func putScalar(tag: TLVTag, value: TLVValue) {
        switch value {
        case .signed(let v):
            let width = tlvWidthCode(signed: v)
            putHeader(tag: tag, type: TLVElementTypeCode.signedInt1 | width)
            putLittleEndian(UInt64(bitPattern: v), octets: 1 << width)
        case .unsigned(let v):
            let width = tlvWidthCode(unsigned: v)
            putHeader(tag: tag, type: TLVElementTypeCode.unsignedInt1 | width)
            putLittleEndian(v, octets: 1 << width)
        case .bool(let v):
            putHeader(tag: tag, type: v ? TLVElementTypeCode.booleanTrue : TLVElementTypeCode.booleanFalse)
        case .float(let v):
            putHeader(tag: tag, type: TLVElementTypeCode.float32)
            putLittleEndian(UInt64(v.bitPattern), octets: 4)
        case .double(let v):
            putHeader(tag: tag, type: TLVElementTypeCode.float64)
            putLittleEndian(v.bitPattern, octets: 8)
        case .utf8(let s):
            putString(tag: tag, firstType: TLVElementTypeCode.utf8Length1, octets: s.utf8)
        case .bytes(let b):
            putString(tag: tag, firstType: TLVElementTypeCode.octetsLength1, octets: b)
        case .null:
            putHeader(tag: tag, type: TLVElementTypeCode.null)
        case .structure, .array, .list:
            // Not reached: put(tag:value:) routes containers elsewhere.
            put(tag: tag, value: value)
        }
    }

    private mutating func putString(tag: TLVTag, firstType: UInt8, octets: some Collection<UInt8>) {
        let count = UInt64(octets.count)
        let width = tlvWidthCode(unsigned: count)
        putHeader(tag: tag, type: firstType | width)
        putLittleEndian(count, octets: 1 << width)
        bytes.append(contentsOf: octets)
    }

    /// Control octet plus tag octets, the tag in its shortest form.
    private mutating func putHeader(tag: TLVTag, type: UInt8) {
        switch tag {
        case .anonymous:
            bytes.append(TLVTagControl.anonymous | type)
        case .context(let n):
            bytes.append(TLVTagControl.contextSpecific | type)
            bytes.append(n)
        case .commonProfile(let n):
            putProfileTag(n, short: TLVTagControl.commonProfile2, long: TLVTagControl.commonProfile4, type: type)
        case .implicitProfile(let n):
            putProfileTag(n, short: TLVTagControl.implicitProfile2, long: TLVTagControl.implicitProfile4, type: type)
        case .fullyQualified(let vendorID, let profileNumber, let n):
            let short = n <= UInt32(UInt16.max)
            bytes.append((short ? TLVTagControl.fullyQualified6 : TLVTagControl.fullyQualified8) | type)
            putLittleEndian(UInt64(vendorID), octets: 2)
            putLittleEndian(UInt64(profileNumber), octets: 2)
            putLittleEndian(UInt64(n), octets: short ? 2 : 4)
        }
    }

    private mutating func putProfileTag(_ n: UInt32, short: UInt8, long: UInt8, type: UInt8) {
        let fits16 = n <= UInt32(UInt16.max)
        bytes.append((fits16 ? short : long) | type)
        putLittleEndian(UInt64(n), octets: fits16 ? 2 : 4)
    }

    private mutating func putLittleEndian(_ value: UInt64, octets: Int) {
        var v = value
        for _ in 0..<octets {
            bytes.append(UInt8(truncatingIfNeeded: v))
            v >>= 8
        }
    }
}

extension TLVElement {
    /// The element's TLV encoding, shortest forms throughout.
    public func encoded() -> [UInt8] {
        var writer = TLVWriter()
        writer.write(self)
        return writer.bytes
    }
}
