/// SPAKE2+ over P-256 with SHA-256, HKDF and HMAC (Matter Core spec 3.10, following
/// draft-bar-cfrg-spake2plus-01), as used by PASE. The commissioner is the prover ("A"),
/// the commissionee the verifier ("B"). Matter uses empty identities and the context
/// `matterContext(...)`.
public enum Spake2p {
    /// Bytes of w0s / w1s taken from PBKDF2 each (spec 3.10: CRYPTO_W_SIZE_BYTES = 40).
    public static let wsLength = 40
    /// Valid PBKDF iteration counts for PASE (spec 3.9 / 5.1.1.6).
    public static let iterationRange = 1000...100_000
    /// Valid PBKDF salt lengths for PASE.
    public static let saltLengthRange = 16...32

    /// Whether a setup passcode is allowed (spec 5.1.7.1): 1...99999998, and none of the trivial values.
    public static func isValidPasscode(_ passcode: UInt32) -> Bool {
        let invalid: Set<UInt32> = [
            0, 11111111, 22222222, 33333333, 44444444, 55555555, 66666666,
            77777777, 88888888, 99999999, 12345678, 87654321,
        ]
        return passcode <= 99_999_998 && !invalid.contains(passcode)
    }

    /// The fixed point M of the P-256 ciphersuite, uncompressed.
    public static let M: [UInt8] = [UInt8](
        hexString:
            "04886e2f97ace46e55ba9dd7242579f2993b64e16ef3dcab95afd497333d8fa12f5ff355163e43ce224e0b0e65ff02ac8e5c7be09419c785e0ca547d55a12e2d20"
    )!
    /// The fixed point N of the P-256 ciphersuite, uncompressed.
    public static let N: [UInt8] = [UInt8](
        hexString:
            "04d8bbd6c639c62937b04d997f38c3770719c629d7014d49a24b4f98baa1292b4907d60aa6bfade45008a636337f5168c64d9bd36034808cd564490b1e656edbe7"
    )!

    /// The PASE context (spec 4.14.1.2): SHA-256("CHIP PAKE V1 Commissioning" || PBKDFParamRequest || PBKDFParamResponse),
    /// each message being the full TLV payload as sent.
    public static func matterContext(pbkdfParamRequest: [UInt8], pbkdfParamResponse: [UInt8]) -> [UInt8] {
        MatterHash.sha256(concatenating: [Array("CHIP PAKE V1 Commissioning".utf8), pbkdfParamRequest, pbkdfParamResponse])
    }

    /// w0 and w1 from the passcode (spec 3.10): w0s || w1s = PBKDF2(passcode as 4 little-endian bytes, salt,
    /// iterations, 80 bytes); w0 = w0s mod n, w1 = w1s mod n (32 bytes each, big-endian).
    public static func computeW0W1(passcode: UInt32, salt: [UInt8], iterations: Int) throws(MatterCryptoError) -> (w0: [UInt8], w1: [UInt8])
    {
        guard iterationRange.contains(iterations) else {
            throw .invalidParameter("PBKDF iterations \(iterations) outside \(iterationRange)")
        }
        guard saltLengthRange.contains(salt.count) else {
            throw .invalidParameter("PBKDF salt length \(salt.count) outside \(saltLengthRange)")
        }
        let passcodeBytes = (0..<4).map { UInt8(truncatingIfNeeded: passcode >> (8 * UInt32($0))) }
        let ws = try KeyDerivation.pbkdf2SHA256(password: passcodeBytes, salt: salt, iterations: iterations, length: 2 * wsLength)
        let group = try P256Group()
        let w0 = try group.reduceModOrder(Array(ws[0..<wsLength]))
        let w1 = try group.reduceModOrder(Array(ws[wsLength..<(2 * wsLength)]))
        return (w0, w1)
    }

    /// Shared tail of both roles: TT, Ka/Ke, KcA/KcB and the confirmation MACs.
    static func deriveKeys(
        context: [UInt8], proverIdentity: [UInt8], verifierIdentity: [UInt8],
        X: [UInt8], Y: [UInt8], Z: [UInt8], V: [UInt8], w0: [UInt8]
    ) -> Spake2pKeys {
        var tt: [UInt8] = []
        for part in [context, proverIdentity, verifierIdentity, M, N, X, Y, Z, V, w0] {
            tt += littleEndianBytes(UInt64(part.count))
            tt += part
        }
        let hash = MatterHash.sha256(tt)
        let ka = Array(hash[0..<16])
        let ke = Array(hash[16..<32])
        let kc = KeyDerivation.hkdf(ka, salt: [], info: "ConfirmationKeys", length: 32)
        let kcA = Array(kc[0..<16])
        let kcB = Array(kc[16..<32])
        return Spake2pKeys(
            Ka: ka, Ke: ke, KcA: kcA, KcB: kcB,
            confirmationA: MatterHash.hmacSHA256(key: kcA, message: Y),
            confirmationB: MatterHash.hmacSHA256(key: kcB, message: X),
            Z: Z, V: V, transcriptHash: hash)
    }

    static func ephemeralScalar(_ given: [UInt8]?, group: borrowing P256Group) throws(MatterCryptoError) -> [UInt8] {
        if let given {
            try requireLength(given, P256Group.scalarLength, "SPAKE2+ ephemeral scalar")
            // Must lie in [1, n-1].
            guard given.contains(where: { $0 != 0 }), try group.reduceModOrder(given) == given else {
                throw .invalidScalar
            }
            return given
        }
        // Uniform in [1, n-1]: reduce 64 random bytes (bias < 2^-256), retry on zero.
        for _ in 0..<8 {
            let s = try group.reduceModOrder(SecureRandom.bytes(64))
            if s.contains(where: { $0 != 0 }) { return s }
        }
        throw .invalidScalar
    }
}

/// Everything both sides derive once the shares are exchanged (draft-01 section 3.4).
public struct Spake2pKeys: Sendable {
    /// First half of Hash(TT): source of the confirmation keys.
    public let Ka: [UInt8]
    /// Second half of Hash(TT): the shared secret; PASE session keys come from it (`SessionKeys.pase(Ke:)`).
    public let Ke: [UInt8]
    public let KcA: [UInt8]
    public let KcB: [UInt8]
    /// cA = HMAC(KcA, Y): sent by the prover in Pake3.
    public let confirmationA: [UInt8]
    /// cB = HMAC(KcB, X): sent by the verifier in Pake2.
    public let confirmationB: [UInt8]
    let Z: [UInt8]
    let V: [UInt8]
    let transcriptHash: [UInt8]

    /// The verifier's check of the prover's cA.
    public func verifyConfirmationA(_ cA: [UInt8]) throws(MatterCryptoError) {
        guard constantTimeEquals(cA, confirmationA) else { throw .confirmationMismatch }
    }

    /// The prover's check of the verifier's cB.
    public func verifyConfirmationB(_ cB: [UInt8]) throws(MatterCryptoError) {
        guard constantTimeEquals(cB, confirmationB) else { throw .confirmationMismatch }
    }
}

/// The PASE verifier a commissionee stores instead of the passcode (spec 3.10): w0 and L = w1*G.
public struct Spake2pVerifier: Sendable, Hashable {
    public static let serializedLength = 32 + 65

    public let w0: [UInt8]
    public let L: [UInt8]

    public init(w0: [UInt8], L: [UInt8]) throws(MatterCryptoError) {
        try requireLength(w0, P256Group.scalarLength, "w0")
        let group = try P256Group()
        self.w0 = w0
        self.L = try group.validatedPoint(L)
    }

    /// w0 (32 bytes) || L (65 bytes), the form connectedhomeip stores and `--spake2p-verifier` takes.
    public init(serialized: [UInt8]) throws(MatterCryptoError) {
        try requireLength(serialized, Self.serializedLength, "serialized SPAKE2+ verifier")
        try self.init(w0: Array(serialized[0..<32]), L: Array(serialized[32...]))
    }

    /// From w0 and w1: L = w1*G.
    public init(w0: [UInt8], w1: [UInt8]) throws(MatterCryptoError) {
        try requireLength(w0, P256Group.scalarLength, "w0")
        try requireLength(w1, P256Group.scalarLength, "w1")
        let group = try P256Group()
        self.w0 = w0
        self.L = try group.multiplyAdd(generatorScalar: w1, point: nil, scalar: nil)
    }

    /// What a commissionee derives from its passcode and PBKDF parameters (or a commissioner, to open
    /// an enhanced commissioning window).
    public init(passcode: UInt32, salt: [UInt8], iterations: Int) throws(MatterCryptoError) {
        let (w0, w1) = try Spake2p.computeW0W1(passcode: passcode, salt: salt, iterations: iterations)
        try self.init(w0: w0, w1: w1)
    }

    public var serialized: [UInt8] { w0 + L }
}

/// The prover ("A", the commissioner): sends X = x*G + w0*M in Pake1.
public struct Spake2pProver: Sendable {
    public let context: [UInt8]
    public let proverIdentity: [UInt8]
    public let verifierIdentity: [UInt8]
    /// pA = X, uncompressed.
    public let shareX: [UInt8]
    private let x: [UInt8]
    private let w0: [UInt8]
    private let w1: [UInt8]

    /// `ephemeralScalar` exists for test vectors; leave it nil to draw x at random.
    public init(
        context: [UInt8], w0: [UInt8], w1: [UInt8], proverIdentity: [UInt8] = [], verifierIdentity: [UInt8] = [],
        ephemeralScalar: [UInt8]? = nil
    ) throws(MatterCryptoError) {
        try requireLength(w0, P256Group.scalarLength, "w0")
        try requireLength(w1, P256Group.scalarLength, "w1")
        let group = try P256Group()
        let x = try Spake2p.ephemeralScalar(ephemeralScalar, group: group)
        self.context = context
        self.proverIdentity = proverIdentity
        self.verifierIdentity = verifierIdentity
        self.w0 = w0
        self.w1 = w1
        self.x = x
        self.shareX = try group.multiplyAdd(generatorScalar: x, point: Spake2p.M, scalar: w0)
    }

    /// Matter PASE prover from the passcode and the PBKDF parameters the commissionee announced.
    public init(context: [UInt8], passcode: UInt32, salt: [UInt8], iterations: Int) throws(MatterCryptoError) {
        let (w0, w1) = try Spake2p.computeW0W1(passcode: passcode, salt: salt, iterations: iterations)
        try self.init(context: context, w0: w0, w1: w1)
    }

    /// From the verifier's share Y (pB): Z = x*(Y - w0*N), V = w1*(Y - w0*N), then the keys.
    /// Rejects Y off the curve or at the identity.
    public func computeKeys(shareY: [UInt8]) throws(MatterCryptoError) -> Spake2pKeys {
        try requireLength(shareY, P256Group.pointLength, "SPAKE2+ share Y")
        let group = try P256Group()
        let Y = try group.validatedPoint(shareY)
        let unblinded = try group.subtractMultiple(Y, point: Spake2p.N, scalar: w0)
        let Z = try group.multiplyAdd(generatorScalar: nil, point: unblinded, scalar: x)
        let V = try group.multiplyAdd(generatorScalar: nil, point: unblinded, scalar: w1)
        return Spake2p.deriveKeys(
            context: context, proverIdentity: proverIdentity, verifierIdentity: verifierIdentity,
            X: shareX, Y: Y, Z: Z, V: V, w0: w0)
    }

    /// Pake2 handling: checks cB and returns cA (for Pake3) and Ke.
    public func finish(shareY: [UInt8], confirmationB: [UInt8]) throws(MatterCryptoError) -> (confirmationA: [UInt8], Ke: [UInt8]) {
        let keys = try computeKeys(shareY: shareY)
        try keys.verifyConfirmationB(confirmationB)
        return (keys.confirmationA, keys.Ke)
    }
}

/// The verifier role ("B", the commissionee): answers Pake1's X with Y = y*G + w0*N and cB.
public struct Spake2pVerifierRole: Sendable {
    public let context: [UInt8]
    public let proverIdentity: [UInt8]
    public let verifierIdentity: [UInt8]
    public let verifier: Spake2pVerifier
    /// pB = Y, uncompressed.
    public let shareY: [UInt8]
    private let y: [UInt8]

    /// `ephemeralScalar` exists for test vectors; leave it nil to draw y at random.
    public init(
        context: [UInt8], verifier: Spake2pVerifier, proverIdentity: [UInt8] = [], verifierIdentity: [UInt8] = [],
        ephemeralScalar: [UInt8]? = nil
    ) throws(MatterCryptoError) {
        let group = try P256Group()
        let y = try Spake2p.ephemeralScalar(ephemeralScalar, group: group)
        self.context = context
        self.proverIdentity = proverIdentity
        self.verifierIdentity = verifierIdentity
        self.verifier = verifier
        self.y = y
        self.shareY = try group.multiplyAdd(generatorScalar: y, point: Spake2p.N, scalar: verifier.w0)
    }

    /// From the prover's share X (pA): Z = y*(X - w0*M), V = y*L, then the keys. Send `shareY` and
    /// `keys.confirmationB` in Pake2; check Pake3's cA with `keys.verifyConfirmationA`.
    /// Rejects X off the curve or at the identity.
    public func computeKeys(shareX: [UInt8]) throws(MatterCryptoError) -> Spake2pKeys {
        try requireLength(shareX, P256Group.pointLength, "SPAKE2+ share X")
        let group = try P256Group()
        let X = try group.validatedPoint(shareX)
        let unblinded = try group.subtractMultiple(X, point: Spake2p.M, scalar: verifier.w0)
        let Z = try group.multiplyAdd(generatorScalar: nil, point: unblinded, scalar: y)
        let V = try group.multiplyAdd(generatorScalar: nil, point: verifier.L, scalar: y)
        return Spake2p.deriveKeys(
            context: context, proverIdentity: proverIdentity, verifierIdentity: verifierIdentity,
            X: X, Y: shareY, Z: Z, V: V, w0: verifier.w0)
    }
}
