import MatterModel
import MatterProtocol
import MatterTLV

// Binding a light switch to a light (Core spec 9.6, 9.10), as an ecosystem does when a person
// pairs them: the light's ACL lets the switch's node Operate the bound clusters of the light's
// endpoint, and the switch's Binding names the light. The switch then sends its presses itself.

extension MatterController {
    /// Lets `switchNode` operate `clusters` on endpoint `lightEndpoint` of `light` (an ACL entry
    /// on the light, added once) and adds `light` to the Binding of the switch's endpoint, one
    /// entry per cluster, keeping this fabric's other entries. Idempotent.
    public func bind(
        _ switchNode: NodeID, endpoint switchEndpoint: EndpointNumber, to light: NodeID, endpoint lightEndpoint: EndpointNumber,
        clusters: [ClusterID]
    ) async throws {
        guard !clusters.isEmpty else { throw ControllerError.invalidArgument("a binding names at least one cluster") }
        try await withClient(light) { client in
            let aclPath = AttributePath(endpoint: 0, cluster: Self.accessControl, attribute: Clusters.AccessControl.Attribute.acl)
            let entries = try await Self.accessControlList(client, aclPath, node: light)
            let targets = clusters.map { AccessControlTarget(cluster: $0.rawValue, endpoint: lightEndpoint) }
            let granted = entries.contains { entry in
                entry.authMode == .case && (entry.subjects ?? []).contains(switchNode) && entry.privilege >= .operate
                    && Set(entry.targets ?? []).isSuperset(of: targets)
            }
            if !granted {
                let grant = AccessControlEntry(
                    fabricIndex: 0, privilege: .operate, authMode: .case, subjects: [switchNode], targets: targets)
                try await client.write(aclPath, value: .array((entries + [grant]).map { TLVElement($0.writtenTLV) }))
            }
        }
        try await withClient(switchNode) { client in
            let bindingPath = AttributePath(
                endpoint: switchEndpoint, cluster: Clusters.Binding.id, attribute: Clusters.Binding.Attribute.binding)
            let present = (try await client.read(bindingPath)).members ?? []
            // TargetStruct (9.6.5.1): Node 1, Endpoint 3, Cluster 4; the node stamps FabricIndex.
            func target(_ cluster: ClusterID) -> TLVValue {
                .structure([
                    TLVElement(tag: .context(1), .unsigned(light)), TLVElement(tag: .context(3), .unsigned(UInt64(lightEndpoint))),
                    TLVElement(tag: .context(4), .unsigned(UInt64(cluster.rawValue))),
                ])
            }
            let kept = present.map { member in
                // What was read, without the fabric index the node fills in again.
                guard case .structure(let fields) = member.value else { return member.value }
                return TLVValue.structure(fields.filter { $0.tag != .context(FieldDefinition.fabricIndexTag) })
            }
            let added = clusters.map(target).filter { !kept.contains($0) }
            guard !added.isEmpty else { return }
            try await client.write(bindingPath, value: .array((kept + added).map { TLVElement($0) }))
        }
    }
}
