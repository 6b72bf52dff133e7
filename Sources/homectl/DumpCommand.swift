// `homectl dump NODE --format ha`: a commissioned device's every attribute (a wildcard read,
// not filtered by fabric, as Home Assistant's Matter server interviews a node) written as the
// server's node JSON, so `matter-sim clone` makes a profile of the device on the desk.
import ArgumentParser
import DeviceProfile
import Foundation
import HomeAPI
import MatterController
import MatterModel
import MatterTLV

struct Dump: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write every attribute of a device as Home Assistant's Matter server node JSON (for `matter-sim clone`).",
        discussion: """
            Values are written as the server writes them: integers, floats, text, octets as base64,
            structures keyed by field ID, null. Attributes the device refuses to read are left out,
            as the server leaves them out.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device ID or unique name.") var device: String
    @Option(help: "The dump's format: ha (Home Assistant's Matter server node JSON).") var format = "ha"
    @Flag(help: "Drop serial numbers, unique IDs, locations, node labels, network names and addresses.") var anonymize = false
    @Option(name: .shortAndLong, help: ArgumentHelp("Where to write the dump (default: standard output).", valueName: "dump.json"))
    var output: String?

    func validate() throws {
        guard format == "ha" else { throw ValidationError("--format \(format): expected ha (Home Assistant's Matter server node JSON)") }
    }

    func run() async throws {
        try await HomeAPIRun.run {
            let home = try await global.open()
            let d = try await resolveDevice(device, in: home)
            let reports: [AttributeReport]
            do { reports = try await home.readAllAttributes(deviceID: d.id) } catch {
                await home.close()
                throw error
            }
            await home.close()
            var attributes: [AttributePath: TLVValue] = [:]
            for report in reports { if let value = report.value { attributes[report.path] = value } }
            if anonymize { attributes = HomeAssistantNodeJSON.anonymized(attributes) }
            let text = HomeAssistantNodeJSON.node(nodeID: d.nodeID, attributes: attributes).text() + "\n"
            guard let output else {
                print(text, terminator: "")
                return
            }
            do { try text.write(toFile: output, atomically: true, encoding: .utf8) } catch {
                throw ValidationError("\(output): cannot write: \(error.localizedDescription)")
            }
            FileHandle.standardError.write(Data("\(output): \(attributes.count) attributes of \(d.name)\n".utf8))
        }
    }
}
