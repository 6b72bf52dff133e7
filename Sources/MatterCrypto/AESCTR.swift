import COpenSSL

/// Crypto_Privacy encryption/decryption (Matter Core spec 3.7, 4.9.2): AES-128 in CTR mode with the
/// counter blocks CCM uses for its payload (NIST 800-38C A.3, q = 2): flags 0x01 || nonce(13) || counter,
/// counter starting at 1. The same keystream as AES-128-CCM encryption of the same message, without the MIC.
public enum AES128CTR {
    public static let nonceLength = 13

    /// Encrypts or decrypts (the operation is its own inverse).
    public static func apply(key: [UInt8], nonce: [UInt8], to data: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        try requireLength(key, AES128CCM.keyLength, "AES-128 key")
        try requireLength(nonce, nonceLength, "AES-CTR nonce")
        guard data.count <= 16 * 65535 else { throw .invalidParameter("AES-CTR input longer than the 2-byte counter allows") }
        guard !data.isEmpty else { return [] }
        let iv: [UInt8] = [0x01] + nonce + [0x00, 0x01]
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .libraryFailure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: data.count + 16)
        var len1: Int32 = 0
        var len2: Int32 = 0
        guard EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), nil, key, iv) == 1,
            EVP_EncryptUpdate(ctx, &out, &len1, data, Int32(data.count)) == 1
        else { throw .libraryFailure("AES-CTR") }
        let ok = out.withUnsafeMutableBufferPointer { p in
            EVP_EncryptFinal_ex(ctx, p.baseAddress! + Int(len1), &len2)
        }
        guard ok == 1 else { throw .libraryFailure("AES-CTR final") }
        return Array(out[0..<Int(len1 + len2)])
    }
}
