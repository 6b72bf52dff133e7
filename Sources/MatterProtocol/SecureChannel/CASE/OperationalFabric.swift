import MatterCrypto
import MatterModel

/// One fabric this node belongs to, as CASE needs it (Matter Core spec 4.14.2).
public struct OperationalFabric: Sendable {
    public var fabricIndex: FabricIndex
    public var fabricID: UInt64
    /// Our operational node ID on the fabric.
    public var nodeID: NodeID
    /// The fabric's root certificate (RCAC, Matter TLV): the trust anchor for peers' NOCs.
    public var rootCertificate: [UInt8]
    /// The RCAC's public key (65 bytes, uncompressed).
    public var rootPublicKey: [UInt8]
    /// Our NOC and optional ICAC (Matter TLV).
    public var noc: [UInt8]
    public var icac: [UInt8]?
    /// The operational IPK: the group key derived from the IPK epoch key (16 bytes, spec 4.14.2.4).
    public var ipk: [UInt8]
    /// Signs our Sigma2/Sigma3.
    public var operationalKey: P256KeyPair

    /// - Parameter ipk: the *operational* IPK (already derived); see `init(…, ipkEpochKey:…)` for the epoch key.
    public init(
        fabricIndex: FabricIndex, nodeID: NodeID, rootCertificate: [UInt8], noc: [UInt8], icac: [UInt8]?,
        ipk: [UInt8], operationalKey: P256KeyPair
    ) throws(SecureChannelError) {
        let rcac: MatterCertificate
        let nocCert: MatterCertificate
        do {
            rcac = try MatterCertificate(tlv: rootCertificate)
            nocCert = try MatterCertificate(tlv: noc)
        } catch {
            throw .invalidCredentials("fabric certificates: \(error)")
        }
        guard let fabricID = nocCert.subject.fabricID else { throw .invalidCredentials("NOC without fabric ID") }
        guard ipk.count == 16 else { throw .invalidCredentials("IPK must be 16 bytes") }
        self.fabricIndex = fabricIndex
        self.fabricID = fabricID
        self.nodeID = nodeID
        self.rootCertificate = rootCertificate
        self.rootPublicKey = rcac.publicKey
        self.noc = noc
        self.icac = icac
        self.ipk = ipk
        self.operationalKey = operationalKey
    }

    /// Derives the operational IPK from the IPK epoch key delivered by AddNOC (spec 4.17.2, 11.18.6.8).
    public init(
        fabricIndex: FabricIndex, nodeID: NodeID, rootCertificate: [UInt8], noc: [UInt8], icac: [UInt8]?,
        ipkEpochKey: [UInt8], operationalKey: P256KeyPair
    ) throws(SecureChannelError) {
        let rcac: MatterCertificate
        let nocCert: MatterCertificate
        do {
            rcac = try MatterCertificate(tlv: rootCertificate)
            nocCert = try MatterCertificate(tlv: noc)
        } catch {
            throw .invalidCredentials("fabric certificates: \(error)")
        }
        guard let fabricID = nocCert.subject.fabricID else { throw .invalidCredentials("NOC without fabric ID") }
        let ipk: [UInt8]
        do {
            let compressed = try FabricKeys.compressedFabricID(rootPublicKey: rcac.publicKey, fabricID: fabricID)
            ipk = try FabricKeys.operationalGroupKey(epochKey: ipkEpochKey, compressedFabricID: compressed)
        } catch {
            throw .crypto(error)
        }
        try self.init(
            fabricIndex: fabricIndex, nodeID: nodeID, rootCertificate: rootCertificate, noc: noc, icac: icac,
            ipk: ipk, operationalKey: operationalKey)
    }

    /// The destination identifier an initiator computes for this node (spec 4.14.2.4).
    public func destinationID(initiatorRandom: [UInt8]) throws(MatterCryptoError) -> [UInt8] {
        try FabricKeys.destinationID(
            ipk: ipk, initiatorRandom: initiatorRandom, rootPublicKey: rootPublicKey,
            fabricID: fabricID, nodeID: nodeID)
    }
}

/// The device layer's view of its fabrics for CASE.
public protocol FabricProvider: Sendable {
    /// The fabrics to answer Sigma1 for (current state; called per handshake).
    func operationalFabrics() async -> [OperationalFabric]
    /// Matter-epoch seconds to check certificate validity at; nil skips the check (no trusted time).
    func certificateValidationTime() async -> UInt32?
}

extension FabricProvider {
    public func certificateValidationTime() async -> UInt32? { nil }
}

/// A fixed list of fabrics (tests, controllers with one fabric).
public struct StaticFabricProvider: FabricProvider {
    public var fabrics: [OperationalFabric]
    public init(_ fabrics: [OperationalFabric]) { self.fabrics = fabrics }
    public func operationalFabrics() async -> [OperationalFabric] { fabrics }
}
