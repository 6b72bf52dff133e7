import MatterCrypto
import MatterModel
import NIOCore

/// CASE, initiator side (Matter Core spec 4.14.2): establishes an operational
/// session with a node on one of our fabrics.
public struct CASEInitiator: Sendable {
    public let manager: ExchangeManager
    public var stepTimeout: Duration
    /// Matter-epoch seconds for checking the responder's certificates; nil skips validity periods.
    public var certificateValidationTime: UInt32?

    public init(manager: ExchangeManager, stepTimeout: Duration = .seconds(30), certificateValidationTime: UInt32? = nil) {
        self.manager = manager
        self.stepTimeout = stepTimeout
        self.certificateValidationTime = certificateValidationTime
    }

    /// A resumption record from an earlier session with the same peer (from `SessionInfo` of that
    /// session's establishment, see `establish`'s result); nil runs a full CASE.
    public struct Resumption: Sendable, Hashable {
        public var resumptionID: [UInt8]
        public var sharedSecret: [UInt8]
        public init(resumptionID: [UInt8], sharedSecret: [UInt8]) {
            self.resumptionID = resumptionID
            self.sharedSecret = sharedSecret
        }
    }

    public struct Result: Sendable {
        public let session: SessionInfo
        /// Keep it to resume the session later.
        public let resumption: Resumption
    }

    /// Runs CASE with node `peerNodeID` of `fabric` at `address`.
    public func establish(
        with address: SocketAddress, peerNodeID: NodeID, fabric: OperationalFabric,
        resumption: Resumption? = nil
    ) async throws(SecureChannelError) -> Result {
        let unsecured = await manager.openUnsecuredSession(to: address)
        let exchange: Exchange
        do { exchange = try await manager.openExchange(session: unsecured, protocolID: .secureChannel) } catch {
            throw .transport(error)
        }
        guard let sessionID = await manager.allocateSessionID() else { throw .busy }
        do {
            let result = try await run(
                exchange: exchange, address: address, peerNodeID: peerNodeID, fabric: fabric,
                resumption: resumption, sessionID: sessionID)
            await exchange.close()
            await manager.removeUnsecuredSession(unsecured)
            return result
        } catch {
            await manager.releaseSessionID(sessionID)
            switch error {
            case .invalidMessage, .invalidCredentials, .crypto, .unexpectedOpcode:
                await exchange.sendStatusReport(.invalidParameter)
            default:
                break
            }
            await exchange.close()
            throw error
        }
    }

    private func run(
        exchange: Exchange, address: SocketAddress, peerNodeID: NodeID, fabric: OperationalFabric,
        resumption: Resumption?, sessionID: UInt16
    ) async throws(SecureChannelError) -> Result {
        let ephemeral = P256KeyPair()
        let initiatorEphemeral = ephemeral.publicKey.uncompressed
        let initiatorRandom = SecureRandom.bytes(caseRandomLength)
        let destinationID: [UInt8]
        var resumeMIC: [UInt8]?
        do {
            destinationID = try FabricKeys.destinationID(
                ipk: fabric.ipk, initiatorRandom: initiatorRandom,
                rootPublicKey: fabric.rootPublicKey, fabricID: fabric.fabricID,
                nodeID: peerNodeID)
            if let r = resumption {
                resumeMIC = try CASEKeys.sigma1ResumeMIC(
                    sharedSecret: r.sharedSecret, initiatorRandom: initiatorRandom,
                    resumptionID: r.resumptionID)
            }
        } catch {
            throw .crypto(error)
        }
        let sigma1Bytes = Sigma1(
            initiatorRandom: initiatorRandom, initiatorSessionID: sessionID, destinationID: destinationID,
            initiatorEphemeralPublicKey: initiatorEphemeral,
            initiatorSessionParameters: manager.configuration.localParameters,
            resumptionID: resumption?.resumptionID, initiatorResumeMIC: resumeMIC
        ).encoded()
        try await exchange.send(.sigma1, sigma1Bytes)

        let reply: Message
        do { reply = try await exchange.receive(timeout: stepTimeout) } catch let error as TransportError {
            throw .transport(error)
        } catch {
            throw .cancelled
        }
        guard reply.protocolID == .secureChannel else { throw .unexpectedOpcode(reply.opcode) }
        switch SecureChannelOpcode(rawValue: reply.opcode) {
        case .sigma2Resume:
            guard let resumption else { throw .unexpectedOpcode(reply.opcode) }
            return try await finishResumption(
                exchange: exchange, reply: reply, address: address, peerNodeID: peerNodeID,
                fabric: fabric, resumption: resumption, initiatorRandom: initiatorRandom,
                sessionID: sessionID)
        case .sigma2:
            break
        case .statusReport:
            guard let report = try? StatusReport.decode(reply.payload) else { throw .invalidMessage("malformed StatusReport") }
            if report.secureChannelCode == .busy { throw .busy }
            if report.secureChannelCode == .noSharedTrustRoots { throw .noSharedTrustRoots }
            throw .peerStatus(report)
        default:
            throw .unexpectedOpcode(reply.opcode)
        }

        let sigma2 = try Sigma2(decoding: reply.payload)
        if let p = sigma2.responderSessionParameters {
            await manager.setPeerParameters(p, forSession: exchange.session.handle)
        }
        let sharedSecret: [UInt8]
        let tbe2Bytes: [UInt8]
        do {
            sharedSecret = try ephemeral.sharedSecret(with: try P256PublicKey(sigma2.responderEphemeralPublicKey))
        } catch {
            throw .crypto(error)
        }
        do {
            let s2k = CASEKeys.sigma2Key(
                sharedSecret: sharedSecret, ipk: fabric.ipk, responderRandom: sigma2.responderRandom,
                responderEphemeralPublicKey: sigma2.responderEphemeralPublicKey,
                sigma1Hash: MatterHash.sha256(sigma1Bytes))
            tbe2Bytes = try AES128CCM(key: s2k).open(sigma2.encrypted2, nonce: CASEKeys.sigma2Nonce)
        } catch {
            throw .invalidMessage("Sigma2 does not decrypt")
        }
        let tbe2 = try CASEEncryptedData(decoding: tbe2Bytes, what: "TBEData2", requireResumptionID: true)
        let identity = try CASEPeerValidation.validate(
            noc: tbe2.noc, icac: tbe2.icac, fabric: fabric,
            time: certificateValidationTime)
        guard identity.nodeID == peerNodeID else { throw .invalidCredentials("responder NOC names another node") }
        let signed2 = CASESignedData(
            noc: tbe2.noc, icac: tbe2.icac,
            senderEphemeralPublicKey: sigma2.responderEphemeralPublicKey,
            receiverEphemeralPublicKey: initiatorEphemeral)
        do {
            try P256PublicKey(identity.nodePublicKey).verifySignature(tbe2.signature, for: signed2.encoded())
        } catch {
            throw .invalidCredentials("Sigma2 signature")
        }

        let signed3 = CASESignedData(
            noc: fabric.noc, icac: fabric.icac, senderEphemeralPublicKey: initiatorEphemeral,
            receiverEphemeralPublicKey: sigma2.responderEphemeralPublicKey)
        let sigma3Bytes: [UInt8]
        do {
            let signature = try fabric.operationalKey.sign(signed3.encoded())
            let tbe3 = CASEEncryptedData(noc: fabric.noc, icac: fabric.icac, signature: signature, resumptionID: nil)
            let s3k = CASEKeys.sigma3Key(
                sharedSecret: sharedSecret, ipk: fabric.ipk,
                sigma1Sigma2Hash: MatterHash.sha256(concatenating: [sigma1Bytes, reply.payload]))
            sigma3Bytes = Sigma3(encrypted3: try AES128CCM(key: s3k).seal(tbe3.encoded(), nonce: CASEKeys.sigma3Nonce)).encoded()
        } catch {
            throw .crypto(error)
        }
        try await exchange.send(.sigma3, sigma3Bytes)
        let status = try await exchange.receive(expecting: .statusReport, timeout: stepTimeout)
        guard let report = try? StatusReport.decode(status.payload) else { throw .invalidMessage("malformed StatusReport") }
        guard report.isSuccess, report.secureChannelCode == .sessionEstablishmentSuccess else { throw .peerStatus(report) }

        let keys = SessionKeys.case(
            sharedSecret: sharedSecret, ipk: fabric.ipk,
            transcriptHash: MatterHash.sha256(concatenating: [sigma1Bytes, reply.payload, sigma3Bytes]))
        let info: SessionInfo
        do {
            info = try await manager.installSecureSession(
                SecureSessionParameters(
                    kind: .case, role: .initiator, localSessionID: sessionID, peerSessionID: sigma2.responderSessionID,
                    keys: keys, localNodeID: fabric.nodeID, peerNodeID: identity.nodeID, fabricIndex: fabric.fabricIndex,
                    caseAuthenticatedTags: identity.caseAuthenticatedTags, peerAddress: address,
                    peerParameters: sigma2.responderSessionParameters ?? .default))
        } catch {
            throw .crypto(error)
        }
        return Result(session: info, resumption: Resumption(resumptionID: tbe2.resumptionID ?? [], sharedSecret: sharedSecret))
    }

    private func finishResumption(
        exchange: Exchange, reply: Message, address: SocketAddress, peerNodeID: NodeID,
        fabric: OperationalFabric, resumption: Resumption, initiatorRandom: [UInt8],
        sessionID: UInt16
    ) async throws(SecureChannelError) -> Result {
        let resume = try Sigma2Resume(decoding: reply.payload)
        let expected: [UInt8]
        do {
            expected = try CASEKeys.sigma2ResumeMIC(
                sharedSecret: resumption.sharedSecret, initiatorRandom: initiatorRandom,
                resumptionID: resume.resumptionID)
        } catch {
            throw .crypto(error)
        }
        guard constantTimeEquals(expected, resume.sigma2ResumeMIC) else { throw .invalidMessage("Sigma2_Resume MIC") }
        // Session keys take the resumption ID we presented in Sigma1 (the MIC above took the new one).
        let keys = SessionKeys.caseResumption(
            sharedSecret: resumption.sharedSecret, initiatorRandom: initiatorRandom,
            resumptionID: resumption.resumptionID)
        let info: SessionInfo
        do {
            // Resumption keeps the peer identity of the original session (spec 4.14.2.2.1).
            info = try await manager.installSecureSession(
                SecureSessionParameters(
                    kind: .case, role: .initiator, localSessionID: sessionID, peerSessionID: resume.responderSessionID,
                    keys: keys, localNodeID: fabric.nodeID, peerNodeID: peerNodeID, fabricIndex: fabric.fabricIndex,
                    peerAddress: address, peerParameters: resume.responderSessionParameters ?? .default))
        } catch {
            throw .crypto(error)
        }
        try await exchange.send(.statusReport, StatusReport.sessionEstablishmentSuccess.encoded())
        // The responder installs its side only on this SigmaFinished: keep the exchange (and
        // the unsecured session) until MRP has it acknowledged.
        do { try await exchange.waitForAcknowledgement() } catch let error as TransportError {
            throw .transport(error)
        } catch {
            throw .cancelled
        }
        return Result(session: info, resumption: Resumption(resumptionID: resume.resumptionID, sharedSecret: resumption.sharedSecret))
    }
}
