import MatterModel
import MatterTLV

/// Groups cluster (Application Cluster spec 1.3): which groups of the accessing fabric
/// this endpoint is in. The membership itself lives in the commissioning state (one table
/// per node, shown as GroupKeyManagement's GroupTable, Core spec 11.2.6.2) so it is kept,
/// persisted and dropped with its fabric like the group keys it depends on.
final class GroupsServer: StandardClusterServer {
    static let clusterID = Clusters.Groups.id

    typealias Feature = Clusters.Groups.Feature
    typealias Attribute = Clusters.Groups.Attribute
    typealias Command = Clusters.Groups.Command

    /// GroupName is at most 16 bytes (1.3.7.1).
    static let maxNameLength = 16
    /// NameSupportBitmap: GroupNames is bit 7 (1.3.5.1).
    private static let groupNamesBit = UInt64(Clusters.Groups.NameSupportBitmap.groupNames.rawValue)

    private let namesSupported: Bool

    init(features: Set<String>) {
        namesSupported = features.contains(Feature.groupNames)
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        attribute == Attribute.nameSupport ? .uint(namesSupported ? Self.groupNamesBit : 0) : nil
    }

    func handles(_ command: CommandID) -> Bool {
        [
            Command.addGroup, Command.viewGroup, Command.getGroupMembership, Command.removeGroup,
            Command.removeAllGroups, Command.addGroupIfIdentifying,
        ].contains(command)
    }

    /// GroupID 0 and long names are answered in the response's Status (1.3.7.1, 1.3.7.2, 1.3.7.4).
    func answersConstraintErrors(_ command: CommandID) -> Bool {
        [Command.addGroup, Command.viewGroup, Command.removeGroup, Command.addGroupIfIdentifying].contains(command)
    }

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        // Every Groups command is fabric-scoped: the table is the accessing fabric's.
        guard let fabric = context.session?.fabricIndex, fabric != 0 else { return .failure(.unsupportedAccess) }
        let coordinator = context.commissioning
        let endpoint = context.endpoint
        switch command {
        case Command.addGroup, Command.addGroupIfIdentifying:
            guard let id = groupID(fields), let name = fields.field(1)?.stringValue else { return .failure(.invalidCommand) }
            var status: InteractionStatus
            if command == Command.addGroupIfIdentifying, !isIdentifying(context) {
                // 1.3.7.6: not identifying, nothing to do, yet the arguments are still checked.
                status = Self.check(id: id, name: name) ?? .success
            } else {
                status =
                    Self.check(id: id, name: name)
                    ?? coordinator.addGroup(id, name: namesSupported ? name : "", endpoint: endpoint, fabric: fabric)
            }
            if command == Command.addGroupIfIdentifying { return .status(status) }
            return .response(Command.addGroupResponse, .contextStructure([(0, .uint(status.status.rawValue)), (1, .uint(id))]))
        case Command.viewGroup:
            guard let id = groupID(fields) else { return .failure(.invalidCommand) }
            var status = InteractionStatus(.success)
            var name = ""
            if id == 0 {
                status = InteractionStatus(.constraintError)
            } else if let entry = coordinator.group(id, fabric: fabric), entry.endpoints.contains(endpoint) {
                name = namesSupported ? entry.name : ""
            } else {
                status = InteractionStatus(.notFound)
            }
            return .response(
                Command.viewGroupResponse,
                .contextStructure([(0, .uint(status.status.rawValue)), (1, .uint(id)), (2, .utf8(name))]))
        case Command.getGroupMembership:
            guard let asked = fields.field(0)?.listItems else { return .failure(.invalidCommand) }
            let askedIDs = asked.compactMap { $0.unsignedValue.flatMap { UInt16(exactly: $0) } }
            let member = coordinator.groups(on: endpoint, fabric: fabric)
            // 1.3.7.3: all of the endpoint's groups for an empty list, else those asked for.
            let listed = askedIDs.isEmpty ? member : member.filter { askedIDs.contains($0) }
            let capacity = coordinator.groupCapacity(fabric: fabric)
            return .response(
                Command.getGroupMembershipResponse,
                .contextStructure([
                    (0, .uint(min(capacity, 0xFE))), (1, .arrayOf(listed.map { .uint($0) })),
                ]))
        case Command.removeGroup:
            guard let id = groupID(fields) else { return .failure(.invalidCommand) }
            let status =
                id == 0
                ? InteractionStatus(.constraintError)
                : coordinator.removeGroup(id, endpoint: endpoint, fabric: fabric)
            return .response(Command.removeGroupResponse, .contextStructure([(0, .uint(status.status.rawValue)), (1, .uint(id))]))
        case Command.removeAllGroups:
            coordinator.removeAllGroups(endpoint: endpoint, fabric: fabric)
            return .success
        default:
            return .failure(.unsupportedCommand)
        }
    }

    private func groupID(_ fields: CommandFields) -> UInt16? {
        fields.unsigned(0).flatMap { UInt16(exactly: $0) }
    }

    /// 1.3.7.1: GroupID 0 and names over 16 bytes are constraint errors.
    private static func check(id: UInt16, name: String) -> InteractionStatus? {
        id == 0 || name.utf8.count > maxNameLength ? InteractionStatus(.constraintError) : nil
    }

    private func isIdentifying(_ context: ClusterContext) -> Bool {
        guard let identify = context.peer(IdentifyServer.self) else { return false }
        return (identify.context.unsigned(IdentifyServer.Attribute.identifyTime) ?? 0) > 0
    }
}
