// Where each device of a home goes on the network when `matter-sim home` runs it: its UDP
// port, setup code, discriminator and state directory. The simulator (in one process or
// one per device) and the controller (`homectl commission --home`) both read it from
// here, so the two always agree on which code opens which node.

public struct HomeNodePlan: Sendable, Hashable {
    /// Position in the home, from 0, in file order (`ResolvedHome.allDevices`).
    public var index: Int
    public var device: ResolvedHomeDevice
    /// UDP port: the base port plus `index`.
    public var port: Int
    public var passcode: UInt32
    public var discriminator: UInt16
    /// The device's state directory under the state root: its serial number made safe
    /// for a file name.
    public var stateDirectoryName: String

    public var vendorID: UInt16 { device.profile.identity.vendorID }
    public var productID: UInt16 { device.profile.identity.productID }
}

public enum HomeLaunchPlan {
    /// Every device of `home` with its port, setup code and state directory; throws
    /// `portsExhausted` when the devices do not fit below port 65536.
    public static func nodes(of home: ResolvedHome, basePort: Int) throws(HomeLaunchPlanError) -> [HomeNodePlan] {
        try nodes(home.allDevices, first: 0, of: home.allDevices.count, basePort: basePort)
    }

    /// The part's devices, with the places they have in the whole home.
    public static func nodes(of part: ResolvedHomePart, basePort: Int) throws(HomeLaunchPlanError) -> [HomeNodePlan] {
        try nodes(part.home.allDevices, first: part.first, of: part.deviceCount, basePort: basePort)
    }

    private static func nodes(
        _ devices: [ResolvedHomeDevice], first: Int, of count: Int, basePort: Int
    ) throws(HomeLaunchPlanError) -> [HomeNodePlan] {
        guard (1...65535).contains(basePort), basePort + count - 1 <= 65535 else {
            throw .portsExhausted(basePort: basePort, devices: count)
        }
        return devices.enumerated().map { offset, device in
            let index = first + offset
            return HomeNodePlan(
                index: index, device: device, port: basePort + index,
                passcode: device.profile.commissioning.passcode,
                discriminator: device.profile.commissioning.discriminator,
                stateDirectoryName: stateDirectoryName(serialNumber: device.profile.identity.serialNumber))
        }
    }

    /// Which part (from 1) of `parts` runs node `index` of `nodes` when a fleet is split over
    /// several hosts (scripts/fleet-bench.sh: one Avahi daemon each): contiguous blocks in
    /// file order, sizes differing by at most one. `matter-sim home --part` runs one part and
    /// `homectl fleet-bench --host A,B,...` sends each node to its part's host.
    public static func part(ofNode index: Int, nodes: Int, parts: Int) -> Int {
        guard nodes > 0, parts > 0 else { return 1 }
        return index * parts / nodes + 1
    }

    /// A serial number as a directory name: anything but letters, digits and `-_.` becomes `_`.
    public static func stateDirectoryName(serialNumber: String) -> String {
        let safe = String(serialNumber.map { $0.isLetter || $0.isNumber || "-_.".contains($0) ? $0 : "_" })
        return safe.isEmpty ? "device" : safe
    }

    /// A home of `count` copies of one device profile (a fleet): one structure, rooms of
    /// `roomSize` devices, device i named "Node i". It is resolved like any home file, so
    /// serial numbers (`FLEET-0001`, ...) and, unless the profile fixes them, setup codes
    /// differ per device.
    /// `profilePath` must be absolute or relative to the current directory.
    public static func fleetYAML(
        profilePath: String, count: Int, roomSize: Int = 50, name: String = "Fleet",
        serialPrefix: String = "FLEET"
    ) -> String {
        let width = String(max(count, 1)).count
        func padded(_ n: Int) -> String {
            let text = String(n)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        var lines = ["kind: home", "name: \(quoted(name))", "structures:", "  - name: \(quoted(name))", "    rooms:"]
        let size = max(1, roomSize)
        var room = 0
        for start in stride(from: 0, to: count, by: size) {
            room += 1
            lines.append("      - name: \(quoted("Rack \(room)"))")
            lines.append("        devices:")
            for i in start..<min(count, start + size) {
                lines.append("          - name: \(quoted("Node \(padded(i + 1))"))")
                lines.append("            profile: \(quoted(profilePath))")
                // An explicit serial: derived ones (a 24-bit hash of the place) could clash in a large fleet.
                lines.append("            identity: { serialNumber: \(quoted("\(serialPrefix)-\(padded(i + 1))")) }")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

public enum HomeLaunchPlanError: Error, Sendable, CustomStringConvertible {
    case portsExhausted(basePort: Int, devices: Int)

    public var description: String {
        switch self {
        case let .portsExhausted(basePort, devices):
            "--base-port \(basePort): \(devices) devices need ports \(basePort)...\(basePort + devices - 1), which must lie in 1...65535"
        }
    }
}
