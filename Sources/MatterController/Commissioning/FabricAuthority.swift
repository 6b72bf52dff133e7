import Foundation
import MatterCrypto
import MatterModel
import MatterProtocol

/// Everything a controller must keep to stay the administrator of its fabric: the CA's
/// keys and certificates, the fabric's IDs and IPK, and the controller's own operational
/// identity. A plain value so the home graph can persist it (as JSON) and reload it.
public struct FabricCredentials: Sendable, Hashable, Codable {
    public var fabricID: UInt64
    /// Root CA key (raw P-256 scalar) and its RCAC (Matter TLV).
    public var rootKey: [UInt8]
    public var rootCertificate: [UInt8]
    /// Optional intermediate CA: its key and ICAC (Matter TLV).
    public var intermediateKey: [UInt8]?
    public var intermediateCertificate: [UInt8]?
    /// The IPK epoch key delivered with AddNOC (16 bytes).
    public var ipkEpochKey: [UInt8]
    /// The controller's own operational node ID, key and NOC.
    public var controllerNodeID: UInt64
    public var controllerKey: [UInt8]
    public var controllerNOC: [UInt8]
    /// Vendor ID the controller announces as administrator (AddNOC's AdminVendorId).
    public var adminVendorID: UInt16
}

/// The fabric's certificate authority (Matter Core spec 6.4, 6.5): a root (RCAC) and an
/// optional intermediate (ICAC) that sign operational certificates (NOCs) for the
/// public keys in commissionees' CSRs, and the controller's own NOC on the same fabric.
public struct FabricAuthority: Sendable {
    public let credentials: FabricCredentials
    let rootKey: P256KeyPair
    let root: MatterCertificate
    let intermediateKey: P256KeyPair?
    let intermediate: MatterCertificate?
    let controllerKey: P256KeyPair

    /// Creates a fresh fabric: new root (and intermediate when asked), random fabric ID and IPK.
    public static func create(
        fabricID: UInt64? = nil, controllerNodeID: NodeID = 0x0000_0001_B669_0001,
        withIntermediate: Bool = true, adminVendorID: UInt16 = IDSpace.Prefix.test.lowerBound
    ) throws -> FabricAuthority {
        var id = fabricID ?? 0
        while id == 0 { id = SecureRandom.bytes(8).reduce(0) { $0 << 8 | UInt64($1) } & 0x7FFF_FFFF_FFFF_FFFF }
        let notBefore = Self.notBefore
        let rootKey = P256KeyPair()
        let root = try MatterCertificateIssuer.issueRoot(key: rootKey, rcacID: 1, fabricID: id, notBefore: notBefore)
        var icacKey: P256KeyPair?
        var icac: MatterCertificate?
        if withIntermediate {
            let key = P256KeyPair()
            icac = try MatterCertificateIssuer.issueIntermediate(
                publicKey: key.publicKey, icacID: 2, fabricID: id,
                issuer: root, issuerKey: rootKey, notBefore: notBefore)
            icacKey = key
        }
        let controllerKey = P256KeyPair()
        let signer = icac ?? root
        let noc = try MatterCertificateIssuer.issueNode(
            publicKey: controllerKey.publicKey, nodeID: controllerNodeID, fabricID: id,
            issuer: signer, issuerKey: icacKey ?? rootKey, notBefore: notBefore)
        let credentials = FabricCredentials(
            fabricID: id, rootKey: rootKey.rawPrivateKey, rootCertificate: root.tlvEncoded,
            intermediateKey: icacKey?.rawPrivateKey, intermediateCertificate: icac?.tlvEncoded,
            ipkEpochKey: SecureRandom.bytes(16), controllerNodeID: controllerNodeID,
            controllerKey: controllerKey.rawPrivateKey, controllerNOC: noc.tlvEncoded, adminVendorID: adminVendorID)
        return try FabricAuthority(credentials: credentials)
    }

    /// Reloads a persisted fabric, checking that keys and certificates belong together.
    public init(credentials: FabricCredentials) throws {
        self.credentials = credentials
        rootKey = try P256KeyPair(rawPrivateKey: credentials.rootKey)
        root = try MatterCertificate(tlv: credentials.rootCertificate)
        guard root.publicKey == rootKey.publicKey.uncompressed else {
            throw ControllerError.invalidArgument("fabric root key does not match its certificate")
        }
        if let k = credentials.intermediateKey, let c = credentials.intermediateCertificate {
            let key = try P256KeyPair(rawPrivateKey: k)
            let cert = try MatterCertificate(tlv: c)
            guard cert.publicKey == key.publicKey.uncompressed else {
                throw ControllerError.invalidArgument("fabric intermediate key does not match its certificate")
            }
            intermediateKey = key
            intermediate = cert
        } else {
            intermediateKey = nil
            intermediate = nil
        }
        controllerKey = try P256KeyPair(rawPrivateKey: credentials.controllerKey)
        guard credentials.ipkEpochKey.count == 16 else { throw ControllerError.invalidArgument("IPK epoch key must be 16 bytes") }
    }

    public var fabricID: UInt64 { credentials.fabricID }
    public var controllerNodeID: NodeID { credentials.controllerNodeID }
    public var rootCertificate: [UInt8] { credentials.rootCertificate }
    public var intermediateCertificate: [UInt8]? { credentials.intermediateCertificate }
    public var ipkEpochKey: [UInt8] { credentials.ipkEpochKey }

    /// The compressed fabric ID, which names the fabric in `_matter._tcp` instance names.
    public func compressedFabricID() throws -> UInt64 {
        try FabricKeys.compressedFabricIDValue(rootPublicKey: root.publicKey, fabricID: fabricID)
    }

    /// Signs a NOC for the key in a commissionee's CSR (DER, from CSRResponse).
    public func issueNOC(csr: [UInt8], nodeID: NodeID) throws -> [UInt8] {
        let cert = try MatterCertificateIssuer.issueNode(
            csr: csr, nodeID: nodeID, fabricID: fabricID,
            issuer: intermediate ?? root, issuerKey: intermediateKey ?? rootKey,
            notBefore: Self.notBefore)
        return cert.tlvEncoded
    }

    /// The controller's side of the fabric, as CASE needs it.
    public func operationalFabric() throws -> OperationalFabric {
        try OperationalFabric(
            fabricIndex: 1, nodeID: controllerNodeID, rootCertificate: credentials.rootCertificate,
            noc: credentials.controllerNOC, icac: credentials.intermediateCertificate,
            ipkEpochKey: credentials.ipkEpochKey, operationalKey: controllerKey)
    }

    /// Certificates start a day in the past so small clock differences never reject them.
    static var notBefore: UInt32 {
        MatterEpoch.seconds(fromUnix: Int64(Date().timeIntervalSince1970) - 86_400)
    }
}
