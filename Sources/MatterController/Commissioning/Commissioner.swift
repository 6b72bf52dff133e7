import Foundation
import Logging
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore

/// What commissioning produced.
public struct CommissioningResult: Sendable, Hashable {
    public var nodeID: NodeID
    public var address: SocketAddress
    /// The fabric index the node gave our fabric.
    public var fabricIndex: UInt8
    public var attestation: AttestationResult
}

/// Options of one commissioning.
public struct CommissioningOptions: Sendable {
    /// Trusted PAAs; nil fails attestation unless `allowUntrustedAttestation`.
    public var trustStore: PAATrustStore?
    /// Commission even when the attestation chain is not trusted (the caller's explicit choice).
    public var allowUntrustedAttestation: Bool
    /// Fail-safe length while commissioning (spec 11.10.6.2).
    public var failSafeSeconds: UInt16

    public init(trustStore: PAATrustStore? = nil, allowUntrustedAttestation: Bool = false, failSafeSeconds: UInt16 = 60) {
        self.trustStore = trustStore
        self.allowUntrustedAttestation = allowUntrustedAttestation
        self.failSafeSeconds = failSafeSeconds
    }
}

extension MatterController {
    /// Commissions the node at `address` onto our fabric as `nodeID` (Matter Core spec 5.5):
    /// PASE with the passcode; ArmFailSafe; SetRegulatoryConfig; device attestation
    /// (certificate chain, AttestationRequest, verified against the trust store); CSRRequest;
    /// AddTrustedRootCertificate; AddNOC with a NOC our CA signs for the CSR's key; CASE on
    /// the new fabric; CommissioningComplete over CASE.
    public func commission(
        address: SocketAddress, passcode: UInt32, nodeID: NodeID,
        options: CommissioningOptions = CommissioningOptions()
    ) async throws -> CommissioningResult {
        guard OperationalIdentifiers.isOperationalNodeID(nodeID) else {
            throw ControllerError.invalidArgument("node ID 0x\(String(nodeID, radix: 16)) is not an operational node ID")
        }
        guard let fabric else {
            throw ControllerError.invalidArgument("this controller holds no fabric CA (only an operational identity); it cannot commission")
        }
        let pase: SessionInfo
        do {
            pase = try await establishPASE(with: address, passcode: passcode)
        } catch .passcodeMismatch {
            throw ControllerError.paseFailed("the passcode does not match the device's")
        } catch .transport(let t) {
            throw ControllerError.transport(t, "PASE with \(address)")
        } catch {
            throw ControllerError.paseFailed("\(error)")
        }
        let client = InteractionClient(manager: manager, session: pase.handle, timeout: configuration.responseTimeout)
        do {
            let result = try await runCommissioning(
                client: client, pase: pase, address: address, nodeID: nodeID, fabric: fabric,
                options: options)
            await manager.closeSession(pase.handle, notifyPeer: true)
            return result
        } catch {
            // Disarm the fail-safe so the node rolls back at once rather than on expiry.
            _ = try? await client.invoke(GeneralCommissioning.ArmFailSafe(expiryLengthSeconds: 0, breadcrumb: 0))
            await manager.closeSession(pase.handle, notifyPeer: true)
            throw error
        }
    }

    /// PASE, retried while the node answers BUSY: its one PASE slot is taken (by another
    /// commissioner, or by someone holding it). Backoff from 0.5 s, doubling to 8 s, with
    /// jitter, for up to `paseBusyRetryLimit`.
    private func establishPASE(with address: SocketAddress, passcode: UInt32) async throws(SecureChannelError) -> SessionInfo {
        let initiator = PASEInitiator(manager: manager, stepTimeout: configuration.handshakeStepTimeout)
        let clock = manager.clock
        let deadline = clock.now + configuration.paseBusyRetryLimit
        var delay = Duration.milliseconds(500)
        var busyAnswers = 0
        while true {
            do {
                return try await initiator.establish(with: address, passcode: passcode)
            } catch .busy {
                busyAnswers += 1
                let wait = delay * Double.random(in: 1.0..<1.25)
                guard clock.now + wait < deadline else {
                    logger.notice("PASE with \(address): BUSY \(busyAnswers) times; giving up")
                    throw .busy
                }
                logger.info("PASE with \(address): BUSY, retrying in \(wait)")
                do { try await clock.sleep(until: clock.now + wait) } catch { throw .cancelled }
                delay = min(delay * 2, .seconds(8))
            }
        }
    }

    private func runCommissioning(
        client: InteractionClient, pase: SessionInfo, address: SocketAddress, nodeID: NodeID,
        fabric: FabricAuthority, options: CommissioningOptions
    ) async throws -> CommissioningResult {
        // 1. Fail-safe (spec 11.10.6.2): ArmFailSafeResponse.ErrorCode must be OK.
        let arm = try await step("ArmFailSafe") {
            try await client.invoke(
                GeneralCommissioning.ArmFailSafe(expiryLengthSeconds: options.failSafeSeconds, breadcrumb: 1))
        }
        try checkCommissioningError(arm.errorCode, arm.debugText, "ArmFailSafe")

        // 2. Regulatory configuration: indoor/outdoor, unknown country; a node that refuses it still commissions.
        let regulatoryConfig = GeneralCommissioning.SetRegulatoryConfig(
            newRegulatoryConfig: .indoorOutdoor, countryCode: "XX", breadcrumb: 2)
        if let regulatory = try? await client.invoke(regulatoryConfig), regulatory.errorCode != .ok {
            logger.debug("SetRegulatoryConfig answered \(regulatory)")
        }

        // 3. Device attestation (spec 6.2.3).
        let dac = try await certificate(client, type: .dacCertificate)
        let pai = try await certificate(client, type: .paiCertificate)
        let attestationNonce = SecureRandom.bytes(32)
        let attestation = try await step("AttestationRequest") {
            try await client.invoke(OperationalCredentials.AttestationRequest(attestationNonce: Data(attestationNonce)))
        }
        let elements = [UInt8](attestation.attestationElements), signature = [UInt8](attestation.attestationSignature)
        let verifier = AttestationVerifier(trustStore: options.trustStore, allowUntrusted: options.allowUntrustedAttestation)
        let (attestationResult, dacKey) = try verifier.verify(
            dacDER: dac, paiDER: pai, attestationElements: elements, signature: signature, nonce: attestationNonce,
            attestationChallenge: pase.attestationChallenge)
        if !attestationResult.isTrusted {
            logger.warning("commissioning an untrusted device: \(attestationResult.problems.joined(separator: "; "))")
        }

        // 4. Operational CSR (spec 11.18.6.5), signed with the DAC over our nonce and the challenge.
        let csrNonce = SecureRandom.bytes(32)
        let csrResponse = try await step("CSRRequest") {
            try await client.invoke(OperationalCredentials.CSRRequest(csrNonce: Data(csrNonce)))
        }
        let nocsr = [UInt8](csrResponse.nocsrElements), csrSignature = [UInt8](csrResponse.attestationSignature)
        guard
            DeviceAttestation.verify(
                elements: nocsr, attestationChallenge: pase.attestationChallenge,
                signature: csrSignature, dacPublicKey: dacKey)
        else {
            throw ControllerError.commissioningFailed(step: "CSRRequest", reason: "NOCSR signature does not verify with the DAC key")
        }
        let parsedCSR: DeviceAttestation.ParsedNOCSRElements
        do { parsedCSR = try DeviceAttestation.parseNOCSRElements(nocsr) } catch {
            throw ControllerError.commissioningFailed(step: "CSRRequest", reason: "\(error)")
        }
        guard parsedCSR.csrNonce == csrNonce else {
            throw ControllerError.commissioningFailed(step: "CSRRequest", reason: "CSR nonce is not the one sent")
        }

        // 5. Trusted root, then the NOC (spec 11.18.6.13, 11.18.6.8).
        try await step("AddTrustedRootCertificate") {
            try await client.invoke(OperationalCredentials.AddTrustedRootCertificate(rootCACertificate: Data(fabric.rootCertificate)))
        }
        let noc: [UInt8]
        do { noc = try fabric.issueNOC(csr: parsedCSR.csr, nodeID: nodeID) } catch {
            throw ControllerError.commissioningFailed(step: "AddNOC", reason: "cannot sign the NOC: \(error)")
        }
        let addNOC = OperationalCredentials.AddNOC(
            nocValue: Data(noc), icacValue: fabric.intermediateCertificate.map { Data($0) }, ipkValue: Data(fabric.ipkEpochKey),
            caseAdminSubject: fabric.controllerNodeID, adminVendorId: fabric.credentials.adminVendorID)
        let nocResponse = try await step("AddNOC") { try await client.invoke(addNOC) }
        guard nocResponse.statusCode == .ok else {
            throw ControllerError.commissioningFailed(
                step: "AddNOC", reason: "NOCResponse status \(nocResponse.statusCode.rawValue) \(nocResponse.debugText ?? "")")
        }
        let fabricIndex = nocResponse.fabricIndex ?? 0

        // 6. CASE on the new fabric, then CommissioningComplete over it (spec 5.5 steps 15-16).
        setAddress(address, for: nodeID)
        await invalidateSession(for: nodeID)
        let operational: InteractionClient
        do {
            operational = try await self.client(for: nodeID)
        } catch {
            throw ControllerError.commissioningFailed(step: "CASE", reason: "\(error)")
        }
        let completeCommand = GeneralCommissioning.CommissioningComplete()
        do {
            let complete = try await operational.invoke(completeCommand)
            try checkCommissioningError(complete.errorCode, complete.debugText, "CommissioningComplete")
        } catch let error as ControllerError where error.isConnectivityFailure {
            // MRP gave up, but what it lost may be the answer: the node may have committed. Asked
            // again on the same CASE session, a node that did answers NoFailSafe (its fail-safe is
            // disarmed, spec 11.10.7.6); one that did not answers as it would have the first time.
            // (Seen at 20 % loss: the node on the fabric, the controller saying it failed, and a
            // second commissioning unable to find it, its window closed.)
            let again = try await step("CommissioningComplete") { try await operational.invoke(completeCommand) }
            if again.errorCode != .noFailSafe {
                try checkCommissioningError(again.errorCode, again.debugText, "CommissioningComplete")
            }
        } catch let error as ControllerError {
            throw Self.failure(error, step: "CommissioningComplete")
        }
        return CommissioningResult(nodeID: nodeID, address: address, fabricIndex: fabricIndex, attestation: attestationResult)
    }

    private func certificate(
        _ client: InteractionClient, type: Clusters.OperationalCredentials.CertificateChainTypeEnum
    ) async throws -> [UInt8] {
        let response = try await step("CertificateChainRequest") {
            try await client.invoke(OperationalCredentials.CertificateChainRequest(certificateType: type))
        }
        return [UInt8](response.certificate)
    }

    /// GeneralCommissioning's responses carry ErrorCode (OK or why not) and DebugText.
    private func checkCommissioningError(
        _ code: Clusters.GeneralCommissioning.CommissioningErrorEnum, _ debugText: String, _ step: String
    ) throws {
        guard code == .ok else {
            throw ControllerError.commissioningFailed(step: step, reason: "error code \(code.rawValue) \(debugText)")
        }
    }

    private func step<T: Sendable>(_ name: String, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ControllerError {
            throw Self.failure(error, step: name)
        }
    }

    /// A step's error as commissioning reports it: its own verdicts as they are, anything
    /// else as that step's failure.
    private static func failure(_ error: ControllerError, step: String) -> ControllerError {
        switch error {
        case .commissioningFailed, .attestationFailed, .cancelled: error
        default: .commissioningFailed(step: step, reason: error.description)
        }
    }
}

/// The commissioning clusters' generated commands.
private typealias GeneralCommissioning = Clusters.GeneralCommissioning.Commands
private typealias OperationalCredentials = Clusters.OperationalCredentials.Commands
