/// TXT keys and value rules shared by Matter's commissionable and operational records
/// (Matter Core §4.3.4 "Common TXT Key/Value Pairs"), and the formatting both use.
enum MatterTXT {
    /// The largest SII / SAI the specification allows: one hour, in milliseconds.
    static let maximumSessionInterval: UInt32 = 3_600_000

    /// The MRP and transport parameters every Matter advertisement may carry.
    struct Common: Sendable, Hashable {
        var sessionIdleInterval: UInt32?
        var sessionActiveInterval: UInt32?
        var sessionActiveThreshold: UInt16?
        var tcpSupport: UInt8?

        func validate() throws(DNSSDError) {
            if let value = sessionIdleInterval, value > MatterTXT.maximumSessionInterval {
                throw .invalidParameter(name: "SII", reason: "\(value) ms is above \(MatterTXT.maximumSessionInterval)")
            }
            if let value = sessionActiveInterval, value > MatterTXT.maximumSessionInterval {
                throw .invalidParameter(name: "SAI", reason: "\(value) ms is above \(MatterTXT.maximumSessionInterval)")
            }
        }

        func append(to txt: inout DNSSDTXTRecord) {
            if let value = sessionIdleInterval { txt["SII"] = String(value) }
            if let value = sessionActiveInterval { txt["SAI"] = String(value) }
            if let value = sessionActiveThreshold { txt["SAT"] = String(value) }
            if let value = tcpSupport { txt["T"] = String(value) }
        }

        init(sessionIdleInterval: UInt32?, sessionActiveInterval: UInt32?, sessionActiveThreshold: UInt16?, tcpSupport: UInt8?) {
            self.sessionIdleInterval = sessionIdleInterval
            self.sessionActiveInterval = sessionActiveInterval
            self.sessionActiveThreshold = sessionActiveThreshold
            self.tcpSupport = tcpSupport
        }

        init(decoding txt: DNSSDTXTRecord) throws(DNSSDError) {
            sessionIdleInterval = try MatterTXT.decimal(txt, "SII", as: UInt32.self)
            sessionActiveInterval = try MatterTXT.decimal(txt, "SAI", as: UInt32.self)
            sessionActiveThreshold = try MatterTXT.decimal(txt, "SAT", as: UInt16.self)
            tcpSupport = try MatterTXT.decimal(txt, "T", as: UInt8.self)
            try validate()
        }
    }

    /// A 64-bit value as Matter writes it in names: 16 uppercase hex digits.
    static func hex16(_ value: UInt64) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Exactly 16 hex digits (either case) as a 64-bit value.
    static func parseHex16<S: StringProtocol>(_ text: S) -> UInt64? {
        guard text.utf8.count == 16, text.utf8.allSatisfy(isHexDigit) else { return nil }
        return UInt64(text, radix: 16)
    }

    static func isHexDigit(_ byte: UInt8) -> Bool { hexDigits.contains(byte) }

    private static let hexDigits = Set("0123456789ABCDEFabcdef".utf8)

    /// Digits only (no sign, no spaces), within `T`'s range.
    static func parseDecimal<T: FixedWidthInteger & UnsignedInteger, S: StringProtocol>(_ text: S, as: T.Type) -> T? {
        guard !text.isEmpty, text.utf8.count <= 20,
            text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else { return nil }
        return T(text, radix: 10)
    }

    /// The decimal value of `key`, `nil` when absent; a typed error when present but not a
    /// number in range.
    static func decimal<T: FixedWidthInteger & UnsignedInteger>(
        _ txt: DNSSDTXTRecord, _ key: String, as type: T.Type
    ) throws(DNSSDError) -> T? {
        guard txt.contains(key) else { return nil }
        guard let text = txt[key], let value = parseDecimal(text, as: type) else {
            throw .malformedRecord(field: key, reason: "expected a decimal number up to \(T.max)")
        }
        return value
    }

    /// The UTF-8 text of `key`, `nil` when absent, at most `maximumBytes` long.
    static func text(_ txt: DNSSDTXTRecord, _ key: String, maximumBytes: Int) throws(DNSSDError) -> String? {
        guard txt.contains(key) else { return nil }
        guard let text = txt[key] else { throw .malformedRecord(field: key, reason: "not UTF-8") }
        guard text.utf8.count <= maximumBytes else {
            throw .malformedRecord(field: key, reason: "\(text.utf8.count) bytes, at most \(maximumBytes)")
        }
        return text
    }
}
