import Foundation
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// A node with the root node's commissioning clusters and a light, and a commissioner
// built from MatterCrypto that drives it the way a controller does over PASE and CASE.

enum CommissioningIDs {
    static let accessControl = ClusterID(0x001F)
    static let generalCommissioning = ClusterID(0x0030)
    static let networkCommissioning = ClusterID(0x0031)
    static let generalDiagnostics = ClusterID(0x0033)
    static let administratorCommissioning = ClusterID(0x003C)
    static let operationalCredentials = ClusterID(0x003E)
    static let groupKeyManagement = ClusterID(0x003F)
    static let vendorID: UInt16 = 0xFFF1
    static let productID: UInt16 = 0x8001
}

/// The published connectedhomeip test PAA and CD signing credentials (test only).
let testAuthority = AttestationAuthority.connectedhomeipTest

/// A fresh state directory, removed by the caller.
func temporaryStateDirectory() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("matter-node-\(UUID().uuidString)")
}

/// Root node with Basic Information and the commissioning clusters, and an On/Off light on endpoint 1.
func commissionableDescription(locationCapability: RegulatoryLocation? = nil) -> NodeDescription {
    let root = EndpointDescription(
        number: 0, deviceTypes: [deviceType(IDs.rootNode)],
        serverClusters: [
            ClusterInstanceDescription(
                id: IDs.basicInformation,
                attributes: [
                    AttributeID(0x0002): .unsigned(UInt64(CommissioningIDs.vendorID)),
                    AttributeID(0x0004): .unsigned(UInt64(CommissioningIDs.productID)),
                ])
        ] + ClusterInstanceDescription.rootNodeCommissioningClusters)
    let light = EndpointDescription(
        number: 1, deviceTypes: [deviceType(IDs.dimmableLight)],
        serverClusters: [ClusterInstanceDescription(id: IDs.onOff, features: ["LT"])])
    return NodeDescription(endpoints: [root, light])
}

/// A commissionable node whose state lives in `directory` (attestation minted there once).
func commissionableNode(
    stateDirectory directory: URL?, clock: ManualClock, configure: (inout CommissioningConfiguration) -> Void = { _ in }
) throws -> MatterNode {
    let store = try directory.map { try NodeStateStore(directory: $0) }
    let credentials = try DeviceAttestationProvisioning.loadOrMint(
        store: store, vendorID: CommissioningIDs.vendorID, productID: CommissioningIDs.productID,
        deviceTypeID: 0x0101, authority: testAuthority)
    var configuration = CommissioningConfiguration(stateStore: store, attestation: credentials)
    configure(&configuration)
    return try MatterNode(description: commissionableDescription(), clock: clock, logger: quietLogger, commissioning: configuration)
}

func randomBytes(_ count: Int) -> [UInt8] { SecureRandom.bytes(count) }

/// What a commissioner knows of its session with the node.
func paseSession(_ id: UInt64) -> SessionContext {
    SessionContext(id: SessionID(id), subject: .pase(), attestationChallenge: randomBytes(16))
}

func caseSession(_ id: UInt64, fabric: FabricIndex, node: NodeID, cats: [UInt32] = []) -> SessionContext {
    SessionContext(
        id: SessionID(id), subject: SubjectDescriptor(authMode: .case, fabricIndex: fabric, subject: node, caseAuthenticatedTags: cats),
        attestationChallenge: randomBytes(16))
}

/// Errors a test commissioner reports with where it stopped.
struct CommissionerFailure: Error, CustomStringConvertible {
    var description: String
}

/// A commissioner with its own root CA: fabric ID, root key and the administrator's node ID.
struct TestCommissioner {
    let fabricID: UInt64
    let adminNodeID: NodeID
    let rootKey = P256KeyPair()
    let root: MatterCertificate
    let ipk = randomBytes(16)

    init(fabricID: UInt64 = 0x2906_C908_D115_D362, adminNodeID: NodeID = 0x1122) throws {
        self.fabricID = fabricID
        self.adminNodeID = adminNodeID
        root = try MatterCertificateIssuer.issueRoot(key: rootKey, rcacID: 1, fabricID: fabricID, notBefore: 0)
    }

    func noc(fromCSR csr: [UInt8], nodeID: NodeID) throws -> MatterCertificate {
        try MatterCertificateIssuer.issueNode(csr: csr, nodeID: nodeID, fabricID: fabricID, issuer: root, issuerKey: rootKey, notBefore: 0)
    }

    func adminSession(_ id: UInt64, fabric: FabricIndex) -> SessionContext {
        caseSession(id, fabric: fabric, node: adminNodeID)
    }

    /// ArmFailSafe, CSRRequest, AddTrustedRootCertificate and AddNOC over `session`;
    /// returns the new fabric index (the commissioning is not completed).
    func addFabric(to node: MatterNode, over session: SessionContext, deviceNodeID: NodeID = 0x4D0A) async throws -> FabricIndex {
        let arm = try await node.call(0, CommissioningIDs.generalCommissioning, 0x00, fields((0, u(60)), (1, u(0))), session: session)
        guard arm[context: 0] == u(0) else { throw CommissionerFailure(description: "ArmFailSafe: \(arm)") }
        let csrResponse = try await node.call(
            0, CommissioningIDs.operationalCredentials, 0x04,
            fields((0, .bytes(randomBytes(32)))), session: session)
        guard let elements = csrResponse[context: 0]?.bytesValue else {
            throw CommissionerFailure(description: "CSRResponse: \(csrResponse)")
        }
        let csr = try DeviceAttestation.parseNOCSRElements(elements).csr
        let rootStatus = await node.invoke(
            CommandPath(endpoint: 0, cluster: CommissioningIDs.operationalCredentials, command: CommandID(0x0B)),
            fields: fields((0, .bytes(root.tlvEncoded))), session: session)
        guard rootStatus == .success else { throw CommissionerFailure(description: "AddTrustedRootCertificate: \(rootStatus)") }
        let noc = try noc(fromCSR: csr, nodeID: deviceNodeID)
        let nocResponse = try await node.call(
            0, CommissioningIDs.operationalCredentials, 0x06,
            fields(
                (0, .bytes(noc.tlvEncoded)), (2, .bytes(ipk)), (3, .unsigned(adminNodeID)), (4, u(CommissioningIDs.vendorID))),
            session: session)
        guard nocResponse[context: 0] == u(0), let index = nocResponse[context: 1]?.uintValue else {
            throw CommissionerFailure(description: "NOCResponse: \(nocResponse)")
        }
        return FabricIndex(index)
    }

    /// The whole flow: a PASE session adds the fabric, a CASE session completes it.
    func commission(_ node: MatterNode, paseID: UInt64, caseID: UInt64) async throws -> FabricIndex {
        let pase = paseSession(paseID)
        await node.paseSessionEstablished(pase)
        let index = try await addFabric(to: node, over: pase)
        let complete = try await node.call(
            0, CommissioningIDs.generalCommissioning, 0x04, fields(), session: adminSession(caseID, fabric: index))
        guard complete[context: 0] == u(0) else { throw CommissionerFailure(description: "CommissioningComplete: \(complete)") }
        await node.sessionClosed(pase.id!)
        return index
    }
}

extension MatterNode {
    /// Invokes a command that answers with a response command; throws with the status otherwise.
    func call(
        _ endpoint: EndpointNumber, _ cluster: ClusterID, _ command: UInt32, _ fields: TLVValue,
        session: SessionContext?, timed: Bool = false
    ) async throws -> TLVValue {
        let result = await invoke(
            CommandPath(endpoint: endpoint, cluster: cluster, command: CommandID(command)),
            fields: fields, session: session, timed: timed)
        guard case .response(_, let value) = result else {
            throw CommissionerFailure(description: "command \(cluster)/\(command) answered \(result)")
        }
        return value
    }

    func status(
        _ endpoint: EndpointNumber, _ cluster: ClusterID, _ command: UInt32, _ fields: TLVValue = .structure([]),
        session: SessionContext?, timed: Bool = false
    ) async -> InvokeResult {
        await invoke(
            CommandPath(endpoint: endpoint, cluster: cluster, command: CommandID(command)), fields: fields, session: session, timed: timed)
    }

    func value(
        _ endpoint: EndpointNumber, _ cluster: ClusterID, _ attribute: UInt32, session: SessionContext?,
        fabricFiltered: Bool = true
    ) -> Result<TLVValue, InteractionStatus> {
        read(
            AttributePath(endpoint: endpoint, cluster: cluster, attribute: AttributeID(attribute)),
            session: session, fabricFiltered: fabricFiltered
        ).map(\.value)
    }
}

/// Collects commissioning events as they arrive.
final class EventRecorder: Sendable {
    private let task: Task<[CommissioningEvent], Never>

    init(_ stream: AsyncStream<CommissioningEvent>) {
        task = Task {
            var all: [CommissioningEvent] = []
            for await event in stream { all.append(event) }
            return all
        }
    }

    /// Every event until the node stopped.
    func events(stopping node: MatterNode) async -> [CommissioningEvent] {
        await node.stop()
        return await task.value
    }
}

func listItems(_ value: TLVValue?) -> [TLVValue] { value?.listItems ?? [] }
