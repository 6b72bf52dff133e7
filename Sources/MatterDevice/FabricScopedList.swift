import MatterModel
import MatterTLV

/// Fabric-scoped lists (Core spec 7.13.7): each entry is a struct carrying its fabric
/// in field 0xFE. One list holds every fabric's entries; a reader sees its own (or,
/// unfiltered, everyone's without the fabric-sensitive fields) and a writer replaces
/// only its own.
enum FabricScopedList {
    static let fabricIndexTag = FieldDefinition.fabricIndexTag

    static func fabricIndex(of entry: TLVValue) -> FabricIndex? {
        entry[context: fabricIndexTag]?.unsignedValue.flatMap { FabricIndex(exactly: $0) }
    }

    /// Context tags of the fabric-sensitive fields of a list attribute's entry struct.
    static func sensitiveFields(of attribute: AttributeDefinition, in definition: ClusterDefinition) -> Set<UInt8> {
        guard case .list(let element) = attribute.type.base, case .structure(let name) = element.base,
            let structure = definition.structDefinition(named: name)
        else { return [] }
        return Set(structure.fields.filter(\.fabricSensitive).map(\.id))
    }

    static func filtered(_ value: TLVValue, accessingFabric: FabricIndex, fabricFiltered: Bool, sensitiveFields: Set<UInt8>) -> TLVValue {
        guard let entries = value.listItems else { return value }
        if fabricFiltered {
            // No accessing fabric: nothing is the reader's (8.4.3.2).
            return .arrayOf(entries.filter { accessingFabric != 0 && fabricIndex(of: $0) == accessingFabric })
        }
        return .arrayOf(
            entries.map { entry in
                guard fabricIndex(of: entry) != accessingFabric || accessingFabric == 0,
                    case .structure(let members) = entry
                else { return entry }
                return .structure(
                    members.filter { member in
                        guard case .context(let tag) = member.tag else { return true }
                        return !sensitiveFields.contains(tag)
                    })
            })
    }

    /// A written entry with the writer's fabric in 0xFE, whatever the client sent there.
    static func stamped(_ entry: TLVValue, fabric: FabricIndex) -> TLVValue {
        guard case .structure(let members) = entry else { return entry }
        return .structure(members.filter { $0.tag != .context(fabricIndexTag) } + [.context(fabricIndexTag, .uint(fabric))])
    }

    /// The list with one fabric's entries replaced, ordered by fabric (stable within one).
    static func replacing(entriesOf fabric: FabricIndex, in list: TLVValue, with entries: [TLVValue]) -> TLVValue {
        let others = (list.listItems ?? []).filter { fabricIndex(of: $0) != fabric }
        let merged = (others + entries).enumerated().sorted { a, b in
            (fabricIndex(of: a.element) ?? 0, a.offset) < (fabricIndex(of: b.element) ?? 0, b.offset)
        }
        return .arrayOf(merged.map(\.element))
    }
}
