import MatterModel
import MatterTLV

/// Groups cluster (Application Cluster spec 1.3): which groups of the accessing fabric
/// this endpoint is in. The membership itself lives in the commissioning state (one table
/// per node, shown as GroupKeyManagement's GroupTable, Core spec 11.2.6.2) so it is kept,
/// persisted and dropped with its fabric like the group keys it depends on.
final class GroupsServer: GroupsHandler {
    static let clusterID = Clusters.Groups.id

    typealias Feature = Clusters.Groups.Feature
    typealias Attribute = Clusters.Groups.Attribute
    typealias Command = Clusters.Groups.Command
    typealias Commands = Clusters.Groups.Commands

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

    /// A GroupID too wide for its type makes these commands invalid; the range errors they
    /// answer in their responses reach their methods.
    func reply(to error: TLVDecodingError, decoding command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        .failure(answersConstraintErrors(command) ? .invalidCommand : error.status)
    }

    /// Every Groups command is fabric-scoped: the table is the accessing fabric's.
    private func fabric(_ context: ClusterContext) -> FabricIndex? {
        context.session.flatMap { $0.fabricIndex == 0 ? nil : $0.fabricIndex }
    }

    func addGroup(_ request: Commands.AddGroup, context: ClusterContext) -> CommandReply<Commands.AddGroupResponse> {
        guard let fabric = fabric(context) else { return .failure(.unsupportedAccess) }
        let status =
            Self.check(id: request.groupID, name: request.groupName)
            ?? context.commissioning.addGroup(
                request.groupID, name: namesSupported ? request.groupName : "", endpoint: context.endpoint, fabric: fabric)
        return .response(Commands.AddGroupResponse(status: status.status.rawValue, groupID: request.groupID))
    }

    func addGroupIfIdentifying(_ request: Commands.AddGroupIfIdentifying, context: ClusterContext) -> InteractionStatus {
        guard let fabric = fabric(context) else { return InteractionStatus(.unsupportedAccess) }
        let id = request.groupID, name = request.groupName
        // 1.3.7.6: not identifying, nothing to do, yet the arguments are still checked.
        guard isIdentifying(context) else { return Self.check(id: id, name: name) ?? .success }
        return Self.check(id: id, name: name)
            ?? context.commissioning.addGroup(id, name: namesSupported ? name : "", endpoint: context.endpoint, fabric: fabric)
    }

    func viewGroup(_ request: Commands.ViewGroup, context: ClusterContext) -> CommandReply<Commands.ViewGroupResponse> {
        guard let fabric = fabric(context) else { return .failure(.unsupportedAccess) }
        let id = request.groupID
        var status = InteractionStatus(.success)
        var name = ""
        if id == 0 {
            status = InteractionStatus(.constraintError)
        } else if let entry = context.commissioning.group(id, fabric: fabric), entry.endpoints.contains(context.endpoint) {
            name = namesSupported ? entry.name : ""
        } else {
            status = InteractionStatus(.notFound)
        }
        return .response(Commands.ViewGroupResponse(status: status.status.rawValue, groupID: id, groupName: name))
    }

    func getGroupMembership(
        _ request: Commands.GetGroupMembership, context: ClusterContext
    ) -> CommandReply<Commands.GetGroupMembershipResponse> {
        guard let fabric = fabric(context) else { return .failure(.unsupportedAccess) }
        let coordinator = context.commissioning
        let member = coordinator.groups(on: context.endpoint, fabric: fabric)
        // 1.3.7.3: all of the endpoint's groups for an empty list, else those asked for.
        let listed = request.groupList.isEmpty ? member : member.filter { request.groupList.contains($0) }
        let capacity = UInt8(min(coordinator.groupCapacity(fabric: fabric), 0xFE))
        return .response(Commands.GetGroupMembershipResponse(capacity: capacity, groupList: listed))
    }

    func removeGroup(_ request: Commands.RemoveGroup, context: ClusterContext) -> CommandReply<Commands.RemoveGroupResponse> {
        guard let fabric = fabric(context) else { return .failure(.unsupportedAccess) }
        let id = request.groupID
        let status =
            id == 0
            ? InteractionStatus(.constraintError)
            : context.commissioning.removeGroup(id, endpoint: context.endpoint, fabric: fabric)
        return .response(Commands.RemoveGroupResponse(status: status.status.rawValue, groupID: id))
    }

    func removeAllGroups(_ request: Commands.RemoveAllGroups, context: ClusterContext) -> InteractionStatus {
        guard let fabric = fabric(context) else { return InteractionStatus(.unsupportedAccess) }
        context.commissioning.removeAllGroups(endpoint: context.endpoint, fabric: fabric)
        return .success
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
