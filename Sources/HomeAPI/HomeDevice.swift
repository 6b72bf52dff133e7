import OpenCombine

/// A device in the home graph: a commissioned Matter node with its device types.
public struct HomeDevice: HomeObject {
    public let id: String
    public let name: String
    public let structureID: String?
    public let roomID: String?
    public let isMatterDevice: Bool
    /// Reachability of the device as a whole.
    public let sourceConnectivity: SourceConnectivity
    /// The device's types and their traits.
    public let types: DeviceTypeController
    /// The Matter operational node ID.
    public let nodeID: UInt64

    public static func == (a: HomeDevice, b: HomeDevice) -> Bool {
        a.id == b.id && a.name == b.name && a.structureID == b.structureID && a.roomID == b.roomID
            && a.sourceConnectivity == b.sourceConnectivity && a.types == b.types
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(structureID)
        hasher.combine(roomID)
        hasher.combine(types)
    }

    /// Renames the device and returns it renamed; this value keeps its old name. Names
    /// over 60 code points are cut to 60; an empty name is an error.
    public func setName(_ name: String) async throws(HomeError) -> HomeDevice {
        try await homeCall { try await types.engine.renameDevice(id, to: name) }
    }
}

/// The device types of one device or device group (the Home APIs' `DeviceTypeController`).
public struct DeviceTypeController: Sendable, Hashable {
    /// The device's ID, or the group's when `isGroup`.
    let deviceID: String
    /// The device types as of the snapshot this controller came with.
    let collection: DeviceTypeCollection
    let engine: HomeEngine
    var isGroup = false

    private nonisolated func current(_ snapshot: HomeSnapshot) -> DeviceTypeCollection? {
        isGroup ? snapshot.groups[deviceID]?.types.collection : snapshot.devices[deviceID]?.types.collection
    }

    public static func == (a: DeviceTypeController, b: DeviceTypeController) -> Bool {
        a.deviceID == b.deviceID && a.collection == b.collection
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(deviceID)
        hasher.combine(collection)
    }

    /// Whether the device has this type.
    public func contains<T: DeviceType>(_ type: T.Type) -> Bool {
        collection.contains(type)
    }

    /// The device type with its current trait values, or nil when the device lacks it.
    /// Waits (boundedly) for the device's first report when none arrived yet.
    public func get<T: DeviceType>(_ type: T.Type) async -> T? {
        guard collection.contains(type) else { return nil }
        if isGroup { return await engine.currentGroupTypes(groupID: deviceID)?[type] }
        return await engine.currentTypes(deviceID: deviceID)?[type]
    }

    /// The device type now and on every change of any of its traits; a publisher that
    /// completes at once when the device lacks the type.
    public func subscribe<T: DeviceType>(_ type: T.Type) -> AnyPublisher<T, HomeError> {
        guard collection.contains(type) else {
            return Empty(completeImmediately: true).eraseToAnyPublisher()
        }
        let controller = self
        return engine.snapshots()
            .compactMap { controller.current($0)?[type] }
            .removeDuplicates()
            .setFailureType(to: HomeError.self)
            .eraseToAnyPublisher()
    }

    /// All device types of the device, now and on every change.
    public func subscribeAll() -> AnyPublisher<DeviceTypeCollection, HomeError> {
        let controller = self
        return engine.snapshots()
            .compactMap { controller.current($0) }
            .removeDuplicates()
            .setFailureType(to: HomeError.self)
            .eraseToAnyPublisher()
    }

    /// The device types as last reported.
    public var all: DeviceTypeCollection { collection }
}
