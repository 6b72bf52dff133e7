import Foundation
import MatterCrypto
import MatterModel
import MatterTLV

/// Node Operational Credentials cluster (Core spec 11.18): device attestation, the CSR,
/// and the NOCs that make the node a member of fabrics. Its list attributes mirror the
/// coordinator's fabric table.
final class OperationalCredentialsServer: OperationalCredentialsHandler {
    static let clusterID = Clusters.OperationalCredentials.id

    typealias Attribute = Clusters.OperationalCredentials.Attribute
    typealias Command = Clusters.OperationalCredentials.Command
    typealias Commands = Clusters.OperationalCredentials.Commands

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

    /// An unknown CertificateType fails CertificateChainRequest with INVALID_COMMAND (11.18.6.3).
    func reply(to error: TLVDecodingError, decoding command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        .failure(command == Command.certificateChainRequest ? .invalidCommand : error.status)
    }

    func attestationRequest(
        _ request: Commands.AttestationRequest, context: ClusterContext
    ) -> CommandReply<Commands.AttestationResponse> {
        guard let session = context.session else { return .failure(.unsupportedAccess) }
        return attestation(nonce: [UInt8](request.attestationNonce), session: session, context: context)
    }

    func certificateChainRequest(
        _ request: Commands.CertificateChainRequest, context: ClusterContext
    ) -> CommandReply<Commands.CertificateChainResponse> {
        guard context.session != nil else { return .failure(.unsupportedAccess) }
        guard let credentials = configuration.attestation else { return .failure(.failure) }
        let der = request.certificateType == .dacCertificate ? credentials.dac.der : credentials.pai.der
        return .response(Commands.CertificateChainResponse(certificate: Data(der)))
    }

    func csrRequest(_ request: Commands.CSRRequest, context: ClusterContext) -> CommandReply<Commands.CSRResponse> {
        guard let session = context.session else { return .failure(.unsupportedAccess) }
        let nonce = [UInt8](request.csrNonce)
        guard nonce.count == DeviceAttestation.nonceLength else { return .failure(.invalidCommand) }
        switch context.commissioning.requestCSR(nonce: nonce, forUpdateNOC: request.isForUpdateNOC ?? false, session: session) {
        case .success(let result):
            guard result.elements.count <= Self.maxElementsLength else { return .failure(.failure) }
            return .response(Commands.CSRResponse(nocsrElements: Data(result.elements), attestationSignature: Data(result.signature)))
        case .failure(let status):
            return .status(status)
        }
    }

    func addTrustedRootCertificate(_ request: Commands.AddTrustedRootCertificate, context: ClusterContext) -> InteractionStatus {
        guard let session = context.session else { return InteractionStatus(.unsupportedAccess) }
        return context.commissioning.addTrustedRoot([UInt8](request.rootCACertificate), session: session)
    }

    func addNOC(_ request: Commands.AddNOC, context: ClusterContext) -> CommandReply<Commands.NOCResponse> {
        guard let session = context.session else { return .failure(.unsupportedAccess) }
        let coordinator = context.commissioning
        let nocRequest = CommissioningCoordinator.NOCRequest(
            noc: [UInt8](request.nocValue), icac: request.icacValue.map { [UInt8]($0) }, ipk: [UInt8](request.ipkValue),
            caseAdminSubject: request.caseAdminSubject, adminVendorID: request.adminVendorId)
        let outcome = coordinator.addNOC(nocRequest, session: session)
        if case .response(.ok, let index?) = outcome,
            let added = coordinator.accessControlEntries.last(where: { $0.fabricIndex == index })
        {
            // The administrator entry AddNOC made is an ACL change like a write's (Core
            // 9.10.7.1, 11.18.6.8; TC-ACL-2.6 step 3): recorded as made over this PASE session.
            AccessControlServer.recordChange(.added, of: added, by: session, context: context)
        }
        return Self.nocResponse(outcome)
    }

    func updateNOC(_ request: Commands.UpdateNOC, context: ClusterContext) -> CommandReply<Commands.NOCResponse> {
        guard let session = context.session else { return .failure(.unsupportedAccess) }
        let outcome = context.commissioning.updateNOC(
            noc: [UInt8](request.nocValue), icac: request.icacValue.map { [UInt8]($0) }, session: session)
        return Self.nocResponse(outcome)
    }

    func updateFabricLabel(_ request: Commands.UpdateFabricLabel, context: ClusterContext) -> CommandReply<Commands.NOCResponse> {
        guard let session = context.session else { return .failure(.unsupportedAccess) }
        guard request.label.utf8.count <= 32 else { return .failure(.constraintError) }
        return Self.nocResponse(context.commissioning.updateFabricLabel(request.label, session: session))
    }

    func removeFabric(_ request: Commands.RemoveFabric, context: ClusterContext) -> CommandReply<Commands.NOCResponse> {
        guard context.session != nil else { return .failure(.unsupportedAccess) }
        guard request.fabricIndex != 0, request.fabricIndex != 255 else { return .failure(.invalidCommand) }
        return Self.nocResponse(context.commissioning.removeFabric(request.fabricIndex))
    }

    /// AttestationRequest (11.18.6.1): the Certification Declaration, the nonce and a
    /// timestamp, signed with the DAC key over elements || attestation challenge.
    private func attestation(
        nonce: [UInt8], session: SessionContext, context: ClusterContext
    ) -> CommandReply<Commands.AttestationResponse> {
        guard nonce.count == DeviceAttestation.nonceLength else { return .failure(.invalidCommand) }
        guard let credentials = configuration.attestation else { return .failure(.failure) }
        do {
            // Timestamp 0: the node has no trusted time to report.
            let elements = try DeviceAttestation.attestationElements(
                certificationDeclaration: credentials.certificationDeclaration, attestationNonce: nonce, timestamp: 0)
            guard elements.count <= Self.maxElementsLength else { return .failure(.failure) }
            let signature = try DeviceAttestation.sign(
                elements: elements, attestationChallenge: session.attestationChallenge, dacKey: credentials.dacKey)
            return .response(Commands.AttestationResponse(attestationElements: Data(elements), attestationSignature: Data(signature)))
        } catch {
            context.logger.error("AttestationRequest failed: \(error)")
            return .failure(.failure)
        }
    }

    /// NOCResponse (11.18.6.10): StatusCode [0], FabricIndex [1] on success.
    private static func nocResponse(_ outcome: NOCOutcome) -> CommandReply<Commands.NOCResponse> {
        switch outcome {
        case .status(let status):
            .status(status)
        case .response(let status, let index):
            .response(Commands.NOCResponse(statusCode: status, fabricIndex: status == .ok ? index : nil))
        }
    }
}
