import ArgumentParser
import Foundation
import HomeAPI
import MatterController
import MatterDNSSD
import NIOCore
import OpenCombine

struct Discover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List commissionable Matter devices (DNS-SD _matterc._udp).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Seconds to browse (0...86400).") var seconds = Seconds(3)

    func run() async throws {
        let discovery: DNSSDDiscovery
        do { discovery = try DNSSDDiscovery() } catch {
            throw ValidationError("DNS-SD is not available: \(error)")
        }
        let nodes = try await discovery.commissionableNodes(duration: seconds.duration)
        struct Row: Codable {
            var instance: String; var discriminator: UInt16; var vendorID: UInt16?; var productID: UInt16?; var name: String?;
            var addresses: [String]
        }
        let rows = nodes.map { n in
            Row(
                instance: n.record.instanceName, discriminator: n.record.longDiscriminator, vendorID: n.record.vendorID,
                productID: n.record.productID, name: n.record.deviceName, addresses: n.addresses.map { "\($0)" })
        }
        if global.json { Output.json(rows); return }
        Output.table(
            ["INSTANCE", "DISCRIMINATOR", "VID", "PID", "NAME", "ADDRESSES"],
            rows.map {
                [
                    $0.instance, "\($0.discriminator)", $0.vendorID.map { String($0) } ?? "", $0.productID.map { String($0) } ?? "",
                    $0.name ?? "", $0.addresses.joined(separator: " "),
                ]
            })
    }
}

struct Commission: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Commission a device from its pairing code or QR payload, every device of a running home (--home HOME.yaml), or every node fleet replicas reported to the relay (--fleet).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Manual pairing code or MT: QR payload.") var code: String?
    @OptionGroup var homeOptions: CommissionHomeOptions
    @Option(help: "The device's address as HOST:PORT (default: find it with DNS-SD).") var address: String?
    @Option(help: "Structure ID or name (created when missing).") var structure: String?
    @Option(help: "Room ID or name (created when missing).") var room: String?
    @Option(help: "The device's name.") var name: String?

    func validate() throws {
        if homeOptions.fleet {
            guard global.homeProfile == nil, code == nil, address == nil, structure == nil, room == nil, name == nil else {
                throw ValidationError(
                    "--fleet takes codes, places, names and addresses from the relay's reports; drop --home HOME.yaml, --code, --address, --structure, --room and --name"
                )
            }
            guard global.relay != nil else { throw ValidationError("--fleet reads the relay's onboarding reports: give --relay") }
        } else if global.homeProfile != nil {
            guard code == nil, address == nil, structure == nil, room == nil, name == nil else {
                throw ValidationError(
                    "--home HOME.yaml takes codes, places and names from the home; drop --code, --address, --structure, --room and --name")
            }
        } else if code == nil {
            throw ValidationError("give --code (a manual pairing code or MT: payload), or --home HOME.yaml for a whole home")
        }
    }

    func run() async throws {
        if homeOptions.fleet {
            try await CommissionHome(global: global, options: homeOptions, source: .relayReports).run()
            return
        }
        if let profile = global.homeProfile {
            try await CommissionHome(global: global, options: homeOptions, source: .homeFile(profile)).run()
            return
        }
        guard let code else { return }
        let socketAddress = try address.map { text -> SocketAddress in
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                (0...65535).contains(port)
            else {
                throw ValidationError("--address \(text): expected HOST:PORT with a port of 0...65535")
            }
            var host = String(text[..<colon])
            if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            do { return try SocketAddress(ipAddress: host, port: port) } catch { throw ValidationError("bad address \(text): \(error)") }
        }
        try await HomeAPIRun.run {
            let home = try await global.open()
            defer { Task { await home.close() } }
            let s = try await resolveStructure(structure, in: home, create: true)
            var r: Room?
            if let room { r = try await resolveRoom(room, in: s, create: true) }
            let device = try await home.commissionDevice(
                setupCode: code, address: socketAddress, structureID: s.id,
                roomID: r?.id, name: name)
            let summary = await summary(device, home)
            if global.json { Output.json(summary) } else { print("commissioned \(device.name) as \(device.id)") }
            await home.close()
        }
    }
}

enum HomeAPIRun {
    static func run(_ body: () async throws -> Void) async throws { try await homectl.run(body) }
}

struct Structures: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List structures, or create one.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Create a structure with this name.") var create: String?

    func run() async throws {
        try await HomeAPIRun.run {
            let home = try await global.open()
            if let create { _ = try await home.createStructure(name: create) }
            struct Row: Codable { var id: String; var name: String; var rooms: Int }
            var rows: [Row] = []
            for s in try await home.structures().list().sorted(by: { $0.name < $1.name }) {
                rows.append(Row(id: s.id, name: s.name, rooms: try await s.rooms().list().count))
            }
            if global.json {
                Output.json(rows)
            } else {
                Output.table(["ID", "NAME", "ROOMS"], rows.map { [$0.id, $0.name, "\($0.rooms)"] })
            }
            await home.close()
        }
    }
}

struct Rooms: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List rooms.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await HomeAPIRun.run {
            let home = try await global.open()
            struct Row: Codable { var id: String; var name: String; var structure: String }
            var rows: [Row] = []
            for r in try await home.rooms().list() {
                rows.append(Row(id: r.id, name: r.name, structure: (try? await home.structure(id: r.structureID).name) ?? r.structureID))
            }
            rows.sort { ($0.structure, $0.name) < ($1.structure, $1.name) }
            if global.json {
                Output.json(rows)
            } else {
                Output.table(["ID", "NAME", "STRUCTURE"], rows.map { [$0.id, $0.name, $0.structure] })
            }
            await home.close()
        }
    }
}

struct Devices: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List devices with their connectivity and locality (per device, device type and trait).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Seconds to wait for every device's routes to work before reporting (0: the stored graph only, connectivity unknown).")
    var settle = Seconds(3)

    func run() async throws {
        try await HomeAPIRun.run {
            let home = try await global.open(live: settle.value > 0)
            // Wait until every device's routes work, or the settle time passed (a route down then is listed as down).
            if settle.value > 0 { _ = await home.waitUntilAllRoutesUp(timeout: settle.duration) }
            var rows: [DeviceSummary] = []
            for d in try await home.devices().list().sorted(by: { $0.name < $1.name }) { rows.append(await summary(d, home)) }
            if global.json {
                Output.json(rows)
            } else {
                Output.table(
                    ["ID", "NAME", "STRUCTURE", "ROOM", "TYPES", "CONNECTIVITY", "LOCALITY"],
                    rows.map {
                        [$0.id, $0.name, $0.structure ?? "", $0.room ?? "", $0.types.joined(separator: ","), $0.connectivity, $0.locality]
                    })
            }
            await home.close()
        }
    }
}

struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Read a device's current state.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device ID or unique name.") var device: String

    func run() async throws {
        try await HomeAPIRun.run {
            let home = try await global.open()
            let d = try await resolveDevice(device, in: home)
            try await home.refresh(deviceID: d.id)
            let fresh = try await home.device(id: d.id)
            let s = await summary(fresh, home)
            if global.json {
                Output.json(s)
            } else {
                print("\(s.name) (\(s.id)) \(s.types.joined(separator: ",")) \(s.connectivity)")
                for key in s.state.keys.sorted() { print("  \(key): \(s.state[key]!)") }
            }
            await home.close()
        }
    }
}

/// Runs an action on a device's first device type that has the trait.
func withTrait<T: Trait>(_ trait: T.Type, device: String, global: GlobalOptions, _ action: (T) async throws -> Void) async throws {
    try await HomeAPIRun.run {
        let home = try await global.open()
        var d = try await resolveDevice(device, in: home)
        if !d.types.all.all.contains(where: { $0.traits[trait] != nil }) {
            // Not in what the home kept of the device (its clusters may be newer than the home's
            // snapshot): read the device, as `get` does, before giving up.
            try await home.refresh(deviceID: d.id)
            d = try await home.device(id: d.id)
        }
        guard let t = d.types.all.all.lazy.compactMap({ $0.traits[trait] }).first else {
            await home.close()
            throw ValidationError("\(d.name) has no \(T.identifier) trait")
        }
        do { try await action(t) } catch {
            await home.close()
            throw error
        }
        if global.json { Output.json(["device": d.id, "result": "ok"]) } else { print("ok") }
        await home.close()
    }
}

struct On: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn a device on.")
    @OptionGroup var global: GlobalOptions
    @Argument var device: String
    func run() async throws { try await withTrait(Matter.OnOffTrait.self, device: device, global: global) { try await $0.on() } }
}

struct Off: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Turn a device off.")
    @OptionGroup var global: GlobalOptions
    @Argument var device: String
    func run() async throws { try await withTrait(Matter.OnOffTrait.self, device: device, global: global) { try await $0.off() } }
}

struct Toggle: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Toggle a device.")
    @OptionGroup var global: GlobalOptions
    @Argument var device: String
    func run() async throws { try await withTrait(Matter.OnOffTrait.self, device: device, global: global) { try await $0.toggle() } }
}

struct Lock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Lock a door lock (a Timed Invoke), with a user's PIN when it asks for one.")
    @OptionGroup var global: GlobalOptions
    @Argument var device: String
    @Option(help: "A user's PIN.") var pin: String?
    func run() async throws {
        try await withTrait(Matter.DoorLockTrait.self, device: device, global: global) {
            try await $0.lockDoor(pinCode: pin.map { Data($0.utf8) })
        }
    }
}

struct Unlock: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Unlock a door lock (a Timed Invoke), with a user's PIN when it asks for one.")
    @OptionGroup var global: GlobalOptions
    @Argument var device: String
    @Option(help: "A user's PIN.") var pin: String?
    func run() async throws {
        try await withTrait(Matter.DoorLockTrait.self, device: device, global: global) {
            try await $0.unlockDoor(pinCode: pin.map { Data($0.utf8) })
        }
    }
}

struct Level: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Set a light's level (0-254), turning it on or off with it.")
    @OptionGroup var global: GlobalOptions
    @Argument var device: String
    @Argument var level: UInt8
    func run() async throws {
        try await withTrait(Matter.LevelControlTrait.self, device: device, global: global) {
            try await $0.moveToLevelWithOnOff(level: level, transitionTime: 0)
        }
    }
}

struct Cover: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Open, close or stop a window covering, or move it to PERCENT closed.")
    @OptionGroup var global: GlobalOptions
    @Argument var device: String
    @Argument(help: "open | close | stop | PERCENT (0 open ... 100 closed)") var action: String
    func run() async throws {
        let percent: Double?
        switch action.lowercased() {
        case "open", "close", "stop": percent = nil
        default:
            guard let p = Double(action.trimmingCharacters(in: CharacterSet(charactersIn: "%"))), (0...100).contains(p) else {
                throw ValidationError("cover takes open, close, stop or a percentage 0-100")
            }
            percent = p
        }
        try await withTrait(Matter.WindowCoveringTrait.self, device: device, global: global) { trait in
            switch (action.lowercased(), percent) {
            case ("open", _): try await trait.upOrOpen()
            case ("close", _): try await trait.downOrClose()
            case ("stop", _): try await trait.stopMotion()
            case (_, let p?): try await trait.goToLiftPercentage(UInt16((p * 100).rounded()))
            default: break
            }
        }
    }
}

struct Fan: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Set a fan or purifier to a mode, or to a speed in percent.")
    @OptionGroup var global: GlobalOptions
    @Argument var device: String
    @Argument(help: "off | low | medium | high | auto | PERCENT (0-100)") var setting: String
    func run() async throws {
        let modes: [String: Matter.FanControlTrait.FanModeEnum] = [
            "off": .off, "low": .low, "medium": .medium, "high": .high, "auto": .auto,
        ]
        let mode = modes[setting.lowercased()]
        let percent = UInt8(setting.trimmingCharacters(in: CharacterSet(charactersIn: "%")))
        guard mode != nil || (percent ?? 101) <= 100 else {
            throw ValidationError("fan takes off, low, medium, high, auto or a percentage 0-100")
        }
        try await withTrait(Matter.FanControlTrait.self, device: device, global: global) { trait in
            if let mode { try await trait.setFanMode(mode) } else { try await trait.setPercentSetting(percent) }
        }
    }
}

struct Valve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Open a water valve (for a number of seconds), or close it.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device ID or unique name.") var device: String
    @Argument(help: "open | close") var action: String
    @Option(help: "Seconds it stays open (default: the valve's DefaultOpenDuration).") var seconds: UInt32?
    func run() async throws {
        guard ["open", "close"].contains(action.lowercased()) else { throw ValidationError("valve takes open or close") }
        try await withTrait(Matter.ValveConfigurationAndControlTrait.self, device: device, global: global) { trait in
            if action.lowercased() == "open" { try await trait.open(openDuration: seconds) } else { try await trait.close() }
        }
    }
}

struct Vacuum: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start a robot vacuum's clean, pause or resume it, send it home, or set its clean mode.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device ID or unique name.") var device: String
    @Argument(help: "start | pause | resume | home | mode LABEL") var action: String
    @Argument(help: "The clean mode's label, for `mode` (e.g. \"Deep clean\").") var label: String?
    func run() async throws {
        switch action.lowercased() {
        case "start":
            try await withTrait(Matter.RvcRunModeTrait.self, device: device, global: global) { trait in
                guard let mode = trait.mode(tagged: .cleaning) else { throw ValidationError("this vacuum lists no Cleaning run mode") }
                try Self.check(try await trait.changeToMode(newMode: mode).status, statusText: nil)
            }
        case "mode":
            guard let label else { throw ValidationError("mode takes the clean mode's label") }
            try await withTrait(Matter.RvcCleanModeTrait.self, device: device, global: global) { trait in
                guard let mode = trait.mode(labelled: label) else { throw ValidationError("this vacuum has no clean mode '\(label)'") }
                let response = try await trait.changeToMode(newMode: mode)
                try Self.check(response.status, statusText: response.statusText)
            }
        case "pause", "resume", "home":
            try await withTrait(Matter.RvcOperationalStateTrait.self, device: device, global: global) { trait in
                let response: Matter.RvcOperationalStateTrait.ErrorStateStruct?
                switch action.lowercased() {
                case "pause": response = try await trait.pause().commandResponseState
                case "resume": response = try await trait.resume().commandResponseState
                default: response = try await trait.goHome().commandResponseState
                }
                guard let id = response?.errorStateID, id == 0 else {
                    let error = response.flatMap { Matter.RvcOperationalStateTrait.ErrorStateEnum(rawValue: $0.errorStateID) }
                    throw ValidationError("the vacuum refused \(action): \(error.map { "\($0)" } ?? "no answer")")
                }
            }
        default: throw ValidationError("vacuum takes start, pause, resume, home or mode LABEL")
        }
    }

    /// A ChangeToModeResponse's status: 0 is Success, anything else is the vacuum's refusal.
    static func check(_ status: UInt8?, statusText: String?) throws {
        guard let status, status != 0 else { return }
        throw ValidationError("the vacuum refused the mode (status \(status)\(statusText.map { ": \($0)" } ?? ""))")
    }
}

struct SelfTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "self-test", abstract: "Start a smoke/CO alarm's self-test.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device ID or unique name.") var device: String
    func run() async throws {
        try await withTrait(Matter.SmokeCoAlarmTrait.self, device: device, global: global) { try await $0.selfTestRequest() }
    }
}

struct Rename: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Rename a device.")
    @OptionGroup var global: GlobalOptions
    @Argument var device: String
    @Argument var name: String
    func run() async throws {
        try await HomeAPIRun.run {
            let home = try await global.open()
            let d = try await resolveDevice(device, in: home)
            let renamed = try await d.setName(name)
            if global.json { Output.json(await summary(renamed, home)) } else { print("renamed \(d.name) to \(renamed.name)") }
            await home.close()
        }
    }
}

struct RoomCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "room", abstract: "Create or delete rooms, move devices.",
        subcommands: [Create.self, Delete.self, Move.self])

    struct Create: AsyncParsableCommand {
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Option var structure: String?
        func run() async throws {
            try await HomeAPIRun.run {
                let home = try await global.open()
                let s = try await resolveStructure(structure, in: home, create: true)
                let room = try await s.createRoom(name: name)
                if global.json {
                    Output.json(["id": room.id, "name": room.name, "structureID": room.structureID])
                } else {
                    print("created room \(room.name) (\(room.id)) in \(s.name)")
                }
                await home.close()
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        @OptionGroup var global: GlobalOptions
        @Argument var room: String
        @Option var structure: String?
        func run() async throws {
            try await HomeAPIRun.run {
                let home = try await global.open()
                let s = try await resolveStructure(structure, in: home)
                let r = try await resolveRoom(room, in: s)
                try await s.deleteRoom(r)
                if global.json { Output.json(["deleted": r.id]) } else { print("deleted room \(r.name); its devices are unassigned") }
                await home.close()
            }
        }
    }

    struct Move: AsyncParsableCommand {
        @OptionGroup var global: GlobalOptions
        @Argument var device: String
        @Argument var room: String
        func run() async throws {
            try await HomeAPIRun.run {
                let home = try await global.open()
                let d = try await resolveDevice(device, in: home)
                let s = try await resolveStructure(d.structureID, in: home)
                let r = try await resolveRoom(room, in: s)
                try await s.move(device: d, to: r)
                if global.json { Output.json(["device": d.id, "room": r.id]) } else { print("moved \(d.name) to \(r.name)") }
                await home.close()
            }
        }
    }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Print every device change until interrupted.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
        try await HomeAPIRun.run {
            let home = try await global.open(live: true)
            for try await device in home.devices().stream().values {
                let s = await summary(device, home)
                let line: String
                if global.json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    line = (try? encoder.encode(s)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
                } else {
                    let state = s.state.keys.sorted().map { "\($0)=\(s.state[$0] ?? "")" }.joined(separator: " ")
                    line = "\(s.name) [\(s.id)] \(s.connectivity)/\(s.locality) room=\(s.room ?? "-") \(state)"
                }
                // Unbuffered, so a pipe sees each change as it happens.
                FileHandle.standardOutput.write(Data((line + "\n").utf8))
            }
        }
    }
}
