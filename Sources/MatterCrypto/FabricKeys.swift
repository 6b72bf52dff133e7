/// Fabric-scoped identifiers and keys (Matter Core spec 4.3.2.2, 4.14.2.4, 4.17.2).
public enum FabricKeys {
    public static let compressedFabricIDLength = 8

    /// Compressed Fabric Identifier = HKDF(root public key without the 0x04 prefix (64 bytes),
    /// salt = Fabric ID as 8 big-endian bytes, info = "CompressedFabric", 8 bytes).
    public static func compressedFabricID(rootPublicKey: [UInt8], fabricID: UInt64) throws(MatterCryptoError) -> [UInt8] {
        try requireLength(rootPublicKey, P256PublicKey.uncompressedLength, "root public key")
        guard rootPublicKey[0] == 0x04 else { throw .invalidPublicKey }
        return KeyDerivation.hkdf(Array(rootPublicKey[1...]), salt: bigEndianBytes(fabricID), info: "CompressedFabric", length: 8)
    }

    /// The compressed fabric ID as the 64-bit number shown in operational instance names.
    public static func compressedFabricIDValue(rootPublicKey: [UInt8], fabricID: UInt64) throws(MatterCryptoError) -> UInt64 {
        try compressedFabricID(rootPublicKey: rootPublicKey, fabricID: fabricID).reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Operational group key (and the IPK, the group key of key set 0) = HKDF(epoch key,
    /// salt = compressed fabric ID, info = "GroupKey v1.0", 16).
    public static func operationalGroupKey(epochKey: [UInt8], compressedFabricID: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        try requireLength(epochKey, 16, "epoch key")
        try requireLength(compressedFabricID, compressedFabricIDLength, "compressed fabric ID")
        return KeyDerivation.hkdf(epochKey, salt: compressedFabricID, info: "GroupKey v1.0", length: 16)
    }

    /// Group session ID = HKDF(operational group key, salt = [], info = "GroupKeyHash", 2) as a big-endian UInt16.
    public static func groupSessionID(operationalGroupKey: [UInt8]) throws(MatterCryptoError) -> UInt16 {
        try requireLength(operationalGroupKey, 16, "operational group key")
        let b = KeyDerivation.hkdf(operationalGroupKey, salt: [], info: "GroupKeyHash", length: 2)
        return UInt16(b[0]) << 8 | UInt16(b[1])
    }

    /// Privacy key = HKDF(encryption key, salt = [], info = "PrivacyKey", 16) (spec 4.9.2).
    public static func privacyKey(encryptionKey: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        try requireLength(encryptionKey, 16, "encryption key")
        return KeyDerivation.hkdf(encryptionKey, salt: [], info: "PrivacyKey", length: 16)
    }

    /// CASE destination identifier (spec 4.14.2.4) = HMAC(IPK, InitiatorRandom || RootPublicKey ||
    /// FabricID (8 bytes LE) || NodeID (8 bytes LE)).
    public static func destinationID(
        ipk: [UInt8], initiatorRandom: [UInt8], rootPublicKey: [UInt8],
        fabricID: UInt64, nodeID: UInt64
    ) throws(MatterCryptoError) -> [UInt8] {
        try requireLength(ipk, 16, "IPK")
        try requireLength(rootPublicKey, P256PublicKey.uncompressedLength, "root public key")
        let message = initiatorRandom + rootPublicKey + littleEndianBytes(fabricID) + littleEndianBytes(nodeID)
        return MatterHash.hmacSHA256(key: ipk, message: message)
    }
}
