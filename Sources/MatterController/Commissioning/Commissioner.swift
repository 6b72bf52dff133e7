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
            _ = try? await client.invoke(
                command(Clusters.GeneralCommissioning.id, Clusters.GeneralCommissioning.Command.armFailSafe),
                fields: .structure([.context(0, .unsigned(0)), .context(1, .unsigned(0))]))
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
                command(Clusters.GeneralCommissioning.id, Clusters.GeneralCommissioning.Command.armFailSafe),
                fields: .structure([
                    .context(0, .unsigned(UInt64(options.failSafeSeconds))),
                    .context(1, .unsigned(1)),
                ]))
        }
        try checkCommissioningError(arm, "ArmFailSafe")

        // 2. Regulatory configuration: indoor/outdoor, unknown country; a node that refuses it still commissions.
        if let regulatory = try? await client.invoke(
            command(Clusters.GeneralCommissioning.id, Clusters.GeneralCommissioning.Command.setRegulatoryConfig),
            fields: .structure([.context(0, .unsigned(2)), .context(1, .utf8("XX")), .context(2, .unsigned(2))])),
            regulatory.fields?[context: 0]?.uintValue != 0
        {
            logger.debug("SetRegulatoryConfig answered \(String(describing: regulatory.fields))")
        }

        // 3. Device attestation (spec 6.2.3).
        let dac = try await certificate(client, type: 1)
        let pai = try await certificate(client, type: 2)
        let attestationNonce = SecureRandom.bytes(32)
        let attestation = try await step("AttestationRequest") {
            try await client.invoke(
                command(Clusters.OperationalCredentials.id, Clusters.OperationalCredentials.Command.attestationRequest),
                fields: .structure([.context(0, .bytes(attestationNonce))]))
        }
        guard let elements = attestation.fields?[context: 0]?.bytesValue,
            let signature = attestation.fields?[context: 1]?.bytesValue
        else {
            throw ControllerError.commissioningFailed(step: "AttestationRequest", reason: "AttestationResponse lacks its fields")
        }
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
            try await client.invoke(
                command(Clusters.OperationalCredentials.id, Clusters.OperationalCredentials.Command.csrRequest),
                fields: .structure([.context(0, .bytes(csrNonce))]))
        }
        guard let nocsr = csrResponse.fields?[context: 0]?.bytesValue,
            let csrSignature = csrResponse.fields?[context: 1]?.bytesValue
        else {
            throw ControllerError.commissioningFailed(step: "CSRRequest", reason: "CSRResponse lacks its fields")
        }
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
        _ = try await step("AddTrustedRootCertificate") {
            try await client.invoke(
                command(Clusters.OperationalCredentials.id, Clusters.OperationalCredentials.Command.addTrustedRootCertificate),
                fields: .structure([.context(0, .bytes(fabric.rootCertificate))]))
        }
        let noc: [UInt8]
        do { noc = try fabric.issueNOC(csr: parsedCSR.csr, nodeID: nodeID) } catch {
            throw ControllerError.commissioningFailed(step: "AddNOC", reason: "cannot sign the NOC: \(error)")
        }
        var nocFields: [TLVElement] = [.context(0, .bytes(noc))]
        if let icac = fabric.intermediateCertificate { nocFields.append(.context(1, .bytes(icac))) }
        nocFields += [
            .context(2, .bytes(fabric.ipkEpochKey)), .context(3, .unsigned(fabric.controllerNodeID)),
            .context(4, .unsigned(UInt64(fabric.credentials.adminVendorID))),
        ]
        let nocResponse = try await step("AddNOC") {
            try await client.invoke(
                command(Clusters.OperationalCredentials.id, Clusters.OperationalCredentials.Command.addNOC),
                fields: .structure(nocFields))
        }
        guard let statusCode = nocResponse.fields?[context: 0]?.uintValue else {
            throw ControllerError.commissioningFailed(step: "AddNOC", reason: "NOCResponse lacks its status")
        }
        guard statusCode == 0 else {
            let debug = nocResponse.fields?[context: 2]?.stringValue ?? ""
            throw ControllerError.commissioningFailed(step: "AddNOC", reason: "NOCResponse status \(statusCode) \(debug)")
        }
        let fabricIndex = UInt8(clamping: nocResponse.fields?[context: 1]?.uintValue ?? 0)

        // 6. CASE on the new fabric, then CommissioningComplete over it (spec 5.5 steps 15-16).
        setAddress(address, for: nodeID)
        await invalidateSession(for: nodeID)
        let operational: InteractionClient
        do {
            operational = try await self.client(for: nodeID)
        } catch {
            throw ControllerError.commissioningFailed(step: "CASE", reason: "\(error)")
        }
        let completeCommand = command(Clusters.GeneralCommissioning.id, Clusters.GeneralCommissioning.Command.commissioningComplete)
        do {
            let complete = try await operational.invoke(completeCommand)
            try checkCommissioningError(complete, "CommissioningComplete")
        } catch let error as ControllerError where error.isConnectivityFailure {
            // MRP gave up, but what it lost may be the answer: the node may have committed. Asked
            // again on the same CASE session, a node that did answers NoFailSafe (its fail-safe is
            // disarmed, spec 11.10.7.6); one that did not answers as it would have the first time.
            // (Seen at 20 % loss: the node on the fabric, the controller saying it failed, and a
            // second commissioning unable to find it, its window closed.)
            let again = try await step("CommissioningComplete") { try await operational.invoke(completeCommand) }
            let code = again.fields?[context: 0]?.uintValue
            if code != UInt64(Clusters.GeneralCommissioning.CommissioningErrorEnum.noFailSafe.rawValue) {
                try checkCommissioningError(again, "CommissioningComplete")
            }
        } catch let error as ControllerError {
            throw Self.failure(error, step: "CommissioningComplete")
        }
        return CommissioningResult(nodeID: nodeID, address: address, fabricIndex: fabricIndex, attestation: attestationResult)
    }

    private func certificate(_ client: InteractionClient, type: UInt64) async throws -> [UInt8] {
        let response = try await step("CertificateChainRequest") {
            try await client.invoke(
                command(Clusters.OperationalCredentials.id, Clusters.OperationalCredentials.Command.certificateChainRequest),
                fields: .structure([.context(0, .unsigned(type))]))
        }
        guard let der = response.fields?[context: 0]?.bytesValue else {
            throw ControllerError.commissioningFailed(step: "CertificateChainRequest", reason: "no certificate in the response")
        }
        return der
    }

    /// GeneralCommissioning responses carry ErrorCode (0 = OK) and DebugText.
    private func checkCommissioningError(_ response: CommandResponse, _ step: String) throws {
        guard let code = response.fields?[context: 0]?.uintValue else {
            throw ControllerError.commissioningFailed(step: step, reason: "response lacks its error code")
        }
        guard code == 0 else {
            let debug = response.fields?[context: 1]?.stringValue ?? ""
            throw ControllerError.commissioningFailed(step: step, reason: "error code \(code) \(debug)")
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

func command(_ cluster: ClusterID, _ command: CommandID, endpoint: EndpointNumber = 0) -> ConcreteCommandPath {
    ConcreteCommandPath(endpoint: endpoint, cluster: cluster, command: command)
}
