import Logging
import MatterCrypto
import MatterModel
import MatterProtocol

/// The node's fabrics as CASE needs them (Core spec 4.14.2), read afresh for every
/// handshake: a fabric AddNOC installed under the armed fail-safe is listed too, since
/// the commissioner must reach the node over CASE before CommissioningComplete.
struct NodeFabricProvider: FabricProvider {
    let node: MatterNode
    let logger: Logger

    func operationalFabrics() async -> [OperationalFabric] {
        await node.fabrics.compactMap { fabric in
            do {
                let key = try P256KeyPair(rawPrivateKey: [UInt8](fabric.operationalPrivateKey))
                return try OperationalFabric(
                    fabricIndex: fabric.index, nodeID: fabric.nodeID, rootCertificate: [UInt8](fabric.rootCertificate),
                    noc: [UInt8](fabric.nodeOperationalCertificate), icac: fabric.intermediateCertificate.map { [UInt8]($0) },
                    ipkEpochKey: [UInt8](fabric.ipkEpochKey), operationalKey: key)
            } catch {
                logger.error("fabric \(fabric.index) cannot be used for CASE: \(error)")
                return nil
            }
        }
    }
}
