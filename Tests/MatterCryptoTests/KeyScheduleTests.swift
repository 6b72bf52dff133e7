import Testing
@testable import MatterCrypto

@Suite struct FabricKeysTests {
    static let rootPublicKey = hex(
        "044a9f42b1ca4840d37292bbc7f6a7e11e22200c976fc900dbc98a7a383a641cb8254a2e56d4e295a847943b4e3897c4a773e930277b4d9fbede8a052686bfacfa"
    )

    /// Spec 4.3.2.2 example (also connectedhomeip TestCompressedFabricIdentifier).
    @Test func compressedFabricID() throws {
        let cfid = try FabricKeys.compressedFabricID(rootPublicKey: Self.rootPublicKey, fabricID: 0x2906_C908_D115_D362)
        #expect(cfid == hex("87e1b004e235a130"))
        #expect(
            try FabricKeys.compressedFabricIDValue(rootPublicKey: Self.rootPublicKey, fabricID: 0x2906_C908_D115_D362)
                == 0x87e1_b004_e235_a130)
        #expect(throws: MatterCryptoError.self) { try FabricKeys.compressedFabricID(rootPublicKey: [4, 1], fabricID: 1) }
    }

    /// connectedhomeip TestGroup_OperationalKeyDerivation / SessionIdDerivation; the third is the spec 4.17.2 example.
    @Test(arguments: [
        ("a0a1a2a3a4a5a6a7a8a9aaabacadaeaf", "2906c908d115d362", "1f19ed3cef8a211baf306faeeee7aac6", Optional<UInt16>(0x6c80)),
        ("b0b1b2b3b4b5b6b7b8b9babbbcbdbebf", "2906c908d115d362", "aa979a48bd8cdf293a0709b9c1eb1930", Optional<UInt16>(0x0c48)),
        ("235bf7e62823d358dca4ba50b1535f4b", "87e1b004e235a130", "a6f5306baf6d050af23ba4bd6b9dd960", nil),
    ])
    func operationalGroupKey(epoch: String, cfid: String, expected: String, sessionID: UInt16?) throws {
        let key = try FabricKeys.operationalGroupKey(epochKey: hex(epoch), compressedFabricID: hex(cfid))
        #expect(key == hex(expected))
        if let sessionID {
            #expect(try FabricKeys.groupSessionID(operationalGroupKey: key) == sessionID)
        }
    }

    /// Spec 4.14.2.4 example (also connectedhomeip TestCASESession DestinationId).
    @Test func destinationID() throws {
        let id = try FabricKeys.destinationID(
            ipk: hex("9bc61cd9c62a2df6d64dfcaa9dc472d4"),
            initiatorRandom: hex("7e171231568dfa17206b3accf8faec2f4d21b580113196f47c7c4deb810a73dc"),
            rootPublicKey: Self.rootPublicKey, fabricID: 0x2906_C908_D115_D362, nodeID: 0xCD55_44AA_7B13_EF14)
        #expect(id == hex("dc35dd5fc9134cc5544538c9c3fc4297c1ec3370c839136a80e10796451d4c53"))
    }
}

@Suite struct CASEKeysTests {
    @Test func sigmaKeysDependOnEveryInput() throws {
        let secret = SecureRandom.bytes(32), ipk = SecureRandom.bytes(16), random = SecureRandom.bytes(32)
        let eph = P256KeyPair().publicKey.uncompressed, h1 = MatterHash.sha256([1])
        let s2k = CASEKeys.sigma2Key(
            sharedSecret: secret, ipk: ipk, responderRandom: random, responderEphemeralPublicKey: eph, sigma1Hash: h1)
        #expect(s2k.count == 16)
        // Independently: HKDF with the concatenated salt.
        #expect(
            s2k == (try KeyDerivation.hkdfSHA256(inputKey: secret, salt: ipk + random + eph + h1, info: Array("Sigma2".utf8), length: 16)))
        #expect(
            s2k
                != CASEKeys.sigma2Key(
                    sharedSecret: secret, ipk: ipk, responderRandom: random, responderEphemeralPublicKey: eph,
                    sigma1Hash: MatterHash.sha256([2])))
        let s3k = CASEKeys.sigma3Key(sharedSecret: secret, ipk: ipk, sigma1Sigma2Hash: h1)
        #expect(s3k == (try KeyDerivation.hkdfSHA256(inputKey: secret, salt: ipk + h1, info: Array("Sigma3".utf8), length: 16)))
        let keys = SessionKeys.case(sharedSecret: secret, ipk: ipk, transcriptHash: h1)
        let okm = try KeyDerivation.hkdfSHA256(inputKey: secret, salt: ipk + h1, info: Array("SessionKeys".utf8), length: 48)
        #expect(keys.i2rKey + keys.r2iKey + keys.attestationChallenge == okm)
        let resumed = SessionKeys.caseResumption(sharedSecret: secret, initiatorRandom: random, resumptionID: ipk)
        #expect(
            resumed.i2rKey + resumed.r2iKey + resumed.attestationChallenge
                == (try KeyDerivation.hkdfSHA256(
                    inputKey: secret, salt: random + ipk, info: Array("SessionResumptionKeys".utf8), length: 48)))
    }

    @Test func resumeMICsAreCCMTags() throws {
        let secret = SecureRandom.bytes(32), random = SecureRandom.bytes(32), rid = SecureRandom.bytes(16)
        let mic1 = try CASEKeys.sigma1ResumeMIC(sharedSecret: secret, initiatorRandom: random, resumptionID: rid)
        let mic2 = try CASEKeys.sigma2ResumeMIC(sharedSecret: secret, initiatorRandom: random, resumptionID: rid)
        #expect(mic1.count == 16 && mic2.count == 16 && mic1 != mic2)
        // Verifies as the tag of an empty AES-CCM message under S1RK.
        let s1rk = CASEKeys.sigma1ResumeKey(sharedSecret: secret, initiatorRandom: random, resumptionID: rid)
        #expect(try AES128CCM(key: s1rk).open(mic1, nonce: CASEKeys.sigma1ResumeNonce) == [])
        #expect(CASEKeys.sigma2Nonce.count == 13 && CASEKeys.sigma3Nonce.count == 13)
    }
}
