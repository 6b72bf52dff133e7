// `matter-sim home --start-relay`: the cloud relay the home names, run inside this process,
// so a fake home with cloud routing needs one command. The home is registered in the
// relay's own database (STATE-ROOT/relay.sqlite) and its token kept next to it, so a
// restart with the same state root keeps the token controllers were given.
import CloudRelay
import DeviceProfile
import Foundation
import Logging
import ServiceLifecycle

struct HomeRelay {
    let url: String
    let homeToken: String
    let server: RelayServer
    private let group: ServiceGroup
    private let task: Task<Void, Error>

    static let databaseName = "relay.sqlite"
    static let tokenFileName = "relay-home-token"

    /// The relay URL a home names: the command line's, else the home profile's (every
    /// device inherits the home's `cloud.relay`, so the first one that has any tells it).
    static func url(option: String?, home: ResolvedHome) -> String? {
        option ?? home.allDevices.lazy.compactMap(\.profile.cloud.relay).first
    }

    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    /// Starts listening on the URL's host and port (or `listenHost` with the URL's port)
    /// and returns once the relay accepts connections.
    static func start(url: String, listenHost: String?, homeName: String, stateRoot: String, logger: Logger) async throws -> HomeRelay {
        guard let components = URLComponents(string: url), components.scheme == "ws", let host = components.host, !host.isEmpty else {
            throw StartError(description: "--start-relay: relay \(url): expected a URL like ws://127.0.0.1:8080")
        }
        let port = components.port ?? 80
        try FileManager.default.createDirectory(atPath: stateRoot, withIntermediateDirectories: true)
        let database = URL(fileURLWithPath: stateRoot).appendingPathComponent(databaseName).path
        let store: RelayStore
        do { store = try RelayStore(path: database) } catch {
            throw StartError(description: "--start-relay: cannot open the relay database \(database): \(error)")
        }
        let homeToken = try await token(for: homeName, in: store, file: URL(fileURLWithPath: stateRoot).appendingPathComponent(tokenFileName))

        let server = RelayServer(store: store, configuration: RelayServerConfiguration(host: listenHost ?? host, port: port), logger: logger)
        let (listening, sink) = AsyncStream.makeStream(of: Int.self)
        let app = server.application { port in
            sink.yield(port)
            sink.finish()
        }
        let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
        let task = Task {
            defer { sink.finish() }
            try await group.run()
        }
        var ports = listening.makeAsyncIterator()
        guard await ports.next() != nil else {
            // It stopped before listening: the port is taken, or the host is not ours.
            let reason: String
            do { try await task.value; reason = "it stopped before listening" } catch { reason = "\(error)" }
            throw StartError(description: "--start-relay: cannot listen on \(listenHost ?? host):\(port): \(reason)")
        }
        return HomeRelay(url: url, homeToken: homeToken, server: server, group: group, task: task)
    }

    /// The home's token: the kept one while the relay still accepts it, else a new one
    /// (a new home, or a rotated token for a home whose token file was lost).
    private static func token(for homeName: String, in store: RelayStore, file: URL) async throws -> String {
        if let kept = try? String(contentsOf: file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
           let home = try await store.authenticateHome(token: kept), home.name == homeName {
            return kept
        }
        let token: String
        if let existing = try await store.home(homeName) {
            token = try await store.rotateHomeToken(homeID: existing.id)
        } else {
            token = try await store.addHome(name: homeName).token
        }
        // Readable by its owner only: it lets anyone holding it control the home through the relay.
        FileManager.default.createFile(atPath: file.path, contents: Data((token + "\n").utf8), attributes: [.posixPermissions: 0o600])
        return token
    }

    /// Closes every connection and stops listening (after the nodes have stopped, so their
    /// links end on their own first).
    func stop() async {
        await group.triggerGracefulShutdown()
        _ = try? await task.value
        printOut("cloud relay stopped: \(server.metrics.snapshot.summary)")
    }
}
