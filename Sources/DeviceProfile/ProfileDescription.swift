// Human-readable descriptions of resolved profiles (what `matter-sim describe` prints).
import Foundation
import MatterModel
import MatterTLV

public struct ProfileDescription: Sendable {
    public let model: MatterModel
    /// Show attribute values under each cluster.
    public var showAttributes: Bool

    public init(model: MatterModel = .standard, showAttributes: Bool = true) {
        self.model = model
        self.showAttributes = showAttributes
    }

    // MARK: Device

    public func render(_ device: ResolvedDeviceProfile, indent: String = "") -> String {
        var lines: [String] = []
        func add(_ s: String) { lines.append(indent + s) }
        let id = device.identity
        add("\(device.name) (\(device.source))")
        add("  vendor:        \(id.vendorName) (\(Self.hex(id.vendorID, 4)))")
        add("  product:       \(id.productName) (\(Self.hex(id.productID, 4)))")
        add("  serial number: \(id.serialNumber)")
        add("  uniqueID:      \(id.uniqueID)")
        add("  hardware:      \(id.hardwareVersion) (\"\(id.hardwareVersionString)\")")
        add("  software:      \(id.softwareVersion) (\"\(id.softwareVersionString)\")")
        let c = device.commissioning
        add(
            "  commissioning: passcode \(Self.passcodeText(c.passcode))\(c.passcodeGenerated ? " (generated)" : ""), "
                + "discriminator \(c.discriminator)\(c.discriminatorGenerated ? " (generated)" : "")")
        let b = device.behaviour
        add(
            "  behaviour:     level: default transition \(b.level.defaultTransitionTime) tenths of a second, "
                + "default move rate \(b.level.defaultMoveRate)/s")
        add(
            "                 window covering: lift \(Self.number(b.windowCovering.liftSpeed)) %/s, "
                + "tilt \(Self.number(b.windowCovering.tiltSpeed)) %/s")
        if device.endpoints.contains(where: { $0.clusters.contains { $0.id == Clusters.FanControl.id } }) {
            add("                 fan: motor \(b.fan.acceleration.map { "\(Self.number($0)) %/s" } ?? "at the setting at once")")
        }
        let room = b.room
        // The room is a thermostat's (Thermostat, 0x0201).
        if device.endpoints.contains(where: { $0.clusters.contains { $0.id == Clusters.Thermostat.id } }) {
            add(
                "                 room: every \(Self.number(room.every)) s, heating +\(Self.number(room.heatingRate)) °C, "
                    + "cooling -\(Self.number(room.coolingRate)) °C, \(Self.number(room.leakPercent)) % toward outdoors")
        }
        let readings: [(String, DeviceBehaviour.Reading?)] =
            [("reading", b.reading)]
            + b.readings.sorted { $0.key < $1.key }.map { ("reading (\(model.cluster($0.key)?.name ?? "\($0.key)"))", $0.value) }
        for (label, reading) in readings {
            switch reading {
            case .schedule(let points, let repeatEvery)?:
                let list = points.map { "\(Self.number($0.value)) at \(Self.number($0.at)) s" }.joined(separator: ", ")
                add("                 \(label): schedule \(list)" + (repeatEvery.map { ", every \(Self.number($0)) s" } ?? ""))
            case .randomWalk(let every, let step, let low, let high)?:
                add(
                    "                 \(label): random walk, up to \(Self.number(step)) every \(Self.number(every)) s, within \(Self.number(low)) to \(Self.number(high))"
                )
            case nil:
                break
            }
        }
        if !device.cloud.isEmpty {
            // Secrets are not printed, only which one the device will use.
            let how =
                device.cloud.credential != nil
                ? "with its device credential"
                : device.cloud.homeToken != nil
                    ? "registering itself with the home token" : "no credential yet (give one on the command line)"
            add("  cloud relay:   \(device.cloud.relay ?? "(none; give --relay)"), \(how)")
        }
        for endpoint in device.endpoints {
            let types = endpoint.deviceTypes.map { "\($0.name) (\(Self.hex($0.id.rawValue, 4)), rev \($0.revision))" }
            add("  endpoint \(endpoint.number): " + types.joined(separator: ", "))
            for cluster in endpoint.clusters {
                lines.append(
                    contentsOf: render(cluster, cloudOnly: endpoint.cloudOnlyClusters.contains(cluster.id)).map { indent + "    " + $0 })
            }
        }
        return lines.joined(separator: "\n")
    }

    private func render(_ cluster: ResolvedCluster, cloudOnly: Bool) -> [String] {
        let def = model.cluster(cluster.id)
        var head = "\(Self.hex(cluster.id.rawValue, 4)) \(cluster.name) (rev \(cluster.revision))"
        if !cluster.features.isEmpty {
            let named = (def?.features ?? []).sorted { $0.bit < $1.bit }.filter { cluster.features.contains($0.code) }
            head += ", features: " + named.map { "\($0.name) (\($0.code))" }.joined(separator: ", ")
        }
        var notes: [String] = []
        if cluster.addedByDeviceType { notes.append("required by the device type") }
        if cloudOnly { notes.append("cloud-only") }
        if !notes.isEmpty { head += " [" + notes.joined(separator: "; ") + "]" }
        var lines = [head]
        guard showAttributes else { return lines }
        for id in cluster.supportedAttributes.sorted() {
            let attribute = def?.attribute(id)
            let name = attribute?.lowerCamelName ?? id.description
            guard let value = cluster.initialValues[id] else {
                lines.append("  \(name): (set by the node)")
                continue
            }
            let text = def.map { render(value, type: attribute?.type, in: $0) } ?? Self.plain(value)
            let note = cluster.explicitAttributes.contains(id) ? "" : " (default)"
            lines.append("  \(name) = \(text)\(note)")
        }
        return lines
    }

    // MARK: Home

    public func render(_ home: ResolvedHome) -> String {
        var lines: [String] = []
        let devices = home.allDevices
        let roomCount = home.structures.reduce(0) { $0 + $1.rooms.count }
        lines.append("\(home.name) (\(home.source))")
        lines.append(
            "  \(Self.count(home.structures.count, "structure")), \(Self.count(roomCount, "room")), \(Self.count(devices.count, "device"))")
        for structure in home.structures {
            lines.append("")
            lines.append("structure \"\(structure.name)\"")
            for room in structure.rooms {
                lines.append("  room \"\(room.name)\"")
                for device in room.devices { lines.append(render(device, indent: "    ")) }
                if room.devices.isEmpty { lines.append("    (no devices)") }
            }
            if !structure.devices.isEmpty {
                lines.append("  not in a room")
                for device in structure.devices { lines.append(render(device, indent: "    ")) }
            }
        }
        return lines.joined(separator: "\n")
    }

    private func render(_ device: ResolvedHomeDevice, indent: String) -> String {
        let p = device.profile
        let summary = p.endpoints.filter { $0.number != 0 }.map { e in
            "\(e.number): " + e.deviceTypes.map(\.name).joined(separator: "+")
        }.joined(separator: ", ")
        var out = indent + "device \"\(device.name)\" — \(device.profileReference) [\(summary)]"
        out +=
            "\n" + indent
            + "  serial \(p.identity.serialNumber), passcode \(Self.passcodeText(p.commissioning.passcode)), discriminator \(p.commissioning.discriminator)"
        if !p.cloudOnlyClusters.isEmpty {
            // Not on the LAN: a controller reaching the device over UDP does not see these.
            out +=
                "\n" + indent + "  cloud only: "
                + p.cloudOnlyClusters.map {
                    "\(model.cluster($0.cluster)?.name ?? $0.cluster.description) on endpoint \($0.endpoint)"
                }.joined(separator: ", ")
        }
        if showAttributes {
            out += "\n" + render(p, indent: indent + "  ")
        }
        return out
    }

    // MARK: Values

    /// A value as a profile would write it: enum names, bitmap bit names, struct field names.
    public func render(_ value: TLVValue, type: DataType?, in cluster: ClusterDefinition) -> String {
        switch (value, type?.base) {
        case (.unsigned(let u), .enumeration(let name, _)?):
            if let n = cluster.enumDefinition(named: name)?.name(of: UInt16(truncatingIfNeeded: u)), u <= UInt64(UInt16.max) {
                return "\(u) (\(n))"
            }
            return String(u)
        case (.unsigned(let u), .bitmap(let name, _)?):
            guard let def = cluster.bitmapDefinition(named: name) else { return Self.hex(u, 2) }
            let names = def.fields.filter { u & $0.mask != 0 && $0.mask & ($0.mask - 1) == 0 }.map(\.name)
            return Self.hex(u, 2) + (names.isEmpty ? "" : " (" + names.joined(separator: " | ") + ")")
        case (.array(let items), .list(let element)?), (.list(let items), .list(let element)?):
            return "[" + items.map { render($0.value, type: element, in: cluster) }.joined(separator: ", ") + "]"
        case (.structure(let members), .structure(let name)?):
            let def = cluster.structDefinition(named: name)
            return "{"
                + members.map { m -> String in
                    guard case .context(let tag) = m.tag, let field = def?.field(tag) else { return Self.plain(m.value) }
                    return field.lowerCamelName + ": " + render(m.value, type: field.type, in: cluster)
                }.joined(separator: ", ") + "}"
        default:
            return Self.plain(value)
        }
    }

    static func plain(_ value: TLVValue) -> String {
        switch value {
        case .signed(let i): return String(i)
        case .unsigned(let u): return String(u)
        case .bool(let b): return String(b)
        case .float(let f): return number(Double(f))
        case .double(let d): return number(d)
        case .utf8(let s):
            return "\""
                + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                .replacingOccurrences(of: "\n", with: "\\n") + "\""
        case .bytes(let b): return "\"" + b.map { String(format: "%02x", $0) }.joined() + "\""
        case .null: return "null"
        case .structure(let m), .array(let m), .list(let m):
            let open = { if case .structure = value { "{" } else { "[" } }()
            let close = open == "{" ? "}" : "]"
            return open + m.map { plain($0.value) }.joined(separator: ", ") + close
        }
    }

    static func number(_ d: Double) -> String {
        d.rounded() == d && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    }

    static func hex<T: BinaryInteger>(_ v: T, _ width: Int) -> String {
        let digits = String(v, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    /// The passcode as eight digits, the way setup codes are usually shown.
    static func passcodeText(_ p: UInt32) -> String {
        let digits = String(p)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    static func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
