// `homectl fleet-bench --home FLEET.yaml --host IP`: commissioning throughput and invoke
// latency against a fleet that `matter-sim home` runs (scripts/fleet-bench.sh). Our
// controller (MatterController, on a fresh fabric) commissions every node of the home, with
// the setup codes and ports the home assigns (HomeLaunchPlan), several at once; then a share
// of the nodes hold subscriptions while On/Off Toggle invokes go to random nodes one after
// another. Prints figures; the targets are judged by the caller.
import ArgumentParser
import DeviceProfile
import Foundation
import HomeAPI
import MatterController
import MatterModel
import MatterProtocol
import NIOCore
import Synchronization

struct FleetBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet-bench",
        abstract: "Commission every node of a running fleet home, then time invokes while some nodes hold subscriptions.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "UDP port of the home's first device (as given to `matter-sim home --base-port`).") var basePort: Int = 5540
    @Option(
        help: ArgumentHelp(
            "IP address of the host running the home; a comma-separated list when it runs split over hosts (`matter-sim home --part K/N` on the K-th).",
            valueName: "ip[,ip...]"))
    var host: String
    @Option(help: "Commission only this many nodes, spread evenly over the home (a bounded sample of a large fleet); default all.")
    var commissionCount: Int?
    @Option(
        help: ArgumentHelp(
            "A shell command run (and waited for) after the subscriptions are up, just before the invokes are timed: scripts/fleet-bench.sh marks the nodes' service times there.",
            valueName: "command"))
    var beforeInvokes: String?
    @Option(help: "Commissionings in flight at once.") var concurrency: Int = 16
    @Option(help: "Percentage of the nodes that hold a subscription while invokes are timed.") var subscribersPercent: Double = 10
    @Option(help: "Number of invokes to time.") var invokes: Int = 1000

    func validate() throws {
        guard global.homeProfile != nil else { throw ValidationError("--home must name the fleet's home profile (.yaml)") }
        guard (1...512).contains(concurrency) else { throw ValidationError("--concurrency must be 1...512") }
        guard (0...100).contains(subscribersPercent) else { throw ValidationError("--subscribers-percent must be 0...100") }
        guard (1...1_000_000).contains(invokes) else { throw ValidationError("--invokes must be 1...1000000") }
        if let commissionCount, commissionCount < 1 { throw ValidationError("--commission-count must be at least 1") }
    }

    struct Figures: Codable {
        var nodes: Int
        var commissioned: Int
        var commissioningSeconds: Double
        var commissioningsPerSecond: Double
        var commissioningP50ms: Double
        var commissioningP99ms: Double
        var subscriptions: Int
        var subscriptionsEstablished: Int
        var invokes: Int
        var invokeFailures: Int
        var invokeP50ms: Double
        var invokeP99ms: Double
        var reportsReceived: Int
    }

    func run() async throws {
        let resolved: ResolvedHome
        do { resolved = try ProfileLoader().loadHome(file: global.homeProfile ?? "") } catch {
            for d in error.diagnostics { FileHandle.standardError.write(Data((d.description + "\n").utf8)) }
            throw ValidationError("\(global.homeProfile ?? ""): not a usable home profile")
        }
        let whole: [HomeNodePlan]
        do { whole = try HomeLaunchPlan.nodes(of: resolved, basePort: basePort) } catch { throw ValidationError(error.description) }
        let hosts = host.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        for host in hosts where (try? SocketAddress(ipAddress: host, port: 0)) == nil {
            throw ValidationError("--host \(host): give an IP address")
        }
        guard (1...max(1, whole.count)).contains(hosts.count) else {
            throw ValidationError("--host: give 1...\(whole.count) addresses, one per part of the home")
        }
        // Every k-th node: the sample spreads over every part (host) of the home.
        let plan = Self.sample(whole, count: commissionCount ?? whole.count)
        let wholeCount = whole.count
        let hostOf: @Sendable (HomeNodePlan) -> String = { node in
            hosts[HomeLaunchPlan.part(ofNode: node.index, nodes: wholeCount, parts: hosts.count) - 1]
        }

        let trustStore: PAATrustStore?
        do { trustStore = try global.paaTrustStore.map { try PAATrustStore(directory: URL(fileURLWithPath: $0)) } } catch {
            throw ValidationError("--paa-trust-store: \(error)")
        }
        let responseTimeout = Seconds(max(0.5, global.timeout.value)).duration
        // A session per node (the default table holds 32, and an evicted session takes its
        // subscription with it), and room for every handshake and exchange in flight.
        let subscriberCount = Int((Double(plan.count) * subscribersPercent / 100).rounded(.up))
        let exchange = ExchangeManager.Configuration(
            maxSecureSessions: plan.count + 2 * concurrency + 16, maxUnsecuredSessions: 4 * concurrency + 16,
            maxExchanges: 8 * concurrency + 2 * subscriberCount + 128, defaultReceiveTimeout: .seconds(10))
        let controller = try await MatterController.start(
            fabric: try FabricAuthority.create(),
            configuration: MatterController.Configuration(
                responseTimeout: responseTimeout, handshakeStepTimeout: responseTimeout,
                subscriptionMaxInterval: 60, exchange: exchange))
        let options = CommissioningOptions(trustStore: trustStore, allowUntrustedAttestation: global.allowUntrusted)

        // 1. Commission every node (of the sample), `concurrency` at a time.
        // Benchmark figures, on the real clock: fleet figures; the fleet's nodes are processes of their own.
        let clock = SystemClock()
        let started = clock.now
        var latencies: [Double] = []
        var commissioned: [HomeNodePlan] = []
        var failures: [String] = []
        await withTaskGroup(of: (HomeNodePlan, Result<Double, any Error>).self) { group in
            var next = 0
            func startNext() {
                guard next < plan.count else { return }
                let node = plan[next]
                next += 1
                group.addTask {
                    let begin = clock.now
                    do {
                        let address = try SocketAddress(ipAddress: hostOf(node), port: node.port)
                        _ = try await controller.commission(
                            address: address, passcode: node.passcode, nodeID: Self.nodeID(node),
                            options: options)
                        return (node, .success(Self.milliseconds(clock.now - begin)))
                    } catch {
                        return (node, .failure(error))
                    }
                }
            }
            for _ in 0..<concurrency { startNext() }
            while let (node, result) = await group.next() {
                switch result {
                case .success(let ms):
                    latencies.append(ms)
                    commissioned.append(node)
                case .failure(let error):
                    failures.append("\(node.device.name) (port \(node.port)): \(error)")
                }
                let done = latencies.count + failures.count
                if done % 100 == 0 || done == plan.count {
                    FileHandle.standardError.write(
                        Data("fleet-bench: \(done)/\(plan.count) commissionings done (\(failures.count) failed)\n".utf8))
                }
                startNext()
            }
        }
        let commissioningSeconds = Self.milliseconds(clock.now - started) / 1000
        for failure in failures.prefix(10) { FileHandle.standardError.write(Data("fleet-bench: failed: \(failure)\n".utf8)) }

        // 2. Subscriptions on a share of the commissioned nodes (OnOff on endpoint 1).
        let subscribers = Array(commissioned.shuffled().prefix(subscriberCount))
        let established = Tally()
        let reports = Tally()
        let subscriptionTasks = subscribers.map { node in
            Task {
                var first = true
                for await event in controller.subscribe(
                    Self.nodeID(node), paths: [AttributePathIB(endpoint: 1, cluster: Clusters.OnOff.id)])
                {
                    switch event {
                    case .established:
                        if first { established.add(1) }
                        first = false
                    case .reports(let r):
                        reports.add(r.count)
                    case .lost, .events:
                        break
                    }
                }
            }
        }
        let subscribeDeadline = clock.now + .seconds(60)
        while established.value < subscribers.count, clock.now < subscribeDeadline {
            // real time: external: the fleet's nodes are processes of their own.
            try? await Task.sleep(for: .milliseconds(50))
        }
        let reportsBefore = reports.value
        if let beforeInvokes { Self.runAndWait(beforeInvokes) }

        // 3. Toggle invokes on random commissioned nodes, one after another.
        var samples: [Double] = []
        var invokeFailures = 0
        if !commissioned.isEmpty {
            for _ in 0..<invokes {
                guard let node = commissioned.randomElement() else { break }
                let begin = clock.now
                do {
                    _ = try await controller.invoke(
                        Self.nodeID(node),
                        ConcreteCommandPath(
                            endpoint: 1, cluster: Clusters.OnOff.id,
                            command: Clusters.OnOff.Command.toggle))
                    samples.append(Self.milliseconds(clock.now - begin))
                } catch {
                    invokeFailures += 1
                }
            }
        }
        // OnOff changes a Toggle causes may follow a transition (a dimmable light's
        // onOffTransitionTime); give their reports a moment before counting.
        // real time: external: the fleet's nodes are processes of their own.
        try? await Task.sleep(for: .seconds(2))
        for task in subscriptionTasks { task.cancel() }
        await controller.shutdown()

        let figures = Figures(
            nodes: plan.count, commissioned: commissioned.count,
            commissioningSeconds: Self.round(commissioningSeconds),
            commissioningsPerSecond: Self.round(commissioningSeconds > 0 ? Double(commissioned.count) / commissioningSeconds : 0),
            commissioningP50ms: Self.round(Self.percentile(latencies, 0.50)),
            commissioningP99ms: Self.round(Self.percentile(latencies, 0.99)),
            subscriptions: subscribers.count, subscriptionsEstablished: established.value,
            invokes: samples.count, invokeFailures: invokeFailures,
            invokeP50ms: Self.round(Self.percentile(samples, 0.50)), invokeP99ms: Self.round(Self.percentile(samples, 0.99)),
            reportsReceived: reports.value - reportsBefore)
        if global.json {
            Output.json(figures)
        } else {
            print(
                String(
                    format:
                        "fleet-bench: commissioned %d of %d nodes in %.1f s: %.2f commissionings/s (%d at once; each p50 %.0f ms, p99 %.0f ms)",
                    figures.commissioned, figures.nodes, figures.commissioningSeconds, figures.commissioningsPerSecond,
                    concurrency, figures.commissioningP50ms, figures.commissioningP99ms))
            print(
                String(
                    format:
                        "fleet-bench: %d invokes (%d failed) with %d of %d subscriptions established: p50 %.3f ms, p99 %.3f ms; %d reports received meanwhile",
                    figures.invokes, figures.invokeFailures, figures.subscriptionsEstablished, figures.subscriptions,
                    figures.invokeP50ms, figures.invokeP99ms, figures.reportsReceived))
        }
        if commissioned.count < plan.count || invokeFailures > 0 { throw ExitCode(1) }
    }

    /// `count` nodes of `plan` spread evenly over it (all of them when it has no more).
    static func sample(_ plan: [HomeNodePlan], count: Int) -> [HomeNodePlan] {
        guard count < plan.count else { return plan }
        return (0..<count).map { plan[$0 * plan.count / count] }
    }

    /// Runs `command` with /bin/sh and waits for it; a failure is said, not fatal.
    static func runAndWait(_ command: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        do {
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus != 0 {
                FileHandle.standardError.write(Data("fleet-bench: --before-invokes exited \(process.terminationStatus)\n".utf8))
            }
        } catch {
            FileHandle.standardError.write(Data("fleet-bench: --before-invokes: \(error)\n".utf8))
        }
    }

    /// Operational node IDs of the fleet, one per node of the home.
    static func nodeID(_ node: HomeNodePlan) -> NodeID { 0x0000_0000_0010_0000 + NodeID(node.index) }

    static func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    static func round(_ x: Double) -> Double { (x * 1000).rounded() / 1000 }

    /// Nearest-rank percentile, as `homectl bench` computes p99.
    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
    }
}

/// A count several tasks add to.
final class Tally: Sendable {
    private let count = Atomic(0)
    func add(_ n: Int) { count.add(n, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
