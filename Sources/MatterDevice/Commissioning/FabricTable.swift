import Foundation
import MatterModel
import MatterTLV

// The node's fabrics (Matter Core spec 11.18 "Node Operational Credentials"): what AddNOC
// installs and CASE uses to prove the node's operational identity.

/// One fabric the node belongs to. Certificates are kept in Matter TLV form, as received.
public struct FabricInfo: Sendable, Hashable, Codable {
    public var index: FabricIndex
    public var rootCertificate: Data
    public var intermediateCertificate: Data?
    public var nodeOperationalCertificate: Data
    /// The operational private key (raw P-256 scalar) the CSR was made from.
    public var operationalPrivateKey: Data
    /// The IPK epoch key from AddNOC (spec 4.15.2: the operational group key derives from it).
    public var ipkEpochKey: Data
    public var adminVendorID: VendorID
    public var label: String
    // Read from the certificates when the fabric was added.
    public var fabricID: UInt64
    public var nodeID: NodeID
    /// Uncompressed P-256 point (65 octets) of the root certificate.
    public var rootPublicKey: Data
    public var compressedFabricID: UInt64
    public var cats: [UInt32]

    public init(
        index: FabricIndex, rootCertificate: Data, intermediateCertificate: Data?,
        nodeOperationalCertificate: Data, operationalPrivateKey: Data, ipkEpochKey: Data,
        adminVendorID: VendorID, label: String = "", fabricID: UInt64, nodeID: NodeID,
        rootPublicKey: Data, compressedFabricID: UInt64, cats: [UInt32] = []
    ) {
        self.index = index
        self.rootCertificate = rootCertificate
        self.intermediateCertificate = intermediateCertificate
        self.nodeOperationalCertificate = nodeOperationalCertificate
        self.operationalPrivateKey = operationalPrivateKey
        self.ipkEpochKey = ipkEpochKey
        self.adminVendorID = adminVendorID
        self.label = label
        self.fabricID = fabricID
        self.nodeID = nodeID
        self.rootPublicKey = rootPublicKey
        self.compressedFabricID = compressedFabricID
        self.cats = cats
    }

    /// FabricDescriptorStruct (spec 11.18.4.5).
    public var descriptorTLV: TLVValue {
        .structure([
            TLVElement(tag: .context(1), .bytes([UInt8](rootPublicKey))),
            TLVElement(tag: .context(2), .unsigned(UInt64(adminVendorID))),
            TLVElement(tag: .context(3), .unsigned(fabricID)),
            TLVElement(tag: .context(4), .unsigned(nodeID)),
            TLVElement(tag: .context(5), .utf8(label)),
            TLVElement(tag: .context(FieldDefinition.fabricIndexTag), .unsigned(UInt64(index))),
        ])
    }

    /// NOCStruct (spec 11.18.4.4).
    public var nocTLV: TLVValue {
        .structure([
            TLVElement(tag: .context(1), .bytes([UInt8](nodeOperationalCertificate))),
            TLVElement(tag: .context(2), intermediateCertificate.map { .bytes([UInt8]($0)) } ?? .null),
            TLVElement(tag: .context(FieldDefinition.fabricIndexTag), .unsigned(UInt64(index))),
        ])
    }
}

/// The fabrics of one node, indexed 1...254 (spec 7.5.2 "Fabric Index").
public struct FabricTable: Sendable, Hashable, Codable {
    public private(set) var fabrics: [FabricInfo] = []
    public var capacity: Int

    public init(capacity: Int = 5) { self.capacity = capacity }

    public var isFull: Bool { fabrics.count >= capacity }

    public subscript(index: FabricIndex) -> FabricInfo? { fabrics.first { $0.index == index } }

    /// The index the last added fabric got; kept across restarts (nil on no fabric, and in
    /// older state files, where the highest index in use stands for it).
    public var lastAllocatedIndex: FabricIndex?

    /// The first unused index after the last one allocated, wrapping from 254 to 1: a removed
    /// fabric's index is not given to the next fabric (TC-CADMIN-1.15 step 15), as
    /// connectedhomeip's FabricTable allocates them (its next available fabric index).
    public func nextIndex() -> FabricIndex? {
        let last = Int(lastAllocatedIndex ?? fabrics.map(\.index).max() ?? 0)
        return (1...254).lazy.map { FabricIndex((last - 1 + $0) % 254 + 1) }.first { candidate in
            !fabrics.contains { $0.index == candidate }
        }
    }

    /// Spec 11.18.6.8: the same root public key and fabric ID may not be added twice.
    public func conflicts(rootPublicKey: Data, fabricID: UInt64, except index: FabricIndex? = nil) -> Bool {
        fabrics.contains { $0.index != index && $0.rootPublicKey == rootPublicKey && $0.fabricID == fabricID }
    }

    public mutating func upsert(_ fabric: FabricInfo) {
        if let i = fabrics.firstIndex(where: { $0.index == fabric.index }) {
            fabrics[i] = fabric
        } else {
            fabrics.append(fabric)
            fabrics.sort { $0.index < $1.index }
            lastAllocatedIndex = fabric.index
        }
    }

    @discardableResult
    public mutating func remove(_ index: FabricIndex) -> FabricInfo? {
        guard let i = fabrics.firstIndex(where: { $0.index == index }) else { return nil }
        let removed = fabrics.remove(at: i)
        // On no fabric the node is as at first boot: indexes start again at 1.
        if fabrics.isEmpty { lastAllocatedIndex = nil }
        return removed
    }
}
