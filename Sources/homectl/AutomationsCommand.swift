import ArgumentParser
import Foundation
import HomeAPI
import MatterProtocol

/// `homectl automations …`: the automations stored in the home graph and their runs.
struct AutomationsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "automations", abstract: "List, enable, disable, delete and run automations; show their history.",
        subcommands: [List.self, Create.self, History.self, Enable.self, Disable.self, Delete.self, Run.self])

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every structure's automations.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try await HomeAPIRun.run {
                let home = try await global.open()
                struct Row: Codable { var id, structure, name, active, starters, actions: String }
                var rows: [Row] = []
                for a in try await home.listAutomations() {
                    rows.append(
                        Row(
                            id: a.id, structure: (try? await home.structure(id: a.structureID).name) ?? a.structureID, name: a.name,
                            active: a.isActive ? "yes" : "no", starters: a.starterDescriptions.joined(separator: "; "),
                            actions: a.actionDescriptions.joined(separator: "; ")))
                }
                if global.json {
                    Output.json(rows)
                } else {
                    Output.table(
                        ["ID", "STRUCTURE", "NAME", "ACTIVE", "STARTERS", "ACTIONS"],
                        rows.map { [$0.id, $0.structure, $0.name, $0.active, $0.starters, $0.actions] })
                }
                await home.close()
            }
        }
    }

    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the latest automation runs, newest first.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only this automation's runs.") var automation: String?
        @Option(help: "How many runs (1-10000).") var limit: Int = 50

        func validate() throws {
            guard (1...10_000).contains(limit) else { throw ValidationError("--limit \(limit): expected 1 to 10000") }
        }

        func run() async throws {
            try await HomeAPIRun.run {
                let home = try await global.open()
                struct Row: Codable { var time, automation, starter, outcome, actions, message: String }
                let formatter = ISO8601DateFormatter()
                let rows = try await home.automationHistory(automationID: automation, limit: limit).map {
                    Row(
                        time: formatter.string(from: $0.time), automation: $0.automationName, starter: $0.starter,
                        outcome: $0.outcome.rawValue, actions: $0.actions.joined(separator: "; "), message: $0.message)
                }
                if global.json {
                    Output.json(rows)
                } else {
                    Output.table(
                        ["TIME", "AUTOMATION", "STARTER", "OUTCOME", "ACTIONS", "MESSAGE"],
                        rows.map { [$0.time, $0.automation, $0.starter, $0.outcome, $0.actions, $0.message] })
                }
                await home.close()
            }
        }
    }

    /// Finds an automation by ID in any structure.
    static func find(_ home: Home, _ id: String) async throws -> (Structure, Automation) {
        guard let a = try await home.listAutomations().first(where: { $0.id == id }) else {
            throw HomeError.notFound("no automation with ID \(id)")
        }
        return (try await home.structure(id: a.structureID), a)
    }

    /// Opens the home, finds the automation and runs `body` on it and its structure.
    static func withAutomation(
        _ id: String, _ global: GlobalOptions,
        _ body: (Structure, Automation) async throws -> Void
    ) async throws {
        try await HomeAPIRun.run {
            let home = try await global.open()
            let (s, a) = try await find(home, id)
            try await body(s, a)
            await home.close()
        }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable an automation.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The automation's ID.") var id: String
        func run() async throws {
            try await AutomationsCommand.withAutomation(id, global) { s, a in try await s.setAutomation(id: a.id, isActive: true) }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an automation (it keeps its definition).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The automation's ID.") var id: String
        func run() async throws {
            try await AutomationsCommand.withAutomation(id, global) { s, a in try await s.setAutomation(id: a.id, isActive: false) }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete an automation.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The automation's ID.") var id: String
        func run() async throws {
            try await AutomationsCommand.withAutomation(id, global) { s, a in try await s.deleteAutomation(id: a.id) }
        }
    }

    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the home's automations in this process until interrupted (or for --duration seconds).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Time acceleration for scheduled starters (60: a minute per second).") var speed: Double = 1
        @Option(help: "Stop after this many real seconds (up to 86400).") var duration: Seconds?

        func validate() throws {
            guard speed > 0, speed <= 86_400 else { throw ValidationError("--speed \(speed): expected more than 0, at most 86400") }
            if let duration, duration.value <= 0 {
                throw ValidationError("--duration \(duration.value): expected a positive number of seconds")
            }
        }

        func run() async throws {
            try await HomeAPIRun.run {
                let home = try await global.open(live: true)
                let clock: any MatterClock = speed == 1 ? SystemClock() : ScaledClock(speed: speed)
                let runner = await home.startAutomations(clock: clock)
                print("running \(try await home.listAutomations().filter(\.isActive).count) active automation(s) at \(speed)x")
                // --for DURATION of real time, or until interrupted.
                let real = SystemClock()
                if let duration {
                    try await real.sleep(until: real.now + duration.duration)
                } else {
                    while !Task.isCancelled { try await real.sleep(until: real.now + .seconds(3600)) }
                }
                await runner.stop()
                await home.close()
            }
        }
    }
}
