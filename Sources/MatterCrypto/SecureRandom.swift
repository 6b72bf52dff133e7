import COpenSSL

/// Crypto_DRBG (Matter Core spec 3.1): bytes from libcrypto's seeded CTR-DRBG.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "random byte count")
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        let rc = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        // RAND_bytes fails only when the OS entropy source is unusable; continuing would be unsafe.
        precondition(rc == 1, "libcrypto RAND_bytes failed: no entropy source")
        return out
    }
}
