import COpenSSL

/// Scalar and point arithmetic on the P-256 group through libcrypto's EC_POINT/BN API,
/// for the SPAKE2+ computations swift-crypto does not expose. Points cross this boundary
/// as uncompressed SEC1 bytes and scalars as 32-byte big-endian integers.
/// One instance owns its libcrypto objects and is used by one task at a time (it is not Sendable).
struct P256Group: ~Copyable {
    static let scalarLength = 32
    static let pointLength = 65

    private let group: OpaquePointer
    private let bnContext: OpaquePointer
    private let order: OpaquePointer

    init() throws(MatterCryptoError) {
        guard let group = EC_GROUP_new_by_curve_name(COPENSSL_NID_P256) else {
            throw .libraryFailure("EC_GROUP_new_by_curve_name")
        }
        guard let ctx = BN_CTX_new() else {
            EC_GROUP_free(group)
            throw .libraryFailure("BN_CTX_new")
        }
        guard let order = BN_new(), EC_GROUP_get_order(group, order, ctx) == 1 else {
            BN_CTX_free(ctx)
            EC_GROUP_free(group)
            throw .libraryFailure("EC_GROUP_get_order")
        }
        self.group = group
        self.bnContext = ctx
        self.order = order
    }

    deinit {
        BN_free(order)
        BN_CTX_free(bnContext)
        EC_GROUP_free(group)
    }

    /// Reduces a big-endian integer of any length modulo the group order n; 32 bytes out.
    func reduceModOrder(_ bytes: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        let a = try bignum(bytes)
        defer { BN_clear_free(a) }
        guard let r = BN_new() else { throw .libraryFailure("BN_new") }
        defer { BN_clear_free(r) }
        guard BN_nnmod(r, a, order, bnContext) == 1 else { throw .libraryFailure("BN_nnmod") }
        return try scalarBytes(r)
    }

    /// a*G + b*Q (either term may be omitted).
    func multiplyAdd(generatorScalar a: [UInt8]?, point q: [UInt8]?, scalar b: [UInt8]?) throws(MatterCryptoError) -> [UInt8] {
        let bnA = try a.map { (s) throws(MatterCryptoError) in try bignum(s) }
        defer { if let bnA { BN_clear_free(bnA) } }
        let bnB = try b.map { (s) throws(MatterCryptoError) in try bignum(s) }
        defer { if let bnB { BN_clear_free(bnB) } }
        let pQ = try q.map { (p) throws(MatterCryptoError) in try decodePoint(p) }
        defer { if let pQ { EC_POINT_free(pQ) } }
        guard let r = EC_POINT_new(group) else { throw .libraryFailure("EC_POINT_new") }
        defer { EC_POINT_clear_free(r) }
        let useQ = (pQ != nil && bnB != nil)
        guard EC_POINT_mul(group, r, bnA, useQ ? pQ : nil, useQ ? bnB : nil, bnContext) == 1 else {
            throw .libraryFailure("EC_POINT_mul")
        }
        return try encodePoint(r)
    }

    /// P - k*Q.
    func subtractMultiple(_ p: [UInt8], point q: [UInt8], scalar k: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        let pP = try decodePoint(p)
        defer { EC_POINT_free(pP) }
        let pQ = try decodePoint(q)
        defer { EC_POINT_free(pQ) }
        let bnK = try bignum(k)
        defer { BN_clear_free(bnK) }
        guard let t = EC_POINT_new(group) else { throw .libraryFailure("EC_POINT_new") }
        defer { EC_POINT_clear_free(t) }
        guard EC_POINT_mul(group, t, nil, pQ, bnK, bnContext) == 1,
            EC_POINT_invert(group, t, bnContext) == 1,
            EC_POINT_add(group, t, pP, t, bnContext) == 1
        else { throw .libraryFailure("EC_POINT arithmetic") }
        return try encodePoint(t)
    }

    /// Validates encoded point bytes: on the curve and not the identity. Returns the uncompressed form.
    func validatedPoint(_ bytes: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        let p = try decodePoint(bytes)
        defer { EC_POINT_free(p) }
        return try encodePoint(p)
    }

    // MARK: - libcrypto plumbing

    private func bignum(_ bytes: [UInt8]) throws(MatterCryptoError) -> OpaquePointer {
        guard bytes.count <= 128 else { throw .invalidScalar }
        let bn = bytes.isEmpty ? BN_new() : BN_bin2bn(bytes, Int32(bytes.count), nil)
        guard let bn else { throw .libraryFailure("BN_bin2bn") }
        return bn
    }

    private func scalarBytes(_ bn: OpaquePointer) throws(MatterCryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.scalarLength)
        guard BN_bn2binpad(bn, &out, Int32(Self.scalarLength)) == Int32(Self.scalarLength) else {
            throw .invalidScalar
        }
        return out
    }

    /// Parses SEC1 bytes; libcrypto rejects points not on the curve. The identity is rejected here.
    private func decodePoint(_ bytes: [UInt8]) throws(MatterCryptoError) -> OpaquePointer {
        guard bytes.count == Self.pointLength || bytes.count == 33 else { throw .invalidPoint }
        guard let p = EC_POINT_new(group) else { throw .libraryFailure("EC_POINT_new") }
        guard EC_POINT_oct2point(group, p, bytes, bytes.count, bnContext) == 1,
            EC_POINT_is_on_curve(group, p, bnContext) == 1,
            EC_POINT_is_at_infinity(group, p) == 0
        else {
            EC_POINT_free(p)
            ERR_clear_error()
            throw .invalidPoint
        }
        return p
    }

    /// Uncompressed SEC1 bytes; the identity has no such encoding and is an error.
    private func encodePoint(_ p: OpaquePointer) throws(MatterCryptoError) -> [UInt8] {
        guard EC_POINT_is_at_infinity(group, p) == 0 else { throw .invalidPoint }
        var out = [UInt8](repeating: 0, count: Self.pointLength)
        let n = EC_POINT_point2oct(group, p, POINT_CONVERSION_UNCOMPRESSED, &out, out.count, bnContext)
        guard n == Self.pointLength else { throw .libraryFailure("EC_POINT_point2oct") }
        return out
    }
}
