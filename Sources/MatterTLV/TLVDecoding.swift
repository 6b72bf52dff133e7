// Whole-tree decoding on top of TLVReader.

extension TLVElement {
    /// Decodes exactly one element; anything after it is `.trailingBytes`.
    public static func decode(
        _ bytes: some Collection<UInt8>, maxDepth: Int = 16, implicitProfile: UInt32? = nil
    ) throws(TLVError) -> TLVElement {
        var reader = TLVReader(bytes, maxDepth: maxDepth, implicitProfile: implicitProfile)
        guard try reader.next() != nil else { throw .truncated }
        let element = try reader.readElement()
        guard reader.isAtEnd else { throw .trailingBytes }
        return element
    }

    /// Decodes a sequence of top-level elements (possibly none).
    public static func decodeAll(
        _ bytes: some Collection<UInt8>, maxDepth: Int = 16, implicitProfile: UInt32? = nil
    ) throws(TLVError) -> [TLVElement] {
        var reader = TLVReader(bytes, maxDepth: maxDepth, implicitProfile: implicitProfile)
        var elements: [TLVElement] = []
        while try reader.next() != nil {
            elements.append(try reader.readElement())
        }
        return elements
    }
}
