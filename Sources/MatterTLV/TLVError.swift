/// Why TLV input was rejected. The reader throws these instead of trapping on
/// any input; `TLVReader.offset` tells where reading stopped.
public enum TLVError: Error, Hashable, Sendable {
    /// The input ended inside a control octet's tag, a length field or a
    /// fixed-size value (or was empty where an element was required).
    case truncated
    /// A control octet with a reserved element type (0x19...0x1F), or an End of
    /// Container that carries a tag (spec A.7.1, A.7.2).
    case badControlOctet(UInt8)
    /// A string's length field points past the end of the input.
    case lengthPastEnd
    /// Containers nest deeper than the reader's limit.
    case nestingTooDeep(limit: Int)
    /// A UTF-8 string element whose octets are not valid UTF-8 (spec A.11.2).
    case invalidUTF8
    /// End of Container where no container is open.
    case unexpectedEndOfContainer
    /// The input ended while a container was still open.
    case missingEndOfContainer
    /// Bytes follow the single element that was asked for.
    case trailingBytes
    /// A tag form not allowed where it appears: an anonymous member of a
    /// structure, or a tagged member of an array (spec A.2, A.11).
    case invalidTagInContainer(TLVTag)
    /// Two members of one structure carry the same tag (spec A.11).
    case duplicateTag(TLVTag)

    // Streaming-reader misuse (a caller bug, never caused by the input alone).

    /// `readValue`/`readElement`/`enterContainer`/`skip` with no current element.
    case noCurrentElement
    /// `enterContainer` on an element that is not a structure, array or list.
    case notAContainer
    /// `exitContainer` with no entered container.
    case noOpenContainer
}
