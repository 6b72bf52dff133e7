import Testing
@testable import MatterCrypto

@Suite struct HashAndKDFTests {
    @Test func sha256KnownAnswer() {
        #expect(MatterHash.sha256(Array("abc".utf8)) == hex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        #expect(MatterHash.sha256(concatenating: [Array("a".utf8), Array("bc".utf8)]) == MatterHash.sha256(Array("abc".utf8)))
    }

    @Test func hmacRFC4231Case2() {
        let tag = MatterHash.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(tag == hex("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
        #expect(MatterHash.hmacSHA256IsValid(tag, key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
        var bad = tag
        bad[31] ^= 1
        #expect(!MatterHash.hmacSHA256IsValid(bad, key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
    }

    @Test func hkdfRFC5869Case1() throws {
        let okm = try KeyDerivation.hkdfSHA256(
            inputKey: [UInt8](repeating: 0x0b, count: 22), salt: hex("000102030405060708090a0b0c"),
            info: hex("f0f1f2f3f4f5f6f7f8f9"), length: 42)
        #expect(okm == hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"))
    }

    @Test func hkdfRejectsBadLength() {
        #expect(throws: MatterCryptoError.self) {
            try KeyDerivation.hkdfSHA256(inputKey: [1], salt: [], info: [], length: 0)
        }
        #expect(throws: MatterCryptoError.self) {
            try KeyDerivation.hkdfSHA256(inputKey: [1], salt: [], info: [], length: 255 * 32 + 1)
        }
    }

    @Test func pbkdf2KnownAnswers() throws {
        let pw = Array("password".utf8), salt = Array("salt".utf8)
        #expect(
            try KeyDerivation.pbkdf2SHA256(password: pw, salt: salt, iterations: 1, length: 32)
                == hex("120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"))
        #expect(
            try KeyDerivation.pbkdf2SHA256(password: pw, salt: salt, iterations: 4096, length: 32)
                == hex("c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"))
        #expect(throws: MatterCryptoError.self) {
            try KeyDerivation.pbkdf2SHA256(password: pw, salt: salt, iterations: 0, length: 32)
        }
    }

    @Test func randomBytesDiffer() {
        let a = SecureRandom.bytes(32), b = SecureRandom.bytes(32)
        #expect(a.count == 32 && b.count == 32)
        #expect(a != b)
        #expect(SecureRandom.bytes(0).isEmpty)
    }

    @Test func hexRoundTrip() {
        #expect([UInt8](hexString: "0aFf 10:20") == [0x0a, 0xff, 0x10, 0x20])
        #expect([UInt8](hexString: "abc") == nil)
        #expect([UInt8](hexString: "zz") == nil)
        #expect([0x00, 0xab].hexString == "00ab")
    }
}

@Suite struct AESTests {
    struct Vector: Sendable {
        let key, nonce, plaintext, aad, ciphertext, tag: String
    }

    // connectedhomeip src/crypto/tests/AES_CCM_128_test_vectors.h (Matter message vectors), plus an
    // AAD case computed with pyca/cryptography.
    static let vectors: [Vector] = [
        Vector(
            key: "0953fa93e7caac9638f58820220a398e", nonce: "00800000011201000012345678",
            plaintext: "fffd034b50057e400000010000", aad: "",
            ciphertext: "b5e5bfdacbaf6cb7fb6bff871f", tag: "b0d6dd827d35bf372fa6425dcd17d356"),
        Vector(
            key: "be635105434859f484fc798e043ce40e", nonce: "00800000021201000012345678",
            plaintext: "23450100", aad: "", ciphertext: "b0e5d0ad", tag: "6078e0ddbb7cd43faea57c7051e5b4ae"),
        Vector(
            key: "0953fa93e7caac9638f58820220a398e", nonce: "00800148202345000012345678",
            plaintext: "1201043203 08ba072f", aad: "", ciphertext: "79d7dbc0c9b4d43eeb", tag: "281508e50d58dbbd27c39597800f4733"),
        Vector(
            key: "404142434445464748494a4b4c4d4e4f", nonce: "101112131415161718191a1b1c",
            plaintext: "", aad: "", ciphertext: "", tag: "32d6f8243a26d0bd98d01b0f448e7773"),
        Vector(
            key: "000102030405060708090a0b0c0d0e0f", nonce: "101112131415161718191a1b1c",
            plaintext: "4d6174746572204145532d43434d2077697468206173736f6369617465642064617461",
            aad: "00112233445566778899",
            ciphertext: "31800435dd2ece95fe0a65d26c4a4cf643a73d591ee4ed455e247ba7ebdca527640efe",
            tag: "224e7123522c59f2c7a09e448802de06"),
    ]

    @Test(arguments: vectors) func ccmKnownAnswers(_ v: Vector) throws {
        let ccm = try AES128CCM(key: hex(v.key))
        let sealed = try ccm.seal(hex(v.plaintext), nonce: hex(v.nonce), aad: hex(v.aad))
        #expect(sealed == hex(v.ciphertext) + hex(v.tag))
        #expect(try ccm.open(sealed, nonce: hex(v.nonce), aad: hex(v.aad)) == hex(v.plaintext))
    }

    @Test func ccmRejectsTampering() throws {
        let ccm = try AES128CCM(key: hex("000102030405060708090a0b0c0d0e0f"))
        let nonce = hex("101112131415161718191a1b1c")
        let sealed = try ccm.seal(Array("hello matter".utf8), nonce: nonce, aad: [1, 2, 3])
        for i in [0, 5, sealed.count - 1] {
            var bad = sealed
            bad[i] ^= 0x80
            #expect(throws: MatterCryptoError.authenticationFailed) { try ccm.open(bad, nonce: nonce, aad: [1, 2, 3]) }
        }
        #expect(throws: MatterCryptoError.authenticationFailed) { try ccm.open(sealed, nonce: nonce, aad: [1, 2, 4]) }
        #expect(throws: MatterCryptoError.authenticationFailed) { try ccm.open(Array(sealed.prefix(15)), nonce: nonce) }
        #expect(throws: MatterCryptoError.self) { try ccm.seal([1], nonce: [1, 2, 3]) }
        #expect(throws: MatterCryptoError.self) { try AES128CCM(key: [1, 2, 3]) }
    }

    @Test func ctrMatchesCCMKeystream() throws {
        let v = Self.vectors[4]
        let out = try AES128CTR.apply(key: hex(v.key), nonce: hex(v.nonce), to: hex(v.plaintext))
        #expect(out == hex(v.ciphertext))
        #expect(try AES128CTR.apply(key: hex(v.key), nonce: hex(v.nonce), to: out) == hex(v.plaintext))
        #expect(try AES128CTR.apply(key: hex(v.key), nonce: hex(v.nonce), to: []) == [])
    }
}

@Suite struct P256Tests {
    @Test func signAndVerify() throws {
        let pair = P256KeyPair()
        let msg = Array("attestation".utf8)
        let sig = try pair.sign(msg)
        #expect(sig.count == 64)
        #expect(pair.publicKey.isValidSignature(sig, for: msg))
        #expect(!pair.publicKey.isValidSignature(sig, for: msg + [0]))
        var bad = sig
        bad[10] ^= 1
        #expect(!pair.publicKey.isValidSignature(bad, for: msg))
        #expect(!pair.publicKey.isValidSignature([1, 2, 3], for: msg))
        let der = try pair.signDER(msg)
        #expect(pair.publicKey.isValidDERSignature(der, for: msg))
        let raw = try ECDSASignatureEncoding.raw(fromDER: der)
        #expect(pair.publicKey.isValidSignature(raw, for: msg))
        #expect(try ECDSASignatureEncoding.raw(fromDER: ECDSASignatureEncoding.der(fromRaw: raw)) == raw)
    }

    @Test func keyRoundTripsAndECDH() throws {
        let a = P256KeyPair(), b = P256KeyPair()
        let a2 = try P256KeyPair(rawPrivateKey: a.rawPrivateKey)
        #expect(a2.publicKey == a.publicKey)
        let a3 = try P256KeyPair(pem: a.pemPrivateKey)
        #expect(a3.publicKey == a.publicKey)
        #expect(a.publicKey.uncompressed.count == 65 && a.publicKey.uncompressed[0] == 4)
        let s1 = try a.sharedSecret(with: b.publicKey), s2 = try b.sharedSecret(with: a.publicKey)
        #expect(s1 == s2 && s1.count == 32)
    }

    @Test func rejectsBadKeys() {
        #expect(throws: MatterCryptoError.invalidPublicKey) { try P256PublicKey([0x04] + [UInt8](repeating: 1, count: 64)) }
        #expect(throws: MatterCryptoError.invalidPublicKey) { try P256PublicKey([]) }
        #expect(throws: MatterCryptoError.self) { try P256KeyPair(rawPrivateKey: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: MatterCryptoError.invalidPrivateKey) { try P256KeyPair(pem: "not a key") }
    }

    @Test func knownPrivateKeyGivesKnownPublicKey() throws {
        // d = 1 gives the generator G.
        let one = [UInt8](repeating: 0, count: 31) + [1]
        let pair = try P256KeyPair(rawPrivateKey: one)
        #expect(
            pair.publicKey.uncompressed
                == hex(
                    "046b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c2964fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"
                ))
    }
}
