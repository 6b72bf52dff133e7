// A JSON reader that keeps numbers as written: node dumps hold uint64 values (node IDs,
// extended addresses) that a Double-based parser would round. Depth and size are bounded.

/// One JSON value; objects keep their key order.
public indirect enum DumpJSON: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number's text, exactly as in the file.
    case number(String)
    case string(String)
    case array([DumpJSON])
    case object([(key: String, value: DumpJSON)])

    public static func == (a: DumpJSON, b: DumpJSON) -> Bool {
        switch (a, b) {
        case (.null, .null): true
        case (.bool(let x), .bool(let y)): x == y
        case (.number(let x), .number(let y)): x == y
        case (.string(let x), .string(let y)): x == y
        case (.array(let x), .array(let y)): x == y
        case (.object(let x), .object(let y)): x.map(\.key) == y.map(\.key) && x.map(\.value) == y.map(\.value)
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .number(let n): hasher.combine(n)
        case .string(let s): hasher.combine(s)
        case .array(let items): hasher.combine(items)
        case .object(let entries): for e in entries { hasher.combine(e.key); hasher.combine(e.value) }
        }
    }

    public subscript(_ key: String) -> DumpJSON? {
        if case .object(let entries) = self { return entries.first { $0.key == key }?.value }
        return nil
    }

    /// How the value reads in a message.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number(let n): n
        case .string(let s): "the string \"\(s.count > 40 ? String(s.prefix(40)) + "…" : s)\""
        case .array: "a list"
        case .object: "an object"
        }
    }

    /// An integer number: sign and magnitude, nil for fractions and exponents.
    public var integer: (negative: Bool, magnitude: UInt64)? {
        guard case .number(let text) = self else { return nil }
        let negative = text.hasPrefix("-")
        guard let magnitude = UInt64(negative ? String(text.dropFirst()) : text) else { return nil }
        return (negative, magnitude)
    }

    public var double: Double? {
        if case .number(let text) = self { return Double(text) }
        return nil
    }
}

public struct DumpJSONError: Error, CustomStringConvertible {
    public var offset: Int
    public var message: String
    public var description: String { "byte \(offset): \(message)" }
}

/// Recursive descent over UTF-8 bytes (RFC 8259).
struct DumpJSONParser {
    private let bytes: [UInt8]
    private var i = 0
    static let maxDepth = 64

    init(_ text: String) { bytes = Array(text.utf8) }

    static func parse(_ text: String) throws(DumpJSONError) -> DumpJSON {
        var parser = DumpJSONParser(text)
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.i == parser.bytes.count else { throw parser.failure("expected the end of the document") }
        return value
    }

    private func failure(_ message: String) -> DumpJSONError { DumpJSONError(offset: i, message: message) }

    private mutating func skipSpace() {
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
    }

    private mutating func literal(_ word: String, _ value: DumpJSON) throws(DumpJSONError) -> DumpJSON {
        let w = Array(word.utf8)
        guard i + w.count <= bytes.count, Array(bytes[i..<i + w.count]) == w else { throw failure("expected a JSON value") }
        i += w.count
        return value
    }

    private mutating func value(depth: Int) throws(DumpJSONError) -> DumpJSON {
        guard depth < Self.maxDepth else { throw failure("nested more than \(Self.maxDepth) deep") }
        skipSpace()
        guard i < bytes.count else { throw failure("unexpected end of the document") }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            var entries: [(key: String, value: DumpJSON)] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(entries) }
            while true {
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw failure("expected a key in quotes") }
                let key = try string()
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw failure("expected ':'") }
                i += 1
                entries.append((key, try value(depth: depth + 1)))
                skipSpace()
                guard i < bytes.count else { throw failure("unexpected end inside an object") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(entries) }
                throw failure("expected ',' or '}'")
            }
        case UInt8(ascii: "["):
            i += 1
            var items: [DumpJSON] = []
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            while true {
                items.append(try value(depth: depth + 1))
                skipSpace()
                guard i < bytes.count else { throw failure("unexpected end inside a list") }
                if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
                if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
                throw failure("expected ',' or ']'")
            }
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        default:
            let start = i
            while i < bytes.count, "+-0123456789.eE".utf8.contains(bytes[i]) { i += 1 }
            let text = String(decoding: bytes[start..<i], as: UTF8.self)
            guard !text.isEmpty, Double(text) != nil else { i = start; throw failure("expected a JSON value") }
            return .number(text)
        }
    }

    private mutating func string() throws(DumpJSONError) -> String {
        i += 1  // opening quote
        var out: [UInt8] = []
        while i < bytes.count {
            let c = bytes[i]
            i += 1
            switch c {
            case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard i < bytes.count else { break }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "u"):
                    guard i + 4 <= bytes.count, var code = UInt32(String(decoding: bytes[i..<i + 4], as: UTF8.self), radix: 16) else {
                        throw failure("expected four hex digits after \\u")
                    }
                    i += 4
                    // A surrogate pair (\uD83D\uDE00) is one scalar.
                    if (0xD800...0xDBFF).contains(code), i + 6 <= bytes.count, bytes[i] == UInt8(ascii: "\\"),
                        bytes[i + 1] == UInt8(ascii: "u"),
                        let low = UInt32(String(decoding: bytes[i + 2..<i + 6], as: UTF8.self), radix: 16), (0xDC00...0xDFFF).contains(low)
                    {
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                    }
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(code) ?? "\u{FFFD}")).utf8))
                default: out.append(e)
                }
            default: out.append(c)
            }
        }
        throw failure("unterminated string")
    }
}
