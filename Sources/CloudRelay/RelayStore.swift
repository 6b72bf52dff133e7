import Foundation
import Logging
import MatterCrypto
import RelayProtocol

/// A home: the unit of isolation. Its controllers reach its devices and nothing else.
public struct RelayHome: Sendable, Hashable, Codable {
    public var id: String
    public var name: String
    public var createdAt: Date
}

/// A device registered in a home, allowed to hold a connection to the relay.
public struct RelayDeviceRegistration: Sendable, Hashable, Codable {
    public var homeID: String
    public var deviceID: String
    public var label: String?
    public var createdAt: Date
}

/// What the store refuses.
public enum RelayStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidIdentifier(String)
    case homeExists(String)
    case noSuchHome(String)
    case noSuchDevice(homeID: String, deviceID: String)
    case tooManyDevices(homeID: String, limit: Int)
    case invalidDatabaseURL(String)
    case databaseUnavailable(String)
    /// An onboarding report that is not one (`RelayStore.reportOnboarding`): what is wrong.
    case invalidOnboarding(String)
    /// Another device's credential reported this source; only it or the home's token replaces it.
    case onboardingSourceTaken(source: String, reportedBy: String)

    public var description: String {
        switch self {
        case .tooManyDevices(let h, let limit): "home '\(h)' has \(limit) devices, the most this relay registers for one home"
        case .invalidIdentifier(let s): "invalid identifier '\(s)': use 1...64 of A-Z a-z 0-9 . _ -"
        case .homeExists(let n): "a home named '\(n)' exists"
        case .noSuchHome(let h): "no home '\(h)'"
        case .noSuchDevice(let h, let d): "no device '\(d)' in home '\(h)'"
        case .invalidDatabaseURL(let u):
            "invalid database URL '\(u)': expected postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]"
        case .databaseUnavailable(let why): "the database is unavailable: \(why)"
        case .invalidOnboarding(let why): "invalid onboarding report: \(why)"
        case .onboardingSourceTaken(let source, let by): "onboarding source '\(source)' was reported by device '\(by)'"
        }
    }
}

/// The relay's registrations: homes with their token digests, devices with their credential
/// digests, and the revocation counter. Survives restarts of the relay. The rules (identifiers,
/// secrets, limits) live here; the rows live in an engine (`RelayStoreEngine`): SQLite by
/// default, PostgreSQL when several relay instances share one store.
public final class RelayStore: Sendable {
    let engine: any RelayStoreEngine

    /// Opens (creating if needed) the SQLite database at `path` and brings its schema up to date.
    public convenience init(path: String) throws {
        self.init(engine: try RelaySQLiteStore(path: path))
    }

    init(engine: any RelayStoreEngine) {
        self.engine = engine
    }

    /// A `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]` URL
    /// opens PostgreSQL (connecting, and migrating its schema); anything else is an SQLite file.
    public static func open(_ location: String, logger: Logger = Logger(label: "matter.relay.store")) async throws -> RelayStore {
        if RelayPostgresStore.isURL(location) {
            return RelayStore(engine: try await RelayPostgresStore.connect(url: location, logger: logger))
        }
        return try RelayStore(path: location)
    }

    /// "sqlite" or "postgresql".
    public var engineName: String { engine.name }

    /// Ends the engine's connections (PostgreSQL's pool); SQLite's file closes with the store.
    public func close() async { await engine.close() }

    /// Grows whenever a credential stops working.
    public func revocationCounter() async throws -> Int64 {
        try await engine.revocationCounter()
    }

    // MARK: Homes

    /// Creates a home; returns it with its token, which is shown only this once.
    public func addHome(name: String) async throws -> (home: RelayHome, token: String) {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 128 else { throw RelayStoreError.invalidIdentifier(name) }
        let token = RelayCredentials.generate(prefix: RelayCredentials.homeTokenPrefix)
        let home = RelayHome(id: "h" + RelayCredentials.hex(SecureRandom.bytes(6)), name: trimmed, createdAt: Date())
        try await engine.insertHome(home, tokenDigest: RelayCredentials.digest(token))
        return (home, token)
    }

    /// Issues a new token for a home; the old one stops working.
    public func rotateHomeToken(homeID: String) async throws -> String {
        let token = RelayCredentials.generate(prefix: RelayCredentials.homeTokenPrefix)
        try await engine.replaceTokenDigest(homeID: homeID, digest: RelayCredentials.digest(token))
        return token
    }

    public func homes() async throws -> [RelayHome] {
        try await engine.homes()
    }

    /// The home with this ID, or else with this name.
    public func home(_ idOrName: String) async throws -> RelayHome? {
        try await engine.home(idOrName: idOrName)
    }

    /// The home a token belongs to.
    public func authenticateHome(token: String) async throws -> RelayHome? {
        try await engine.home(tokenDigest: RelayCredentials.digest(token))
    }

    // MARK: Devices

    /// Registers a device in a home and returns its credential, shown only this once.
    /// Registering an existing device ID issues a new credential; the old one stops working.
    public func registerDevice(homeID: String, deviceID: String, label: String? = nil, limit: Int? = nil) async throws -> String {
        guard RelayFrame.isValidIdentifier(deviceID) else { throw RelayStoreError.invalidIdentifier(deviceID) }
        let credential = RelayCredentials.generate(prefix: RelayCredentials.deviceCredentialPrefix)
        try await engine.upsertDevice(
            RelayDeviceRegistration(homeID: homeID, deviceID: deviceID, label: label, createdAt: Date()),
            credentialDigest: RelayCredentials.digest(credential), limit: limit)
        return credential
    }

    public func removeDevice(homeID: String, deviceID: String) async throws {
        try await engine.deleteDevice(homeID: homeID, deviceID: deviceID)
    }

    public func devices(homeID: String) async throws -> [RelayDeviceRegistration] {
        try await engine.devices(homeID: homeID)
    }

    public func device(homeID: String, deviceID: String) async throws -> RelayDeviceRegistration? {
        try await engine.device(homeID: homeID, deviceID: deviceID)
    }

    /// The device a credential belongs to.
    public func authenticateDevice(credential: String) async throws -> RelayDeviceRegistration? {
        try await engine.device(credentialDigest: RelayCredentials.digest(credential))
    }

    // MARK: Hub mode

    /// Makes the store hold exactly one home, with this ID and token, and these devices:
    /// a local hub's database mirrors its credentials file (devices get no credential
    /// anyone knows: the hub reaches them over Matter, not over `/v1/device`).
    public func mirror(homeID: String, token: String, deviceIDs: [String]) async throws {
        guard RelayFrame.isValidIdentifier(homeID) else { throw RelayStoreError.invalidIdentifier(homeID) }
        for id in deviceIDs where !RelayFrame.isValidIdentifier(id) { throw RelayStoreError.invalidIdentifier(id) }
        try await engine.mirror(
            home: RelayHome(id: homeID, name: homeID, createdAt: Date()), tokenDigest: RelayCredentials.digest(token),
            deviceIDs: Set(deviceIDs))
    }

    // MARK: Moving stores

    /// Copies every home, device and digest of `source` into this store (`matter-relay
    /// migrate`): existing rows with the same IDs take the source's digests, and the revocation
    /// counter moves past both, so running relays re-check their connections. Safe to repeat.
    public func copy(from source: RelayStore) async throws -> (homes: Int, devices: Int) {
        let rows = try await source.engine.dump()
        try await engine.load(rows)
        return (rows.homes.count, rows.devices.count)
    }
}

/// Every row of a store, as `RelayStore.copy(from:)` moves them.
struct RelayStoreRows: Sendable {
    var homes: [(home: RelayHome, tokenDigest: String)]
    var devices: [(device: RelayDeviceRegistration, credentialDigest: String)]
    var revocationCounter: Int64
}

/// Where a store's rows live: the operations `RelayStore` needs, each one transaction.
/// `RelaySQLiteStore` and `RelayPostgresStore` implement it over one schema (`RelaySchema`).
protocol RelayStoreEngine: Sendable {
    var name: String { get }
    func revocationCounter() async throws -> Int64
    /// Throws `homeExists` for a name in use.
    func insertHome(_ home: RelayHome, tokenDigest: String) async throws
    /// Throws `noSuchHome`; bumps the revocation counter.
    func replaceTokenDigest(homeID: String, digest: String) async throws
    func homes() async throws -> [RelayHome]
    func home(idOrName: String) async throws -> RelayHome?
    func home(tokenDigest: String) async throws -> RelayHome?
    /// Inserts, or replaces the credential (and a given label) of, a device; bumps the revocation
    /// counter. Throws `noSuchHome`, and `tooManyDevices` for a new device past `limit`, checked
    /// in the transaction so concurrent registrations cannot pass it together.
    func upsertDevice(_ device: RelayDeviceRegistration, credentialDigest: String, limit: Int?) async throws
    /// Throws `noSuchDevice`; bumps the revocation counter.
    func deleteDevice(homeID: String, deviceID: String) async throws
    func devices(homeID: String) async throws -> [RelayDeviceRegistration]
    func device(homeID: String, deviceID: String) async throws -> RelayDeviceRegistration?
    func device(credentialDigest: String) async throws -> RelayDeviceRegistration?
    /// Keeps only `home` (its digest replaced) and exactly `deviceIDs` in it; new devices get
    /// a digest of a credential nobody knows. Bumps the revocation counter.
    func mirror(home: RelayHome, tokenDigest: String, deviceIDs: Set<String>) async throws
    /// Replaces `source`'s report (JSON of `[RelayOnboardingNode]`). Throws `noSuchHome`, and
    /// `onboardingSourceTaken` when a device other than `reporter` (non-nil) reported it last.
    func replaceOnboarding(homeID: String, source: String, reporter: String?, nodesJSON: String, at: Date) async throws
    /// Every report of the home, by source.
    func onboarding(homeID: String) async throws -> [(source: String, reporter: String?, nodesJSON: String)]
    func dump() async throws -> RelayStoreRows
    func load(_ rows: RelayStoreRows) async throws
    func close() async
}

extension RelayStoreEngine {
    /// A digest no credential has: a mirrored device is reached over Matter, not `/v1/device`.
    static func unusableDigest() -> String {
        RelayCredentials.digest(RelayCredentials.generate(prefix: RelayCredentials.deviceCredentialPrefix))
    }
}
