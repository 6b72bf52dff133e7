// Secure Channel conveniences on Exchange shared by the PASE and CASE roles.

extension Exchange {
    /// Sends a Secure Channel message reliably.
    func send(_ opcode: SecureChannelOpcode, _ payload: [UInt8]) async throws(SecureChannelError) {
        do { try await send(opcode: opcode.rawValue, payload: payload, reliable: true) } catch {
            throw .transport(error)
        }
    }

    /// Reports a failure to the peer; errors are ignored (the handshake is over anyway).
    func sendStatusReport(_ report: StatusReport) async {
        try? await send(opcode: SecureChannelOpcode.statusReport.rawValue, payload: report.encoded(), reliable: true)
    }

    /// Receives the next message and requires `opcode`. A StatusReport from the peer
    /// becomes `.peerStatus` (or `.busy`).
    func receive(expecting opcode: SecureChannelOpcode, timeout: Duration?) async throws(SecureChannelError) -> Message {
        let message: Message
        do { message = try await receive(timeout: timeout) } catch let error as TransportError {
            throw .transport(error)
        } catch {
            throw .cancelled
        }
        guard message.protocolID == .secureChannel else { throw .unexpectedOpcode(message.opcode) }
        if message.opcode == opcode.rawValue { return message }
        if message.opcode == SecureChannelOpcode.statusReport.rawValue {
            guard let report = try? StatusReport.decode(message.payload) else {
                throw .invalidMessage("malformed StatusReport")
            }
            if report.secureChannelCode == .busy { throw .busy }
            throw .peerStatus(report)
        }
        throw .unexpectedOpcode(message.opcode)
    }
}
