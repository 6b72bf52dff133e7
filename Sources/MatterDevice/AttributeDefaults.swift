import MatterModel
import MatterTLV

/// Values for mandatory attributes that neither the description, the cluster
/// server nor the spec give a default for.
enum AttributeDefaults {
    /// null where the attribute is nullable ("unknown"), else the type's zero.
    static func fallback(for attribute: AttributeDefinition) -> TLVValue {
        attribute.nullable ? .null : zero(for: attribute.type)
    }

    static func zero(for type: DataType) -> TLVValue {
        switch type.base {
        case .bool: .bool(false)
        case .uint, .enumeration, .bitmap: .unsigned(0)
        case .int: .signed(0)
        case .single: .float(0)
        case .double: .double(0)
        case .string: .utf8("")
        case .octets: .bytes([])
        case .list: .array([])
        case .structure: .structure([])
        case .semantic: .unsigned(0)
        }
    }
}
