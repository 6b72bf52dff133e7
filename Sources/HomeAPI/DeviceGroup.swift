import OpenCombine

/// A group of devices of one structure that are controlled together (the Google Home APIs'
/// `DeviceGroup`). On the devices it is a Matter group (Core spec 4.16): each member's
/// light or plug endpoints joined it, with the group's own key set, so one command reaches
/// every member as a single group message where the LAN carries multicast.
public struct DeviceGroup: HomeObject {
    public let id: String
    public let name: String
    public let structureID: String
    /// The member devices, by name.
    public let deviceIDs: [String]
    /// The members' connectivity combined: `partiallyOnline` when some are offline.
    public let sourceConnectivity: SourceConnectivity
    /// The device types every member has; their traits' commands go to the whole group.
    public let types: DeviceTypeController
    /// The traits every member has (a light and a plug share On/Off but no device type).
    public let traits: any TraitController

    public static func == (a: DeviceGroup, b: DeviceGroup) -> Bool {
        a.id == b.id && a.name == b.name && a.structureID == b.structureID && a.deviceIDs == b.deviceIDs
            && a.sourceConnectivity == b.sourceConnectivity && a.types == b.types
            && (a.traits as? GroupTraitController) == (b.traits as? GroupTraitController)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(deviceIDs)
        hasher.combine(types)
    }

    /// The group's device type `T` with its current trait values, or nil when some member lacks it.
    public func part<T: DeviceType>(_ part: T.Type = T.self) async -> T? {
        await types.get(part)
    }

    /// The group's parts of type `T` (one at most: a group shows each type once).
    public func parts<T: DeviceType>(_ part: T.Type = T.self) async throws(HomeError) -> [T] {
        await types.get(part).map { [$0] } ?? []
    }

    /// How the group's last command reached its members (one group message, or one by one).
    public func lastDelivery() async -> GroupDelivery? {
        await types.engine.lastGroupDelivery[id]
    }
}

extension Home {
    /// Every device group of every structure.
    public func deviceGroups() -> Query<DeviceGroup> {
        engine.query { Set($0.groups.values) }
    }

    public func deviceGroup(id: String) async throws(HomeError) -> DeviceGroup {
        try await homeCall {
            try await engine.reloadIfNeeded()
            guard let g = engine.snapshot.groups[id] else { throw HomeError.notFound("no device group with ID \(id)") }
            return g
        }
    }
}

extension Structure {
    /// The structure's device groups.
    public func deviceGroups() -> Query<DeviceGroup> {
        let id = self.id
        return engine.query { snapshot in Set(snapshot.groups.values.filter { $0.structureID == id }) }
    }

    /// Creates a device group of lights and plugs (the simulator's own call: in Google Home
    /// groups are made in the app). Each member joins a new Matter group over its LAN
    /// session: a key set, the GroupKeyMap, AddGroup on its light or plug endpoints and an
    /// ACL entry that lets the group Operate. Names over 60 code points are cut to 60.
    public func createDeviceGroup(name: String, devices: [HomeDevice]) async throws(HomeError) -> DeviceGroup {
        try await homeCall { try await engine.createDeviceGroup(structureID: id, name: name, deviceIDs: devices.map(\.id)) }
    }

    /// Deletes a device group; each member that answers leaves the Matter group.
    public func deleteDeviceGroup(_ group: DeviceGroup) async throws(HomeError) {
        try await homeCall { try await engine.deleteDeviceGroup(group.id) }
    }
}

/// Reads and subscribes to traits of an object (the Google Home APIs' `TraitController`).
public protocol TraitController: Sendable {
    func contains<T: Trait>(_ type: T.Type) -> Bool
    /// The trait's current value (the first the subscription would publish).
    func get<T: Trait>(_ type: T.Type) async -> T?
    func subscribe<T: Trait>(_ type: T.Type) -> AnyPublisher<T, HomeError>
}

/// A device group's traits: values as `DeviceGroup` describes, commands to every member.
struct GroupTraitController: TraitController, Hashable {
    let groupID: String
    let collection: TraitCollection
    let engine: HomeEngine

    static func == (a: GroupTraitController, b: GroupTraitController) -> Bool {
        a.groupID == b.groupID && a.collection == b.collection
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(groupID)
        hasher.combine(collection)
    }

    func contains<T: Trait>(_ type: T.Type) -> Bool { collection.contains(type) }

    func get<T: Trait>(_ type: T.Type) async -> T? {
        guard collection.contains(type) else { return nil }
        _ = await engine.currentGroupTypes(groupID: groupID)
        return (engine.snapshot.groups[groupID]?.traits as? GroupTraitController)?.collection[type]
    }

    func subscribe<T: Trait>(_ type: T.Type) -> AnyPublisher<T, HomeError> {
        let id = groupID
        return engine.snapshots()
            .compactMap { ($0.groups[id]?.traits as? GroupTraitController)?.collection[type] }
            .removeDuplicates()
            .setFailureType(to: HomeError.self)
            .eraseToAnyPublisher()
    }
}
