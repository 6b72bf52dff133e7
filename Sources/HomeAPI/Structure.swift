/// A structure (a home, an office) in the home graph.
public struct Structure: HomeObject {
    public let id: String
    public let name: String
    /// The structure's postal address; scheduled automations need one.
    public internal(set) var address: String?
    let engine: HomeEngine

    public static func == (a: Structure, b: Structure) -> Bool { a.id == b.id && a.name == b.name && a.address == b.address }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(address)
    }

    /// Renames the structure; returns it as renamed (this value keeps the old name).
    /// Names over 60 code points are cut to 60.
    @discardableResult
    public func setName(_ name: String) async throws(HomeError) -> Structure {
        try await homeCall { try await engine.renameStructure(id, to: name) }
    }

    /// The structure's rooms.
    public func rooms() -> Query<Room> {
        let id = self.id
        return engine.query { snapshot in Set(snapshot.rooms.values.filter { $0.structureID == id }) }
    }

    // untyped-throws: typed, it crashes Swift 6.3.1 compiling the guides' `catch let _ as HomeError` (see Query.list).
    public func createRoom(name: String) async throws -> Room {
        try await homeCall { try await engine.createRoom(structureID: id, name: name) }
    }

    /// Deletes a room; its devices stay in the structure, in no room.
    // untyped-throws: typed, it crashes Swift 6.3.1 compiling the guides' `catch let _ as HomeError` (see Query.list).
    public func deleteRoom(_ room: Room) async throws {
        try await homeCall { try await engine.deleteRoom(room.id, structureID: id) }
    }

    public func deleteRoom(id roomID: String) async throws(HomeError) {
        try await homeCall { try await engine.deleteRoom(roomID, structureID: id) }
    }

    // untyped-throws: typed, it crashes Swift 6.3.1 compiling the guides' `catch let _ as HomeError` (see Query.list).
    public func move(device: HomeDevice, to room: Room) async throws {
        try await homeCall { try await engine.move(deviceIDs: [device.id], toRoom: room.id, structureID: id) }
    }

    public func move(deviceID: String, to room: Room) async throws(HomeError) {
        try await homeCall { try await engine.move(deviceIDs: [deviceID], toRoom: room.id, structureID: id) }
    }

    public func move(devices: [HomeDevice], to room: Room) async throws(HomeError) {
        try await homeCall { try await engine.move(deviceIDs: devices.map(\.id), toRoom: room.id, structureID: id) }
    }

    public func move(deviceIDs: [String], to room: Room) async throws(HomeError) {
        try await homeCall { try await engine.move(deviceIDs: deviceIDs, toRoom: room.id, structureID: id) }
    }
}

/// A room of a structure.
public struct Room: HomeObject {
    public let id: String
    public let name: String
    public let structureID: String
    let engine: HomeEngine

    public static func == (a: Room, b: Room) -> Bool { a.id == b.id && a.name == b.name && a.structureID == b.structureID }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(structureID)
    }

    /// Renames the room; returns it as renamed.
    @discardableResult
    public func setName(_ name: String) async throws(HomeError) -> Room {
        try await homeCall { try await engine.renameRoom(id, to: name) }
    }
}
