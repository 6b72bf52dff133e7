import MatterModel
import MatterProtocol
import MatterTLV

/// The node as the LAN sees it: cloud-only clusters do not exist (missing from the
/// Descriptor ServerList, concrete paths answer UNSUPPORTED_CLUSTER, wildcards skip them).
package struct LANViewProvider: InteractionDataProvider {
    package let base: any InteractionDataProvider
    package let hidden: Set<ClusterID>

    package init(base: any InteractionDataProvider, hidden: Set<ClusterID>) {
        self.base = base
        self.hidden = hidden
    }

    package static let descriptor = ClusterID(0x001D)
    package static let serverList = AttributeID(0x0001)

    package func endpoints() async -> [EndpointNumber] { await base.endpoints() }

    package func clusters(on endpoint: EndpointNumber) async -> [ClusterID] {
        await base.clusters(on: endpoint).filter { !hidden.contains($0) }
    }

    package func attributes(of cluster: ClusterPath) async -> [AttributeMetadata] {
        hidden.contains(cluster.cluster) ? [] : await base.attributes(of: cluster)
    }

    package func commands(of cluster: ClusterPath) async -> [CommandMetadata] {
        hidden.contains(cluster.cluster) ? [] : await base.commands(of: cluster)
    }

    package func dataVersion(of cluster: ClusterPath) async -> DataVersion? {
        hidden.contains(cluster.cluster) ? nil : await base.dataVersion(of: cluster)
    }

    package func checkAccess(_ subject: SubjectDescriptor, to cluster: ClusterPath, privilege: Privilege) async -> Bool {
        await base.checkAccess(subject, to: cluster, privilege: privilege)
    }

    package func read(_ path: AttributePath, context: AttributeReadContext) async -> Result<VersionedAttributeValue, InteractionStatus> {
        if hidden.contains(path.cluster) { return .failure(InteractionStatus(.unsupportedCluster)) }
        let result = await base.read(path, context: context)
        guard path.cluster == Self.descriptor, path.attribute == Self.serverList, case .success(let v) = result,
            case .array(let items) = v.value
        else { return result }
        let visible = items.filter { $0.value.uintValue.map { !hidden.contains(ClusterID(UInt32(truncatingIfNeeded: $0))) } ?? true }
        return .success(VersionedAttributeValue(.array(visible), dataVersion: v.dataVersion))
    }

    package func write(_ path: AttributePath, _ operation: AttributeWriteOperation, context: InteractionContext) async -> InteractionStatus
    {
        hidden.contains(path.cluster) ? InteractionStatus(.unsupportedCluster) : await base.write(path, operation, context: context)
    }

    package func invoke(_ path: ConcreteCommandPath, fields: TLVValue?, context: InteractionContext) async -> CommandOutcome {
        hidden.contains(path.cluster)
            ? .status(InteractionStatus(.unsupportedCluster)) : await base.invoke(path, fields: fields, context: context)
    }

    package func attributeChanges() -> AsyncStream<AttributePath> {
        let changes = base.attributeChanges()
        let hidden = self.hidden
        return AsyncStream { continuation in
            let task = Task {
                for await path in changes where !hidden.contains(path.cluster) { continuation.yield(path) }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
