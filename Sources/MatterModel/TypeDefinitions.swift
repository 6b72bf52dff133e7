// Cluster-defined data types: enums, bitmaps and structs (Core spec 7.18).

public struct EnumDefinition: Sendable, Hashable {
    public struct Value: Sendable, Hashable {
        public var name: String
        public var value: UInt16
        public init(name: String, value: UInt16) { self.name = name; self.value = value }
    }

    public var name: String
    /// 8 or 16.
    public var bits: Int
    public var values: [Value]

    public init(name: String, bits: Int, values: [Value]) {
        self.name = name
        self.bits = bits
        self.values = values
    }

    public func value(named name: String) -> Value? { values.first { Naming.matches($0.name, name) } }
    public func name(of value: UInt16) -> String? { values.first { $0.value == value }?.name }
}

public struct BitmapDefinition: Sendable, Hashable {
    public struct Field: Sendable, Hashable {
        public var name: String
        /// Bits this field occupies (one bit for flags, several for sub-fields).
        public var mask: UInt64
        public init(name: String, mask: UInt64) { self.name = name; self.mask = mask }
    }

    public var name: String
    /// 8, 16, 32 or 64.
    public var bits: Int
    public var fields: [Field]

    public init(name: String, bits: Int, fields: [Field]) {
        self.name = name
        self.bits = bits
        self.fields = fields
    }

    /// Union of all defined bits.
    public var definedMask: UInt64 { fields.reduce(0) { $0 | $1.mask } }
    public func field(named name: String) -> Field? { fields.first { Naming.matches($0.name, name) } }
}

public struct StructDefinition: Sendable, Hashable {
    public var name: String
    public var fields: [FieldDefinition]
    /// Fabric-scoped structs carry a FabricIndex field (tag 0xFE).
    public var fabricScoped: Bool

    public init(name: String, fields: [FieldDefinition], fabricScoped: Bool = false) {
        self.name = name
        self.fields = fields
        self.fabricScoped = fabricScoped
    }

    public func field(_ id: UInt8) -> FieldDefinition? { fields.first { $0.id == id } }
    public func field(named name: String) -> FieldDefinition? { fields.first { Naming.matches($0.name, name) } }
}
