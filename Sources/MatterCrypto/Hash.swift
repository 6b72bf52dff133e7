import Crypto

/// Crypto_Hash and Crypto_HMAC (Matter Core spec 3.3, 3.4): SHA-256 and HMAC-SHA256.
public enum MatterHash {
    public static let sha256Length = 32

    /// Crypto_Hash(M) = SHA-256(M).
    public static func sha256(_ message: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(data: message))
    }

    /// SHA-256 over the concatenation of several parts, without copying them together.
    public static func sha256(concatenating parts: [[UInt8]]) -> [UInt8] {
        var hasher = SHA256()
        for p in parts { hasher.update(data: p) }
        return Array(hasher.finalize())
    }

    /// Crypto_HMAC(K, M) = HMAC-SHA256(K, M).
    public static func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
    }

    /// Verifies an HMAC-SHA256 tag in constant time.
    public static func hmacSHA256IsValid(_ tag: [UInt8], key: [UInt8], message: [UInt8]) -> Bool {
        constantTimeEquals(tag, hmacSHA256(key: key, message: message))
    }
}
