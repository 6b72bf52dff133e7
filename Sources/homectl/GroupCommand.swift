import ArgumentParser
import Foundation
import HomeAPI

/// `homectl group`: device groups, and commands that reach every member at once.
struct GroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group", abstract: "Create, list and delete device groups; switch a whole group with one group message.",
        subcommands: [List.self, Create.self, Delete.self, On.self, Off.self, Toggle.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List device groups.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Seconds to wait for the members' routes before listing (0: list stored state at once).")
        var settle = Seconds(3)
        func run() async throws {
            try await HomeAPIRun.run {
                let home = try await global.open(live: settle.value > 0)
                if settle.value > 0 { _ = await home.waitUntilAllRoutesUp(timeout: settle.duration) }
                let devices = Dictionary(uniqueKeysWithValues: try await home.devices().list().map { ($0.id, $0.name) })
                let groups = try await home.deviceGroups().list().sorted { ($0.name, $0.id) < ($1.name, $1.id) }
                let rows = groups.map { GroupSummary($0, devices) }
                if global.json {
                    Output.json(rows)
                } else {
                    Output.table(
                        ["NAME", "MEMBERS", "CONNECTIVITY", "ID"],
                        rows.map { [$0.name, $0.members.joined(separator: ", "), $0.connectivity, $0.id] })
                }
                await home.close()
            }
        }
    }

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a group of lights and plugs (each joins a Matter group).")
        @OptionGroup var global: GlobalOptions
        @Argument var name: String
        @Argument(help: "Member devices, by name or ID.") var devices: [String]
        @Option var structure: String?
        func run() async throws {
            try await HomeAPIRun.run {
                let home = try await global.open()
                let members = try await devices.asyncMap { try await resolveDevice($0, in: home) }
                let s = try await resolveStructure(structure ?? members.first?.structureID, in: home)
                let group = try await s.createDeviceGroup(name: name, devices: members)
                let names = Dictionary(uniqueKeysWithValues: members.map { ($0.id, $0.name) })
                if global.json {
                    Output.json(GroupSummary(group, names))
                } else {
                    print("created group \(group.name) (\(group.id)) of \(members.map(\.name).joined(separator: ", "))")
                }
                await home.close()
            }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a device group; its members leave the Matter group.")
        @OptionGroup var global: GlobalOptions
        @Argument var group: String
        func run() async throws {
            try await HomeAPIRun.run {
                let home = try await global.open()
                let g = try await resolveGroup(group, in: home)
                let s = try await home.structure(id: g.structureID)
                try await s.deleteDeviceGroup(g)
                if global.json { Output.json(["deleted": g.id]) } else { print("deleted group \(g.name)") }
                await home.close()
            }
        }
    }

    struct On: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn every member of a group on.")
        @OptionGroup var global: GlobalOptions
        @Argument var group: String
        func run() async throws { try await groupOnOff(group, global) { try await $0.on() } }
    }

    struct Off: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Turn every member of a group off.")
        @OptionGroup var global: GlobalOptions
        @Argument var group: String
        func run() async throws { try await groupOnOff(group, global) { try await $0.off() } }
    }

    struct Toggle: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Toggle every member of a group.")
        @OptionGroup var global: GlobalOptions
        @Argument var group: String
        func run() async throws { try await groupOnOff(group, global) { try await $0.toggle() } }
    }
}

/// Sends an On/Off command to a group and says how it went out.
private func groupOnOff(
    _ name: String, _ global: GlobalOptions,
    _ action: @escaping @Sendable (Matter.OnOffTrait) async throws -> Void
) async throws {
    try await HomeAPIRun.run {
        let home = try await global.open()
        let g = try await resolveGroup(name, in: home)
        guard let trait = await g.traits.get(Matter.OnOffTrait.self) else {
            await home.close()
            throw HomeError.failedPrecondition("group \(g.name) has no On/Off trait common to its members")
        }
        do { try await action(trait) } catch {
            await home.close()
            throw error
        }
        let delivery = await g.lastDelivery()
        if global.json {
            Output.json(
                GroupCommandResult(
                    group: g.id, result: "ok", groupcastInterfaces: delivery?.groupcastInterfaces ?? [],
                    unicastMembers: delivery?.unicastMembers ?? []))
        } else if let delivery, !delivery.groupcastInterfaces.isEmpty {
            print(
                "ok: one group message on \(delivery.groupcastInterfaces.joined(separator: ", "))"
                    + (delivery.unicastMembers.isEmpty ? "" : "; one by one to \(delivery.unicastMembers.joined(separator: ", "))"))
        } else {
            print(
                "ok: one by one to \(delivery?.unicastMembers.joined(separator: ", ") ?? "every member") (no interface carries multicast)")
        }
        await home.close()
    }
}

struct GroupCommandResult: Codable {
    var group: String
    var result: String
    var groupcastInterfaces: [String]
    var unicastMembers: [String]
}

struct GroupSummary: Codable {
    var id: String
    var name: String
    var structureID: String
    var members: [String]
    var connectivity: String

    init(_ g: DeviceGroup, _ names: [String: String]) {
        id = g.id
        name = g.name
        structureID = g.structureID
        members = g.deviceIDs.map { names[$0] ?? $0 }
        connectivity = "\(g.sourceConnectivity.connectivityState)"
    }
}

func resolveGroup(_ text: String, in home: Home) async throws -> DeviceGroup {
    let groups = try await home.deviceGroups().list()
    if let byID = groups.first(where: { $0.id == text }) { return byID }
    let named = groups.filter { $0.name.caseInsensitiveCompare(text) == .orderedSame }
    guard named.count == 1, let g = named.first else {
        throw HomeError.notFound(
            named.isEmpty ? "no device group named \(text)" : "\(named.count) device groups are named \(text): use the ID")
    }
    return g
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var out: [T] = []
        for element in self { out.append(try await transform(element)) }
        return out
    }
}
