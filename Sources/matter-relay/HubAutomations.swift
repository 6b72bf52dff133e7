import Foundation
import HomeAPI
import HomeRelayLink
import Logging
import MatterProtocol
import ServiceLifecycle

/// Runs a home's automations inside the hub process (`serve --mode hub --automations FILE`),
/// so they run with no app open. The Home on FILE reaches devices only through this hub
/// (its own relay-protocol endpoint on loopback, with the hub's home token): the hub's
/// Matter identity, never the app's. Runs are recorded in FILE's history.
final class HubAutomations: Service, Sendable {
    let homeFile: URL
    let homeToken: String
    /// Where the hub listens, as a client reaches it.
    let host: String
    let speed: Double
    let port: AsyncStream<Int>
    let logger: Logger

    init(homeFile: URL, homeToken: String, host: String, speed: Double, port: AsyncStream<Int>, logger: Logger) {
        self.homeFile = homeFile
        self.homeToken = homeToken
        self.host = host
        self.speed = speed
        self.port = port
        self.logger = logger
    }

    func run() async throws {
        var ports = port.makeAsyncIterator()
        guard let port = await ports.next() else { return }
        var c = HomeConfiguration()
        c.directRoute = false
        c.routingPolicy = .localOnly
        // A wildcard listener is reached on loopback.
        let h = ["0.0.0.0", "::", ""].contains(host) ? "127.0.0.1" : (host.contains(":") ? "[\(host)]" : host)
        c.hub = RelayEndpoint(url: "ws://\(h):\(port)", homeToken: homeToken)
        c.relayLinks = HomeRelayLinks.webSocket
        let home = try await Home.open(at: homeFile, configuration: c, logger: logger)
        let clock: any MatterClock = speed == 1 ? SystemClock() : ScaledClock(speed: speed)
        let runner = await home.startAutomations(clock: clock)
        let active = (try? await home.listAutomations().filter(\.isActive).count) ?? 0
        FileHandle.standardOutput.write(Data("matter-relay hub running \(active) active automation(s) from \(homeFile.path)\n".utf8))
        try? await gracefulShutdown()
        await runner.stop()
        await home.close()
    }
}
