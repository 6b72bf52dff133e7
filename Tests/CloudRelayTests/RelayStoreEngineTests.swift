@testable import CloudRelay
import Foundation
import Testing

/// The engines a store test runs on: SQLite always, PostgreSQL where its binaries are
/// (the PostgreSQL-only tests below say so, with a message, where they are not).
enum StoreEngine: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite
    case postgres

    static var testable: [StoreEngine] { TestPostgres.available ? allCases : [.sqlite] }
    var testDescription: String { rawValue }
}

/// A fresh store on `engine`, with the location a second store (another process, another
/// instance) would open it by; closed and removed afterwards.
func withStore<T: Sendable>(_ engine: StoreEngine, _ body: @Sendable (RelayStore, String) async throws -> T) async throws -> T {
    switch engine {
    case .sqlite:
        let path = try temporaryDatabasePath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        // SQLite's file closes with the store.
        return try await body(try await RelayStore.open(path), path)
    case .postgres:
        return try await withPostgres { server in
            let store = try await RelayStore.open(server.url, logger: testLogger)
            do {
                let result = try await body(store, server.url)
                await store.close()
                return result
            } catch {
                await store.close()
                throw error
            }
        }
    }
}

/// One suite for both engines: what `RelayStore` promises does not depend on where rows live.
@Suite struct RelayStoreEngineTests {
    @Test(arguments: StoreEngine.testable) func homesAndTheirTokens(engine: StoreEngine) async throws {
        try await withStore(engine) { store, _ in
            #expect(store.engineName == (engine == .sqlite ? "sqlite" : "postgresql"))
            let (home, token) = try await store.addHome(name: "  Lake House ")
            #expect(home.name == "Lake House")
            await #expect(throws: RelayStoreError.homeExists("Lake House")) { _ = try await store.addHome(name: "Lake House") }
            await #expect(throws: RelayStoreError.invalidIdentifier("  ")) { _ = try await store.addHome(name: "  ") }
            #expect(try await store.authenticateHome(token: token)?.id == home.id)
            #expect(try await store.home(home.id)?.name == "Lake House")
            #expect(try await store.home("Lake House")?.id == home.id)
            #expect(try await store.home("nowhere") == nil)

            let before = try await store.revocationCounter()
            let rotated = try await store.rotateHomeToken(homeID: home.id)
            #expect(try await store.revocationCounter() > before)
            #expect(try await store.authenticateHome(token: token) == nil, "the old token still works")
            #expect(try await store.authenticateHome(token: rotated)?.id == home.id)
            await #expect(throws: RelayStoreError.noSuchHome("hnothing")) { _ = try await store.rotateHomeToken(homeID: "hnothing") }

            _ = try await store.addHome(name: "Attic")
            #expect(try await store.homes().map(\.name) == ["Attic", "Lake House"])
            // Dates come back as written, to the millisecond either engine keeps.
            let stored = try #require(try await store.home(home.id))
            #expect(abs(stored.createdAt.timeIntervalSince(home.createdAt)) < 0.002)
        }
    }

    @Test(arguments: StoreEngine.testable) func devicesAndTheirCredentials(engine: StoreEngine) async throws {
        try await withStore(engine) { store, _ in
            let (home, _) = try await store.addHome(name: "Home")
            await #expect(throws: RelayStoreError.noSuchHome("hmissing")) {
                _ = try await store.registerDevice(homeID: "hmissing", deviceID: "lamp")
            }
            await #expect(throws: RelayStoreError.invalidIdentifier("bad id")) {
                _ = try await store.registerDevice(homeID: home.id, deviceID: "bad id")
            }
            let first = try await store.registerDevice(homeID: home.id, deviceID: "lamp", label: "Floor lamp")
            #expect(try await store.authenticateDevice(credential: first)?.deviceID == "lamp")
            // Re-registering issues a new credential, revokes the old and keeps the label.
            let before = try await store.revocationCounter()
            let second = try await store.registerDevice(homeID: home.id, deviceID: "lamp")
            #expect(try await store.revocationCounter() > before)
            #expect(try await store.authenticateDevice(credential: first) == nil)
            #expect(try await store.authenticateDevice(credential: second)?.label == "Floor lamp")

            _ = try await store.registerDevice(homeID: home.id, deviceID: "blind", limit: 2)
            await #expect(throws: RelayStoreError.tooManyDevices(homeID: home.id, limit: 2)) {
                _ = try await store.registerDevice(homeID: home.id, deviceID: "fan", limit: 2)
            }
            // At the limit a registered device may still get a new credential.
            _ = try await store.registerDevice(homeID: home.id, deviceID: "blind", limit: 2)
            #expect(try await store.devices(homeID: home.id).map(\.deviceID) == ["blind", "lamp"])
            #expect(try await store.device(homeID: home.id, deviceID: "blind") != nil)

            try await store.removeDevice(homeID: home.id, deviceID: "lamp")
            #expect(try await store.authenticateDevice(credential: second) == nil)
            await #expect(throws: RelayStoreError.noSuchDevice(homeID: home.id, deviceID: "lamp")) {
                try await store.removeDevice(homeID: home.id, deviceID: "lamp")
            }
        }
    }

    /// The limit is checked inside the registration's transaction: ten at once into a home
    /// that takes five leave exactly five.
    @Test(arguments: StoreEngine.testable) func concurrentRegistrationsKeepTheLimit(engine: StoreEngine) async throws {
        try await withStore(engine) { store, _ in
            let (home, _) = try await store.addHome(name: "Busy")
            let accepted = await withTaskGroup(of: Bool.self) { group in
                for i in 0..<10 {
                    group.addTask { (try? await store.registerDevice(homeID: home.id, deviceID: "d\(i)", limit: 5)) != nil }
                }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(accepted == 5)
            #expect(try await store.devices(homeID: home.id).count == 5)
        }
    }

    @Test(arguments: StoreEngine.testable) func aHubMirrorsItsCredentials(engine: StoreEngine) async throws {
        try await withStore(engine) { store, _ in
            _ = try await store.addHome(name: "Other")
            try await store.mirror(homeID: "hub-home", token: "mrh_first", deviceIDs: ["a", "b"])
            try await store.mirror(homeID: "hub-home", token: "mrh_second", deviceIDs: ["b", "c"])
            #expect(try await store.homes().map(\.id) == ["hub-home"])
            #expect(try await store.devices(homeID: "hub-home").map(\.deviceID) == ["b", "c"])
            #expect(try await store.authenticateHome(token: "mrh_first") == nil)
            #expect(try await store.authenticateHome(token: "mrh_second")?.id == "hub-home")
        }
    }

    /// A second store on the same location (the CLI, a restarted or another instance) sees
    /// every row, and opening it again applies no step twice.
    @Test(arguments: StoreEngine.testable) func anotherStoreOnTheSameDatabaseSeesEverything(engine: StoreEngine) async throws {
        try await withStore(engine) { store, location in
            let (home, token) = try await store.addHome(name: "Shared")
            let credential = try await store.registerDevice(homeID: home.id, deviceID: "lamp")
            let other = try await RelayStore.open(location, logger: testLogger)
            #expect(try await other.authenticateHome(token: token)?.id == home.id)
            #expect(try await other.authenticateDevice(credential: credential)?.deviceID == "lamp")
            try await other.removeDevice(homeID: home.id, deviceID: "lamp")
            #expect(try await store.authenticateDevice(credential: credential) == nil)
            #expect(try await store.revocationCounter() == other.revocationCounter())
            await other.close()
        }
    }

    /// Only digests are stored: no row holds a token or credential.
    @Test(arguments: StoreEngine.testable) func rowsHoldDigestsOnly(engine: StoreEngine) async throws {
        try await withStore(engine) { store, _ in
            let (home, token) = try await store.addHome(name: "Private")
            let credential = try await store.registerDevice(homeID: home.id, deviceID: "lamp")
            let rows = try await store.engine.dump()
            #expect(rows.homes.map(\.tokenDigest) == [RelayCredentials.digest(token)])
            #expect(rows.devices.map(\.credentialDigest) == [RelayCredentials.digest(credential)])
        }
    }

    /// `matter-relay migrate`'s copy: an SQLite relay's homes, devices and digests move to
    /// PostgreSQL; the old token and credential work there, and running relays re-check
    /// their connections (the counter moved past the source's). Copying again changes nothing.
    @Test(.enabled(if: TestPostgres.available, TestPostgres.missing))
    func anSQLiteRelayMovesToPostgreSQL() async throws {
        try await withStore(.sqlite) { sqlite, _ in
            let (home, token) = try await sqlite.addHome(name: "Moving")
            let credential = try await sqlite.registerDevice(homeID: home.id, deviceID: "lamp", label: "Lamp")
            _ = try await sqlite.registerDevice(homeID: home.id, deviceID: "blind")
            _ = try await sqlite.addHome(name: "Empty")
            try await withStore(.postgres) { postgres, _ in
                let copied = try await postgres.copy(from: sqlite)
                #expect(copied.homes == 2 && copied.devices == 2)
                #expect(try await postgres.authenticateHome(token: token)?.id == home.id)
                let device = try await postgres.authenticateDevice(credential: credential)
                #expect(device?.label == "Lamp")
                #expect(try await postgres.revocationCounter() > sqlite.revocationCounter())
                _ = try await postgres.copy(from: sqlite)
                #expect(try await postgres.homes().map(\.name) == ["Empty", "Moving"])
                #expect(try await postgres.devices(homeID: home.id).map(\.deviceID) == ["blind", "lamp"])
            }
        }
    }

    /// Two instances starting at once on an empty database: the advisory lock lets one apply
    /// the steps and the other find them applied.
    @Test(.enabled(if: TestPostgres.available, TestPostgres.missing))
    func instancesStartingTogetherMigrateOnce() async throws {
        try await withPostgres { server in
            async let first = RelayStore.open(server.url, logger: testLogger)
            async let second = RelayStore.open(server.url, logger: testLogger)
            let (a, b) = try await (first, second)
            let (home, token) = try await a.addHome(name: "Both")
            #expect(try await b.authenticateHome(token: token)?.id == home.id)
            await a.close()
            await b.close()
        }
    }

    @Test func aBadDatabaseURLIsRefusedWithTheExpectedForm() async throws {
        await #expect(throws: RelayStoreError.invalidDatabaseURL("postgres://127.0.0.1/db")) {
            _ = try await RelayStore.open("postgres://127.0.0.1/db")
        }
        await #expect(throws: RelayStoreError.invalidDatabaseURL("postgres://u@127.0.0.1/db?sslmode=maybe (sslmode: expected disable, prefer or require)")) {
            _ = try await RelayStore.open("postgres://u@127.0.0.1/db?sslmode=maybe")
        }
        #expect(RelayPostgresStore.redacted("postgres://u:secret@h/db").contains("secret") == false)
    }
}
