import Foundation
import MatterController
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV

/// How the last command to a device group reached its members.
public struct GroupDelivery: Sendable, Hashable, Codable {
    /// Interfaces the one group message (an IPv6 multicast) went out on; empty when none could.
    public var groupcastInterfaces: [String]
    /// Members sent the command one by one over their own routes: all of them when no
    /// groupcast could go, else those whose LAN session was known down.
    public var unicastMembers: [String]
}

/// Device types whose Matter definition requires the Groups cluster (Device Library 1.3):
/// the endpoints that join a device group.
let groupableDeviceTypes: Set<UInt32> = Set(
    [
        DeviceTypes.onOffLight, DeviceTypes.dimmableLight, DeviceTypes.onOffPlugInUnit, DeviceTypes.dimmablePlugInUnit,
        DeviceTypes.colorTemperatureLight, DeviceTypes.extendedColorLight,
    ].map(\.rawValue))

extension HomeEngine {
    // MARK: Graph

    func createDeviceGroup(structureID: String, name: String, deviceIDs: [String]) async throws -> DeviceGroup {
        let name = try normalizedName(name, "device group")
        guard graph.structures[structureID] != nil else { throw HomeError.notFound("no structure with ID \(structureID)") }
        guard !deviceIDs.isEmpty else { throw HomeError.invalidArgument("a device group needs at least one device") }
        var members: [String: [UInt16]] = [:]
        for id in deviceIDs {
            guard let d = graph.devices[id] else { throw HomeError.notFound("no device with ID \(id)") }
            let endpoints = d.endpoints.filter { !groupableDeviceTypes.isDisjoint(with: $0.deviceTypes) }.map(\.endpoint).sorted()
            guard !endpoints.isEmpty else {
                throw HomeError.invalidArgument("device \(d.name) (\(id)) has no endpoint that joins groups (a light or a plug)")
            }
            members[id] = endpoints
        }
        let controller = try await controller()
        // The group ID is claimed in the store before any device hears of it: two creations at
        // once (this Home, or another on the same file) cannot set devices up under one ID.
        var claimed: DeviceGroupRecord?
        for _ in 0..<3 where claimed == nil {
            let groupID = try await store.unusedGroupID()
            // One key set per group: a member that leaves one group keeps no key to the others.
            let startTime = UInt64(max(1, MatterEpoch.seconds(fromUnix: Int64(Date().timeIntervalSince1970)))) * 1_000_000
            let candidate = DeviceGroupRecord(
                id: UUID().uuidString, structureID: structureID, name: name, groupID: groupID,
                keySetID: groupID, epochKey: (0..<16).map { _ in UInt8.random(in: 0...255) },
                epochStartTime: startTime, members: members)
            do {
                try await store.insertDeviceGroup(candidate)
                claimed = candidate
            } catch let error as HomeError where error.code == .alreadyExists {
                continue  // another creation took that ID first
            }
        }
        guard let record = claimed else { throw HomeError(code: .aborted, message: "no free group ID could be claimed") }
        var joined: [(DeviceRecord, [UInt16])] = []
        for (id, endpoints) in members.sorted(by: { $0.key < $1.key }) {
            guard let d = graph.devices[id] else { continue }
            do {
                try await withDeadline(configuration.commandTimeout, "adding \(d.name) to group \(name)", clock: configuration.clock) {
                    try await controller.joinGroup(
                        d.nodeID, groupID: record.groupID, name: name, keySet: record.keySet,
                        endpoints: endpoints)
                }
                joined.append((d, endpoints))
            } catch {
                // All or nothing: the members set up so far leave again (best effort), the claim goes.
                for (member, endpoints) in joined {
                    try? await withDeadline(
                        configuration.routeAttemptTimeout, "taking \(member.name) out of group \(name)", clock: configuration.clock
                    ) {
                        try await controller.leaveGroup(member.nodeID, groupID: record.groupID, endpoints: endpoints)
                    }
                }
                try? await store.deleteDeviceGroup(record.id)
                try? await reload()
                throw HomeError.from(error, "adding \(d.name) to group \(name) (over its LAN session)")
            }
        }
        try await reload()
        return try require(snapshot.groups[record.id], "device group \(record.id) vanished")
    }

    func deleteDeviceGroup(_ id: String) async throws {
        guard let record = graph.groups[id] else { throw HomeError.notFound("no device group with ID \(id)") }
        // Best effort on the devices: one that cannot be reached keeps a membership nobody
        // sends to (its key is gone with the group).
        if let controller = try? await controller() {
            for (deviceID, endpoints) in record.members {
                guard let d = graph.devices[deviceID] else { continue }
                do {
                    try await withDeadline(
                        configuration.commandTimeout, "removing \(d.name) from group \(record.name)", clock: configuration.clock
                    ) {
                        try await controller.leaveGroup(d.nodeID, groupID: record.groupID, endpoints: endpoints)
                    }
                } catch {
                    logger.warning("group \(record.name): \(d.name) keeps its membership: \(error)")
                }
            }
        }
        try await store.deleteDeviceGroup(id)
        try await reload()
    }

    // MARK: Commands

    /// Sends a command to every member: one group message when this Home reaches devices
    /// over its LAN and some interface carries multicast; members whose LAN session is known
    /// down (and every member when no groupcast could go) get it over their own routes.
    func groupInvoke(groupID id: String, cluster: ClusterID, command: CommandID, fields: TLVValue) async throws {
        guard let record = graph.groups[id] else { throw HomeError.notFound("no device group with ID \(id)") }
        let members = record.members.keys.sorted().compactMap { graph.devices[$0] }
        var interfaces: [String] = []
        if members.allSatisfy({ routeKinds(for: $0).contains(.direct) }), let controller = try? await controller() {
            let counter = try await nextGroupCounter()
            interfaces = try await controller.sendGroupInvoke(
                groupID: record.groupID, keySet: record.keySet, cluster: cluster,
                command: command, fields: fields, counter: counter)
        }
        let unicast = members.filter { d in interfaces.isEmpty || states[d.nodeID]?[.direct].health == .down }
        lastGroupDelivery[id] = GroupDelivery(groupcastInterfaces: interfaces, unicastMembers: unicast.map(\.name))
        try await eachMember(unicast, record, "command \(command) of cluster \(cluster) to group \(record.name)") { d, endpoint in
            try await self.invoke(
                deviceID: d.id, nodeID: d.nodeID,
                ConcreteCommandPath(endpoint: endpoint, cluster: cluster, command: command), fields: fields)
        }
    }

    /// Writes an attribute on every member (group writes are not part of Matter 1.3's
    /// group messaging the devices serve; each member gets its own write).
    func groupWrite(groupID id: String, cluster: ClusterID, attribute: AttributeID, value: TLVValue) async throws {
        guard let record = graph.groups[id] else { throw HomeError.notFound("no device group with ID \(id)") }
        let members = record.members.keys.sorted().compactMap { graph.devices[$0] }
        try await eachMember(members, record, "write \(attribute) of cluster \(cluster) on group \(record.name)") { d, endpoint in
            try await self.write(
                deviceID: d.id, nodeID: d.nodeID,
                AttributePath(endpoint: endpoint, cluster: cluster, attribute: attribute), value)
        }
    }

    /// Runs `body` for each member endpoint at once; fails naming every member that failed.
    private func eachMember(
        _ members: [DeviceRecord], _ record: DeviceGroupRecord, _ what: String,
        _ body: @escaping @Sendable (DeviceRecord, EndpointNumber) async throws -> Void
    ) async throws {
        let failures = await withTaskGroup(of: String?.self) { tasks in
            for d in members {
                for endpoint in record.members[d.id] ?? [] {
                    tasks.addTask {
                        do { try await body(d, endpoint); return nil } catch { return "\(d.name): \(HomeError.from(error, what).message)" }
                    }
                }
            }
            var failed: [String] = []
            for await failure in tasks { if let failure { failed.append(failure) } }
            return failed.sorted()
        }
        guard failures.isEmpty else {
            throw HomeError.unavailable("\(what): \(failures.count) member(s) failed: " + failures.joined(separator: "; "))
        }
    }

    private func nextGroupCounter() async throws -> UInt32 {
        if groupCounters.isEmpty {
            let block = try await store.reserveGroupCounters()
            groupCounters = Array(block).reversed()
        }
        return groupCounters.removeLast()
    }

    // MARK: Snapshot

    /// A group as its members are now: the device types every member has, each trait's
    /// values from the first member (by name) that is online, its connectivity combined
    /// over the members; commands and writes go to the whole group.
    func makeGroup(_ g: DeviceGroupRecord, devices: [String: HomeDevice]) -> DeviceGroup {
        let members = g.members.keys.compactMap { devices[$0] }.sorted { ($0.name, $0.id) < ($1.name, $1.id) }
        /// One member's trait contexts turned into the group's: values from the first online
        /// member, connectivity over all of them.
        func groupTraits(_ perMember: [TraitCollection]) -> TraitCollection {
            guard let first = perMember.first else { return TraitCollection(contexts: [:]) }
            let source = zip(members, perMember).first { $0.0.sourceConnectivity.connectivityState == .online }?.1 ?? first
            var traits: [ClusterID: TraitContext] = [:]
            for (cluster, context) in source.contexts
            where context.endpoint != 0
                && perMember.allSatisfy({ $0.contexts[cluster] != nil })
            {
                let connectivity = SourceConnectivity.combining(perMember.compactMap { $0.contexts[cluster]?.connectivity })
                traits[cluster] = TraitContext(
                    deviceID: g.id, nodeID: 0, endpoint: context.endpoint, cluster: cluster,
                    attributes: context.attributes, connectivity: connectivity, engine: self,
                    groupID: g.id)
            }
            return TraitCollection(contexts: traits)
        }
        var types: [UInt32: DeviceTypeContext] = [:]
        if let first = members.first {
            for type in first.types.collection.contexts.keys where members.allSatisfy({ $0.types.collection.contexts[type] != nil }) {
                let contexts = members.compactMap { $0.types.collection.contexts[type] }
                types[type] = DeviceTypeContext(isPrimary: contexts[0].isPrimary, traits: groupTraits(contexts.map(\.traits)))
            }
        }
        // Traits every member has on some device type (a light and a plug share On/Off).
        let merged = members.map { m in
            TraitCollection(
                contexts: m.types.collection.contexts.values.reduce(into: [ClusterID: TraitContext]()) { all, type in
                    all.merge(type.traits.contexts) { kept, _ in kept }
                })
        }
        return DeviceGroup(
            id: g.id, name: g.name, structureID: g.structureID, deviceIDs: members.map(\.id),
            sourceConnectivity: .combining(members.map(\.sourceConnectivity)),
            types: DeviceTypeController(
                deviceID: g.id, collection: DeviceTypeCollection(contexts: types), engine: self,
                isGroup: true),
            traits: GroupTraitController(groupID: g.id, collection: groupTraits(merged), engine: self))
    }

    func currentGroupTypes(groupID: String) async -> DeviceTypeCollection? {
        guard let g = graph.groups[groupID] else { return nil }
        for id in g.members.keys.sorted() { _ = await currentTypes(deviceID: id) }
        return snapshot.groups[groupID]?.types.collection
    }
}

extension DeviceGroupRecord {
    var keySet: GroupKeySet { GroupKeySet(keySetID: keySetID, epochKey: epochKey, epochStartTime: epochStartTime) }
}
