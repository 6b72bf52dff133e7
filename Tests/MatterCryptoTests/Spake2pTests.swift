import Testing
@testable import MatterCrypto

/// draft-bar-cfrg-spake2plus-01 P256-SHA256-HKDF-HMAC vectors, as carried by connectedhomeip
/// (src/crypto/tests/SPAKE2P_RFC_test_vectors.h).
struct Spake2pVector: Sendable, CustomTestStringConvertible {
    let idProver, idVerifier: String
    let x, X, y, Y, Z, V, Ka, Ke, KcA, KcB, cA, cB: String
    var testDescription: String { "A='\(idProver)' B='\(idVerifier)'" }

    static let context = Array("SPAKE2+-P256-SHA256-HKDF draft-01".utf8)
    static let w0 = hex("e6887cf9bdfb7579c69bf47928a84514b5e355ac034863f7ffaf4390e67d798c")
    static let w1 = hex("24b5ae4abda868ec9336ffc3b78ee31c5755bef1759227ef5372ca139b94e512")
    static let L = hex(
        "0495645cfb74df6e58f9748bb83a86620bab7c82e107f57d6870da8cbcb2ff9f7063a14b6402c62f99afcb9706a4d1a143273259fe76f1c605a3639745a92154b9"
    )

    static let all: [Spake2pVector] = [
        Spake2pVector(
            idProver: "client", idVerifier: "server",
            x: "8b0f3f383905cf3a3bb955ef8fb62e24849dd349a05ca79aafb18041d30cbdb6",
            X:
                "04af09987a593d3bac8694b123839422c3cc87e37d6b41c1d630f000dd64980e537ae704bcede04ea3bec9b7475b32fa2ca3b684be14d11645e38ea6609eb39e7e",
            y: "2e0895b0e763d6d5a9564433e64ac3cac74ff897f6c3445247ba1bab40082a91",
            Y:
                "04417592620aebf9fd203616bbb9f121b730c258b286f890c5f19fea833a9c900cbe9057bc549a3e19975be9927f0e7614f08d1f0a108eede5fd7eb5624584a4f4",
            Z:
                "0471a35282d2026f36bf3ceb38fcf87e3112a4452f46e9f7b47fd769cfb570145b62589c76b7aa1eb6080a832e5332c36898426912e29c40ef9e9c742eee82bf30",
            V:
                "046718981bf15bc4db538fc1f1c1d058cb0eececf1dbe1b1ea08a4e25275d382e82b348c8131d8ed669d169c2e03a858db7cf6ca2853a4071251a39fbe8cfc39bc",
            Ka: "f9cab9adcc0ed8e5a4db11a8505914b2", Ke: "801db297654816eb4f02868129b9dc89",
            KcA: "0d248d7d19234f1486b2efba5179c52d", KcB: "556291df26d705a2caedd6474dd0079b",
            cA: "d4376f2da9c72226dd151b77c2919071155fc22a2068d90b5faa6c78c11e77dd",
            cB: "0660a680663e8c5695956fb22dff298b1d07a526cf3cc591adfecd1f6ef6e02e"),
        Spake2pVector(
            idProver: "client", idVerifier: "",
            x: "ec82d9258337f61239c9cd68e8e532a3a6b83d12d2b1ca5d543f44def17dfb8d",
            X:
                "04230779960824076d3666a7418e4d433e2fa15b06176eabdd572f43a32ecc79a192b243d2624310a7356273b86e5fd9bd627d3ade762baeff1a320d4ad7a4e47f",
            y: "eac3f7de4b198d5fe25c443c0cd4963807add767815dd02a6f0133b4bc2c9eb0",
            Y:
                "044558642e71b616b248c9583bd6d7aa1b3952c6df6a9f7492a06035ca5d92522d84443de7aa20a59380fa4de6b7438d925dbfb7f1cfe60d79acf961ee33988c7d",
            Z:
                "04b4e8770f19f58ddf83f9220c3a9305792665e0c60989e6ee9d7fa449c775d6395f6f25f307e3903ac045a013fbb5a676e872a6abfcf4d7bb5aac69efd6140eed",
            V:
                "04141db83bc7d96f41b636622e7a5c552ad83211ff55319ac25ed0a09f0818bd942e8150319bfbfa686183806dc61911183f6a0f5956156023d96e0f93d275bf50",
            Ka: "e2cbee3ae19a4dbe9f146be6bee9bfa1", Ke: "6989d8f9177ef7df67da437987f07255",
            KcA: "2f9e0bb669d2c22645bce34da04ac16a", KcB: "eb7a35168759dd8e9ce44e4dc51277ce",
            cA: "e1b9258807ba4750dae1d7f3c3c294f13dc4fa60cde346d5de7d200e2f8fd3fc",
            cB: "b9c39dfa49c47757de778d9bedeaca2448b905be19a43b94ee24b770208135e3"),
        Spake2pVector(
            idProver: "", idVerifier: "server",
            x: "ba0f0f5b78ef23fd07868e46aeca63b51fda519a3420501acbe23d53c2918748",
            X:
                "04c14d28f4370fea20745106cea58bcfb60f2949fa4e131b9aff5ea13fd5aa79d507ae1d229e447e000f15eb78a9a32c2b88652e3411642043c1b2b7992cf2d4de",
            y: "39397fbe6db47e9fbd1a263d79f5d0aaa44df26ce755f78e092644b434533a42",
            Y:
                "04d1bee3120fd87e86fe189cb952dc688823080e62524dd2c08dffe3d22a0a8986aa64c9fe0191033cafbc9bcaefc8e2ba8ba860cd127af9efdd7f1c3a41920fe8",
            Z:
                "04aac71cf4c8df8181b867c9ecbee9d0963caf51f1534a823429c26fe5248313ffc5c5e44ea8162161ab6b3d73b87704a45889bf6343d96fa96cd1641efa71607c",
            V:
                "04c7c9505365f7ce57293c92a37f1bbdc68e0322901e61edef59fee7876b17b063e0fa4a126eae0a671b37f1464cf1ccad591c33ae944e3b1f318d76e36fea9966",
            Ka: "ec8d19b807ffb1d1eea81a93ba35cdfe", Ke: "2ea40e4badfa5452b5744dc5983e99ba",
            KcA: "66de534d9bf1e44e96a53a4b48d6b353", KcB: "4945c38bb476cb0f347f3222be9b64a2",
            cA: "e564c93b3015efb946dc16d642bbe7d1c8da5be164ed9fc3bae4e0ff86e1bd3c",
            cB: "072a94d9a54edc201d8891534c2317cadf3ea3792827f479e873f93e90f21552"),
        Spake2pVector(
            idProver: "", idVerifier: "",
            x: "5b478619804f4938d361fbba3a20648725222f0a54cc4c876139efe7d9a21786",
            X:
                "04a6db23d001723fb01fcfc9d08746c3c2a0a3feff8635d29cad2853e7358623425cf39712e928054561ba71e2dc11f300f1760e71eb177021a8f85e78689071cd",
            y: "766770dad8c8eecba936823c0aed044b8c3c4f7655e8beec44a15dcbcaf78e5e",
            Y:
                "04390d29bf185c3abf99f150ae7c13388c82b6be0c07b1b8d90d26853e84374bbdc82becdb978ca3792f472424106a2578012752c11938fcf60a41df75ff7cf947",
            Z:
                "040a150d9a62f514c9a1fedd782a0240a342721046cefb1111c3adb3be893ce9fcd2ffa137922fcf8a588d0f76ba9c55c85da2af3f1c789ca17976810387fb1d7e",
            V:
                "04f8e247cc263a1846272f5a3b61b68aa60a5a2665d10cd22c89cd6bad05dc0e5e650f21ff017186cc92651a4cd7e66ce88f529299f340ea80fb90a9bad094e1a6",
            Ka: "5929a3ce9822c81401bf0f764f69af08", Ke: "ea3276d68334576097e04b19ee5a3a8b",
            KcA: "7f84b939d600117256b0c8a6d40cf181", KcB: "f7d7547ced93f681e8df4c258c4516fd",
            cA: "71d9412779b6c45a2c615c9df3f1fd93dc0aaf63104da8ece4aa1b5a3a415fea",
            cB: "095dc0400355cc233fde7437811815b3c1524aae80fd4e6810cf531cf11d20e3"),
    ]
}

@Suite struct Spake2pTests {
    @Test func verifierLFromW1() throws {
        let v = try Spake2pVerifier(w0: Spake2pVector.w0, L: Spake2pVector.L)
        #expect(v.serialized.count == 97)
        #expect(try Spake2pVerifier(w0: Spake2pVector.w0, w1: Spake2pVector.w1).L == Spake2pVector.L)
        // L = w1*G through the key-pair path (independent of the SPAKE2+ code).
        #expect(try P256KeyPair(rawPrivateKey: Spake2pVector.w1).publicKey.uncompressed == Spake2pVector.L)
    }

    @Test(arguments: Spake2pVector.all) func draft01Vectors(_ t: Spake2pVector) throws {
        let prover = try Spake2pProver(
            context: Spake2pVector.context, w0: Spake2pVector.w0, w1: Spake2pVector.w1,
            proverIdentity: Array(t.idProver.utf8), verifierIdentity: Array(t.idVerifier.utf8), ephemeralScalar: hex(t.x))
        #expect(prover.shareX == hex(t.X))

        let verifier = try Spake2pVerifierRole(
            context: Spake2pVector.context, verifier: Spake2pVerifier(w0: Spake2pVector.w0, L: Spake2pVector.L),
            proverIdentity: Array(t.idProver.utf8), verifierIdentity: Array(t.idVerifier.utf8), ephemeralScalar: hex(t.y))
        #expect(verifier.shareY == hex(t.Y))

        let a = try prover.computeKeys(shareY: verifier.shareY)
        let b = try verifier.computeKeys(shareX: prover.shareX)
        for keys in [a, b] {
            #expect(keys.Z == hex(t.Z))
            #expect(keys.V == hex(t.V))
            #expect(keys.transcriptHash == hex(t.Ka) + hex(t.Ke))
            #expect(keys.Ka == hex(t.Ka))
            #expect(keys.Ke == hex(t.Ke))
            #expect(keys.KcA == hex(t.KcA))
            #expect(keys.KcB == hex(t.KcB))
            #expect(keys.confirmationA == hex(t.cA))
            #expect(keys.confirmationB == hex(t.cB))
        }
        let (cA, ke) = try prover.finish(shareY: verifier.shareY, confirmationB: hex(t.cB))
        #expect(cA == hex(t.cA) && ke == hex(t.Ke))
        try b.verifyConfirmationA(cA)
    }

    /// connectedhomeip's PASE test set #01: passcode 20202021, 1000 iterations, salt "SPAKE2P Key Salt".
    @Test func matterVerifierFromPasscode() throws {
        let v = try Spake2pVerifier(passcode: 20202021, salt: Array("SPAKE2P Key Salt".utf8), iterations: 1000)
        #expect(v.w0 == hex("B96170AAE803346884724FE9A3B287C30330C2A660375D17BB205A8CF1AECB35"))
        #expect(
            v.L
                == hex(
                    "0457F8AB79EE253AB6A8E46BB09E543AE422736DE501E3DB37D441FE344920D09548E4C18240630C4FF4913C53513839B7C07FCC0627A1B8573A149FCD1FA466CF"
                ))
        #expect(try Spake2pVerifier(serialized: v.serialized) == v)
    }

    @Test func matterPASEExchangeAgrees() throws {
        let salt = SecureRandom.bytes(32)
        let context = Spake2p.matterContext(pbkdfParamRequest: [0x15, 0x18], pbkdfParamResponse: [0x15, 0x30, 0x18])
        #expect(context.count == 32)
        let device = try Spake2pVerifierRole(context: context, verifier: Spake2pVerifier(passcode: 34567890, salt: salt, iterations: 1000))
        let commissioner = try Spake2pProver(context: context, passcode: 34567890, salt: salt, iterations: 1000)
        let deviceKeys = try device.computeKeys(shareX: commissioner.shareX)
        let (cA, keCommissioner) = try commissioner.finish(shareY: device.shareY, confirmationB: deviceKeys.confirmationB)
        try deviceKeys.verifyConfirmationA(cA)
        #expect(keCommissioner == deviceKeys.Ke)
        let s1 = SessionKeys.pase(Ke: keCommissioner), s2 = SessionKeys.pase(Ke: deviceKeys.Ke)
        #expect(s1 == s2)
        #expect(s1.i2rKey != s1.r2iKey && s1.attestationChallenge.count == 16)
    }

    @Test func wrongPasscodeFailsConfirmation() throws {
        let salt = SecureRandom.bytes(16)
        let context = MatterHash.sha256([1])
        let device = try Spake2pVerifierRole(context: context, verifier: Spake2pVerifier(passcode: 20202021, salt: salt, iterations: 1000))
        let commissioner = try Spake2pProver(context: context, passcode: 20202022, salt: salt, iterations: 1000)
        let deviceKeys = try device.computeKeys(shareX: commissioner.shareX)
        #expect(throws: MatterCryptoError.confirmationMismatch) {
            try commissioner.finish(shareY: device.shareY, confirmationB: deviceKeys.confirmationB)
        }
        let commissionerKeys = try commissioner.computeKeys(shareY: device.shareY)
        #expect(throws: MatterCryptoError.confirmationMismatch) { try deviceKeys.verifyConfirmationA(commissionerKeys.confirmationA) }
    }

    @Test func rejectsInvalidShares() throws {
        let verifier = try Spake2pVerifierRole(context: [], verifier: Spake2pVerifier(w0: Spake2pVector.w0, L: Spake2pVector.L))
        // Not on the curve.
        #expect(throws: MatterCryptoError.invalidPoint) { try verifier.computeKeys(shareX: [0x04] + [UInt8](repeating: 7, count: 64)) }
        // Wrong size / compressed form.
        #expect(throws: MatterCryptoError.self) { try verifier.computeKeys(shareX: [0x04, 1, 2]) }
        #expect(throws: MatterCryptoError.self) { try verifier.computeKeys(shareX: []) }
        // X = w0*M makes X - w0*M the identity: must be rejected rather than yield a predictable key.
        let prover = try Spake2pProver(context: [], w0: Spake2pVector.w0, w1: Spake2pVector.w1)
        let w0M = try P256Group().multiplyAdd(generatorScalar: nil, point: Spake2p.M, scalar: Spake2pVector.w0)
        #expect(throws: MatterCryptoError.invalidPoint) { try verifier.computeKeys(shareX: w0M) }
        let w0N = try P256Group().multiplyAdd(generatorScalar: nil, point: Spake2p.N, scalar: Spake2pVector.w0)
        #expect(throws: MatterCryptoError.invalidPoint) { try prover.computeKeys(shareY: w0N) }
    }

    @Test func passcodeRules() {
        #expect(Spake2p.isValidPasscode(20202021))
        #expect(Spake2p.isValidPasscode(1))
        for bad: UInt32 in [0, 11111111, 12345678, 87654321, 99999999, 100_000_000] {
            #expect(!Spake2p.isValidPasscode(bad))
        }
    }

    @Test func rejectsBadParameters() {
        let salt = [UInt8](repeating: 1, count: 16)
        #expect(throws: MatterCryptoError.self) { try Spake2p.computeW0W1(passcode: 1, salt: salt, iterations: 999) }
        #expect(throws: MatterCryptoError.self) { try Spake2p.computeW0W1(passcode: 1, salt: salt, iterations: 100_001) }
        #expect(throws: MatterCryptoError.self) { try Spake2p.computeW0W1(passcode: 1, salt: [1, 2], iterations: 1000) }
        #expect(throws: MatterCryptoError.self) { try Spake2pVerifier(serialized: [1, 2, 3]) }
        #expect(throws: MatterCryptoError.invalidScalar) {
            try Spake2pProver(context: [], w0: Spake2pVector.w0, w1: Spake2pVector.w1, ephemeralScalar: [UInt8](repeating: 0, count: 32))
        }
        #expect(throws: MatterCryptoError.invalidScalar) {
            try Spake2pProver(context: [], w0: Spake2pVector.w0, w1: Spake2pVector.w1, ephemeralScalar: [UInt8](repeating: 0xff, count: 32))
        }
    }
}
