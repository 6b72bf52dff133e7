// `matter-sim home --start-relay`: the cloud relay the home names, as a `matter-relay serve`
// child, so a fake home with cloud routing needs one command while matter-sim itself links
// only the relay's client. The home is registered in the relay's own database
// (STATE-ROOT/relay.sqlite) and its token kept next to it, so a restart with the same state
// root keeps the token controllers were given.
import DeviceProfile
import Foundation

#if canImport(Glibc)
import Glibc
#endif

struct HomeRelay {
    let url: String
    let homeToken: String
    private let process: DeviceProcess

    static let databaseName = "relay.sqlite"
    static let tokenFileName = "relay-home-token"
    /// How long the relay may take to listen (it opens or migrates its database first).
    static let startTimeout: Duration = .seconds(30)
    /// How long it may take to close its connections after SIGTERM.
    static let stopTimeout: Duration = .seconds(10)

    /// The relay URL a home names: the command line's, else the home profile's (every
    /// device inherits the home's `cloud.relay`, so the first one that has any tells it).
    static func url(option: String?, home: ResolvedHome) -> String? {
        option ?? home.allDevices.lazy.compactMap(\.profile.cloud.relay).first
    }

    struct StartError: Error, CustomStringConvertible {
        let description: String
    }

    /// `matter-relay` beside this executable (as the build and the container image place
    /// them), else the first one on PATH.
    static func relayExecutable() -> String? {
        let own = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let beside = URL(fileURLWithPath: own).deletingLastPathComponent().appendingPathComponent("matter-relay").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").lazy.map { "\($0)/matter-relay" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts the relay on the URL's host and port (or `listenHost` with the URL's port) and
    /// returns once it accepts connections.
    static func start(url: String, listenHost: String?, homeName: String, stateRoot: String, logLevel: String) async throws -> HomeRelay {
        guard let components = URLComponents(string: url), components.scheme == "ws", let host = components.host, !host.isEmpty else {
            throw StartError(description: "--start-relay: relay \(url): expected a URL like ws://127.0.0.1:8080")
        }
        guard let executable = relayExecutable() else {
            throw StartError(
                description:
                    "--start-relay: no matter-relay beside \(CommandLine.arguments[0]) or on PATH (swift build --product matter-relay)")
        }
        let port = components.port ?? 80
        try FileManager.default.createDirectory(atPath: stateRoot, withIntermediateDirectories: true)
        let root = URL(fileURLWithPath: stateRoot)
        let tokenFile = root.appendingPathComponent(tokenFileName).path
        let process: DeviceProcess
        do {
            process = try DeviceProcess(
                [
                    executable, "serve", "--host", listenHost ?? host, "--port", String(port),
                    "--database", root.appendingPathComponent(databaseName).path,
                    "--home", homeName, "--home-token-file", tokenFile,
                    "--exit-with-parent", String(getpid()), "--log-level", logLevel,
                ],
                readyMarker: "matter-relay listening on", forwardOutput: true)
        } catch {
            throw StartError(description: "--start-relay: cannot start \(executable): \(error)")
        }
        // real time: external: the relay's child process.
        let deadline = ContinuousClock.now + startTimeout
        while !process.isReady {
            if let status = process.exitStatus {
                // Its own error (port taken, database unreadable) is on stderr already.
                throw StartError(
                    description:
                        "--start-relay: matter-relay exited with status \(status) before listening on \(listenHost ?? host):\(port)")
            }
            if ContinuousClock.now > deadline {
                await DeviceProcess.stop([process], within: stopTimeout)
                throw StartError(
                    description: "--start-relay: matter-relay not listening on \(listenHost ?? host):\(port) after \(startTimeout)")
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard let token = try? String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
            !token.isEmpty
        else {
            await DeviceProcess.stop([process], within: stopTimeout)
            throw StartError(description: "--start-relay: matter-relay left no home token in \(tokenFile)")
        }
        return HomeRelay(url: url, homeToken: token, process: process)
    }

    /// SIGTERM (the relay closes every connection and prints its figures), then SIGKILL
    /// after `stopTimeout`; after the nodes have stopped, so their links end on their own first.
    func stop() async { await DeviceProcess.stop([process], within: Self.stopTimeout) }
}
