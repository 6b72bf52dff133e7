import COpenSSL

/// Crypto_AEAD_GenerateEncrypt / Crypto_AEAD_DecryptVerify (Matter Core spec 3.6):
/// AES-128 in CCM mode with a 13-byte nonce and a 16-byte MIC.
public struct AES128CCM: Sendable {
    public static let keyLength = 16
    public static let nonceLength = 13
    public static let micLength = 16

    private let key: [UInt8]

    public init(key: [UInt8]) throws(MatterCryptoError) {
        try requireLength(key, Self.keyLength, "AES-128 key")
        self.key = key
    }

    /// Encrypts `plaintext` and authenticates it together with `aad`.
    /// Returns ciphertext || MIC (plaintext.count + 16 bytes).
    public func seal(_ plaintext: [UInt8], nonce: [UInt8], aad: [UInt8] = []) throws(MatterCryptoError) -> [UInt8] {
        try requireLength(nonce, Self.nonceLength, "AES-CCM nonce")
        guard plaintext.count <= Int(Int32.max) - Self.micLength, aad.count <= Int(Int32.max) else {
            throw .invalidParameter("AES-CCM input too long")
        }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .libraryFailure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var output = [UInt8](repeating: 0, count: plaintext.count + Self.micLength)
        let ok: Bool = output.withUnsafeMutableBufferPointer { out in
            var outLen: Int32 = 0
            guard EVP_EncryptInit_ex(ctx, EVP_aes_128_ccm(), nil, nil, nil) == 1,
                EVP_CIPHER_CTX_ctrl(ctx, COPENSSL_EVP_CTRL_AEAD_SET_IVLEN, Int32(Self.nonceLength), nil) == 1,
                EVP_CIPHER_CTX_ctrl(ctx, COPENSSL_EVP_CTRL_AEAD_SET_TAG, Int32(Self.micLength), nil) == 1,
                EVP_EncryptInit_ex(ctx, nil, nil, key, nonce) == 1,
                // CCM needs the total length before any data.
                EVP_EncryptUpdate(ctx, nil, &outLen, nil, Int32(plaintext.count)) == 1
            else { return false }
            if !aad.isEmpty {
                guard EVP_EncryptUpdate(ctx, nil, &outLen, aad, Int32(aad.count)) == 1 else { return false }
            }
            let dataOut = out.baseAddress!
            // A non-null input pointer is required even for an empty message.
            let input = plaintext.isEmpty ? [0] : plaintext
            guard EVP_EncryptUpdate(ctx, dataOut, &outLen, input, Int32(plaintext.count)) == 1,
                EVP_EncryptFinal_ex(ctx, dataOut + plaintext.count, &outLen) == 1,
                EVP_CIPHER_CTX_ctrl(
                    ctx, COPENSSL_EVP_CTRL_AEAD_GET_TAG, Int32(Self.micLength),
                    dataOut + plaintext.count) == 1
            else { return false }
            return true
        }
        guard ok else { throw .libraryFailure("AES-CCM encrypt") }
        return output
    }

    /// Verifies the trailing 16-byte MIC of `ciphertextAndMIC` over the ciphertext and `aad`
    /// and returns the plaintext; throws `.authenticationFailed` when it does not verify.
    public func open(_ ciphertextAndMIC: [UInt8], nonce: [UInt8], aad: [UInt8] = []) throws(MatterCryptoError) -> [UInt8] {
        try requireLength(nonce, Self.nonceLength, "AES-CCM nonce")
        guard ciphertextAndMIC.count >= Self.micLength else { throw .authenticationFailed }
        guard ciphertextAndMIC.count <= Int(Int32.max), aad.count <= Int(Int32.max) else {
            throw .invalidParameter("AES-CCM input too long")
        }
        let ctLen = ciphertextAndMIC.count - Self.micLength
        var tag = Array(ciphertextAndMIC[ctLen...])
        let ciphertext = ctLen == 0 ? [0] : Array(ciphertextAndMIC[..<ctLen])
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .libraryFailure("EVP_CIPHER_CTX_new") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var plaintext = [UInt8](repeating: 0, count: max(ctLen, 1))
        var outLen: Int32 = 0
        guard EVP_DecryptInit_ex(ctx, EVP_aes_128_ccm(), nil, nil, nil) == 1,
            EVP_CIPHER_CTX_ctrl(ctx, COPENSSL_EVP_CTRL_AEAD_SET_IVLEN, Int32(Self.nonceLength), nil) == 1,
            EVP_CIPHER_CTX_ctrl(ctx, COPENSSL_EVP_CTRL_AEAD_SET_TAG, Int32(Self.micLength), &tag) == 1,
            EVP_DecryptInit_ex(ctx, nil, nil, key, nonce) == 1,
            EVP_DecryptUpdate(ctx, nil, &outLen, nil, Int32(ctLen)) == 1
        else { throw .libraryFailure("AES-CCM decrypt setup") }
        if !aad.isEmpty {
            guard EVP_DecryptUpdate(ctx, nil, &outLen, aad, Int32(aad.count)) == 1 else {
                throw .libraryFailure("AES-CCM aad")
            }
        }
        // In CCM mode the tag is checked by this single update call.
        let rc = EVP_DecryptUpdate(ctx, &plaintext, &outLen, ciphertext, Int32(ctLen))
        guard rc > 0 else {
            plaintext.withUnsafeMutableBytes { p in
                for i in p.indices { p[i] = 0 }
            }
            throw .authenticationFailed
        }
        return ctLen == 0 ? [] : plaintext
    }
}
