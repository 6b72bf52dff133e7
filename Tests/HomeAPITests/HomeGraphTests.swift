import Foundation
import HomeAPI
import OpenCombine
import TestDevices
import TestWaiting
import Testing

/// The home graph on a real SQLite file: structures, rooms, names, persistence, sharing.
@Suite("Home graph")
struct HomeGraphTests {
    @Test func structuresAndRoomsPersistAndAreSharedBetweenHomes() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = try await openHome(dir)
        let structure = try await home.createStructure(name: "Maison")
        let kitchen = try await structure.createRoom(name: "Kitchen")
        _ = try await structure.createRoom(name: "Bedroom")
        #expect(try await home.structures().list().map(\.name) == ["Maison"])
        #expect(Set(try await structure.rooms().list().map(\.name)) == ["Kitchen", "Bedroom"])
        #expect(try await home.room(id: kitchen.id).structureID == structure.id)

        // A second Home on the same file sees the same graph, and live changes.
        let other = try await openHome(dir)
        #expect(Set(try await other.rooms().list().map(\.name)) == ["Kitchen", "Bedroom"])
        let recorder = Recorder(other.rooms().batched())
        _ = try await kitchen.setName("Cuisine")
        #expect(await recorder.wait(within: .seconds(2)) { $0.last?.contains { $0.name == "Cuisine" } == true })
        await other.close()
        await home.close()

        // Reopened: everything is still there.
        let reopened = try await openHome(dir)
        #expect(Set(try await reopened.rooms().list().map(\.name)) == ["Cuisine", "Bedroom"])
        await reopened.close()
    }

    @Test func namesAreTruncatedTo60CodePointsAndEmptyNamesRefused() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = try await openHome(dir)
        let long = String(repeating: "é", count: 70) + "🏠"
        let structure = try await home.createStructure(name: long)
        #expect(structure.name.unicodeScalars.count == 60)
        #expect(structure.name == String(repeating: "é", count: 60))
        let room = try await structure.createRoom(name: String(repeating: "r", count: 61))
        #expect(room.name.count == 60)
        let renamed = try await structure.setName("Short")
        #expect(renamed.name == "Short")
        #expect(structure.name.count == 60)
        do {
            _ = try await structure.createRoom(name: "   ")
            Issue.record("an empty room name was accepted")
        } catch let error as HomeError {
            #expect(error.code == .invalidArgument)
            #expect(!error.message.isEmpty)
        }
        await home.close()
    }

    @Test func unknownIDsAreNotFound() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = try await openHome(dir)
        for lookup in [
            { _ = try await home.device(id: "nope") }, { _ = try await home.room(id: "nope") },
            { _ = try await home.structure(id: "nope") },
        ] as [@Sendable () async throws -> Void] {
            do {
                try await lookup()
                Issue.record("an unknown ID was found")
            } catch let error as HomeError {
                #expect(error.code == .notFound)
            }
        }
        let structure = try await home.createStructure(name: "S")
        await #expect(throws: HomeError.self) { try await structure.deleteRoom(id: "nope") }
        await #expect(throws: HomeError.self) { try await structure.move(deviceID: "nope", to: try await structure.createRoom(name: "R")) }
        await home.close()
    }

    @Test func concurrentWritesAllLand() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let home = try await openHome(dir)
        let other = try await openHome(dir)
        let structure = try await home.createStructure(name: "Busy")
        let sameStructure = try await other.structure(id: structure.id)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<20 {
                group.addTask { _ = try await (i % 2 == 0 ? structure : sameStructure).createRoom(name: "Room \(i)") }
            }
            try await group.waitForAll()
        }
        #expect(try await home.rooms().list().count == 20)
        #expect(await until(signals(other.rooms().batched())) { (try? await other.rooms().list().count) == 20 })
        await other.close()
        await home.close()
    }

    @Test func combineLatestPairsLatestValues() async throws {
        let a = PassthroughSubject<Int, HomeError>()
        let b = PassthroughSubject<String, HomeError>()
        let recorder = Recorder(a.combineLatest(b).map { "\($0.0)\($0.1)" })
        a.send(1)
        #expect(recorder.values.isEmpty)
        b.send("x")
        a.send(2)
        b.send("y")
        #expect(recorder.values == ["1x", "2x", "2y"])
        a.send(completion: .finished)
        b.send("z")
        #expect(recorder.values.last == "2z")
        #expect(recorder.completion == nil)
        b.send(completion: .finished)
        #expect(recorder.completion == "finished")

        let c = PassthroughSubject<Int, HomeError>()
        let d = PassthroughSubject<Int, HomeError>()
        let failing = Recorder(c.combineLatest(d) { $0 + $1 })
        c.send(1)
        d.send(2)
        d.send(completion: .failure(.unknown("boom")))
        c.send(5)
        #expect(failing.values == [3])
        #expect(failing.completion?.contains("boom") == true)
    }
}
