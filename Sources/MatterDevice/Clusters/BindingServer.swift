import MatterModel
import MatterProtocol
import MatterTLV

/// A command a node sends on its own to a bound target (Core spec 9.6): a light switch's press
/// sent to the light its Binding names. The node's server sends it over CASE as an initiator
/// (`NodeServer`'s binding sender), on the fabric that wrote the binding.
public struct BoundCommand: Sendable, Hashable, CustomStringConvertible {
    public var fabricIndex: FabricIndex
    public var node: NodeID
    public var path: ConcreteCommandPath
    public var fields: TLVValue

    public var description: String { "\(path) to node 0x\(String(node, radix: 16)) (fabric \(fabricIndex))" }
}

/// Binding cluster (Core spec 9.6) on a light switch's endpoint: the controller writes the
/// fabric-scoped list of targets (as Google Home does), and a press at the switch becomes
/// commands of the endpoint's client clusters to them: Toggle (On/Off), and for a dimmer
/// MoveToLevelWithOnOff (Level Control). A target names a node and endpoint (unicast, sent
/// over CASE) or a group; an entry with a Cluster applies to that cluster only.
final class BindingServer: PhysicallyOperated {
    static let clusterID = Clusters.Binding.id

    typealias Attribute = Clusters.Binding.Attribute
    /// TargetStruct's fields (9.6.5.1).
    private enum Target {
        static let node: UInt8 = 1
        static let group: UInt8 = 2
        static let endpoint: UInt8 = 3
        static let cluster: UInt8 = 4
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        attribute == Attribute.binding ? .array([]) : nil
    }

    /// 9.6.5.1: a target is a node with an endpoint, or a group (then no endpoint).
    func validateWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> InteractionStatus? {
        guard attribute == Attribute.binding else { return nil }
        for entry in value.listItems ?? [value] {
            let node = entry[context: Target.node], group = entry[context: Target.group]
            let endpoint = entry[context: Target.endpoint]
            guard (node != nil) != (group != nil), (node != nil) == (endpoint != nil) else {
                return InteractionStatus(.constraintError)
            }
        }
        return nil
    }

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        let clients = Set(context.layout.endpoints.first { $0.number == context.endpoint }?.clientClusters ?? [])
        let command: (cluster: ClusterID, command: CommandID, fields: TLVValue)
        switch action {
        case .press(.single), .toggle:
            guard clients.contains(Clusters.OnOff.id) else {
                throw PhysicalActionError("this endpoint has no On/Off client to send a press with")
            }
            command = (Clusters.OnOff.id, Clusters.OnOff.Command.toggle, .structure([]))
        case .dim(let percent) where percent == 0:
            guard clients.contains(Clusters.OnOff.id) else { throw PhysicalActionError("this endpoint has no On/Off client") }
            command = (Clusters.OnOff.id, Clusters.OnOff.Command.off, .structure([]))
        case .dim(let percent):
            guard clients.contains(Clusters.LevelControl.id) else {
                throw PhysicalActionError("this switch does not dim (no Level Control client: an On/Off Light Switch)")
            }
            // A null TransitionTime: the light's own.
            let level = UInt8(max(1, min(254, (percent / 100 * 254).rounded())))
            let request = Clusters.LevelControl.Commands.MoveToLevelWithOnOff(level: level, transitionTime: nil)
            command = (Clusters.LevelControl.id, Clusters.LevelControl.Command.moveToLevelWithOnOff, request.tlv)
        default:
            throw PhysicalActionError("a light switch's Binding cannot \(action)")
        }
        let targets = (context.value(Attribute.binding)?.listItems ?? []).filter { entry in
            entry[context: Target.cluster]?.unsignedValue.map { $0 == UInt64(command.cluster.rawValue) } ?? true
        }
        var sent = 0
        for entry in targets {
            guard let fabric = FabricScopedList.fabricIndex(of: entry) else { continue }
            guard let node = entry[context: Target.node]?.unsignedValue,
                let endpoint = entry[context: Target.endpoint]?.unsignedValue.flatMap({ EndpointNumber(exactly: $0) })
            else {
                // A group target would go out as a group message: not sent by the simulator yet.
                context.logger.notice(
                    "binding to group \(entry[context: Target.group]?.unsignedValue ?? 0) skipped: groupcast bindings are not sent")
                continue
            }
            context.runtime.boundCommands.publish(
                BoundCommand(
                    fabricIndex: fabric, node: node,
                    path: ConcreteCommandPath(endpoint: endpoint, cluster: command.cluster, command: command.command),
                    fields: command.fields))
            sent += 1
        }
        guard sent > 0 else {
            throw PhysicalActionError("the switch is bound to no light for \(command.cluster): a controller writes its Binding first")
        }
    }
}
