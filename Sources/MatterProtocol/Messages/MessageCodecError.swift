/// Why a datagram or a message could not be decoded or encoded. Decoding failures
/// are counted in `TransportMetrics` and the datagram is dropped.
public enum MessageCodecError: Error, Equatable, Sendable {
    /// The buffer ended inside the named field.
    case truncated(field: String)
    /// The message format version is not 0 (spec 4.4.1.1).
    case unsupportedVersion(UInt8)
    /// DSIZ = 3 is reserved (spec 4.4.1.2).
    case reservedDestinationSize
    /// Session type 2 and 3 are reserved (spec 4.4.1.4).
    case reservedSessionType(UInt8)
    /// A header field combination the spec forbids (e.g. a group message without a source node ID).
    case invalidHeader(String)
    /// An extension or payload is larger than a field can express.
    case tooLarge(String)
}
