import ArgumentParser
import Foundation
import HomeAPI

extension AutomationsCommand {
    /// `homectl automations create NAME --when DEVICE:EVENT --then DEVICE:COMMAND …`: an
    /// automation in the starting device's structure, built with HomeAPI's automation DSL.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create an automation: when a device's event happens, send commands to devices.",
            discussion: """
                STARTER is DEVICE:EVENT, EVENT one of \(Starter.allCases.map(\.rawValue).joined(separator: ", ")).
                ACTION is DEVICE:COMMAND, COMMAND one of \(Command.allCases.map(\.rawValue).joined(separator: ", ")).
                DEVICE is an ID or a unique name. Example:
                  homectl automations create "Smoke: lights on, vacuum home" --when "Smoke Alarm:smoke" \\
                    --then "Ceiling Light:on" --then "Robot Vacuum:dock"
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The automation's name.") var name: String
        @Option(help: "DEVICE:EVENT that starts it.") var when: String
        @Option(name: .customLong("then"), help: "DEVICE:COMMAND it sends (repeat for more).") var actions: [String]

        /// The events a starter can name (each a trait's event).
        enum Starter: String, CaseIterable {
            case smoke, co, press, contact, occupancy, leak
        }

        /// The commands an action can send (each a trait's command).
        enum Command: String, CaseIterable {
            case on, off, toggle, dock, pause, resume, close
        }

        func validate() throws {
            _ = try Self.split(when, Starter.init)
            guard !actions.isEmpty else { throw ValidationError("give at least one --then DEVICE:COMMAND") }
            for action in actions { _ = try Self.split(action, Command.init) }
        }

        /// "DEVICE:WHAT" at the last colon (a device name may hold one).
        static func split<T>(_ text: String, _ make: (String) -> T?) throws -> (device: String, what: T) {
            guard let colon = text.lastIndex(of: ":"), let what = make(String(text[text.index(after: colon)...]).lowercased()),
                !text[..<colon].isEmpty
            else { throw ValidationError("'\(text)': expected DEVICE:\(T.self) (see --help)") }
            return (String(text[..<colon]), what)
        }

        func run() async throws {
            try await HomeAPIRun.run {
                // A home that subscribes: an automation's starter is validated against the
                // device's events, which only a live home receives (missingSubscription otherwise).
                let home = try await global.open(live: true)
                let start = try Self.split(when, Starter.init)
                let starterDevice = try await Self.read(start.device, in: home)
                guard let structureID = starterDevice.structureID else {
                    throw ValidationError("\(starterDevice.name) is in no structure: an automation belongs to one")
                }
                let starterNode = try Self.starter(starterDevice, start.what)
                var actionNodes: [AutomationNode] = []
                for text in actions {
                    let (name, command) = try Self.split(text, Command.init)
                    actionNodes.append(try Self.action(try await Self.read(name, in: home), command))
                }
                let draft = automation(name: name) {
                    starterNode
                    for node in actionNodes { node }
                }
                let created = try await home.structure(id: structureID).createAutomation(draft)
                if global.json { Output.json(["id": created.id, "name": created.name]) } else { print("created \(created.name) (\(created.id))") }
                await home.close()
            }
        }

        /// The device with its traits read now: what the home kept of it may lack the traits an
        /// automation names (its snapshot older than the device's clusters), as `withTrait` finds.
        static func read(_ name: String, in home: Home) async throws -> HomeDevice {
            let device = try await resolveDevice(name, in: home)
            try await home.refresh(deviceID: device.id)
            return try await home.device(id: device.id)
        }

        /// The device type of `device` that has the trait (its starter or action names it).
        static func type<T: Trait>(of device: HomeDevice, with trait: T.Type) throws -> any DeviceType.Type {
            guard let found = device.types.all.all.first(where: { $0.traits[trait] != nil }) else {
                throw ValidationError("\(device.name) has no \(trait) (its types: \(typeNames(device).joined(separator: ", ")))")
            }
            return Swift.type(of: found)
        }

        static func starter(_ device: HomeDevice, _ what: Starter) throws -> AutomationNode {
            func on<T: Trait, E: Event>(_ trait: T.Type, _ event: E.Type) throws -> AutomationNode {
                HomeAPI.starter(device, try type(of: device, with: trait), event)
            }
            switch what {
            case .smoke: return try on(Matter.SmokeCoAlarmTrait.self, Matter.SmokeCoAlarmTrait.SmokeAlarmEvent.self)
            case .co: return try on(Matter.SmokeCoAlarmTrait.self, Matter.SmokeCoAlarmTrait.COAlarmEvent.self)
            case .press: return try on(Matter.SwitchTrait.self, Matter.SwitchTrait.InitialPressEvent.self)
            case .contact, .leak: return try on(Matter.BooleanStateTrait.self, Matter.BooleanStateTrait.StateChangeEvent.self)
            case .occupancy: return try on(Matter.OccupancySensingTrait.self, Matter.OccupancySensingTrait.OccupancyChangedEvent.self)
            }
        }

        static func action(_ device: HomeDevice, _ command: Command) throws -> AutomationNode {
            func send<T: Trait>(_ trait: T.Type, _ command: CommandAction) throws -> AutomationNode {
                HomeAPI.action(device, try type(of: device, with: trait)) { command }
            }
            switch command {
            case .on: return try send(Matter.OnOffTrait.self, Matter.OnOffTrait.on())
            case .off: return try send(Matter.OnOffTrait.self, Matter.OnOffTrait.off())
            case .toggle: return try send(Matter.OnOffTrait.self, Matter.OnOffTrait.toggle())
            case .dock: return try send(Matter.RvcOperationalStateTrait.self, Matter.RvcOperationalStateTrait.goHome())
            case .pause: return try send(Matter.RvcOperationalStateTrait.self, Matter.RvcOperationalStateTrait.pause())
            case .resume: return try send(Matter.RvcOperationalStateTrait.self, Matter.RvcOperationalStateTrait.resume())
            case .close: return try send(Matter.ValveConfigurationAndControlTrait.self, Matter.ValveConfigurationAndControlTrait.close())
            }
        }
    }
}
