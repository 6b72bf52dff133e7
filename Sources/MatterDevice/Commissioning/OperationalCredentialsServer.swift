import MatterCrypto
import MatterModel
import MatterTLV

/// Node Operational Credentials cluster (Core spec 11.18): device attestation, the CSR,
/// and the NOCs that make the node a member of fabrics. Its list attributes mirror the
/// coordinator's fabric table.
final class OperationalCredentialsServer: StandardClusterServer {
    static let clusterID = Clusters.OperationalCredentials.id

    typealias Attribute = Clusters.OperationalCredentials.Attribute
    typealias Command = Clusters.OperationalCredentials.Command

    /// CertificateChainTypeEnum (11.18.4.2).
    enum CertificateChainType: UInt64 {
        case dac = 1
        case pai = 2
    }

    /// AttestationElements and NOCSRElements are at most 900 bytes (11.18.5.2, 11.18.5.6).
    static let maxElementsLength = 900

    private let configuration: CommissioningConfiguration

    init(configuration: CommissioningConfiguration) {
        self.configuration = configuration
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.nocs, Attribute.fabrics, Attribute.trustedRootCertificates: .array([])
        case Attribute.supportedFabrics: .uint(max(configuration.supportedFabrics, 5))
        case Attribute.commissionedFabrics, Attribute.currentFabricIndex: .uint(0)
        default: nil
        }
    }

    /// CurrentFabricIndex is the reader's accessing fabric (11.18.5.6).
    func readValue(_ attribute: AttributeID, stored: TLVValue, context: ClusterContext) -> TLVValue {
        guard attribute == Attribute.currentFabricIndex, let session = context.session else { return stored }
        return .uint(session.fabricIndex)
    }

    func handles(_ command: CommandID) -> Bool {
        [
            Command.attestationRequest, Command.certificateChainRequest, Command.csrRequest, Command.addNOC, Command.updateNOC,
            Command.updateFabricLabel, Command.removeFabric, Command.addTrustedRootCertificate,
        ].contains(command)
    }

    /// A nonce that is not 32 bytes (11.18.6.1, 11.18.6.5) and an unknown CertificateType
    /// (11.18.6.3) fail the command with INVALID_COMMAND, not the model's CONSTRAINT_ERROR
    /// (TC-DA-1.2 step 13): invoke checks them itself.
    func answersConstraintErrors(_ command: CommandID) -> Bool {
        [Command.attestationRequest, Command.certificateChainRequest, Command.csrRequest].contains(command)
    }

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        guard let session = context.session else { return .failure(.unsupportedAccess) }
        let coordinator = context.commissioning
        switch command {
        case Command.attestationRequest:
            return attestation(nonce: fields.field(0)?.bytesValue, session: session, context: context)
        case Command.certificateChainRequest:
            guard let raw = fields.unsigned(0), let type = CertificateChainType(rawValue: raw) else {
                return .failure(.invalidCommand)
            }
            guard let credentials = configuration.attestation else { return .failure(.failure) }
            let der = type == .dac ? credentials.dac.der : credentials.pai.der
            return .response(Command.certificateChainResponse, .contextStructure([(0, .bytes(der))]))
        case Command.csrRequest:
            guard let nonce = fields.field(0)?.bytesValue, nonce.count == DeviceAttestation.nonceLength else {
                return .failure(.invalidCommand)
            }
            let forUpdate = fields.field(1)?.boolValue ?? false
            switch coordinator.requestCSR(nonce: nonce, forUpdateNOC: forUpdate, session: session) {
            case .success(let result):
                guard result.elements.count <= Self.maxElementsLength else { return .failure(.failure) }
                return .response(Command.csrResponse, .contextStructure([(0, .bytes(result.elements)), (1, .bytes(result.signature))]))
            case .failure(let status):
                return .status(status)
            }
        case Command.addTrustedRootCertificate:
            guard let root = fields.field(0)?.bytesValue else { return .failure(.invalidCommand) }
            return .status(coordinator.addTrustedRoot(root, session: session))
        case Command.addNOC:
            guard let noc = fields.field(0)?.bytesValue, let ipk = fields.field(2)?.bytesValue,
                let subject = fields.unsigned(3), let vendor = fields.unsigned(4), let vendorID = VendorID(exactly: vendor)
            else {
                return .failure(.invalidCommand)
            }
            let request = CommissioningCoordinator.NOCRequest(
                noc: noc, icac: fields.field(1)?.bytesValue, ipk: ipk, caseAdminSubject: subject, adminVendorID: vendorID)
            let outcome = coordinator.addNOC(request, session: session)
            if case .response(.ok, let index?) = outcome,
                let added = coordinator.accessControlEntries.last(where: { $0.fabricIndex == index })
            {
                // The administrator entry AddNOC made is an ACL change like a write's (Core
                // 9.10.7.1, 11.18.6.8; TC-ACL-2.6 step 3): recorded as made over this PASE session.
                AccessControlServer.recordChange(.added, of: added, by: session, context: context)
            }
            return Self.nocResponse(outcome)
        case Command.updateNOC:
            guard let noc = fields.field(0)?.bytesValue else { return .failure(.invalidCommand) }
            return Self.nocResponse(coordinator.updateNOC(noc: noc, icac: fields.field(1)?.bytesValue, session: session))
        case Command.updateFabricLabel:
            guard let label = fields.field(0)?.stringValue else { return .failure(.invalidCommand) }
            guard label.utf8.count <= 32 else { return .failure(.constraintError) }
            return Self.nocResponse(coordinator.updateFabricLabel(label, session: session))
        case Command.removeFabric:
            guard let raw = fields.unsigned(0), let index = FabricIndex(exactly: raw), index != 0, index != 255 else {
                return .failure(.invalidCommand)
            }
            return Self.nocResponse(coordinator.removeFabric(index))
        default:
            return .failure(.unsupportedCommand)
        }
    }

    /// AttestationRequest (11.18.6.1): the Certification Declaration, the nonce and a
    /// timestamp, signed with the DAC key over elements || attestation challenge.
    private func attestation(nonce: [UInt8]?, session: SessionContext, context: ClusterContext) -> InvokeResult {
        guard let nonce, nonce.count == DeviceAttestation.nonceLength else { return .failure(.invalidCommand) }
        guard let credentials = configuration.attestation else { return .failure(.failure) }
        do {
            // Timestamp 0: the node has no trusted time to report.
            let elements = try DeviceAttestation.attestationElements(
                certificationDeclaration: credentials.certificationDeclaration, attestationNonce: nonce, timestamp: 0)
            guard elements.count <= Self.maxElementsLength else { return .failure(.failure) }
            let signature = try DeviceAttestation.sign(
                elements: elements, attestationChallenge: session.attestationChallenge, dacKey: credentials.dacKey)
            return .response(Command.attestationResponse, .contextStructure([(0, .bytes(elements)), (1, .bytes(signature))]))
        } catch {
            context.logger.error("AttestationRequest failed: \(error)")
            return .failure(.failure)
        }
    }

    /// NOCResponse (11.18.6.10): StatusCode [0], FabricIndex [1] on success.
    private static func nocResponse(_ outcome: NOCOutcome) -> InvokeResult {
        switch outcome {
        case .status(let status):
            return .status(status)
        case .response(let status, let index):
            var members: [(UInt8, TLVValue)] = [(0, .uint(status.rawValue))]
            if status == .ok, let index { members.append((1, .uint(index))) }
            return .response(Command.nocResponse, .contextStructure(members))
        }
    }
}
