// Bounds-checked little-endian reading and writing for the message layer.
// Every read on untrusted bytes goes through ByteCursor, so a short or hostile
// datagram ends in a typed error, never a trap.

/// Reads little-endian integers and byte runs from a buffer, failing with
/// `MessageCodecError.truncated` instead of reading past the end.
struct ByteCursor {
    let bytes: [UInt8]
    private(set) var offset: Int

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    mutating func readUInt8(_ field: StaticString) throws(MessageCodecError) -> UInt8 {
        guard remaining >= 1 else { throw .truncated(field: "\(field)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func readUInt16(_ field: StaticString) throws(MessageCodecError) -> UInt16 {
        guard remaining >= 2 else { throw .truncated(field: "\(field)") }
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func readUInt32(_ field: StaticString) throws(MessageCodecError) -> UInt32 {
        guard remaining >= 4 else { throw .truncated(field: "\(field)") }
        var v: UInt32 = 0
        for i in 0..<4 { v |= UInt32(bytes[offset + i]) << (8 * UInt32(i)) }
        offset += 4
        return v
    }

    mutating func readUInt64(_ field: StaticString) throws(MessageCodecError) -> UInt64 {
        guard remaining >= 8 else { throw .truncated(field: "\(field)") }
        var v: UInt64 = 0
        for i in 0..<8 { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        offset += 8
        return v
    }

    mutating func readBytes(_ count: Int, _ field: StaticString) throws(MessageCodecError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw .truncated(field: "\(field)") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    /// The bytes from the current offset to the end.
    mutating func readRest() -> [UInt8] {
        guard offset < bytes.count else { return [] }
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE(_ v: UInt16) {
        append(UInt8(truncatingIfNeeded: v))
        append(UInt8(truncatingIfNeeded: v >> 8))
    }

    mutating func appendLE(_ v: UInt32) {
        for i in 0..<4 { append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i)))) }
    }

    mutating func appendLE(_ v: UInt64) {
        for i in 0..<8 { append(UInt8(truncatingIfNeeded: v >> (8 * UInt64(i)))) }
    }
}
