import MatterModel

extension InteractionServer {
    /// A group message (Core spec 8.8.2, "Group Invoke"): each command acts on every
    /// endpoint of the node that is a member of the group and has the command, within
    /// the group's access (Group auth mode, subject = group ID). Nothing is ever answered;
    /// other interactions are not defined over groups here (Read and Subscribe never are)
    /// and are dropped.
    public func handleGroup(opcode: UInt8, payload: [UInt8], subject: SubjectDescriptor) async {
        var acted = 0
        defer {
            groupCounts.withLock {
                $0.messagesHandled += 1
                $0.commandsRun += acted
            }
            groupCountsChanged.publish(())
        }
        guard subject.authMode == .group else { return }
        guard InteractionOpcode(rawValue: opcode) == .invokeRequest else {
            logger.debug("group message with IM opcode \(opcode) dropped")
            return
        }
        guard let request = try? InvokeRequestMessage(payload: payload), !request.timedRequest else {
            logger.debug("malformed or timed group InvokeRequest dropped")
            return
        }
        let group = UInt16(truncatingIfNeeded: subject.subject)
        let members = await provider.endpoints(inGroup: group, fabricIndex: subject.fabricIndex)
        let context = InteractionContext(subject: subject, isTimed: false, session: nil)
        for command in request.invokeRequests.prefix(configuration.maxPathsPerInvoke) {
            // The path names no endpoint (or one, which must then be a member).
            let endpoints = command.path.endpoint.map { members.contains($0) ? [$0] : [] } ?? members
            for endpoint in endpoints {
                let path = ConcreteCommandPath(endpoint: endpoint, cluster: command.path.cluster, command: command.path.command)
                guard await provider.clusters(on: endpoint).contains(path.cluster),
                    let metadata = await provider.commands(of: path.clusterPath).first(where: { $0.id == path.command }),
                    !metadata.requiresTimedInvoke,
                    await provider.checkAccess(subject, to: path.clusterPath, privilege: metadata.invokePrivilege)
                else { continue }
                _ = await provider.invoke(path, fields: command.fields, context: context)
                acted += 1
            }
        }
        await provider.persistChanges()
        logger.debug("group 0x\(String(group, radix: 16)) invoke: \(acted) command(s) run")
    }
}

/// What group messages did on a node: how many the IM layer took in (dropped ones too), and
/// how many commands they ran on member endpoints.
public struct GroupInvokeCounts: Sendable, Hashable {
    public var messagesHandled = 0
    public var commandsRun = 0
}
