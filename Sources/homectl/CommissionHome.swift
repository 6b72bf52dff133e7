// `homectl commission --home HOME.yaml`: every device of a home that `matter-sim home` runs,
// commissioned with the setup code and on the port that home assigns it (HomeLaunchPlan,
// shared with the simulator), and laid out in the home's structures and rooms (created by
// name when missing). Re-running it skips devices already in their place.
import ArgumentParser
import DeviceProfile
import Foundation
import HomeAPI
import MatterController
import MatterProtocol
import NIOCore

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
}

struct CommissionHome {
    let global: GlobalOptions
    let options: CommissionHomeOptions
    let homeFile: String

    struct Row: Codable {
        var name: String
        var structure: String
        var room: String?
        var id: String?
        var result: String
    }

    func run() async throws {
        guard (1...256).contains(options.concurrency) else { throw ValidationError("--concurrency must be 1...256") }
        let resolved: ResolvedHome
        do { resolved = try ProfileLoader().loadHome(file: homeFile) } catch {
            for d in error.diagnostics { FileHandle.standardError.write(Data((d.description + "\n").utf8)) }
            throw ValidationError("\(homeFile): not a usable home profile (\(error.diagnostics.count) errors)")
        }
        let plan: [HomeNodePlan]
        do { plan = try HomeLaunchPlan.nodes(of: resolved, basePort: options.basePort) } catch {
            throw ValidationError(error.description)
        }
        if let host = options.host, (try? SocketAddress(ipAddress: host, port: 0)) == nil {
            throw ValidationError("--host \(host): give an IPv4 or IPv6 address")
        }

        try await HomeAPIRun.run {
            let home = try await global.open()
            do {
                try await commissionAll(plan, resolved: resolved, home: home)
            } catch {
                await home.close()
                throw error
            }
            await home.close()
        }
    }

    private func commissionAll(_ plan: [HomeNodePlan], resolved: ResolvedHome, home: Home) async throws {
        // Structures and rooms by name, created when missing (names compare case-insensitively).
        var places: [String: (structure: Structure, rooms: [String: Room])] = [:]
        for s in resolved.structures {
            let structure = try await resolveStructure(s.name, in: home, create: true)
            var rooms: [String: Room] = [:]
            for r in s.rooms { rooms[r.name] = try await resolveRoom(r.name, in: structure, create: true) }
            places[s.name] = (structure, rooms)
        }
        let existing = try await home.devices().list()

        var rows: [Row?] = Array(repeating: nil, count: plan.count)
        var work: [(HomeNodePlan, Structure, Room?)] = []
        for node in plan {
            guard let place = places[node.device.structure] else { continue }
            let room = node.device.room.flatMap { place.rooms[$0] }
            if let present = existing.first(where: {
                $0.name == node.device.name && $0.structureID == place.structure.id && $0.roomID == room?.id
            }) {
                rows[node.index] = Row(
                    name: node.device.name, structure: node.device.structure, room: node.device.room,
                    id: present.id, result: "already commissioned")
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
                    var row = Row(name: node.device.name, structure: node.device.structure, room: node.device.room, id: nil, result: "")
                    guard let address else {
                        row.result = "not found: no commissionable device with discriminator \(node.discriminator) on port \(node.port)"
                        return (node.index, row)
                    }
                    do {
                        let payload = OnboardingPayload(
                            vendorID: node.vendorID, productID: node.productID,
                            discriminator: node.discriminator, passcode: node.passcode)
                        let device = try await home.commissionDevice(
                            setupCode: try payload.qrCode(), address: address,
                            structureID: structure.id, roomID: room?.id,
                            name: node.device.name)
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
        let groupFailures = try await makeGroups(resolved, places: places, home: home)
        let bindingFailures = try await makeBindings(resolved, places: places, home: home)
        let elapsed = clock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let done = work.count - failures
        if global.json {
            Output.json(rows.compactMap { $0 })
        } else {
            let rate = seconds > 0 ? Double(done) / seconds : 0
            print(
                "\(resolved.name): "
                    + String(
                        format: "%d commissioned, %d already present, %d failed, in %.1f s (%.1f/s)",
                        done, plan.count - work.count, failures, seconds, rate))
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

    /// Where each device listens: HOST:PORT with --host, else its commissionable record
    /// (same discriminator and port as the plan), found in one browse.
    private func addresses(for nodes: [HomeNodePlan]) async throws -> [Int: SocketAddress] {
        var result: [Int: SocketAddress] = [:]
        guard !nodes.isEmpty else { return result }
        if let host = options.host {
            for node in nodes { result[node.index] = try SocketAddress(ipAddress: host, port: node.port) }
            return result
        }
        let discovery: DNSSDDiscovery
        do { discovery = try DNSSDDiscovery() } catch {
            throw ValidationError("DNS-SD is not available (\(error)); give the home's address with --host")
        }
        // A home's nodes announce one slot apart after a start (AnnouncementPacing), so the last
        // may appear after a first browse: browse again, up to three times, while any is missing.
        for _ in 0..<3 {
            let found = try await discovery.commissionableNodes(duration: options.browseSeconds.duration)
            for node in nodes where result[node.index] == nil {
                let matches = found.filter { $0.record.longDiscriminator == node.discriminator }
                let candidates = matches.flatMap(\.addresses).filter { $0.port == node.port }
                // IPv4 first: a link-local IPv6 address needs its interface to be usable.
                if let address = candidates.first(where: { $0.protocol == .inet }) ?? candidates.first {
                    result[node.index] = address
                }
            }
            if result.count == nodes.count { break }
        }
        return result
    }
}
