import MatterCrypto
import MatterModel
import NIOCore

// PASE, commissionee side (Matter Core spec 4.14.1): PBKDFParamRequest →
// PBKDFParamResponse, Pake1 → Pake2, Pake3 → StatusReport, then the session.

extension SecureChannelServer {
    nonisolated func respondPASE(exchange: Exchange, request message: Message) async {
        guard message.session.kind == .unsecured else { return }
        let admission = await admitPASE(exchange: exchange, peer: message.source)
        let attempt: UInt64
        let parameters: PASEVerifierParameters
        switch admission {
        case .windowClosed:
            // Not commissionable: like a node without a PASE responder, just ack.
            return
        case .busy:
            await exchange.sendStatusReport(.busy(retryAfter: configuration.busyRetryDelay))
            return
        case .admitted(let a, let p):
            attempt = a
            parameters = p
        }
        var reservedSessionID: UInt16?
        var verdictGiven = false
        // The admitted attempt's unsecured session must outlive any flood of new initiators.
        await manager.pinUnsecuredSession(message.session.handle, true)
        do {
            let info = try await performPASE(
                exchange: exchange, request: message, attempt: attempt, parameters: parameters,
                reservedSessionID: &reservedSessionID, verdictGiven: &verdictGiven)
            await manager.pinUnsecuredSession(message.session.handle, false)
            logger.info("PASE session established", metadata: ["session": "\(info.localSessionID)", "peer": "\(info.peerAddress)"])
        } catch {
            await manager.pinUnsecuredSession(message.session.handle, false)
            if let id = reservedSessionID { await manager.releaseSessionID(id) }
            switch error {
            case .invalidMessage, .passcodeMismatch, .crypto, .unexpectedOpcode:
                await exchange.sendStatusReport(.invalidParameter)
            default:
                break
            }
            // An attempt counts toward closing the window once it got Pake2: from cB the
            // initiator learns whether its passcode was right, whatever it does next (even
            // abandon the exchange by starting another). Before that no passcode was tested.
            guard verdictGiven else {
                logger.debug("PASE aborted", metadata: ["error": "\(error)"])
                await finishPASE(attempt: attempt)
                return
            }
            let (count, closed) = await recordPASEFailure()
            logger.notice("PASE failed", metadata: ["error": "\(error)", "failures": "\(count)"])
            manager.publish(
                .establishmentFailed(
                    EstablishmentFailure(
                        kind: .pase, peerAddress: message.source, reason: "\(error)", failureCount: count)))
            if closed {
                manager.publish(.commissioningWindowClosedAfterFailures(failures: count))
            }
        }
        await finishPASE(attempt: attempt)
    }

    private nonisolated func performPASE(
        exchange: Exchange, request message: Message, attempt: UInt64, parameters: PASEVerifierParameters,
        reservedSessionID: inout UInt16?,
        verdictGiven: inout Bool
    ) async throws(SecureChannelError) -> SessionInfo {
        let request = try PBKDFParamRequest(decoding: message.payload)
        guard request.passcodeID == 0 else { throw .invalidMessage("passcode ID \(request.passcodeID)") }
        if let p = request.initiatorSessionParameters {
            await manager.setPeerParameters(p, forSession: message.session.handle)
        }
        guard let sessionID = await manager.allocateSessionID() else { throw .busy }
        reservedSessionID = sessionID

        let response = PBKDFParamResponse(
            initiatorRandom: request.initiatorRandom, responderRandom: SecureRandom.bytes(paseRandomLength),
            responderSessionID: sessionID,
            pbkdfParameters: request.hasPBKDFParameters ? nil : parameters.pbkdf,
            responderSessionParameters: manager.configuration.localParameters)
        let responseBytes = response.encoded()
        try await exchange.send(.pbkdfParamResponse, responseBytes)

        let pake1 = try Pake1(decoding: try await exchange.receive(expecting: .pake1, timeout: configuration.stepTimeout).payload)
        await pake1Received(attempt: attempt)
        let context = Spake2p.matterContext(pbkdfParamRequest: message.payload, pbkdfParamResponse: responseBytes)
        let keys: Spake2pKeys
        let shareY: [UInt8]
        do {
            let verifier = try Spake2pVerifierRole(context: context, verifier: parameters.verifier)
            keys = try verifier.computeKeys(shareX: pake1.pA)
            shareY = verifier.shareY
        } catch {
            throw .crypto(error)
        }
        verdictGiven = true
        try await exchange.send(.pake2, Pake2(pB: shareY, cB: keys.confirmationB).encoded())

        // A StatusReport instead of Pake3 means the initiator found cB wrong (passcodes differ).
        let pake3 = try Pake3(decoding: try await exchange.receive(expecting: .pake3, timeout: configuration.stepTimeout).payload)
        do { try keys.verifyConfirmationA(pake3.cA) } catch { throw .passcodeMismatch }

        let info: SessionInfo
        do {
            info = try await manager.installSecureSession(
                SecureSessionParameters(
                    kind: .pase, role: .responder, localSessionID: sessionID, peerSessionID: request.initiatorSessionID,
                    keys: SessionKeys.pase(Ke: keys.Ke), peerAddress: message.source,
                    peerParameters: request.initiatorSessionParameters ?? .default))
        } catch {
            throw .crypto(error)
        }
        reservedSessionID = nil
        // Installed first, so the initiator's first encrypted message finds the session.
        try await exchange.send(.statusReport, StatusReport.sessionEstablishmentSuccess.encoded())
        return info
    }
}
