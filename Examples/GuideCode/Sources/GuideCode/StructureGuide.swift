// The Structure API guide (seeds/004, English), every Swift block as the guide prints it,
// between `guide-block` markers (scripts/check-guide-code.py checks them against the seeds).
// Left out: the guide's Kotlin lines `val roomToDelete = …` (not Swift).
//
// Wrapped: each block in a method of `StructureGuide`, which plays the app (`self.home`);
// the first one's statement goes into the init of the view model whose properties it
// declares (`StructuresViewModel`), and the rooms-and-devices block into a method of
// `RoomsAndDevicesModel`, which declares the `@Published var devicesByRoom` the block assigns to.
// Supplied: the app's `Logger`; `import Foundation` (DispatchQueue) and `Synchronization`;
// `XCTAssertTrue`/`XCTAssertNotNil`, which the guide borrows from its tests (here they
// count failures instead of failing a test); as parameters, the variables a block assumes:
// `structureID`, `structure`, `allRooms`, `room`, `light`, `theRoom`, `currentStructureID`;
// and `structure1` as a local.
// guide-block: structure-01
import GoogleHomeSDK
// end guide-block: structure-01
import Foundation
import Synchronization

/// The app's logger (the guide leaves it to the app).
private enum Logger {
    static func error(_ message: String) { print("error: \(message)") }
}

/// The guide's XCTest assertions, counted: `StructureGuide.assertionFailures`.
private func XCTAssertTrue(_ condition: @autoclosure () -> Bool) {
    if !condition() { StructureGuide.assertionFailures.withLock { $0 += 1 } }
}

private func XCTAssertNotNil(_ value: @autoclosure () -> Any?) {
    if value() == nil { StructureGuide.assertionFailures.withLock { $0 += 1 } }
}

/// The view model whose properties the guide's first block declares.
public final class StructuresViewModel {
// guide-block: structure-02
@Published public private(set) var structures: [Structure] = []
private var structuresCancellable: AnyCancellable?

    public init(home: Home) {  // [wrapper]
  self.structuresCancellable = home
    .structures()
    .batched()
    .receive(on: DispatchQueue.main)
    .map { Array($0) }
    .catch {
      Logger.error("Failed to load structures: \($0)")
      return Just([Structure]())
    }
    .assign(to: \.structures, on: self)
// end guide-block: structure-02
    }

    /// The structures as the main queue last saw them.
    public var current: [Structure] { structures }
}

/// The view model the rooms-and-devices block assigns to.
public final class RoomsAndDevicesModel {
    @Published public var devicesByRoom: [Room: [HomeDevice]] = [:]
    let home: Home

    public init(home: Home) { self.home = home }

    public func start(currentStructureID: String) {
// guide-block: structure-07
self.home.rooms().batched()
  .combineLatest(self.home.devices().batched())
  .receive(on: DispatchQueue.main)
  .catch { error in
    Logger.error("Failed to load rooms and devices: \(error)")
    return Just((Set<Room>(), Set<HomeDevice>()))
  }
  .map { rooms, devices in
    var devicesByRoom = [Room: [HomeDevice]]()
    for room in rooms where room.structureID == currentStructureID {
      devicesByRoom[room] = devices.filter { $0.roomID == room.id }
    }
    return devicesByRoom
  }.assign(to: &self.$devicesByRoom)
// end guide-block: structure-07
    }
}

/// The app of the Structure guide.
public final class StructureGuide: Sendable {
    static let assertionFailures = Mutex(0)
    /// How many of the guide's XCTAssert calls failed.
    public static var failedAssertions: Int { assertionFailures.withLock { $0 } }
    public let home: Home

    public init(home: Home) { self.home = home }

    public func getStructures() async throws -> Set<Structure>? {
// guide-block: structure-03
// Get a stream of all structures accessible to the user
let allStructuresChanges = self.home.structures()
let allStructures = try? await allStructuresChanges.list()
// end guide-block: structure-03
        return allStructures
    }

    public func structureProperties(structureID: String) async throws -> Structure {
// guide-block: structure-04
// Get a stream of changes taking place on a structure.
let structureChanges = try await home.structures().list().filter { $0.id == structureID }

// Get a snapshot of the structure.
let structure = structureChanges.first!

// Get structure properties
print("id \(structure.id) ")
print("name \(structure.name) ")
// end guide-block: structure-04
        return structure
    }

    public func findByName() async throws -> Structure? {
        var structure1: Structure!
// guide-block: structure-05
do {
  structure1 = try await home.structures().list().first(where: { $0.name == "Main House" })
} catch let _ as HomeError {
  // Code for handling the exception
}
// end guide-block: structure-05
        return structure1
    }

    public func multipleStructures() async throws -> (Structure?, Structure?) {
// guide-block: structure-06
var structure1: Structure!
var structure2: Structure!
do {
  structure1 = try await home.structures().list().first(where: { $0.name == "Main House" })
} catch let _ as HomeError {
  // Code for handling the exception
}
do {
  structure2 = try await home.structures().list().first(where: { $0.name == "Guest Cottage" })
} catch let _ as HomeError {
  // Code for handling the exception
}
// end guide-block: structure-06
        return (structure1, structure2)
    }

    public func listRooms() async throws -> Room {
// guide-block: structure-08
let allRoomsChanges = self.home.rooms()
let allRooms = try await allRoomsChanges.list()
let room = allRooms.first!
XCTAssertTrue(allRooms.contains(room))

print("id \(room.id) ")
print("name \(room.name) ")
// end guide-block: structure-08
        return room
    }

    public func createRoom(structure: Structure) async throws -> Room? {
// guide-block: structure-09
let testName = "Test Room Name"
var newRoom: Room!
do {
  newRoom = try await structure.createRoom(name: testName)
  XCTAssertNotNil(newRoom)
} catch let _ as HomeError {
  // Code for handling the exception
}
// end guide-block: structure-09
        return newRoom
    }

    public func deleteRoom(structure: Structure, allRooms: Set<Room>, room: Room) async throws {
// guide-block: structure-10
let roomToDelete = allRooms.first(where: { $0.id == room.id })
if let roomToDelete1 = roomToDelete {
  do {
    try await structure.deleteRoom(roomToDelete1)
  } catch let _ as HomeError {
    // Code for handling the exception
  }
}
// end guide-block: structure-10
    }

    public func move(structure: Structure, light: HomeDevice, room: Room) async throws {
// guide-block: structure-11
do {
  try await structure.move(device: light, to: room)
} catch let _ as HomeError {
  // Code for handling the exception
}
// end guide-block: structure-11
    }

    public func rename(theRoom: Room) async throws -> Room {
// guide-block: structure-12
let updatedRoom = try await theRoom.setName("new room name")
// end guide-block: structure-12
        return updatedRoom
    }
}
