import COpenSSL
import Crypto

/// Crypto_KDF and Crypto_PBKDF (Matter Core spec 3.8, 3.9).
public enum KeyDerivation {
    /// Crypto_KDF(inputKey, salt, info, len) = HKDF-SHA256 (RFC 5869). `length` is in bytes
    /// and at most 255 * 32.
    public static func hkdfSHA256(inputKey: [UInt8], salt: [UInt8], info: [UInt8], length: Int) throws(MatterCryptoError) -> [UInt8] {
        guard length > 0, length <= 255 * 32 else {
            throw .invalidParameter("HKDF output length \(length) outside 1...8160")
        }
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: inputKey), salt: salt, info: info, outputByteCount: length)
        return key.withUnsafeBytes { Array($0) }
    }

    /// HKDF for the fixed, small output sizes the protocol uses; those cannot fail.
    static func hkdf(_ inputKey: [UInt8], salt: [UInt8], info: String, length: Int) -> [UInt8] {
        precondition(length > 0 && length <= 255 * 32, "internal HKDF length")
        let key = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: inputKey), salt: salt, info: Array(info.utf8), outputByteCount: length)
        return key.withUnsafeBytes { Array($0) }
    }

    /// Crypto_PBKDF(input, salt, iterations, len) = PBKDF2 with HMAC-SHA256 (RFC 8018), `length` in bytes.
    public static func pbkdf2SHA256(password: [UInt8], salt: [UInt8], iterations: Int, length: Int) throws(MatterCryptoError) -> [UInt8] {
        guard iterations > 0, iterations <= Int(Int32.max) else {
            throw .invalidParameter("PBKDF2 iteration count \(iterations)")
        }
        guard length > 0, length <= 4096 else {
            throw .invalidParameter("PBKDF2 output length \(length)")
        }
        guard password.count <= Int(Int32.max), salt.count <= Int(Int32.max) else {
            throw .invalidParameter("PBKDF2 input too long")
        }
        var out = [UInt8](repeating: 0, count: length)
        // Pointers must be non-null even for empty inputs.
        let pw = password.isEmpty ? [0] : password
        let sl = salt.isEmpty ? [0] : salt
        let ok = pw.withUnsafeBufferPointer { p in
            sl.withUnsafeBufferPointer { s in
                out.withUnsafeMutableBufferPointer { o in
                    PKCS5_PBKDF2_HMAC(
                        UnsafeRawPointer(p.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(password.count),
                        s.baseAddress, Int32(salt.count), Int32(iterations), EVP_sha256(),
                        Int32(length), o.baseAddress)
                }
            }
        }
        guard ok == 1 else { throw .libraryFailure("PKCS5_PBKDF2_HMAC") }
        return out
    }
}
