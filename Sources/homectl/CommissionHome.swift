// `homectl commission --home HOME.yaml`: every device of a home that `matter-sim home` runs,
// commissioned with the setup code and on the port that home assigns it (HomeLaunchPlan,
// shared with the simulator), and laid out in the home's structures and rooms (created by
// name when missing). Re-running it skips devices already in their place.
// `homectl commission --fleet`: the same for every node the home's fleet replicas reported to
// the relay (`matter-sim report-onboarding`), each at the address its replica reported.
import ArgumentParser
import DeviceProfile
import Foundation
import HomeAPI
import MatterController
import MatterProtocol
import NIOCore
import RelayClients
import RelayProtocol

struct CommissionHomeOptions: ParsableArguments {
    @Option(help: "With --home: UDP port of the home's first device (as given to `matter-sim home --base-port`).")
    var basePort: Int = 5540

    @Option(
        help: ArgumentHelp(
            "With --home: the IP address of the host running the home; commission each device at HOST:PORT instead of finding it over DNS-SD.",
            valueName: "ip"))
    var host: String?

    @Option(help: "With --home: how many devices are commissioned at once.")
    var concurrency: Int = 4

    @Option(help: "With --home: seconds to browse for commissionable devices (without --host).")
    var browseSeconds = Seconds(4)

    @Flag(
        help:
            "Every node the home's fleet replicas reported to the relay (matter-sim report-onboarding), each at its reported address; needs --relay and its token."
    )
    var fleet = false
}

struct CommissionHome {
    /// Where the nodes come from: a home profile's plan, or the relay's onboarding reports.
    enum Source {
        case homeFile(String)
        case relayReports
    }

    let global: GlobalOptions
    let options: CommissionHomeOptions
    let source: Source

    /// One node to commission: its place, its payload, and how to reach it.
    struct Target: Sendable {
        var index: Int
        var name: String
        var structure: String
        var room: String?
        var setupCode: String
        var port: Int
        /// For a browse (no --host, no reported address).
        var discriminator: UInt16?
        var address: SocketAddress?
    }

    /// The nodes, the structures with their rooms in order, the home profile when there is
    /// one (its groups and bindings are made too), and a title for the summary.
    struct Plan {
        var targets: [Target]
        var places: [(structure: String, rooms: [String])]
        var resolved: ResolvedHome?
        var title: String
    }

    struct Row: Codable {
        var name: String
        var structure: String
        var room: String?
        var id: String?
        var result: String
    }

    func run() async throws {
        guard (1...256).contains(options.concurrency) else { throw ValidationError("--concurrency must be 1...256") }
        let plan: Plan
        switch source {
        case .homeFile(let file): plan = try homePlan(file)
        case .relayReports: plan = try await relayPlan()
        }
        try await HomeAPIRun.run {
            let home = try await global.open()
            do {
                try await commissionAll(plan, home: home)
            } catch {
                await home.close()
                throw error
            }
            await home.close()
        }
    }

    private func homePlan(_ homeFile: String) throws -> Plan {
        let resolved: ResolvedHome
        do { resolved = try ProfileLoader().loadHome(file: homeFile) } catch {
            for d in error.diagnostics { FileHandle.standardError.write(Data((d.description + "\n").utf8)) }
            throw ValidationError("\(homeFile): not a usable home profile (\(error.diagnostics.count) errors)")
        }
        let nodes: [HomeNodePlan]
        do { nodes = try HomeLaunchPlan.nodes(of: resolved, basePort: options.basePort) } catch {
            throw ValidationError(error.description)
        }
        if let host = options.host, (try? SocketAddress(ipAddress: host, port: 0)) == nil {
            throw ValidationError("--host \(host): give an IPv4 or IPv6 address")
        }
        let targets = try nodes.map { node in
            let payload = OnboardingPayload(
                vendorID: node.vendorID, productID: node.productID, discriminator: node.discriminator, passcode: node.passcode)
            let code: String
            do { code = try payload.qrCode() } catch { throw ValidationError("\(node.device.name): \(error)") }
            return Target(
                index: node.index, name: node.device.name, structure: node.device.structure, room: node.device.room,
                setupCode: code, port: node.port, discriminator: node.discriminator,
                address: try options.host.map { try SocketAddress(ipAddress: $0, port: node.port) })
        }
        return Plan(
            targets: targets, places: resolved.structures.map { ($0.name, $0.rooms.map(\.name)) }, resolved: resolved,
            title: resolved.name)
    }

    /// Every node of every report the relay holds for the home; a node without a structure
    /// goes into one named after its report's source.
    private func relayPlan() async throws -> Plan {
        guard let relay = global.relay, let token = global.relayToken else {
            throw ValidationError("--fleet reads the relay's onboarding reports: give --relay and --relay-token-file")
        }
        let list: RelayOnboardingList
        do { list = try await RelayOnboardingClient.list(relayURL: relay, homeToken: token) } catch {
            throw ValidationError("--fleet: the onboarding reports of \(relay): \(error)")
        }
        var targets: [Target] = []
        var places: [(structure: String, rooms: [String])] = []
        for report in list.reports {
            for node in report.nodes {
                let structure = node.structure ?? report.source
                if let i = places.firstIndex(where: { $0.structure == structure }) {
                    if let room = node.room, !places[i].rooms.contains(room) { places[i].rooms.append(room) }
                } else {
                    places.append((structure, node.room.map { [$0] } ?? []))
                }
                targets.append(
                    Target(
                        index: targets.count, name: node.name, structure: structure, room: node.room, setupCode: node.setupCode,
                        port: node.port, discriminator: nil, address: try? SocketAddress(ipAddress: node.host, port: node.port)))
            }
        }
        return Plan(targets: targets, places: places, resolved: nil, title: "fleet of \(list.reports.count) reports")
    }

    private func commissionAll(_ plan: Plan, home: Home) async throws {
        // Structures and rooms by name, created when missing (names compare case-insensitively).
        var places: [String: (structure: Structure, rooms: [String: Room])] = [:]
        for s in plan.places {
            let structure = try await resolveStructure(s.structure, in: home, create: true)
            var rooms: [String: Room] = [:]
            for r in s.rooms { rooms[r] = try await resolveRoom(r, in: structure, create: true) }
            places[s.structure] = (structure, rooms)
        }
        let existing = try await home.devices().list()

        var rows: [Row?] = Array(repeating: nil, count: plan.targets.count)
        var work: [(Target, Structure, Room?)] = []
        for node in plan.targets {
            guard let place = places[node.structure] else { continue }
            let room = node.room.flatMap { place.rooms[$0] }
            if let present = existing.first(where: {
                $0.name == node.name && $0.structureID == place.structure.id && $0.roomID == room?.id
            }) {
                rows[node.index] = Row(name: node.name, structure: node.structure, room: node.room, id: present.id, result: "already commissioned")
            } else {
                work.append((node, place.structure, room))
            }
        }

        let addresses = try await addresses(for: work.map(\.0))
        // Benchmark figures, on the real clock: the summary's elapsed time.
        let clock = SystemClock()
        let started = clock.now
        var failures = 0
        await withTaskGroup(of: (Int, Row).self) { group in
            var next = 0
            func startNext() {
                guard next < work.count else { return }
                let (node, structure, room) = work[next]
                next += 1
                let address = addresses[node.index]
                group.addTask {
                    var row = Row(name: node.name, structure: node.structure, room: node.room, id: nil, result: "")
                    guard let address else {
                        row.result =
                            "not found: no commissionable device with discriminator \(node.discriminator.map(String.init) ?? "?") on port \(node.port)"
                        return (node.index, row)
                    }
                    do {
                        let device = try await home.commissionDevice(
                            setupCode: node.setupCode, address: address,
                            structureID: structure.id, roomID: room?.id,
                            name: node.name)
                        row.id = device.id
                        row.result = "commissioned"
                    } catch let error as HomeError {
                        row.result = "failed: \(error.code.rawValue): \(error.message)"
                    } catch {
                        row.result = "failed: \(error)"
                    }
                    return (node.index, row)
                }
            }
            for _ in 0..<options.concurrency { startNext() }
            while let (index, row) = await group.next() {
                rows[index] = row
                if !row.result.hasPrefix("commissioned") { failures += 1 }
                if !global.json {
                    let place = row.structure + (row.room.map { " / " + $0 } ?? "")
                    FileHandle.standardOutput.write(Data("\(row.name) (\(place)): \(row.result)\(row.id.map { " as " + $0 } ?? "")\n".utf8))
                }
                startNext()
            }
        }
        var groupFailures = 0, bindingFailures = 0
        if let resolved = plan.resolved {
            groupFailures = try await makeGroups(resolved, places: places, home: home)
            bindingFailures = try await makeBindings(resolved, places: places, home: home)
        }
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let done = work.count - failures
        if global.json {
            Output.json(rows.compactMap { $0 })
        } else {
            let rate = seconds > 0 ? Double(done) / seconds : 0
            print(
                "\(plan.title): "
                    + String(
                        format: "%d commissioned, %d already present, %d failed, in %.1f s (%.1f/s)",
                        done, plan.targets.count - work.count, failures, seconds, rate))
        }
        if failures > 0 || groupFailures > 0 || bindingFailures > 0 { throw ExitCode(1) }
    }

    /// The switch bindings the home declares, written once the switch and its lights are in
    /// place: each light's ACL lets the switch operate it, and the switch's Binding names the
    /// light (both kept when already there, so a re-run changes nothing). Returns how many failed.
    private func makeBindings(
        _ resolved: ResolvedHome, places: [String: (structure: Structure, rooms: [String: Room])],
        home: Home
    ) async throws -> Int {
        var bound = 0, failed = 0
        let devices = try await home.devices().list()
        for s in resolved.structures {
            guard let structure = places[s.name]?.structure else { continue }
            func named(_ name: String) throws -> HomeDevice {
                guard let device = devices.first(where: { $0.name == name && $0.structureID == structure.id }) else {
                    throw HomeError.notFound("not commissioned: \(name)")
                }
                return device
            }
            for b in s.bindings {
                for light in b.lights {
                    let line: String
                    do {
                        try await named(b.switchDevice).bind(to: try named(light))
                        bound += 1
                        line = "bound"
                    } catch let error as HomeError {
                        failed += 1
                        line = "failed: \(error.code.rawValue): \(error.message)"
                    } catch {
                        failed += 1
                        line = "failed: \(error)"
                    }
                    if !global.json {
                        FileHandle.standardOutput.write(Data("binding \(b.switchDevice) → \(light) (\(s.name)): \(line)\n".utf8))
                    }
                }
            }
        }
        if !global.json && bound + failed > 0 { print("bindings: \(bound) written, \(failed) failed") }
        return failed
    }

    /// The device groups the home declares, made once their members are in place (a group
    /// of that name already in the structure is left as it is). Returns how many failed.
    private func makeGroups(
        _ resolved: ResolvedHome, places: [String: (structure: Structure, rooms: [String: Room])],
        home: Home
    ) async throws -> Int {
        var created = 0, present = 0, failed = 0
        let devices = try await home.devices().list()
        for s in resolved.structures {
            guard let structure = places[s.name]?.structure, !s.groups.isEmpty else { continue }
            let existing = try await structure.deviceGroups().list()
            for g in s.groups {
                let line: String
                if existing.contains(where: { $0.name.caseInsensitiveCompare(g.name) == .orderedSame }) {
                    present += 1
                    line = "already present"
                } else {
                    let members = g.devices.compactMap { name in
                        devices.first { $0.name == name && $0.structureID == structure.id }
                    }
                    do {
                        guard members.count == g.devices.count else {
                            let missing = g.devices.filter { name in !members.contains { $0.name == name } }
                            throw HomeError.notFound("not commissioned: \(missing.joined(separator: ", "))")
                        }
                        _ = try await structure.createDeviceGroup(name: g.name, devices: members)
                        created += 1
                        line = "created of \(g.devices.joined(separator: ", "))"
                    } catch let error as HomeError {
                        failed += 1
                        line = "failed: \(error.code.rawValue): \(error.message)"
                    }
                }
                if !global.json { FileHandle.standardOutput.write(Data("group \(g.name) (\(s.name)): \(line)\n".utf8)) }
            }
        }
        if !global.json && created + present + failed > 0 {
            print("groups: \(created) created, \(present) already present, \(failed) failed")
        }
        return failed
    }

    /// Where each device listens: the address it was given (--host, or its report), else its
    /// commissionable record (same discriminator and port as the plan), found in one browse.
    private func addresses(for nodes: [Target]) async throws -> [Int: SocketAddress] {
        var result: [Int: SocketAddress] = [:]
        for node in nodes { result[node.index] = node.address }
        let browsed = nodes.filter { $0.address == nil && $0.discriminator != nil }
        guard !browsed.isEmpty else { return result }
        let discovery: DNSSDDiscovery
        do { discovery = try DNSSDDiscovery() } catch {
            throw ValidationError("DNS-SD is not available (\(error)); give the home's address with --host")
        }
        // A home's nodes announce one slot apart after a start (AnnouncementPacing), so the last
        // may appear after a first browse: browse again, up to three times, while any is missing.
        for _ in 0..<3 {
            let found = try await discovery.commissionableNodes(duration: options.browseSeconds.duration)
            for node in browsed where result[node.index] == nil {
                let matches = found.filter { $0.record.longDiscriminator == node.discriminator }
                let candidates = matches.flatMap(\.addresses).filter { $0.port == node.port }
                // IPv4 first: a link-local IPv6 address needs its interface to be usable.
                if let address = candidates.first(where: { $0.protocol == .inet }) ?? candidates.first {
                    result[node.index] = address
                }
            }
            if browsed.allSatisfy({ result[$0.index] != nil }) { break }
        }
        return result
    }
}
