// Equality of TLV values is equality of what they encode to: floats compare by
// bit pattern (so NaN == NaN with the same payload, and 0.0 != -0.0) and
// strings by their UTF-8 octets (so differently normalised text differs). This
// keeps Hashable lawful and makes `decode(encode(x)) == x` meaningful.

extension TLVValue {
    public static func == (lhs: TLVValue, rhs: TLVValue) -> Bool {
        switch (lhs, rhs) {
        case (.signed(let a), .signed(let b)): a == b
        case (.unsigned(let a), .unsigned(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.utf8(let a), .utf8(let b)): a.utf8.elementsEqual(b.utf8)
        case (.bytes(let a), .bytes(let b)): a == b
        case (.null, .null): true
        case (.structure(let a), .structure(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.list(let a), .list(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .signed(let v): hasher.combine(0 as UInt8); hasher.combine(v)
        case .unsigned(let v): hasher.combine(1 as UInt8); hasher.combine(v)
        case .bool(let v): hasher.combine(2 as UInt8); hasher.combine(v)
        case .float(let v): hasher.combine(3 as UInt8); hasher.combine(v.bitPattern)
        case .double(let v): hasher.combine(4 as UInt8); hasher.combine(v.bitPattern)
        case .utf8(let v):
            hasher.combine(5 as UInt8)
            hasher.combine(v.utf8.count)
            for octet in v.utf8 { hasher.combine(octet) }
        case .bytes(let v): hasher.combine(6 as UInt8); hasher.combine(v)
        case .null: hasher.combine(7 as UInt8)
        case .structure(let m): hasher.combine(8 as UInt8); hasher.combine(m)
        case .array(let m): hasher.combine(9 as UInt8); hasher.combine(m)
        case .list(let m): hasher.combine(10 as UInt8); hasher.combine(m)
        }
    }
}
