import MatterModel
import MatterTLV

/// Group Key Management cluster (Core spec 11.2): a fabric's group key sets (set 0 is
/// its IPK, from AddNOC) and the map from groups to key sets. Key material is written,
/// never read back.
final class GroupKeyManagementServer: GroupKeyManagementHandler {
    static let clusterID = Clusters.GroupKeyManagement.id

    typealias Feature = Clusters.GroupKeyManagement.Feature
    typealias Attribute = Clusters.GroupKeyManagement.Attribute
    typealias Command = Clusters.GroupKeyManagement.Command
    typealias Commands = Clusters.GroupKeyManagement.Commands

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

    /// All four commands are fabric-scoped: the node has checked there is an accessing fabric.
    private func fabric(_ context: ClusterContext) -> FabricIndex? {
        context.session.flatMap { $0.fabricIndex == 0 ? nil : $0.fabricIndex }
    }

    func keySetWrite(_ request: Commands.KeySetWrite, context: ClusterContext) -> InteractionStatus {
        guard let fabric = fabric(context) else { return InteractionStatus(.unsupportedAccess) }
        do {
            let set = try GroupKeySet(written: request.groupKeySet, fabricIndex: fabric, cacheAndSyncSupported: cacheAndSyncSupported)
            return context.commissioning.writeKeySet(set)
        } catch {
            return error
        }
    }

    func keySetRead(_ request: Commands.KeySetRead, context: ClusterContext) -> CommandReply<Commands.KeySetReadResponse> {
        guard let fabric = fabric(context) else { return .failure(.unsupportedAccess) }
        guard let set = context.commissioning.keySet(request.groupKeySetID, fabric: fabric) else { return .failure(.notFound) }
        return .response(Commands.KeySetReadResponse(groupKeySet: set.readResponse))
    }

    func keySetRemove(_ request: Commands.KeySetRemove, context: ClusterContext) -> InteractionStatus {
        guard let fabric = fabric(context) else { return InteractionStatus(.unsupportedAccess) }
        return context.commissioning.removeKeySet(request.groupKeySetID, fabric: fabric)
    }

    func keySetReadAllIndices(
        _ request: Commands.KeySetReadAllIndices, context: ClusterContext
    ) -> CommandReply<Commands.KeySetReadAllIndicesResponse> {
        guard let fabric = fabric(context) else { return .failure(.unsupportedAccess) }
        return .response(Commands.KeySetReadAllIndicesResponse(groupKeySetIDs: context.commissioning.keySetIDs(fabric: fabric)))
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
