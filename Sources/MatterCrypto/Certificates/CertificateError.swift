/// Why a certificate, CSR or CMS message was rejected.
public enum CertificateError: Error, Equatable, Sendable {
    /// The bytes are not the structure the format requires (TLV or DER), with what was wrong.
    case malformed(String)
    /// Well-formed, but outside what Matter allows (an algorithm, curve, attribute or extension it does not define).
    case unsupported(String)
    /// An X.509 certificate that does not convert to Matter TLV and back to the same bytes; its
    /// signature could not be checked from the TLV form, so Matter cannot carry it (spec 6.5.1).
    case notMatterEncodable
    /// A signature did not verify.
    case signatureInvalid
    /// Chain validation failures (spec 6.5.x).
    case issuerMismatch
    case notYetValid
    case expired
    case notACertificateAuthority
    case keyUsageNotPermitted
    case pathLengthExceeded
    case wrongCertificateType(String)
    case fabricIDMismatch
    case invalidIdentifier(String)
    /// Signing failed in the crypto layer.
    case crypto(MatterCryptoError)
}
