import MatterCrypto

/// Why a Secure Channel exchange (PASE, CASE, CloseSession) failed.
public enum SecureChannelError: Error, Equatable, Sendable {
    /// A message was missing a field, had a wrong length or could not be decoded.
    case invalidMessage(String)
    /// A message with an opcode this step does not expect.
    case unexpectedOpcode(UInt8)
    /// The peer answered with a StatusReport other than success.
    case peerStatus(StatusReport)
    /// PASE: the SPAKE2+ confirmation did not match (typically a wrong passcode).
    case passcodeMismatch
    /// No commissioning window is open (PASE), or no fabric matched (CASE).
    case noCommissioningWindow
    case noSharedTrustRoots
    /// The peer's certificate chain or signature did not verify.
    case invalidCredentials(String)
    /// Another establishment is in progress (the responder answered BUSY).
    case busy
    case crypto(MatterCryptoError)
    /// The exchange failed underneath (timeout, delivery failure, session closed).
    case transport(TransportError)
    case cancelled
}
