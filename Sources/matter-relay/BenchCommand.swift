import ArgumentParser
import CloudRelay
import Foundation
import Logging
import MatterController
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import NIOConcurrencyHelpers
import RelayClients
import RelayProtocol
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

/// Holds many device connections and drives commands through the relay at a fixed
/// rate, on loopback only, then prints the latency distribution. Bounded: it sends
/// exactly rate × duration commands and stops.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench", abstract: "Load a relay with device connections and commands; print p50/p99 latency.")

    @Option(help: "Relay base URL on loopback (ws://127.0.0.1:PORT); omitted: an in-process relay on a temporary database.")
    var relay: String?
    @Option(help: "A file holding that relay's admin token (else $MATTER_RELAY_ADMIN_TOKEN).", transform: CommandLineSecrets.read(file:))
    var adminTokenFile: String?
    @Option(help: "The admin token on the command line, where `ps` shows it: use --admin-token-file or $MATTER_RELAY_ADMIN_TOKEN.")
    var adminToken: String?
    @Option(
        help: """
            Where the devices connect, if not to --relay (issue #42: the controller on one instance and \
            its devices on another, so every frame crosses between them).
            """)
    var deviceRelay: String?
    @Option(help: "Device connections to hold.") var devices = 1000
    @Option(help: "Commands per second.") var rate = 500
    @Option(help: "Seconds of load.") var duration = 20
    @Option(help: "Per-command timeout in seconds.") var timeout = 5
    @Option(
        help: """
            Idle device connections of other homes: the load runs once without them, then again while \
            they are held, and both latencies are printed.
            """)
    var idle = 0
    @Option(
        help: """
            Flooding controller connections of another home (issue #37 item 7): the load runs once \
            without them, then again while each sends --flood-rate frames/s, and both latencies are printed.
            """)
    var floodConnections = 0
    @Option(help: "Frames per second each flooding connection sends.") var floodRate = 900
    @Option(
        help: """
            Failover (issue #42): SIGKILL this process (a relay instance behind --relay's balancer) \
            --kill-after seconds into the load, and print the time until every device is connected \
            again and until the next command succeeds.
            """)
    var killPid: Int32?
    @Option(help: "Seconds into the load at which --kill-pid is killed.") var killAfter = 3
    @Option(
        help: """
            Revocation across instances (issue #42): connect one device to --relay, remove it through \
            this other instance's admin API (http://127.0.0.1:PORT), and print how soon its connection closed.
            """)
    var revokeThrough: String?

    func validate() throws {
        guard (1...20000).contains(devices) else { throw ValidationError("--devices must be 1...20000") }
        guard (1...5000).contains(rate) else { throw ValidationError("--rate must be 1...5000") }
        guard (1...600).contains(duration) else { throw ValidationError("--duration must be 1...600") }
        guard (0...20000).contains(idle) else { throw ValidationError("--idle must be 0...20000") }
        guard (0...256).contains(floodConnections) else { throw ValidationError("--flood-connections must be 0...256") }
        guard (100...100_000).contains(floodRate) else { throw ValidationError("--flood-rate must be 100...100000") }
        if idle > 0 && floodConnections > 0 { throw ValidationError("--idle and --flood-connections are separate runs") }
        if let relay {
            // Load goes to this machine only.
            guard Self.isLoopback(relay) else { throw ValidationError("--relay must be a loopback address") }
        }
        if let revokeThrough, !Self.isLoopback(revokeThrough) { throw ValidationError("--revoke-through must be a loopback address") }
        if let deviceRelay {
            guard relay != nil, Self.isLoopback(deviceRelay) else { throw ValidationError("--device-relay needs --relay, and a loopback address") }
        }
        if killPid != nil || revokeThrough != nil {
            guard relay != nil else { throw ValidationError("--kill-pid and --revoke-through need --relay (the balancer)") }
            guard idle == 0, floodConnections == 0 else { throw ValidationError("--kill-pid and --revoke-through are separate runs") }
        }
        if let killPid, killPid <= 1 { throw ValidationError("--kill-pid \(killPid): expected a relay's process ID") }
        if killPid != nil, !(1...60).contains(killAfter) || killAfter >= duration {
            throw ValidationError("--kill-after \(killAfter): expected 1...60 and less than --duration")
        }
    }

    private static func isLoopback(_ url: String) -> Bool {
        guard let host = URLComponents(string: url)?.host else { return false }
        return ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
    }

    func run() async throws {
        var logger = Logger(label: "matter-relay.bench")
        logger.logLevel = .error
        if let relay {
            guard let token = adminToken ?? adminTokenFile ?? CommandLineSecrets.environment("MATTER_RELAY_ADMIN_TOKEN") else {
                throw ValidationError("--admin-token-file (or $MATTER_RELAY_ADMIN_TOKEN) is needed to register bench devices")
            }
            try await bench(relayURL: relay, adminToken: token, logger: logger)
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("matter-relay-bench-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let token = UUID().uuidString
            var configuration = RelayServerConfiguration(host: "127.0.0.1", port: 0, adminToken: token)
            configuration.maxConnectionsPerAddress = devices + idle + 64  // every bench device connects from loopback
            // One controller sends every command: let it (and a little more) through.
            configuration.maxFramesPerSecond = max(configuration.maxFramesPerSecond, 2 * rate)
            configuration.frameBurst = max(configuration.frameBurst, 4 * rate)
            // Its commands and the devices' answers are one home's, all from loopback.
            configuration.maxFramesPerSecondPerHome = max(configuration.maxFramesPerSecondPerHome, 4 * rate)
            configuration.homeFrameBurst = max(configuration.homeFrameBurst, 16 * rate)
            configuration.maxFramesPerSecondPerAddress = max(configuration.maxFramesPerSecondPerAddress, 8 * rate)
            configuration.addressFrameBurst = max(configuration.addressFrameBurst, 32 * rate)
            let server = RelayServer(
                store: try RelayStore(path: directory.appendingPathComponent("relay.sqlite").path),
                configuration: configuration, logger: logger)
            let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
            let app = server.application { port in portSink.yield(port) }
            let group = ServiceGroup(configuration: .init(services: [app], logger: logger))
            try await withThrowingTaskGroup(of: Void.self) { tasks in
                tasks.addTask { try await group.run() }
                var iterator = ports.makeAsyncIterator()
                guard let port = await iterator.next() else { return }
                print("in-process relay on 127.0.0.1:\(port)")
                do {
                    try await bench(relayURL: "ws://127.0.0.1:\(port)", adminToken: token, logger: logger)
                } catch {
                    await group.triggerGracefulShutdown()
                    throw error
                }
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
            }
        }
    }

    private func bench(relayURL: String, adminToken: String, logger: Logger) async throws {
        let http = relayURL.replacingOccurrences(of: "ws://", with: "http://")
        // Benchmark figures, on the real clock: relay round trips.
        let clock = SystemClock()

        // 1. A home of our own and its devices.
        let started = clock.now
        let home = try await Self.addHome("bench-\(UUID().uuidString.prefix(8))", http: http, adminToken: adminToken)
        let deviceCount = devices
        let credentials = try await Self.register(
            (0..<deviceCount).map { "bench-\($0)" }, homeID: home.id, http: http, adminToken: adminToken)
        print("registered \(deviceCount) devices in home \(home.id) in \(format(clock.now - started))")

        // 2. The devices: each a real InteractionServer behind a relay connection.
        var settings = RelayClientSettings()
        settings.minimumBackoff = .milliseconds(100)
        settings.maximumBackoff = .seconds(2)
        var deviceConfiguration = RelayDeviceClient.Configuration()
        deviceConfiguration.settings = settings
        let fleet = credentials.map { credential -> (InteractionServer, RelayDeviceClient) in
            let server = InteractionServer(provider: BenchLight(), logger: logger)
            return (
                server,
                RelayDeviceClient(
                    relayURL: deviceRelay ?? relayURL, credential: credential, handler: server, configuration: deviceConfiguration,
                    logger: logger)
            )
        }
        var controllerConfiguration = RelayControllerClient.Configuration()
        controllerConfiguration.settings = settings
        controllerConfiguration.settings.queueCapacity = 8192
        controllerConfiguration.operationTimeout = .seconds(Int64(timeout))
        let controller = RelayControllerClient(
            relayURL: relayURL, homeToken: home.token, configuration: controllerConfiguration, logger: logger)

        try await withThrowingTaskGroup(of: Void.self) { services in
            for (server, client) in fleet {
                services.addTask { await server.run() }
                services.addTask { try await client.run() }
            }
            services.addTask { try await controller.run() }
            defer { services.cancelAll() }

            try await Self.waitConnected(fleet.map(\.1), clock: clock)
            try await controller.waitUntilConnected(timeout: .seconds(30))

            if floodConnections > 0 {
                try await measureUnderFlood(controller: controller, relayURL: relayURL, http: http, adminToken: adminToken, clock: clock)
                return
            }
            if let revokeThrough {
                try await measureRevocation(
                    relayURL: relayURL, http: http, other: revokeThrough, home: home, adminToken: adminToken,
                    configuration: deviceConfiguration, clock: clock, logger: logger)
            }
            if let killPid {
                let failover = Failover(pid: killPid, after: .seconds(killAfter), devices: fleet.map(\.1), clock: clock)
                let results = await measure(controller: controller, http: http, clock: clock, failover: failover)
                printReport(results)
                print(failover.report(results: results))
                return
            }
            guard idle > 0 else {
                let results = await measure(controller: controller, http: http, clock: clock)
                printReport(results)
                return
            }
            // 3. Issue #17 item 5: the same load without, then with, idle connections of other homes.
            print("baseline, no idle connections:")
            let baseline = await measure(controller: controller, http: http, clock: clock)
            printReport(baseline)
            let idleStart = clock.now
            var idleCredentials: [String] = []
            // Homes of up to 100 devices each, as a relay holding many homes has them.
            for first in stride(from: 0, to: idle, by: 100) {
                let idleHome = try await Self.addHome(
                    "idle-\(UUID().uuidString.prefix(8))", http: http, adminToken: adminToken)
                idleCredentials += try await Self.register(
                    (first..<min(idle, first + 100)).map { "idle-\($0)" }, homeID: idleHome.id, http: http,
                    adminToken: adminToken)
            }
            print("\nregistered \(idle) idle devices in \((idle + 99) / 100) other homes in \(format(clock.now - idleStart))")
            let idlers = idleCredentials.map {
                RelayDeviceClient(
                    relayURL: relayURL, credential: $0, handler: IdleDevice(), configuration: deviceConfiguration, logger: logger)
            }
            for client in idlers { services.addTask { try await client.run() } }
            try await Self.waitConnected(idlers, clock: clock)
            // Measured once they are idle, not while the relay still finishes their upgrades.
            try await clock.sleep(until: clock.now + .seconds(2))
            let health = try? await RelayHTTP.request("GET", "\(http)/health")
            print("relay /health: \(health?.text ?? "n/a")")
            print("with \(idle) idle connections:")
            let loaded = await measure(controller: controller, http: http, clock: clock)
            printReport(loaded)
            print("")
            print(
                "summary: \(rate)/s for \(duration) s over \(deviceCount) devices: without idle connections "
                    + "p50 \(baseline.percentile(0.50)) p99 \(baseline.percentile(0.99)) (\(baseline.errorCount) failed); "
                    + "with \(idle) idle connections "
                    + "p50 \(loaded.percentile(0.50)) p99 \(loaded.percentile(0.99)) (\(loaded.errorCount) failed)")
        }
    }

    /// Issue #37 item 7: the same load without, then while another home floods the relay.
    private func measureUnderFlood(
        controller: RelayControllerClient, relayURL: String, http: String, adminToken: String, clock: SystemClock
    ) async throws {
        print("baseline, no flood:")
        let baseline = await measure(controller: controller, http: http, clock: clock)
        printReport(baseline)
        let attacker = try await Self.addHome("flood-\(UUID().uuidString.prefix(8))", http: http, adminToken: adminToken)
        let port = URLComponents(string: relayURL)?.port ?? 80
        let flood = BenchFlood(port: port, token: attacker.token, connections: floodConnections, rate: floodRate)
        flood.start(limit: .seconds(duration + 30))
        try await clock.sleep(until: clock.now + .seconds(2))
        let health = try? await RelayHTTP.request("GET", "\(http)/health")
        print("\nrelay /health under flood: \(health?.text ?? "n/a")")
        print("while \(floodConnections) connections of another home each send \(floodRate) frames/s:")
        let loaded = await measure(controller: controller, http: http, clock: clock)
        printReport(loaded)
        await flood.stop()
        print("flood: \(flood.sent) frames sent, \(flood.closedByRelay) of \(floodConnections) flooding connections closed by the relay")
        // What the flood costs once it has ended: nothing, at once.
        print("\nright after the flood ended:")
        let after = await measure(controller: controller, http: http, clock: clock)
        printReport(after)
        print("")
        print(
            "summary: \(rate)/s for \(duration) s over \(devices) devices: without flood "
                + "p50 \(baseline.percentile(0.50)) p99 \(baseline.percentile(0.99)) (\(baseline.errorCount) failed); "
                + "with \(floodConnections) x \(floodRate) frames/s of another home "
                + "p50 \(loaded.percentile(0.50)) p99 \(loaded.percentile(0.99)) (\(loaded.errorCount) failed); "
                + "after it p50 \(after.percentile(0.50)) p99 \(after.percentile(0.99)) (\(after.errorCount) failed)")
    }

    /// A new home, through the admin API.
    private static func addHome(_ name: String, http: String, adminToken: String) async throws -> RelayHomeCredential {
        let created = try await RelayHTTP.request(
            "POST", "\(http)/v1/admin/homes", bearer: adminToken, json: Array(#"{"name":"\#(name)"}"#.utf8))
        guard created.status == 201 else { throw ValidationError("creating home \(name): HTTP \(created.status) \(created.text)") }
        return try JSONDecoder().decode(RelayHomeCredential.self, from: Data(created.body))
    }

    /// Registers `deviceIDs` in a home through the admin API, eight at a time; their credentials, in order.
    private static func register(_ deviceIDs: [String], homeID: String, http: String, adminToken: String) async throws -> [String] {
        try await withThrowingTaskGroup(of: (Int, String).self) { group in
            var credentials = [String](repeating: "", count: deviceIDs.count)
            var next = 0
            func add(_ index: Int) {
                group.addTask {
                    let response = try await RelayHTTP.request(
                        "POST", "\(http)/v1/admin/homes/\(homeID)/devices", bearer: adminToken,
                        json: Array(#"{"deviceID":"\#(deviceIDs[index])"}"#.utf8))
                    guard response.status == 201 else {
                        throw ValidationError("registering \(deviceIDs[index]): HTTP \(response.status)")
                    }
                    return (index, try JSONDecoder().decode(RelayDeviceCredential.self, from: Data(response.body)).credential)
                }
            }
            while next < min(8, deviceIDs.count) {
                add(next)
                next += 1
            }
            while let (index, credential) = try await group.next() {
                credentials[index] = credential
                if next < deviceIDs.count {
                    add(next)
                    next += 1
                }
            }
            return credentials
        }
    }

    /// Waits (bounded: `limit` for all) until the devices are connected and prints how many are:
    /// at 10,000 some may not make it, and the load then runs with those that did (each command
    /// for one that did not counts as failed). Throws only when none connected.
    private static func waitConnected(_ clients: [RelayDeviceClient], clock: SystemClock, limit: Duration = .seconds(180)) async throws {
        let connectStart = clock.now
        var connected = 0
        for (index, client) in clients.enumerated() {
            let left = limit - (clock.now - connectStart)
            if (try? await client.waitUntilConnected(timeout: max(left, .milliseconds(1)))) != nil { connected += 1 }
            if (index + 1) % (clients.count > 2500 ? 1000 : 250) == 0 || index + 1 == clients.count {
                print("  \(connected)/\(clients.count) devices connected (\(format(clock.now - connectStart)))")
            }
        }
        print("devices connected: \(connected) of \(clients.count) in \(format(clock.now - connectStart))")
        guard connected > 0 else { throw ValidationError("no device connected within \(format(limit))") }
    }

    /// Issue #42: a device connected to one instance, removed through another: the time until
    /// its connection closes.
    private func measureRevocation(
        relayURL: String, http: String, other: String, home: RelayHomeCredential, adminToken: String,
        configuration: RelayDeviceClient.Configuration, clock: SystemClock, logger: Logger
    ) async throws {
        let deviceID = "revoked-\(UUID().uuidString.prefix(8))"
        let credential = try await Self.register([deviceID], homeID: home.id, http: http, adminToken: adminToken)[0]
        let client = RelayDeviceClient(
            relayURL: relayURL, credential: credential, handler: IdleDevice(), configuration: configuration, logger: logger)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            defer { group.cancelAll() }
            try await client.waitUntilConnected(timeout: .seconds(30))
            let started = clock.now
            let removed = try await RelayHTTP.request(
                "DELETE", "\(other)/v1/admin/homes/\(home.id)/devices/\(deviceID)", bearer: adminToken)
            guard removed.status == 204 else { throw ValidationError("removing \(deviceID) through \(other): HTTP \(removed.status)") }
            try await client.waitUntilDisconnected(timeout: .seconds(10))
            print("revocation: \(deviceID) removed through \(other); its connection to \(relayURL) closed after \(format(clock.now - started))")
        }
    }

    /// Open-loop load: command i goes out at start + i / rate, whatever earlier ones do.
    private func measure(
        controller: RelayControllerClient, http: String, clock: SystemClock, failover: Failover? = nil
    ) async -> BenchResults {
        let (rate, deviceCount) = (rate, devices)
        let total = rate * duration
        let interval = Duration.seconds(1) / rate
        let results = NIOLockedValueBox(BenchResults())
        print("sending \(total) Toggle commands at \(rate)/s across \(deviceCount) devices for \(duration) s ...")
        let relayBefore = await Self.relayRoundTrips(http: http)
        let loadStart = clock.now
        await withTaskGroup(of: Void.self) { load in
            if let failover { load.addTask { await failover.run(from: loadStart) } }
            for i in 0..<total {
                // Woken at most once a millisecond, to send every command due by then: timers were
                // about 9 % of the bench's CPU at 5,000/s, half of them a sleep per command here
                // (issue #42). Each command's latency counts from when it went out.
                let due = loadStart + interval * i
                if clock.now < due { try? await clock.sleep(until: max(due, clock.now + .milliseconds(1))) }
                let deviceID = "bench-\(i % deviceCount)"
                load.addTask {
                    let sent = clock.now
                    do {
                        let client = InteractionClient(channel: controller.channel(to: deviceID))
                        let response = try await client.invoke(BenchLight.toggleRequest)
                        let ok = response.invokeResponses.count == 1
                        let elapsed = clock.now - sent
                        results.withLockedValue {
                            if ok { $0.completions.append((sent, elapsed)) }
                            ok ? $0.latencies.append(elapsed) : $0.record("unexpected response")
                        }
                    } catch {
                        results.withLockedValue {
                            $0.record("\(error)")
                            $0.failures.append(sent)
                        }
                    }
                }
                if (i + 1) % (rate * 5) == 0 {
                    let done = results.withLockedValue { $0.latencies.count }
                    print("  \(i + 1)/\(total) sent, \(done) answered")
                }
            }
        }
        var summary = results.withLockedValue { $0 }
        summary.sent = total
        summary.loadTime = clock.now - loadStart
        summary.latencies.sort()
        if let before = relayBefore, let after = await Self.relayRoundTrips(http: http) {
            summary.relayRoundTrips = (after.count - before.count, after.sum - before.sum)
        }
        return summary
    }

    private func printReport(_ summary: BenchResults) {
        let sorted = summary.latencies
        print("")
        print(
            "commands: \(summary.sent) sent, \(sorted.count) ok, \(summary.errorCount) failed, in \(format(summary.loadTime)) "
                + "(\(String(format: "%.1f", Double(sorted.count) / seconds(summary.loadTime))) ok/s)")
        print(
            "latency (controller invoke → device → controller): p50 \(summary.percentile(0.50))  p90 \(summary.percentile(0.90))  "
                + "p99 \(summary.percentile(0.99))  max \(sorted.last.map(format) ?? "n/a")")
        if let (count, sum) = summary.relayRoundTrips, count > 0 {
            print("relay-side round trip (request in → answer in): mean \(format(.seconds(sum / count))) over \(Int(count))")
        }
        for (error, count) in summary.errors.sorted(by: { $0.value > $1.value }).prefix(5) {
            print("  error ×\(count): \(error)")
        }
    }

    /// The relay's round-trip histogram count and sum, from /metrics.
    private static func relayRoundTrips(http: String) async -> (count: Double, sum: Double)? {
        guard let metrics = try? await RelayHTTP.request("GET", "\(http)/metrics"),
            let count = metric("relay_exchange_round_trip_seconds_count", in: metrics.text),
            let sum = metric("relay_exchange_round_trip_seconds_sum", in: metrics.text)
        else { return nil }
        return (count, sum)
    }

    private static func metric(_ name: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }
}

private struct BenchResults: Sendable {
    var latencies: [Duration] = []
    var errors: [String: Int] = [:]
    var errorCount = 0
    var sent = 0
    var loadTime = Duration.zero
    /// Exchanges the relay timed during this load, and their total seconds.
    var relayRoundTrips: (count: Double, sum: Double)?
    /// When each successful command was sent and how long it took; when each failed one was sent.
    var completions: [(sent: Duration, elapsed: Duration)] = []
    var failures: [Duration] = []

    /// Of the sorted latencies.
    func percentile(_ q: Double) -> String {
        guard !latencies.isEmpty else { return "n/a" }
        return format(latencies[min(latencies.count - 1, Int(Double(latencies.count) * q))])
    }

    mutating func record(_ error: String) {
        errors[error, default: 0] += 1
        errorCount += 1
    }
}

private func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
}

private func format(_ d: Duration) -> String {
    let s = seconds(d)
    return s < 1 ? String(format: "%.2f ms", s * 1000) : String(format: "%.2f s", s)
}

/// Issue #42: one relay instance SIGKILLed mid-load, and how long until every device is
/// connected again (through the balancer, to the other) and the next command succeeds.
private final class Failover: Sendable {
    let pid: Int32
    let after: Duration
    let devices: [RelayDeviceClient]
    let clock: SystemClock
    // The lock guards the figures.
    private let figures = NIOLockedValueBox<(killed: Duration?, dropped: Int, allBack: Duration?)>((nil, 0, nil))

    init(pid: Int32, after: Duration, devices: [RelayDeviceClient], clock: SystemClock) {
        self.pid = pid
        self.after = after
        self.devices = devices
        self.clock = clock
    }

    /// Kills the process at `start + after`, then watches the devices (bounded: 60 s): each that
    /// lost its connection, and when it had it again.
    func run(from start: Duration) async {
        try? await clock.sleep(until: start + after)
        let killed = clock.now
        guard kill(pid, SIGKILL) == 0 else {
            print("failover: kill \(pid) failed (errno \(errno))")
            return
        }
        figures.withLockedValue { $0.killed = killed }
        print("  killed relay process \(pid)")
        var down = Set<Int>()
        var back: [Int: Duration] = [:]
        while clock.now - killed < .seconds(60) {
            let now = clock.now
            for (i, device) in devices.enumerated() {
                if device.state != .connected {
                    down.insert(i)
                    back[i] = nil
                } else if down.contains(i), back[i] == nil {
                    back[i] = now - killed
                }
            }
            // Done once every device that dropped is back, a second after the kill at the
            // earliest (those on the killed instance are seen disconnected well within it).
            if now - killed > .seconds(1), back.count == down.count {
                let slowest = back.values.max() ?? .zero
                figures.withLockedValue {
                    $0.allBack = slowest
                    $0.dropped = down.count
                }
                return
            }
            try? await clock.sleep(until: now + .milliseconds(20))
        }
        figures.withLockedValue { $0.dropped = down.count }
    }

    func report(results: BenchResults) -> String {
        let (killed, dropped, allBack) = figures.withLockedValue { $0 }
        guard let killed else { return "failover: no relay was killed" }
        let next = results.completions.filter { $0.sent >= killed }.map { $0.sent + $0.elapsed - killed }.min()
        let failed = results.failures.filter { $0 >= killed - .seconds(10) }.count
        return "failover: \(dropped) of \(devices.count) devices lost their connection; every device online again after "
            + (allBack.map(format) ?? "more than 60 s") + "; next command succeeded after " + (next.map(format) ?? "never")
            + "; \(failed) commands failed around the kill"
    }
}

/// A device connection that is only held: authenticated, answering the relay's pings, never addressed.
private struct IdleDevice: RelayInteractionHandler {
    func handle(opcode: UInt8, payload: [UInt8], on exchange: any IMExchange) async {}
}

/// The bench's device: one On/Off cluster on endpoint 1 whose Toggle flips OnOff.
actor BenchLight: InteractionDataProvider {
    static let cluster = Clusters.OnOff.id
    static let onOffPath = AttributePath(endpoint: 1, cluster: cluster, attribute: Clusters.OnOff.Attribute.onOff)
    static let toggleRequest = InvokeRequestMessage(
        invokeRequests: [CommandDataIB(path: CommandPathIB(endpoint: 1, cluster: cluster, command: Clusters.OnOff.Command.toggle))])

    private var onOff = false
    private var version: DataVersion = 1

    func endpoints() -> [EndpointNumber] { [1] }
    func clusters(on endpoint: EndpointNumber) -> [ClusterID] { endpoint == 1 ? [Self.cluster] : [] }
    func attributes(of cluster: ClusterPath) -> [AttributeMetadata] {
        cluster == ClusterPath(endpoint: 1, cluster: Self.cluster) ? [AttributeMetadata(id: Clusters.OnOff.Attribute.onOff)] : []
    }
    func commands(of cluster: ClusterPath) -> [CommandMetadata] {
        cluster == ClusterPath(endpoint: 1, cluster: Self.cluster) ? [CommandMetadata(id: Clusters.OnOff.Command.toggle)] : []
    }
    func dataVersion(of cluster: ClusterPath) -> DataVersion? {
        cluster == ClusterPath(endpoint: 1, cluster: Self.cluster) ? version : nil
    }
    func checkAccess(_ subject: SubjectDescriptor, to cluster: ClusterPath, privilege: Privilege) -> Bool { true }
    func read(_ path: AttributePath, context: AttributeReadContext) -> Result<VersionedAttributeValue, InteractionStatus> {
        path == Self.onOffPath
            ? .success(VersionedAttributeValue(.bool(onOff), dataVersion: version)) : .failure(InteractionStatus(.unsupportedAttribute))
    }
    func write(_ path: AttributePath, _ operation: AttributeWriteOperation, context: InteractionContext) -> InteractionStatus {
        InteractionStatus(.unsupportedWrite)
    }
    func invoke(_ path: ConcreteCommandPath, fields: TLVValue?, context: InteractionContext) -> CommandOutcome {
        onOff.toggle()
        version &+= 1
        return .status(.success)
    }
    nonisolated func attributeChanges() -> AsyncStream<AttributePath> {
        // No subscriptions in the bench: a stream that stays open and silent.
        AsyncStream { _ in }
    }
}
