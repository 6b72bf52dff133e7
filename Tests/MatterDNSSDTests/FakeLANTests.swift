import ChildProcess
import Foundation
import Testing

/// Publishing and browsing through real Avahi daemons, each private to a host (network
/// namespace) of a fake LAN. Nothing touches the machine's real interfaces. These need root
/// for network namespaces; CI runs as root, so there they run.
@Suite(
    .serialized,
    .enabled(if: FakeLANEnvironment.isRoot, "needs root: the fake LAN is made of network namespaces"))
struct FakeLANTests {
    /// The node the acceptance criteria talk about, and a second one to tell apart from it.
    static let lightArguments = [
        "publish-commissionable", "--instance", "00ABCDEF01234567", "--discriminator", "3840", "--vendor", "65521",
        "--product", "32768", "--device-type", "257", "--device-name", "Kitchen Light", "--cm", "1", "--sii", "500",
        "--sai", "300", "--tcp", "0", "--ph", "33", "--pi", "Press the button",
    ]
    static let lightTXT = [
        "D": "3840", "CM": "1", "VP": "65521+32768", "DT": "257", "DN": "Kitchen Light", "SII": "500", "SAI": "300",
        "T": "0", "PH": "33", "PI": "Press the button",
    ]
    static let plugArguments = [
        "publish-commissionable", "--instance", "1111111111111111", "--discriminator", "1234", "--vendor", "4447",
        "--device-type", "266", "--cm", "0",
    ]

    @Test func publishedServiceIsBrowsedFromAnotherHostWithItsRecords() async throws {
        let lan = try FakeLAN(hosts: ["a", "b", "c"], avahi: ["a", "b", "c"])
        defer { lan.down() }
        let light = try lan.probe(on: "a", Self.lightArguments)
        let plug = try lan.probe(on: "c", Self.plugArguments)
        defer { light.stop(); plug.stop() }
        try await light.waitFor("ready") { $0.event == "ready" }
        try await plug.waitFor("ready") { $0.event == "ready" }

        let browse = try lan.probe(on: "b", ["browse", "--type", "_matterc._udp", "--until-count", "2", "--timeout", "20"])
        #expect(try await browse.waitForExit() == 0, "browse: \(browse.allLines.suffix(8)) \(browse.errors.suffix(2000))")
        let added = Dictionary(
            browse.allLines.filter { $0.event == "added" }.map { ($0.name ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        let found = try #require(added["00ABCDEF01234567"])
        #expect(found.type == "_matterc._udp")
        #expect(found.port == 5540)
        #expect(found.host == "\(lan.name)-a.local")
        #expect(found.txt == Self.lightTXT)
        let addresses = found.addresses ?? []
        #expect(addresses.contains { $0.ip == "10.77.0.2" && $0.family == 4 && $0.interface > 0 })
        #expect(addresses.contains { $0.ip.hasPrefix("fe80:") && $0.family == 6 && $0.interface > 0 })
        #expect(addresses.allSatisfy { $0.ip == "10.77.0.2" || $0.family == 6 })
        let other = try #require(added["1111111111111111"])
        #expect(other.txt?["D"] == "1234")
        #expect(other.txt?["CM"] == "0")
        #expect(other.addresses?.contains { $0.ip == "10.77.0.4" } == true)

        // Each subtype finds exactly the nodes registered under it.
        for (subtype, expected) in [
            ("_L3840", ["00ABCDEF01234567"]), ("_S15", ["00ABCDEF01234567"]), ("_V65521", ["00ABCDEF01234567"]),
            ("_T257", ["00ABCDEF01234567"]), ("_CM", ["00ABCDEF01234567"]), ("_L1234", ["1111111111111111"]),
            ("_S4", ["1111111111111111"]), ("_L1", []),
        ] {
            let names = try await browsedNames(lan, type: "_matterc._udp", subtype: subtype, seconds: 3)
            #expect(names == expected, "subtype \(subtype)")
        }

        // avahi-browse on the same host reads the same records from the same daemon.
        let avahiBrowse = try lan.run(on: "b", ["avahi-browse", "-prt", "_L3840._sub._matterc._udp"])
        let resolvedLines = avahiBrowse.output.split(separator: "\n").filter { $0.hasPrefix("=") }
        #expect(!resolvedLines.isEmpty, "avahi-browse: \(avahiBrowse.output) \(avahiBrowse.errors)")
        for line in resolvedLines {
            let fields = line.split(separator: ";", maxSplits: 9, omittingEmptySubsequences: false).map(String.init)
            #expect(fields.count == 10)
            guard fields.count == 10 else { continue }
            #expect(fields[3] == "00ABCDEF01234567")
            #expect(fields[4] == "_matterc._udp")
            #expect(fields[6] == "\(lan.name)-a.local")
            #expect(addresses.map(\.ip).contains(fields[7]))
            #expect(fields[8] == "5540")
            for (key, value) in Self.lightTXT {
                #expect(fields[9].contains("\"\(key)=\(value)\""), "\(key) in \(fields[9])")
            }
        }
        #expect(!avahiBrowse.output.contains("1111111111111111"))

        light.stop()
        plug.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    @Test func updatesAndWithdrawalReachTheBrowser() async throws {
        let lan = try FakeLAN(hosts: ["a", "b"], avahi: ["a", "b"])
        defer { lan.down() }
        let light = try lan.probe(on: "a", Self.lightArguments)
        defer { light.stop() }
        try await light.waitFor("ready") { $0.event == "ready" }
        let all = try lan.probe(on: "b", ["browse", "--type", "_matterc._udp", "--timeout", "60"])
        let open = try lan.probe(on: "b", ["browse", "--type", "_matterc._udp", "--subtype", "_CM", "--timeout", "60"])
        defer { all.stop(); open.stop() }
        let name = "00ABCDEF01234567"
        let first = try await all.waitFor("added") { $0.event == "added" && $0.name == name }
        try await open.waitFor("added under _CM") { $0.event == "added" && $0.name == name }

        // A TXT update is an update of the same service.
        light.send("update 0 DN=Hall SII=800")
        try await light.waitFor("updated") { $0.event == "updated" }
        let updated = try await all.waitFor("updated TXT", from: first.index + 1) {
            $0.event == "updated" && $0.txt?["DN"] == "Hall"
        }
        #expect(updated.line.name == name)
        #expect(updated.line.txt?["SII"] == "800")
        #expect(updated.line.txt?["D"] == "3840")

        // The commissioning window closes: CM=0 and no more _CM subtype.
        light.send("update 0 CM=0")
        light.send("subtypes 0 _L3840 _S15 _V65521 _T257")
        try await light.waitFor("resubtyped") { $0.event == "resubtyped" }
        try await open.waitFor("removed from _CM") { $0.event == "removed" && $0.name == name }
        let closed = try await all.waitFor("CM=0", from: updated.index + 1) {
            ($0.event == "updated" || $0.event == "added") && $0.txt?["CM"] == "0"
        }
        #expect(closed.line.txt?["DN"] == "Hall")

        // Withdrawn: removed.
        light.send("withdraw 0")
        try await light.waitFor("withdrawn") { $0.event == "withdrawn" }
        try await all.waitFor("removed", from: closed.index + 1) { $0.event == "removed" && $0.name == name }
        #expect(light.isRunning)

        light.stop()
        all.stop()
        open.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    @Test func recordsComeBackAfterTheDaemonRestarts() async throws {
        let lan = try FakeLAN(hosts: ["a", "b"], avahi: ["a", "b"])
        defer { lan.down() }
        let node = try lan.probe(
            on: "a",
            [
                "publish-operational", "--fabric", "87E1B004E235A130", "--node", "10", "--count", "3", "--sii", "5000",
            ])
        defer { node.stop() }
        try await node.waitFor("ready") { $0.event == "ready" }
        let browse = try lan.probe(on: "b", ["browse", "--type", "_matter._tcp", "--timeout", "90"])
        defer { browse.stop() }
        // --node is hex: nodes 0x10, 0x11, 0x12.
        let names = (0x10...0x12).map { "87E1B004E235A130-00000000000000" + String($0, radix: 16, uppercase: true) }
        for name in names {
            try await browse.waitFor("added \(name)") { $0.event == "added" && $0.name == name }
        }

        let stopped = try lan.fakelan(["avahi-stop", lan.name, "a"])
        #expect(stopped.status == 0, "\(stopped.errors)")
        var lastRemoval = 0
        for name in names {
            let removed = try await browse.waitFor("removed \(name)") { $0.event == "removed" && $0.name == name }
            lastRemoval = max(lastRemoval, removed.index)
        }
        #expect(node.isRunning)

        let restartedAt = Int((Date().timeIntervalSince1970 * 1000).rounded())
        let started = try lan.fakelan(["avahi-start", lan.name, "a"])
        #expect(started.status == 0, "\(started.errors)")
        var back = 0
        for name in names {
            let added = try await browse.waitFor("\(name) back", from: lastRemoval + 1, timeout: .seconds(15)) {
                $0.event == "added" && $0.name == name
            }
            back = max(back, added.line.t ?? .max)
            #expect(added.line.txt?["SII"] == "5000")
        }
        let seconds = Double(back - restartedAt) / 1000
        #expect(seconds <= 5, "records back \(seconds) s after the daemon restarted")
        // The same publishing process, never restarted, republished by itself.
        #expect(node.isRunning)
        node.send("state")
        let state = try await node.waitFor("state") { $0.event == "state" }
        #expect(state.line.registrations?.count == 3)
        #expect(state.line.registrations?.allSatisfy(\.established) == true)

        node.stop()
        browse.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    /// A daemon too busy to answer (a fleet's, issue #43: 2,500 services at once) must not stall
    /// the publishing process: libavahi-client waits for each D-Bus reply, up to 25 s, with the
    /// client's mutex held. On the threads Swift's tasks share that stopped every task of the
    /// process (a fleet's nodes left PASE unanswered); the publisher waits on a queue of its own.
    @Test func aDaemonThatDoesNotAnswerStallsNoTaskOfThePublisher() async throws {
        let lan = try FakeLAN(hosts: ["a", "b"], avahi: ["a", "b"])
        defer { lan.down() }
        // More publications at once than the machine has cores (the tasks' shared threads).
        let count = max(8, 2 * ProcessInfo.processInfo.activeProcessorCount)
        let node = try lan.probe(
            on: "a",
            [
                "publish-operational", "--fabric", "87E1B004E235A130", "--node", "20", "--count", String(count),
                "--after-ms", "1000", "--tick-ms", "100",
            ])
        defer { node.stop() }
        try await node.waitFor("connected") { $0.event == "connected" }
        let paused = try lan.fakelan(["avahi-pause", lan.name, "a"])
        #expect(paused.status == 0, "\(paused.errors)")
        let publishing = try await node.waitFor("publishing") { $0.event == "publishing" }
        // 3 s of a stopped daemon: the ticker runs on (about 30 ticks); stalled, it printed none.
        // real time: external: the probe process and its stopped Avahi daemon.
        try await Task.sleep(for: .seconds(3))
        let ticks = node.allLines.dropFirst(publishing.index + 1).filter { $0.event == "tick" }.count
        let resumed = try lan.fakelan(["avahi-resume", lan.name, "a"])
        #expect(resumed.status == 0, "\(resumed.errors)")
        #expect(ticks >= 10, "\(ticks) ticks in 3 s while the daemon did not answer")
        #expect(!node.allLines.contains { $0.event == "ready" }, "published although the daemon was stopped")
        // Once it answers again, every service is established.
        let ready = try await node.waitFor("ready", from: publishing.index, timeout: .seconds(40)) { $0.event == "ready" }
        #expect(ready.line.count == count)
        node.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    /// An established service's name and state are read while the daemon is too busy to
    /// answer other registrations (issue #43: at 5,000 nodes a node logging "advertising
    /// <name>" waited for the poll mutex, which libavahi-client holds through each D-Bus
    /// wait, on one of the tasks' few shared threads, and the fleet's AddNOC answers stopped).
    @Test func aRegistrationIsReadWhileTheDaemonKeepsOthersWaiting() async throws {
        let lan = try FakeLAN(hosts: ["a", "b"], avahi: ["a", "b"])
        defer { lan.down() }
        let node = try lan.probe(
            on: "a", ["publish-operational", "--fabric", "87E1B004E235A130", "--node", "40", "--tick-ms", "100"])
        defer { node.stop() }
        try await node.waitFor("ready") { $0.event == "ready" }
        let paused = try lan.fakelan(["avahi-pause", lan.name, "a"])
        #expect(paused.status == 0, "\(paused.errors)")
        // More than the tasks' shared threads, each registration waiting on the stopped daemon.
        node.send("more \(max(8, 2 * ProcessInfo.processInfo.activeProcessorCount))")
        let more = try await node.waitFor("more") { $0.event == "more" }
        // real time: external: the probe process and its stopped Avahi daemon.
        try await Task.sleep(for: .seconds(3))
        let ticks = node.allLines.dropFirst(more.index + 1).filter { $0.event == "tick" }
        let resumed = try lan.fakelan(["avahi-resume", lan.name, "a"])
        #expect(resumed.status == 0, "\(resumed.errors)")
        #expect(ticks.count >= 10, "\(ticks.count) reads of the first registration in 3 s while the daemon did not answer")
        #expect(ticks.allSatisfy { $0.established == true && $0.name == "87E1B004E235A130-0000000000000040" })
        try await node.waitFor("more-ready", from: more.index, timeout: .seconds(40)) { $0.event == "more-ready" }
        node.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    /// Browses started while the daemon does not answer return at once and stall no task:
    /// creating an Avahi browser waits for the daemon's reply with the poll mutex held
    /// (issue #43: a controller commissioning a fleet of a busy daemon looks each node up).
    @Test func browsesStartedWhileTheDaemonDoesNotAnswerStallNoTask() async throws {
        let lan = try FakeLAN(hosts: ["a", "b"], avahi: ["a", "b"])
        defer { lan.down() }
        let extra = max(8, 2 * ProcessInfo.processInfo.activeProcessorCount)
        let browse = try lan.probe(
            on: "b",
            [
                "browse", "--type", "_matter._tcp", "--extra-browses", String(extra), "--after-ms", "1000", "--tick-ms", "100",
                "--until-count", "1", "--timeout", "60",
            ])
        defer { browse.stop() }
        let connected = try await browse.waitFor("connected") { $0.event == "connected" }
        let paused = try lan.fakelan(["avahi-pause", lan.name, "b"])
        #expect(paused.status == 0, "\(paused.errors)")
        // Browsing starts after 1 s of the 3 s the daemon is stopped; ticks go on throughout.
        // real time: external: the probe process and its stopped Avahi daemon.
        try await Task.sleep(for: .seconds(3))
        let lines = browse.allLines.dropFirst(connected.index + 1)
        let ticks = lines.filter { $0.event == "tick" }.count
        let browsing = lines.first { $0.event == "browsing" }
        let resumed = try lan.fakelan(["avahi-resume", lan.name, "b"])
        #expect(resumed.status == 0, "\(resumed.errors)")
        #expect(browsing?.count == extra + 1, "the browses had not returned while the daemon was stopped")
        #expect(ticks >= 20, "\(ticks) ticks in 3 s while the daemon did not answer")
        // Once the daemon answers, the browses work: a service published now is found.
        let node = try lan.probe(on: "a", ["publish-operational", "--fabric", "87E1B004E235A130", "--node", "41"])
        defer { node.stop() }
        #expect(try await browse.waitForExit() == 0, "browse: \(browse.allLines.suffix(8)) \(browse.errors.suffix(2000))")
        #expect(browse.allLines.contains { $0.event == "added" && $0.name == "87E1B004E235A130-0000000000000041" })
        node.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    @Test func aNameTakenOnTheNetworkMovesToTheAlternativeName() async throws {
        let lan = try FakeLAN(hosts: ["a", "b", "c"], avahi: ["a", "b", "c"])
        defer { lan.down() }
        let first = try lan.probe(on: "a", ["publish", "--name", "Living Room", "--type", "_http._tcp", "--port", "80"])
        defer { first.stop() }
        try await first.waitFor("ready") { $0.event == "ready" }
        let second = try lan.probe(
            on: "c",
            [
                "publish", "--name", "Living Room", "--type", "_http._tcp", "--port", "8080", "--txt", "path=/",
            ])
        defer { second.stop() }
        let published = try await second.waitFor("published") { $0.event == "published" }
        #expect(published.line.name == "Living Room #2")

        let browse = try lan.probe(on: "b", ["browse", "--type", "_http._tcp", "--until-count", "2", "--timeout", "20"])
        #expect(try await browse.waitForExit() == 0, "browse: \(browse.allLines.suffix(8)) \(browse.errors.suffix(2000))")
        let ports = Dictionary(
            browse.allLines.filter { $0.event == "added" }.map { ($0.name ?? "", $0.port ?? 0) },
            uniquingKeysWith: { a, _ in a })
        #expect(ports == ["Living Room": 80, "Living Room #2": 8080])

        // Resolving one instance by name.
        let resolve = try lan.probe(on: "b", ["resolve", "--name", "Living Room #2", "--type", "_http._tcp"])
        #expect(try await resolve.waitForExit() == 0, "resolve: \(resolve.allLines.suffix(8)) \(resolve.errors.suffix(2000))")
        let resolved = try #require(resolve.allLines.first { $0.event == "resolved" })
        #expect(resolved.port == 8080)
        #expect(resolved.txt == ["path": "/"])
        #expect(resolved.host == "\(lan.name)-c.local")
        let missing = try lan.probe(on: "b", ["resolve", "--name", "Kitchen", "--type", "_http._tcp", "--timeout", "2"])
        #expect(try await missing.waitForExit() == 3)

        first.stop()
        second.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    @Test func publishingWaitsForADaemonThatStartsLater() async throws {
        let lan = try FakeLAN(hosts: ["a", "b"], avahi: ["a", "b"])
        defer { lan.down() }
        #expect(try lan.fakelan(["avahi-stop", lan.name, "a"]).status == 0)
        let node = try lan.probe(
            on: "a",
            [
                "publish-operational", "--fabric", "2906C908D115D362", "--node", "8FC7772401CD0696", "--sii", "800",
            ])
        defer { node.stop() }
        try await node.waitFor("publishing") { $0.event == "publishing" }
        // real time: external: the Avahi daemon in the fake LAN gets a second to publish (it must not).
        try await Task.sleep(for: .seconds(1))
        #expect(!node.allLines.contains { $0.event == "published" })
        #expect(node.isRunning)

        #expect(try lan.fakelan(["avahi-start", lan.name, "a"]).status == 0)
        try await node.waitFor("published once the daemon runs", timeout: .seconds(15)) { $0.event == "published" }
        let browse = try lan.probe(
            on: "b",
            [
                "browse", "--type", "_matter._tcp", "--subtype", "_I2906C908D115D362", "--until-count", "1", "--timeout", "15",
            ])
        #expect(try await browse.waitForExit() == 0, "browse: \(browse.allLines.suffix(8)) \(browse.errors.suffix(2000))")
        #expect(browse.allLines.first { $0.event == "added" }?.name == "2906C908D115D362-8FC7772401CD0696")
        // Operational records go out record by record, unprobed: the SRV names this host
        // and the node's port, the TXT is there.
        let resolve = try lan.probe(on: "b", ["resolve", "--name", "2906C908D115D362-8FC7772401CD0696", "--type", "_matter._tcp"])
        #expect(try await resolve.waitForExit() == 0, "resolve: \(resolve.allLines.suffix(8)) \(resolve.errors.suffix(2000))")
        let resolved = try #require(resolve.allLines.first { $0.event == "resolved" })
        #expect(resolved.port == 5540)
        #expect(resolved.host == "\(lan.name)-a.local")
        #expect(resolved.txt?["SII"] == "800")

        node.stop()
        browse.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    @Test func twoHundredServicesOfOneProcessAreResolvedFromAnotherHost() async throws {
        let lan = try FakeLAN(hosts: ["a", "b"], avahi: ["a", "b"])
        defer { lan.down() }
        let browse = try lan.probe(on: "b", ["browse", "--type", "_matterc._udp", "--until-count", "200", "--timeout", "60"])
        defer { browse.stop() }
        try await browse.waitFor("browsing") { $0.event == "browsing" }
        let publisher = try lan.probe(
            on: "a",
            [
                "publish-commissionable", "--count", "200", "--discriminator", "0", "--vendor", "65521",
            ])
        defer { publisher.stop() }
        let start = try await publisher.waitFor("publishing") { $0.event == "publishing" }
        #expect(try await browse.waitForExit(timeout: .seconds(70)) == 0)
        let complete = try #require(browse.allLines.first { $0.event == "complete" })
        let added = browse.allLines.filter { $0.event == "added" }
        #expect(Set(added.compactMap(\.name)).count == 200)
        #expect(Set(added.compactMap { $0.txt?["D"] }) == Set((0..<200).map(String.init)))
        #expect(added.allSatisfy { $0.port == 5540 && $0.addresses?.contains { $0.ip == "10.77.0.2" } == true })
        let seconds = Double((complete.t ?? .max) - (start.line.t ?? 0)) / 1000
        // The acceptance bound; scripts/dnssd-bench.sh reports the figure.
        #expect(seconds <= 10, "200 services resolved after \(seconds) s")

        publisher.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    /// A browse follows only its first `--follow` services; past that each is resolved once and
    /// its resolver and address lookups freed, and a lookup by name opens no browse of the type.
    /// The daemon on b allows a client 32 objects: keeping three per service (a resolver, the A
    /// and AAAA lookups), as browses did, stopped resolving at about ten of these 40 (issue #43:
    /// Avahi walks a timer per object on every turn of its loop).
    @Test func aBrowseLetsGoOfWhatItNoLongerFollows() async throws {
        let lan = try FakeLAN(hosts: ["a", "b"], avahi: ["a", "b"], objectsPerClient: ["b": 32])
        defer { lan.down() }
        let browse = try lan.probe(
            on: "b", ["browse", "--type", "_matterc._udp", "--follow", "4", "--until-count", "40", "--timeout", "90"])
        defer { browse.stop() }
        try await browse.waitFor("browsing") { $0.event == "browsing" }
        // Five at a time, each five found before the next: at most five resolving at once.
        let publisher = try lan.probe(
            on: "a", ["publish-commissionable", "--count", "5", "--discriminator", "0", "--vendor", "65521"])
        defer { publisher.stop() }
        try await publisher.waitFor("ready") { $0.event == "ready" }
        for wave in 1...8 {
            try await browse.waitFor("\(wave * 5) found", timeout: .seconds(30)) { _ in
                Set(browse.allLines.filter { $0.event == "added" }.compactMap(\.name)).count >= wave * 5
            }
            if wave < 8 { publisher.send("more 5") }
        }
        #expect(try await browse.waitForExit(timeout: .seconds(30)) == 0)
        let added = browse.allLines.filter { $0.event == "added" }
        #expect(Set(added.compactMap { $0.txt?["D"] }) == Set((0..<40).map(String.init)))
        // Past the first four, each is resolved once by a resolver that also finds an address:
        // every one still comes with the publishing host's.
        #expect(added.allSatisfy { !($0.addresses ?? []).isEmpty })
        // The whole type holds 40 services; a lookup by name needs three objects, not 120.
        let last = try #require(added.last?.name)
        let resolve = try lan.probe(on: "b", ["resolve", "--name", last, "--type", "_matterc._udp"])
        #expect(try await resolve.waitForExit() == 0, "resolve: \(resolve.allLines.suffix(8)) \(resolve.errors.suffix(2000))")
        #expect(resolve.allLines.contains { $0.event == "resolved" && $0.name == last && $0.port == 5540 })
        publisher.stop()
        lan.down()
        #expect(lan.leftovers() == [])
    }

    /// Names of the services a browse of `subtype` finds within `seconds`.
    private func browsedNames(_ lan: FakeLAN, type: String, subtype: String, seconds: Int) async throws -> [String] {
        let browse = try lan.probe(on: "b", ["browse", "--type", type, "--subtype", subtype, "--timeout", String(seconds)])
        #expect(try await browse.waitForExit(timeout: .seconds(seconds + 20)) == 0)
        return Set(browse.allLines.filter { $0.event == "added" }.compactMap(\.name)).sorted()
    }
}

/// The fake LAN itself: it must leave nothing behind, whatever happens to what runs on it.
@Suite(
    .serialized,
    .enabled(if: FakeLANEnvironment.isRoot, "needs root: the fake LAN is made of network namespaces"))
struct FakeLANCleanupTests {
    let script = FakeLANEnvironment.script

    @Test func aFailingCommandLeavesNothingBehind() throws {
        let name = FakeLANEnvironment.uniqueName()
        let result = try Command.run([
            script, "run", "--lan", name, "--hosts", "a b", "--avahi", "a b", "--in", "a", "--",
            "sh", "-c", "avahi-daemon -c && ip -o addr show eth0 | grep -q 10.77.0.2 && exit 7",
        ])
        // 7: the command ran, with its Avahi daemon up and its address on eth0.
        #expect(result.status == 7, "\(result.errors)")
        #expect(FakeLAN.leftovers(of: name, namespaces: []) == [])
    }

    @Test func aKilledRunStillTearsDown() async throws {
        let name = FakeLANEnvironment.uniqueName()
        let run = try ProbeProcess(
            label: "fakelan run",
            arguments: [
                script, "run", "--lan", name, "--hosts", "a b", "--avahi", "a b", "--in", "b", "--", "sleep", "120",
            ])
        // Up once the command runs on b: its namespace holds a sleep.
        var namespaces: Set<UInt64> = []
        // real time: external: processes in the fake LAN's namespaces.
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let pids = try Command.run(["/usr/sbin/ip", "netns", "pids", "\(name)-b"]).output
            namespaces = FakeLAN.namespaceInodes(of: name)
            if namespaces.count == 3, pids.split(separator: "\n").count >= 4 { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(namespaces.count == 3)
        run.terminate()
        #expect(try await run.waitForExit() == 143)
        #expect(FakeLAN.leftovers(of: name, namespaces: namespaces) == [])
    }

    @Test func staleLANsOfDeadOwnersAreCleanedUpAndLiveOnesKept() throws {
        let dead = FakeLANEnvironment.uniqueName()
        let live = FakeLANEnvironment.uniqueName()
        // An owner that has exited: a child process that is gone by now.
        let child = try Command.run(["/bin/sh", "-c", "echo $$"])
        let deadOwner = child.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try Command.run([script, "up", dead, "a"], environment: ["FAKELAN_OWNER": deadOwner]).status == 0)
        #expect(try Command.run([script, "avahi", dead, "a"]).status == 0)
        let deadNamespaces = FakeLAN.namespaceInodes(of: dead)
        #expect(try Command.run([script, "up", live, "a"]).status == 0)
        defer { _ = try? Command.run([script, "down", live]) }

        #expect(try Command.run([script, "cleanup", "--stale", dead]).status == 0)
        #expect(try Command.run([script, "cleanup", "--stale", live]).status == 0)
        #expect(FakeLAN.leftovers(of: dead, namespaces: deadNamespaces) == [])
        #expect(FakeLAN.namespaceInodes(of: live).count == 2)

        #expect(try Command.run([script, "down", live]).status == 0)
        #expect(FakeLAN.leftovers(of: live, namespaces: []) == [])
    }

    @Test func refusesNamesThatCouldClashWithTheRealHost() throws {
        for arguments in [["up", "eth0", "a"], ["up", "fl-x", "a"], ["up", "flok", "br"], ["cleanup", "x"]] {
            let result = try Command.run([script] + arguments)
            #expect(result.status == 2, "\(arguments)")
        }
        #expect(FakeLAN.leftovers(of: "flok", namespaces: []) == [])
    }
}
