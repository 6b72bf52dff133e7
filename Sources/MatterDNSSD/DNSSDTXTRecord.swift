/// The key/value pairs of a DNS-SD TXT record (RFC 6763 §6), in the order they are sent.
///
/// Keys compare case-insensitively and the first occurrence of a key wins (§6.4). A value
/// is raw bytes; `nil` means the key is present with no `=` at all (a boolean attribute,
/// §6.4), which differs from an empty value (`key=`).
public struct DNSSDTXTRecord: Sendable, Hashable, CustomStringConvertible {
    public struct Entry: Sendable, Hashable {
        public var key: String
        public var value: [UInt8]?

        public init(key: String, value: [UInt8]?) {
            self.key = key
            self.value = value
        }
    }

    /// One TXT string holds at most 255 bytes (a length byte prefixes it).
    public static let maximumEntryLength = 255

    public private(set) var entries: [Entry] = []

    public init() {}

    /// Entries with UTF-8 string values, in order; later duplicates of a key are dropped.
    public init(_ pairs: KeyValuePairs<String, String>) {
        for (key, value) in pairs where self.index(of: key) == nil {
            entries.append(Entry(key: key, value: Array(value.utf8)))
        }
    }

    public init(entries: [Entry]) {
        for entry in entries where index(of: entry.key) == nil {
            self.entries.append(entry)
        }
    }

    /// Decodes the strings of a received TXT record. Never fails: per RFC 6763 §6.4 an
    /// empty string or one starting with `=` is ignored, and so is a repeated key.
    public init(decoding strings: [[UInt8]]) {
        for string in strings {
            guard let first = string.first, first != UInt8(ascii: "=") else { continue }
            let separator = string.firstIndex(of: UInt8(ascii: "="))
            let keyBytes = separator.map { string[..<$0] } ?? string[...]
            // Keys are printable US-ASCII (§6.4); anything else cannot be looked up by name.
            guard keyBytes.allSatisfy({ (UInt8(ascii: " ")...UInt8(ascii: "~")).contains($0) }) else { continue }
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard index(of: key) == nil else { continue }
            let value = separator.map { Array(string[string.index(after: $0)...]) }
            entries.append(Entry(key: key, value: value))
        }
    }

    public var isEmpty: Bool { entries.isEmpty }

    public var keys: [String] { entries.map(\.key) }

    /// The value of `key` as UTF-8 text (`""` for a boolean attribute); `nil` when absent
    /// or not valid UTF-8.
    public subscript(key: String) -> String? {
        get {
            guard let entry = index(of: key).map({ entries[$0] }) else { return nil }
            guard let value = entry.value else { return "" }
            return String(validating: value, as: UTF8.self)
        }
        set {
            if let newValue {
                setValue(Array(newValue.utf8), forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// Whether `key` is present (with or without a value).
    public func contains(_ key: String) -> Bool { index(of: key) != nil }

    /// The raw value of `key`: `.some(nil)` for a boolean attribute, `nil` when absent.
    public func rawValue(forKey key: String) -> [UInt8]?? {
        index(of: key).map { entries[$0].value }
    }

    /// Sets `key` in place (keeping its position) or appends it.
    public mutating func setValue(_ value: [UInt8]?, forKey key: String) {
        if let index = index(of: key) {
            entries[index].value = value
        } else {
            entries.append(Entry(key: key, value: value))
        }
    }

    public mutating func removeValue(forKey key: String) {
        entries.removeAll { Self.keysEqual($0.key, key) }
    }

    /// The wire strings, `key=value` or `key`, in order.
    public func encoded() -> [[UInt8]] {
        entries.map { entry in
            var bytes = Array(entry.key.utf8)
            if let value = entry.value {
                bytes.append(UInt8(ascii: "="))
                bytes.append(contentsOf: value)
            }
            return bytes
        }
    }

    /// Checks every entry against RFC 6763 §6: a non-empty printable-ASCII key without
    /// `=`, and at most 255 bytes per string.
    public func validate() throws(DNSSDError) {
        for entry in entries {
            let key = Array(entry.key.utf8)
            guard !key.isEmpty else { throw .invalidTXT(key: entry.key, reason: "empty key") }
            guard key.allSatisfy({ (UInt8(ascii: " ")...UInt8(ascii: "~")).contains($0) && $0 != UInt8(ascii: "=") }) else {
                throw .invalidTXT(key: entry.key, reason: "keys are printable ASCII without '='")
            }
            let length = key.count + (entry.value.map { $0.count + 1 } ?? 0)
            guard length <= Self.maximumEntryLength else {
                throw .invalidTXT(key: entry.key, reason: "\(length) bytes, at most \(Self.maximumEntryLength)")
            }
        }
    }

    public var description: String {
        let parts = entries.map { entry -> String in
            guard let value = entry.value else { return entry.key }
            return "\(entry.key)=\(String(decoding: value, as: UTF8.self))"
        }
        return "[" + parts.joined(separator: ", ") + "]"
    }

    private func index(of key: String) -> Int? {
        entries.firstIndex { Self.keysEqual($0.key, key) }
    }

    /// ASCII case-insensitive comparison (§6.4: "case insensitive" keys).
    static func keysEqual(_ a: String, _ b: String) -> Bool {
        let x = a.utf8, y = b.utf8
        guard x.count == y.count else { return false }
        return zip(x, y).allSatisfy { asciiLower($0) == asciiLower($1) }
    }

    private static func asciiLower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte - UInt8(ascii: "A") + UInt8(ascii: "a") : byte
    }
}
