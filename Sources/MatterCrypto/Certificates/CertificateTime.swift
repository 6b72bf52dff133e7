import SwiftASN1

/// Conversion between Matter epoch seconds (since 2000-01-01T00:00:00Z, spec 3.5.x / 6.5.x) and
/// X.509 UTCTime / GeneralizedTime. Matter's 0 in not-after means "no well-defined expiration",
/// which X.509 spells 99991231235959Z (RFC 5280 4.1.2.5).
enum CertificateTime {
    static let unixOffsetOfMatterEpoch: Int64 = 946_684_800
    static let noExpiry = "99991231235959Z"

    struct Civil: Equatable {
        var year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (m + 9) % 12
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    static func civil(fromMatterEpoch seconds: UInt32) -> Civil {
        let unix = Int64(seconds) + unixOffsetOfMatterEpoch
        let days = Int(unix / 86400)
        let rem = Int(unix % 86400)
        let (y, m, d) = civilFromDays(days)
        return Civil(year: y, month: m, day: d, hour: rem / 3600, minute: rem / 60 % 60, second: rem % 60)
    }

    /// The DER form of a Matter epoch time: UTCTime for 1950...2049, GeneralizedTime otherwise.
    static func encode(_ seconds: UInt32, into s: inout DER.Serializer) {
        let (identifier, text) = encodedNode(seconds)
        s.primitive(identifier, Array(text.utf8))
    }

    static func encodedNode(_ seconds: UInt32) -> (ASN1Identifier, String) {
        if seconds == 0 { return (.generalizedTime, noExpiry) }
        let c = civil(fromMatterEpoch: seconds)
        func two(_ v: Int) -> String { v < 10 ? "0\(v)" : "\(v)" }
        let rest = two(c.month) + two(c.day) + two(c.hour) + two(c.minute) + two(c.second) + "Z"
        if c.year <= 2049 {
            return (.utcTime, two(c.year % 100) + rest)
        }
        return (.generalizedTime, "\(c.year)" + rest)
    }

    /// Parses UTCTime (tag 0x17) or GeneralizedTime (0x18) text in the strict DER form (seconds, 'Z').
    static func decode(_ node: ASN1Node) throws(CertificateError) -> UInt32 {
        let text = try DERReader.primitiveContent(node, "time")
        switch node.identifier {
        case .utcTime: return try decode(generalized: false, text: text)
        case .generalizedTime: return try decode(generalized: true, text: text)
        default: throw .malformed("expected UTCTime or GeneralizedTime")
        }
    }

    static func decode(generalized: Bool, text: [UInt8]) throws(CertificateError) -> UInt32 {
        let digits: [Int]
        guard text.last == UInt8(ascii: "Z") else { throw .malformed("time must end in Z") }
        var ds: [Int] = []
        for ch in text.dropLast() {
            guard ch >= UInt8(ascii: "0"), ch <= UInt8(ascii: "9") else { throw .malformed("time has a non-digit") }
            ds.append(Int(ch - UInt8(ascii: "0")))
        }
        digits = ds
        var year: Int
        var i: Int
        switch (generalized, digits.count) {
        case (false, 12):
            let yy = digits[0] * 10 + digits[1]
            year = yy >= 50 ? 1900 + yy : 2000 + yy
            i = 2
        case (true, 14):
            year = digits[0] * 1000 + digits[1] * 100 + digits[2] * 10 + digits[3]
            i = 4
        default:
            throw .malformed("time has the wrong length")
        }
        func take() -> Int { defer { i += 2 }; return digits[i] * 10 + digits[i + 1] }
        let month = take(), day = take(), hour = take(), minute = take(), second = take()
        if year == 9999, month == 12, day == 31, hour == 23, minute == 59, second == 59 { return 0 }
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else {
            throw .malformed("time out of range")
        }
        let (cy, cm, cd) = civilFromDays(daysFromCivil(year, month, day))
        guard cy == year, cm == month, cd == day else { throw .malformed("no such date") }
        let unix = Int64(daysFromCivil(year, month, day)) * 86400 + Int64(hour * 3600 + minute * 60 + second)
        let matter = unix - unixOffsetOfMatterEpoch
        guard matter >= 0, matter <= Int64(UInt32.max) else { throw .unsupported("time outside the Matter epoch range") }
        return UInt32(matter)
    }
}

/// Matter epoch time ("epoch-s"): seconds since 2000-01-01T00:00:00Z.
public enum MatterEpoch {
    /// Matter epoch seconds for a Unix time, clamped to the UInt32 range.
    public static func seconds(fromUnix unix: Int64) -> UInt32 {
        UInt32(clamping: max(0, unix - CertificateTime.unixOffsetOfMatterEpoch))
    }

    /// Unix seconds for a Matter epoch time.
    public static func unixSeconds(_ matterEpoch: UInt32) -> Int64 {
        Int64(matterEpoch) + CertificateTime.unixOffsetOfMatterEpoch
    }
}
