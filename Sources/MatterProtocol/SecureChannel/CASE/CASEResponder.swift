import MatterCrypto
import MatterModel
import NIOCore

// CASE, responder side (Matter Core spec 4.14.2): Sigma1 → Sigma2 (or
// Sigma2_Resume), Sigma3 → StatusReport, then the session.

extension SecureChannelServer {
    nonisolated func respondCASE(exchange: Exchange, sigma1 message: Message) async {
        guard message.session.kind == .unsecured else { return }
        var reservedSessionID: UInt16?
        do {
            let info = try await performCASE(exchange: exchange, message: message, reservedSessionID: &reservedSessionID)
            logger.info(
                "CASE session established",
                metadata: [
                    "session": "\(info.localSessionID)", "peer": "\(info.peerNodeID)", "fabric": "\(info.fabricIndex)",
                ])
        } catch {
            if let id = reservedSessionID { await manager.releaseSessionID(id) }
            switch error {
            case .noSharedTrustRoots:
                await exchange.sendStatusReport(.noSharedTrustRoots)
            case .busy:
                await exchange.sendStatusReport(.busy(retryAfter: configuration.busyRetryDelay))
            case .invalidMessage, .invalidCredentials, .crypto, .unexpectedOpcode:
                await exchange.sendStatusReport(.invalidParameter)
            default:
                break
            }
            logger.notice("CASE failed", metadata: ["error": "\(error)"])
            manager.publish(
                .establishmentFailed(
                    EstablishmentFailure(
                        kind: .case, peerAddress: message.source, reason: "\(error)", failureCount: 0)))
        }
    }

    private nonisolated func performCASE(
        exchange: Exchange, message: Message,
        reservedSessionID: inout UInt16?
    ) async throws(SecureChannelError) -> SessionInfo {
        let sigma1 = try Sigma1(decoding: message.payload)
        if let p = sigma1.initiatorSessionParameters {
            await manager.setPeerParameters(p, forSession: message.session.handle)
        }
        let fabricList = await fabrics?.operationalFabrics() ?? []

        if let resumed = try await resumeCASE(
            exchange: exchange, message: message, sigma1: sigma1, fabrics: fabricList,
            reservedSessionID: &reservedSessionID)
        {
            return resumed
        }

        // Find the fabric (and node) the initiator addressed (spec 4.14.2.4).
        var chosen: OperationalFabric?
        for fabric in fabricList {
            guard let candidate = try? fabric.destinationID(initiatorRandom: sigma1.initiatorRandom) else { continue }
            if constantTimeEquals(candidate, sigma1.destinationID) {
                chosen = fabric
                break
            }
        }
        guard let fabric = chosen else { throw .noSharedTrustRoots }
        guard let sessionID = await manager.allocateSessionID() else { throw .busy }
        reservedSessionID = sessionID

        let ephemeral = P256KeyPair()
        let responderEphemeral = ephemeral.publicKey.uncompressed
        let sharedSecret: [UInt8]
        let initiatorEphemeral: P256PublicKey
        do {
            initiatorEphemeral = try P256PublicKey(sigma1.initiatorEphemeralPublicKey)
            sharedSecret = try ephemeral.sharedSecret(with: initiatorEphemeral)
        } catch {
            throw .crypto(error)
        }
        let responderRandom = SecureRandom.bytes(caseRandomLength)
        let resumptionID = SecureRandom.bytes(resumptionIDLength)

        let signed = CASESignedData(
            noc: fabric.noc, icac: fabric.icac, senderEphemeralPublicKey: responderEphemeral,
            receiverEphemeralPublicKey: sigma1.initiatorEphemeralPublicKey)
        let encrypted2: [UInt8]
        do {
            let signature = try fabric.operationalKey.sign(signed.encoded())
            let tbe = CASEEncryptedData(noc: fabric.noc, icac: fabric.icac, signature: signature, resumptionID: resumptionID)
            let s2k = CASEKeys.sigma2Key(
                sharedSecret: sharedSecret, ipk: fabric.ipk, responderRandom: responderRandom,
                responderEphemeralPublicKey: responderEphemeral,
                sigma1Hash: MatterHash.sha256(message.payload))
            encrypted2 = try AES128CCM(key: s2k).seal(tbe.encoded(), nonce: CASEKeys.sigma2Nonce)
        } catch {
            throw .crypto(error)
        }
        let sigma2Bytes = Sigma2(
            responderRandom: responderRandom, responderSessionID: sessionID,
            responderEphemeralPublicKey: responderEphemeral, encrypted2: encrypted2,
            responderSessionParameters: manager.configuration.localParameters
        ).encoded()
        try await exchange.send(.sigma2, sigma2Bytes)

        let sigma3Message = try await exchange.receive(expecting: .sigma3, timeout: configuration.stepTimeout)
        let sigma3 = try Sigma3(decoding: sigma3Message.payload)
        let tbe3Bytes: [UInt8]
        do {
            let s3k = CASEKeys.sigma3Key(
                sharedSecret: sharedSecret, ipk: fabric.ipk,
                sigma1Sigma2Hash: MatterHash.sha256(concatenating: [message.payload, sigma2Bytes]))
            tbe3Bytes = try AES128CCM(key: s3k).open(sigma3.encrypted3, nonce: CASEKeys.sigma3Nonce)
        } catch {
            throw .invalidMessage("Sigma3 does not decrypt")
        }
        let tbe3 = try CASEEncryptedData(decoding: tbe3Bytes, what: "TBEData3", requireResumptionID: false)
        let identity = try await validatePeer(noc: tbe3.noc, icac: tbe3.icac, fabric: fabric)
        let signed3 = CASESignedData(
            noc: tbe3.noc, icac: tbe3.icac,
            senderEphemeralPublicKey: sigma1.initiatorEphemeralPublicKey,
            receiverEphemeralPublicKey: responderEphemeral)
        do {
            try P256PublicKey(identity.nodePublicKey).verifySignature(tbe3.signature, for: signed3.encoded())
        } catch {
            throw .invalidCredentials("Sigma3 signature")
        }

        let keys = SessionKeys.case(
            sharedSecret: sharedSecret, ipk: fabric.ipk,
            transcriptHash: MatterHash.sha256(concatenating: [
                message.payload, sigma2Bytes,
                sigma3Message.payload,
            ]))
        let info: SessionInfo
        do {
            info = try await manager.installSecureSession(
                SecureSessionParameters(
                    kind: .case, role: .responder, localSessionID: sessionID, peerSessionID: sigma1.initiatorSessionID,
                    keys: keys, localNodeID: fabric.nodeID, peerNodeID: identity.nodeID, fabricIndex: fabric.fabricIndex,
                    caseAuthenticatedTags: identity.caseAuthenticatedTags, peerAddress: message.source,
                    peerParameters: sigma1.initiatorSessionParameters ?? .default,
                    resumption: CASEResumptionRecord(
                        resumptionID: resumptionID, sharedSecret: sharedSecret,
                        peerNodeID: identity.nodeID, fabricIndex: fabric.fabricIndex,
                        caseAuthenticatedTags: identity.caseAuthenticatedTags)))
        } catch {
            throw .crypto(error)
        }
        reservedSessionID = nil
        try await exchange.send(.statusReport, StatusReport.sessionEstablishmentSuccess.encoded())
        return info
    }

    /// Validates a peer's NOC chain against the fabric's root and checks it is on that fabric.
    nonisolated func validatePeer(
        noc: [UInt8], icac: [UInt8]?, fabric: OperationalFabric
    ) async throws(SecureChannelError) -> OperationalIdentity {
        let time = await fabrics?.certificateValidationTime()
        return try CASEPeerValidation.validate(noc: noc, icac: icac, fabric: fabric, time: time)
    }

    /// Session resumption (spec 4.14.2.2.1): when Sigma1 names a resumption record we hold and
    /// its MIC verifies, answer with Sigma2_Resume. Returns nil to fall back to a full CASE.
    private nonisolated func resumeCASE(
        exchange: Exchange, message: Message, sigma1: Sigma1, fabrics: [OperationalFabric],
        reservedSessionID: inout UInt16?
    ) async throws(SecureChannelError) -> SessionInfo? {
        guard let resumptionID = sigma1.resumptionID, let mic = sigma1.initiatorResumeMIC,
            let record = await manager.resumptionRecord(id: resumptionID),
            let fabric = fabrics.first(where: { $0.fabricIndex == record.fabricIndex }),
            let expected = try? CASEKeys.sigma1ResumeMIC(
                sharedSecret: record.sharedSecret,
                initiatorRandom: sigma1.initiatorRandom, resumptionID: resumptionID),
            constantTimeEquals(expected, mic)
        else { return nil }
        guard let sessionID = await manager.allocateSessionID() else { throw .busy }
        reservedSessionID = sessionID
        let newResumptionID = SecureRandom.bytes(resumptionIDLength)
        let resumeMIC: [UInt8]
        do {
            resumeMIC = try CASEKeys.sigma2ResumeMIC(
                sharedSecret: record.sharedSecret, initiatorRandom: sigma1.initiatorRandom,
                resumptionID: newResumptionID)
        } catch {
            throw .crypto(error)
        }
        try await exchange.send(
            .sigma2Resume,
            Sigma2Resume(
                resumptionID: newResumptionID, sigma2ResumeMIC: resumeMIC, responderSessionID: sessionID,
                responderSessionParameters: manager.configuration.localParameters
            ).encoded())
        // The initiator confirms with SigmaFinished (a success StatusReport).
        let status = try await exchange.receive(expecting: .statusReport, timeout: configuration.stepTimeout)
        guard let report = try? StatusReport.decode(status.payload), report.isSuccess else {
            throw .invalidMessage("resumption not confirmed")
        }
        await manager.removeResumptionRecord(id: resumptionID)
        // Session keys take the resumption ID the initiator presented (S2RK took the new one).
        let keys = SessionKeys.caseResumption(
            sharedSecret: record.sharedSecret, initiatorRandom: sigma1.initiatorRandom,
            resumptionID: resumptionID)
        let info: SessionInfo
        do {
            info = try await manager.installSecureSession(
                SecureSessionParameters(
                    kind: .case, role: .responder, localSessionID: sessionID, peerSessionID: sigma1.initiatorSessionID,
                    keys: keys, localNodeID: fabric.nodeID, peerNodeID: record.peerNodeID, fabricIndex: record.fabricIndex,
                    caseAuthenticatedTags: record.caseAuthenticatedTags, peerAddress: message.source,
                    peerParameters: sigma1.initiatorSessionParameters ?? .default,
                    resumption: CASEResumptionRecord(
                        resumptionID: newResumptionID, sharedSecret: record.sharedSecret,
                        peerNodeID: record.peerNodeID, fabricIndex: record.fabricIndex,
                        caseAuthenticatedTags: record.caseAuthenticatedTags)))
        } catch {
            throw .crypto(error)
        }
        reservedSessionID = nil
        return info
    }
}

/// Checks of a CASE peer's credentials shared by both roles.
enum CASEPeerValidation {
    static func validate(
        noc: [UInt8], icac: [UInt8]?, fabric: OperationalFabric,
        time: UInt32?
    ) throws(SecureChannelError) -> OperationalIdentity {
        let identity: OperationalIdentity
        do {
            let nocCert = try MatterCertificate(tlv: noc)
            let icacCert = try icac.map { b throws(CertificateError) in try MatterCertificate(tlv: b) }
            let rcac = try MatterCertificate(tlv: fabric.rootCertificate)
            identity = try CertificateChain.validate(noc: nocCert, icac: icacCert, rcac: rcac, at: time)
        } catch {
            throw .invalidCredentials("peer certificate chain: \(error)")
        }
        guard identity.fabricID == fabric.fabricID else { throw .invalidCredentials("peer NOC is on another fabric") }
        guard identity.rootPublicKey == fabric.rootPublicKey else { throw .invalidCredentials("peer chain has another root") }
        return identity
    }
}
