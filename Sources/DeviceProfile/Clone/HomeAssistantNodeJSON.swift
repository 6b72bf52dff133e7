// A node written the way Home Assistant's Matter server keeps it (its node JSON), so
// `homectl dump --format ha` gives what the server would and `matter-sim clone` reads it back.
// The server keeps each attribute's raw TLV as connectedhomeip's Python TLV reader decodes it
// (chip/tlv: integers as integers, floats widened to double, byte strings as bytes, structures
// as dicts keyed by context tag, arrays and lists as lists) and writes it with orjson (bytes
// as base64 text, dict keys as text, NaN and infinities as null).
import Foundation
import MatterModel
import MatterTLV

public enum HomeAssistantNodeJSON {
    /// The server's node schema version (python-matter-server 8's DATA_MODEL_SCHEMA_VERSION).
    public static let interviewVersion = 6

    /// One attribute's value as the server writes it.
    public static func value(_ v: TLVValue) -> DumpJSON {
        switch v {
        case .unsigned(let u): return .number(String(u))
        case .signed(let i): return .number(String(i))
        case .bool(let b): return .bool(b)
        case .float(let f): return number(Double(f))
        case .double(let d): return number(d)
        case .utf8(let s): return .string(s)
        case .bytes(let b): return .string(Data(b).base64EncodedString())
        case .null: return .null
        case .array(let items), .list(let items): return .array(items.map { value($0.value) })
        case .structure(let members):
            // A dict: a repeated tag keeps its first place and its last value, as in Python.
            var entries: [(key: String, value: DumpJSON)] = []
            for member in members {
                let key = Self.key(member.tag)
                if let i = entries.firstIndex(where: { $0.key == key }) { entries[i].value = value(member.value) } else { entries.append((key, value(member.value))) }
            }
            return .object(entries)
        }
    }

    private static func number(_ d: Double) -> DumpJSON {
        // Swift's shortest round-trip text, as Python's repr; orjson writes null for what JSON lacks.
        d.isFinite ? .number("\(d)") : .null
    }

    private static func key(_ tag: TLVTag) -> String {
        switch tag {
        case .anonymous: "Any"
        case .context(let t): String(t)
        case .commonProfile(let t), .implicitProfile(let t): String(t)
        case .fullyQualified(let vendor, let profile, let t): "\((UInt32(vendor) << 16) | UInt32(profile)):\(t)"
        }
    }

    /// The node JSON: the server's keys, the attributes keyed "ENDPOINT/CLUSTER/ATTRIBUTE" in
    /// numeric order. `isBridge` is the server's rule: endpoint 1 is an Aggregator.
    public static func node(nodeID: UInt64, attributes: [AttributePath: TLVValue], interviewed: Date = Date()) -> DumpJSON {
        let paths = attributes.keys.sorted { ($0.endpoint, $0.cluster.rawValue, $0.attribute.rawValue) < ($1.endpoint, $1.cluster.rawValue, $1.attribute.rawValue) }
        let entries = paths.map { (key: "\($0.endpoint)/\($0.cluster.rawValue)/\($0.attribute.rawValue)", value: value(attributes[$0]!)) }
        let deviceTypes = attributes[AttributePath(endpoint: 1, cluster: Clusters.Descriptor.id, attribute: Clusters.Descriptor.Attribute.deviceTypeList)]
        let isBridge = deviceTypes?.members?.contains { $0.value[context: 0]?.uintValue == UInt64(DeviceTypes.aggregator.rawValue) } ?? false
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"
        let date = DumpJSON.string(formatter.string(from: interviewed))
        return .object([
            ("node_id", .number(String(nodeID))), ("date_commissioned", date), ("last_interview", date),
            ("interview_version", .number(String(interviewVersion))), ("available", .bool(true)), ("is_bridge", .bool(isBridge)),
            ("attributes", .object(entries)), ("attribute_subscriptions", .array([])),
        ])
    }

    /// `--anonymize`: what a dump would give away of its owner. Serial numbers and unique IDs
    /// (BasicInformation and each bridged device's) become ANON-SERIAL and ANON-UNIQUE-ID,
    /// locations XX, node labels empty (as Tests/Fixtures/real-devices); network names, IDs and
    /// addresses go: Network Commissioning's networks, Thread's network name, PAN and
    /// extended PAN IDs, mesh prefix and neighbours, Wi-Fi's BSSID, the interfaces' addresses.
    public static func anonymized(_ attributes: [AttributePath: TLVValue]) -> [AttributePath: TLVValue] {
        typealias Basic = Clusters.BasicInformation.Attribute
        typealias ThreadDiagnostics = Clusters.ThreadNetworkDiagnostics.Attribute
        let replaced: [ClusterID: [AttributeID: TLVValue]] = [
            Clusters.BasicInformation.id: [
                Basic.serialNumber: .utf8("ANON-SERIAL"), Basic.uniqueID: .utf8("ANON-UNIQUE-ID"), Basic.location: .utf8("XX"),
                Basic.nodeLabel: .utf8(""),
            ],
            Clusters.BridgedDeviceBasicInformation.id: [
                Clusters.BridgedDeviceBasicInformation.Attribute.serialNumber: .utf8("ANON-SERIAL"),
                Clusters.BridgedDeviceBasicInformation.Attribute.uniqueID: .utf8("ANON-UNIQUE-ID"),
                Clusters.BridgedDeviceBasicInformation.Attribute.nodeLabel: .utf8(""),
            ],
            // Wi-Fi SSIDs and Thread extended PAN IDs.
            Clusters.NetworkCommissioning.id: [
                Clusters.NetworkCommissioning.Attribute.networks: .array([]), Clusters.NetworkCommissioning.Attribute.lastNetworkID: .null,
            ],
            Clusters.ThreadNetworkDiagnostics.id: [
                ThreadDiagnostics.networkName: .null, ThreadDiagnostics.panId: .null, ThreadDiagnostics.extendedPanId: .null, ThreadDiagnostics.meshLocalPrefix: .null,
                ThreadDiagnostics.neighborTable: .array([]), ThreadDiagnostics.routeTable: .array([]),
            ],
            Clusters.WiFiNetworkDiagnostics.id: [Clusters.WiFiNetworkDiagnostics.Attribute.bssid: .null],
        ]
        var out = attributes
        for (path, value) in attributes {
            if let replacement = replaced[path.cluster]?[path.attribute] {
                out[path] = replacement
            } else if path.cluster == Clusters.GeneralDiagnostics.id, path.attribute == Clusters.GeneralDiagnostics.Attribute.networkInterfaces,
                case .array(let interfaces) = value
            {
                // Each interface's HardwareAddress (field 4) and IPv4/IPv6 addresses (5, 6).
                out[path] = .array(interfaces.map { i in
                    guard case .structure(let fields) = i.value else { return i }
                    return TLVElement(tag: i.tag, .structure(fields.map { f in
                        switch f.tag {
                        case .context(4): TLVElement(tag: f.tag, .bytes([]))
                        case .context(5), .context(6): TLVElement(tag: f.tag, .array([]))
                        default: f
                        }
                    }))
                })
            }
        }
        return out
    }
}

extension DumpJSON {
    /// JSON text: two-space indents (as the server's orjson OPT_INDENT_2), or one line.
    public func text(indented: Bool = true) -> String {
        var out = ""
        write(into: &out, indent: indented ? 0 : nil)
        return out
    }

    private func write(into out: inout String, indent: Int?) {
        let newline = indent.map { "\n" + String(repeating: "  ", count: $0 + 1) } ?? ""
        let close = indent.map { "\n" + String(repeating: "  ", count: $0) } ?? ""
        let inner = indent.map { $0 + 1 }
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): out += Self.quoted(s)
        case .array(let items):
            guard !items.isEmpty else { out += "[]"; return }
            out += "["
            for (i, item) in items.enumerated() {
                out += (i == 0 ? "" : ",") + newline
                item.write(into: &out, indent: inner)
            }
            out += close + "]"
        case .object(let entries):
            guard !entries.isEmpty else { out += "{}"; return }
            out += "{"
            for (i, entry) in entries.enumerated() {
                out += (i == 0 ? "" : ",") + newline + Self.quoted(entry.key) + (indent == nil ? ":" : ": ")
                entry.value.write(into: &out, indent: inner)
            }
            out += close + "}"
        }
    }

    private static func quoted(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 32: out += String(format: "\\u%04x", scalar.value)  // other control characters
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    /// The same JSON value as Python compares them after loading: numbers by value (1 and 1.0
    /// are equal), objects whatever their key order.
    public func isSameValue(as other: DumpJSON) -> Bool {
        switch (self, other) {
        case (.number(let a), .number(let b)):
            if a == b { return true }
            if let x = self.integer, let y = other.integer { return x == y }
            guard let x = Double(a), let y = Double(b) else { return false }
            return x == y
        case (.array(let a), .array(let b)): return a.count == b.count && zip(a, b).allSatisfy { $0.isSameValue(as: $1) }
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            return a.allSatisfy { entry in other[entry.key].map { entry.value.isSameValue(as: $0) } ?? false }
        default: return self == other
        }
    }
}
