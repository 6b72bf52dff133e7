import MatterModel
import MatterTLV

/// Group Key Management cluster (Core spec 11.2): a fabric's group key sets (set 0 is
/// its IPK, from AddNOC) and the map from groups to key sets. Key material is written,
/// never read back.
final class GroupKeyManagementServer: StandardClusterServer {
    static let clusterID = Clusters.GroupKeyManagement.id

    typealias Feature = Clusters.GroupKeyManagement.Feature
    typealias Attribute = Clusters.GroupKeyManagement.Attribute
    typealias Command = Clusters.GroupKeyManagement.Command

    private let cacheAndSyncSupported: Bool
    private let configuration: CommissioningConfiguration

    init(features: Set<String>, configuration: CommissioningConfiguration) {
        cacheAndSyncSupported = features.contains(Feature.cacheAndSync)
        self.configuration = configuration
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.groupKeyMap, Attribute.groupTable: .array([])
        case Attribute.maxGroupsPerFabric: .uint(configuration.maxGroupsPerFabric)
        case Attribute.maxGroupKeysPerFabric: .uint(max(configuration.maxGroupKeysPerFabric, 1))
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool {
        [Command.keySetWrite, Command.keySetRead, Command.keySetRemove, Command.keySetReadAllIndices].contains(command)
    }

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        // All four commands are fabric-scoped: the node has checked there is an accessing fabric.
        guard let fabric = context.session?.fabricIndex, fabric != 0 else { return .failure(.unsupportedAccess) }
        let coordinator = context.commissioning
        switch command {
        case Command.keySetWrite:
            guard let value = fields.field(0) else { return .failure(.invalidCommand) }
            do {
                let set = try GroupKeySet(written: value, fabricIndex: fabric, cacheAndSyncSupported: cacheAndSyncSupported)
                return .status(coordinator.writeKeySet(set))
            } catch {
                return .status(error)
            }
        case Command.keySetRead:
            guard let raw = fields.unsigned(0), let id = UInt16(exactly: raw) else { return .failure(.invalidCommand) }
            guard let set = coordinator.keySet(id, fabric: fabric) else { return .failure(.notFound) }
            let members: [(UInt8, TLVValue)] = [(0, set.readResponseTLV)]
            return .response(Command.keySetReadResponse, .contextStructure(members))
        case Command.keySetRemove:
            guard let raw = fields.unsigned(0), let id = UInt16(exactly: raw) else { return .failure(.invalidCommand) }
            return .status(coordinator.removeKeySet(id, fabric: fabric))
        case Command.keySetReadAllIndices:
            let ids = coordinator.keySetIDs(fabric: fabric).map { TLVValue.uint($0) }
            let members: [(UInt8, TLVValue)] = [(0, .arrayOf(ids))]
            return .response(Command.keySetReadAllIndicesResponse, .contextStructure(members))
        default:
            return .failure(.unsupportedCommand)
        }
    }

    func validateWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> InteractionStatus? {
        guard attribute == Attribute.groupKeyMap else { return nil }
        switch writtenMap(value, context: context) {
        case .success: return nil
        case .failure(let status): return status
        }
    }

    func commitWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> Bool {
        guard attribute == Attribute.groupKeyMap, case .success(let (fabric, entries)) = writtenMap(value, context: context) else {
            return false
        }
        context.commissioning.replaceGroupKeyMap(of: fabric, with: entries)
        return true
    }

    /// The writer's GroupKeyMap entries (11.2.6.1): never the IPK set, one key set per group.
    private func writtenMap(_ value: TLVValue, context: ClusterContext) -> Result<(FabricIndex, [GroupKeyMapEntry]), InteractionStatus> {
        guard let fabric = context.session?.fabricIndex, fabric != 0, let items = value.listItems else {
            return .failure(InteractionStatus(.unsupportedAccess))
        }
        var entries: [GroupKeyMapEntry] = []
        for item in items where FabricScopedList.fabricIndex(of: item) == fabric {
            guard let entry = GroupKeyMapEntry(tlv: item, fabricIndex: fabric), entry.groupID != 0,
                entry.keySetID != GroupKeySet.identityProtectionKeySetID,
                !entries.contains(where: { $0.groupID == entry.groupID })
            else {
                return .failure(InteractionStatus(.constraintError))
            }
            entries.append(entry)
        }
        guard entries.count <= Int(configuration.maxGroupsPerFabric) else { return .failure(InteractionStatus(.resourceExhausted)) }
        return .success((fabric, entries))
    }
}
