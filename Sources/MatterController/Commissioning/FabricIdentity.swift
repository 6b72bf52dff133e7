import MatterCrypto
import MatterModel
import MatterProtocol

/// A node's operational identity on a fabric (Matter Core spec 6.4): what CASE needs and
/// nothing more. A controller that is not the fabric's CA (a hub the CA issued a NOC to)
/// runs with this alone; it can reach the fabric's nodes but not commission new ones.
public struct FabricIdentity: Sendable, Hashable {
    public var fabricID: UInt64
    public var nodeID: NodeID
    /// The fabric's RCAC, optional ICAC and this node's NOC (Matter TLV).
    public var rootCertificate: [UInt8]
    public var intermediateCertificate: [UInt8]?
    public var noc: [UInt8]
    /// The NOC's private key (raw P-256 scalar).
    public var operationalKey: [UInt8]
    /// The fabric's IPK epoch key (16 bytes).
    public var ipkEpochKey: [UInt8]

    /// Checks that the pieces belong together: the key is the NOC's, the NOC names this
    /// node and fabric, the IPK has the right size.
    public init(
        fabricID: UInt64, nodeID: NodeID, rootCertificate: [UInt8], intermediateCertificate: [UInt8]?, noc: [UInt8],
        operationalKey: [UInt8], ipkEpochKey: [UInt8]
    ) throws {
        let key: P256KeyPair
        let certificate: MatterCertificate
        do {
            _ = try MatterCertificate(tlv: rootCertificate)
            certificate = try MatterCertificate(tlv: noc)
            key = try P256KeyPair(rawPrivateKey: operationalKey)
        } catch {
            throw ControllerError.invalidArgument("operational identity: \(error)")
        }
        guard certificate.publicKey == key.publicKey.uncompressed else {
            throw ControllerError.invalidArgument("operational identity: the private key does not match the NOC")
        }
        guard certificate.subject.nodeID == nodeID, certificate.subject.fabricID == fabricID else {
            throw ControllerError.invalidArgument(
                "operational identity: the NOC names node 0x\(String(certificate.subject.nodeID ?? 0, radix: 16)) on fabric "
                    + "0x\(String(certificate.subject.fabricID ?? 0, radix: 16)), not 0x\(String(nodeID, radix: 16)) on 0x\(String(fabricID, radix: 16))"
            )
        }
        guard ipkEpochKey.count == 16 else {
            throw ControllerError.invalidArgument("operational identity: the IPK epoch key must be 16 bytes")
        }
        self.fabricID = fabricID
        self.nodeID = nodeID
        self.rootCertificate = rootCertificate
        self.intermediateCertificate = intermediateCertificate
        self.noc = noc
        self.operationalKey = operationalKey
        self.ipkEpochKey = ipkEpochKey
    }

    /// The identity as CASE uses it.
    public func operationalFabric() throws -> OperationalFabric {
        try OperationalFabric(
            fabricIndex: 1, nodeID: nodeID, rootCertificate: rootCertificate, noc: noc,
            icac: intermediateCertificate, ipkEpochKey: ipkEpochKey,
            operationalKey: try P256KeyPair(rawPrivateKey: operationalKey))
    }

    /// The compressed fabric ID, which names the fabric in `_matter._tcp` instance names.
    public func compressedFabricID() throws -> UInt64 {
        try FabricKeys.compressedFabricIDValue(rootPublicKey: try MatterCertificate(tlv: rootCertificate).publicKey, fabricID: fabricID)
    }
}

extension FabricAuthority {
    /// The controller's own identity on the fabric.
    public var fabricIdentity: FabricIdentity {
        get throws {
            try FabricIdentity(
                fabricID: fabricID, nodeID: controllerNodeID, rootCertificate: credentials.rootCertificate,
                intermediateCertificate: credentials.intermediateCertificate, noc: credentials.controllerNOC,
                operationalKey: credentials.controllerKey, ipkEpochKey: credentials.ipkEpochKey)
        }
    }

    /// A new operational identity on this fabric for another controller (a hub): a fresh key
    /// pair and a NOC for `nodeID` signed by this CA. The private key leaves with the identity.
    public func issueIdentity(nodeID: NodeID) throws -> FabricIdentity {
        guard OperationalIdentifiers.isOperationalNodeID(nodeID) else {
            throw ControllerError.invalidArgument("node ID 0x\(String(nodeID, radix: 16)) is not an operational node ID")
        }
        guard nodeID != controllerNodeID else {
            throw ControllerError.invalidArgument("node ID 0x\(String(nodeID, radix: 16)) is the controller's own")
        }
        let key = P256KeyPair()
        let noc = try MatterCertificateIssuer.issueNode(
            publicKey: key.publicKey, nodeID: nodeID, fabricID: fabricID,
            issuer: intermediate ?? root, issuerKey: intermediateKey ?? rootKey,
            notBefore: Self.notBefore)
        return try FabricIdentity(
            fabricID: fabricID, nodeID: nodeID, rootCertificate: credentials.rootCertificate,
            intermediateCertificate: credentials.intermediateCertificate, noc: noc.tlvEncoded,
            operationalKey: key.rawPrivateKey, ipkEpochKey: credentials.ipkEpochKey)
    }
}
