// Cluster features (Core spec 7.10 "Feature Map").

public struct FeatureDefinition: Sendable, Hashable {
    /// Bit position in the FeatureMap attribute.
    public var bit: Int
    /// The spec's short code ("LT").
    public var code: String
    /// The spec's name ("Lighting").
    public var name: String
    public var conformance: Conformance

    public init(bit: Int, code: String, name: String, conformance: Conformance = .optional) {
        self.bit = bit
        self.code = code
        self.name = name
        self.conformance = conformance
    }

    public var mask: UInt32 { bit < 32 ? UInt32(1) << UInt32(bit) : 0 }
}
