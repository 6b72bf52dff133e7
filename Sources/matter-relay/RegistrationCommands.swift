import ArgumentParser
import CloudRelay

struct HomeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "home", abstract: "Manage homes.", subcommands: [Add.self, List.self, RotateToken.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a home and print its token (shown only once).")
        @OptionGroup var database: DatabaseOption
        @Argument(help: "The home's name.") var name: String

        func run() async throws {
            let store = try await database.open()
            let (home, token) = try await store.addHome(name: name)
            print("home \(home.id) \"\(home.name)\"")
            print("token \(token)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List homes and their device counts.")
        @OptionGroup var database: DatabaseOption

        func run() async throws {
            let store = try await database.open()
            let homes = try await store.homes()
            for home in homes {
                print("\(home.id)  \(home.name)  \(try await store.devices(homeID: home.id).count) devices")
            }
            print("\(homes.count) homes")
        }
    }

    struct RotateToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-token", abstract: "Issue a new token for a home; the old one stops working.")
        @OptionGroup var database: DatabaseOption
        @Argument(help: "The home's ID or name.") var home: String

        func run() async throws {
            let store = try await database.open()
            guard let found = try await store.home(home) else { throw ValidationError("no home '\(home)'") }
            print("token \(try await store.rotateHomeToken(homeID: found.id))")
        }
    }
}

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device", abstract: "Manage device registrations.", subcommands: [Add.self, List.self, Remove.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Register a device and print its credential (a new one if it was registered).")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The home's ID or name.") var home: String
        @Option(help: "A label for people.") var label: String?
        @Argument(help: "The device ID (1...64 of A-Z a-z 0-9 . _ -).") var deviceID: String

        func run() async throws {
            let store = try await database.open()
            guard let found = try await store.home(home) else { throw ValidationError("no home '\(home)'") }
            let credential = try await store.registerDevice(homeID: found.id, deviceID: deviceID, label: label)
            print("device \(deviceID) in home \(found.id)")
            print("credential \(credential)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a home's devices.")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The home's ID or name.") var home: String

        func run() async throws {
            let store = try await database.open()
            guard let found = try await store.home(home) else { throw ValidationError("no home '\(home)'") }
            let devices = try await store.devices(homeID: found.id)
            for device in devices { print("\(device.deviceID)\(device.label.map { "  \($0)" } ?? "")") }
            print("\(devices.count) devices")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a device; its credential stops working.")
        @OptionGroup var database: DatabaseOption
        @Option(help: "The home's ID or name.") var home: String
        @Argument(help: "The device ID.") var deviceID: String

        func run() async throws {
            let store = try await database.open()
            guard let found = try await store.home(home) else { throw ValidationError("no home '\(home)'") }
            try await store.removeDevice(homeID: found.id, deviceID: deviceID)
            print("removed \(deviceID)")
        }
    }
}
