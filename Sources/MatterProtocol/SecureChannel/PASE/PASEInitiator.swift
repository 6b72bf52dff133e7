import MatterCrypto
import NIOCore

/// PASE, commissioner side (Matter Core spec 4.14.1): establishes a PASE session
/// with a commissionee from its setup passcode.
public struct PASEInitiator: Sendable {
    public let manager: ExchangeManager
    /// How long to wait for each response.
    public var stepTimeout: Duration

    public init(manager: ExchangeManager, stepTimeout: Duration = .seconds(30)) {
        self.manager = manager
        self.stepTimeout = stepTimeout
    }

    /// Runs PASE with the node at `address`; returns the installed session.
    public func establish(with address: SocketAddress, passcode: UInt32) async throws(SecureChannelError) -> SessionInfo {
        let unsecured = await manager.openUnsecuredSession(to: address)
        let exchange: Exchange
        do { exchange = try await manager.openExchange(session: unsecured, protocolID: .secureChannel) } catch {
            throw .transport(error)
        }
        guard let sessionID = await manager.allocateSessionID() else { throw .busy }
        do {
            let info = try await run(exchange: exchange, address: address, passcode: passcode, sessionID: sessionID)
            await exchange.close()
            await manager.removeUnsecuredSession(unsecured)
            return info
        } catch {
            await manager.releaseSessionID(sessionID)
            switch error {
            case .passcodeMismatch, .invalidMessage, .crypto, .unexpectedOpcode:
                await exchange.sendStatusReport(.invalidParameter)
            default:
                break
            }
            await exchange.close()
            // Leave the unsecured session to MRP until the status report is acked; it is evicted later.
            throw error
        }
    }

    private func run(
        exchange: Exchange, address: SocketAddress, passcode: UInt32,
        sessionID: UInt16
    ) async throws(SecureChannelError) -> SessionInfo {
        let localParameters = manager.configuration.localParameters
        let request = PBKDFParamRequest(
            initiatorRandom: SecureRandom.bytes(paseRandomLength), initiatorSessionID: sessionID,
            passcodeID: 0, hasPBKDFParameters: false,
            initiatorSessionParameters: localParameters)
        let requestBytes = request.encoded()
        try await exchange.send(.pbkdfParamRequest, requestBytes)
        let responseMessage = try await exchange.receive(expecting: .pbkdfParamResponse, timeout: stepTimeout)
        let response = try PBKDFParamResponse(decoding: responseMessage.payload)
        guard response.initiatorRandom == request.initiatorRandom else {
            throw .invalidMessage("PBKDFParamResponse echoes another initiator random")
        }
        guard let pbkdf = response.pbkdfParameters else { throw .invalidMessage("PBKDFParamResponse without PBKDF parameters") }
        if let p = response.responderSessionParameters {
            await manager.setPeerParameters(p, forSession: exchange.session.handle)
        }
        let context = Spake2p.matterContext(pbkdfParamRequest: requestBytes, pbkdfParamResponse: responseMessage.payload)
        let prover: Spake2pProver
        do {
            prover = try Spake2pProver(context: context, passcode: passcode, salt: pbkdf.salt, iterations: Int(pbkdf.iterations))
        } catch {
            throw .crypto(error)
        }
        try await exchange.send(.pake1, Pake1(pA: prover.shareX).encoded())
        let pake2 = try Pake2(decoding: try await exchange.receive(expecting: .pake2, timeout: stepTimeout).payload)
        let confirmationA: [UInt8]
        let ke: [UInt8]
        do {
            (confirmationA, ke) = try prover.finish(shareY: pake2.pB, confirmationB: pake2.cB)
        } catch .confirmationMismatch {
            throw .passcodeMismatch
        } catch {
            throw .crypto(error)
        }
        try await exchange.send(.pake3, Pake3(cA: confirmationA).encoded())
        let status = try await exchange.receive(expecting: .statusReport, timeout: stepTimeout)
        guard let report = try? StatusReport.decode(status.payload) else { throw .invalidMessage("malformed StatusReport") }
        guard report.isSuccess, report.secureChannelCode == .sessionEstablishmentSuccess else { throw .peerStatus(report) }
        do {
            return try await manager.installSecureSession(
                SecureSessionParameters(
                    kind: .pase, role: .initiator, localSessionID: sessionID, peerSessionID: response.responderSessionID,
                    keys: SessionKeys.pase(Ke: ke), peerAddress: address,
                    peerParameters: response.responderSessionParameters ?? .default))
        } catch {
            throw .crypto(error)
        }
    }
}
