import Foundation
import MatterCrypto

/// Bearer secrets the relay hands out. Only their SHA-256 digests are stored,
/// so a copy of the database does not let anyone connect.
enum RelayCredentials {
    /// Prefix of a home token (controllers of that home).
    static let homeTokenPrefix = "mrh_"
    /// Prefix of a device credential.
    static let deviceCredentialPrefix = "mrd_"

    /// A fresh secret: the prefix and 32 random bytes in unpadded base64url.
    static func generate(prefix: String) -> String {
        prefix + base64URL(SecureRandom.bytes(32))
    }

    /// The digest stored for a secret, in lowercase hex.
    static func digest(_ secret: String) -> String {
        hex(MatterHash.sha256(Array(secret.utf8)))
    }

    /// Compares two secrets without an early exit on the first differing byte.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = MatterHash.sha256(Array(a.utf8))
        let y = MatterHash.sha256(Array(b.utf8))
        var difference: UInt8 = 0
        for i in 0..<min(x.count, y.count) { difference |= x[i] ^ y[i] }
        return difference == 0 && x.count == y.count
    }

    /// The bearer token of an `Authorization: Bearer <token>` header value.
    static func bearer(_ header: String?) -> String? {
        guard let header else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        // A bounded, printable token: anything else cannot be one we issued.
        guard !token.isEmpty, token.utf8.count <= 256, token.utf8.allSatisfy({ (UInt8(ascii: "!")...UInt8(ascii: "~")).contains($0) })
        else { return nil }
        return token
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var i = 0
        while i + 2 < bytes.count {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let n = UInt32(bytes[i]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
        } else if rest == 2 {
            let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
