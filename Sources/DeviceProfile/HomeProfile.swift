// A home: structures → rooms → devices, each device a reference to a device profile
// file plus overrides (its name, identity, setup code, behaviour, attribute values).
import MatterModel
import MatterTLV

public struct ResolvedHome: Sendable, Hashable {
    public var name: String
    /// The home file this came from.
    public var source: String
    public var structures: [ResolvedStructure]

    public init(name: String, source: String, structures: [ResolvedStructure]) {
        self.name = name
        self.source = source
        self.structures = structures
    }

    /// Every device of every structure, rooms first, in file order.
    public var allDevices: [ResolvedHomeDevice] {
        structures.flatMap(\.allDevices)
    }
}

/// Part of a home, as `matter-sim home --part` runs it (`ProfileLoader.loadHomePart`).
public struct ResolvedHomePart: Sendable, Hashable {
    /// The part's devices in their places, without the home's groups and bindings.
    public var home: ResolvedHome
    /// The home's index (in `allDevices` order) of the part's first device.
    public var first: Int
    /// Devices in the whole home.
    public var deviceCount: Int
}

public struct ResolvedStructure: Sendable, Hashable {
    public var name: String
    public var rooms: [ResolvedRoom]
    /// Devices in the structure but in no room.
    public var devices: [ResolvedHomeDevice]
    /// The structure's postal address (scheduled automations need one); nil when not given.
    public var address: String?
    /// Device groups a controller makes when it commissions the home (`homectl commission --home`).
    public var groups: [ResolvedDeviceGroup]
    /// Light switches bound to lights, written when a controller commissions the home.
    public var bindings: [ResolvedSwitchBinding]

    public init(
        name: String, rooms: [ResolvedRoom], devices: [ResolvedHomeDevice], address: String? = nil,
        groups: [ResolvedDeviceGroup] = [], bindings: [ResolvedSwitchBinding] = []
    ) {
        self.name = name
        self.rooms = rooms
        self.devices = devices
        self.address = address
        self.groups = groups
        self.bindings = bindings
    }

    public var allDevices: [ResolvedHomeDevice] { rooms.flatMap(\.devices) + devices }
}

/// A device group of a structure: lights and plugs controlled together (on the devices, a
/// Matter group each member's light or plug endpoints join).
public struct ResolvedDeviceGroup: Sendable, Hashable {
    public var name: String
    /// Member device names, each a device of the same structure.
    public var devices: [String]

    public init(name: String, devices: [String]) {
        self.name = name
        self.devices = devices
    }
}

/// A light switch of a structure bound to lights of the same structure, as Google Home binds
/// them: the controller writes the switch's Binding and each light's ACL entry for the switch,
/// and a press at the switch then goes to the lights over the switch's own CASE session.
public struct ResolvedSwitchBinding: Sendable, Hashable {
    /// The switch's device name (an On/Off Light Switch or Dimmer Switch).
    public var switchDevice: String
    /// The bound devices' names, each with an On/Off cluster.
    public var lights: [String]

    public init(switchDevice: String, lights: [String]) {
        self.switchDevice = switchDevice
        self.lights = lights
    }
}

public struct ResolvedRoom: Sendable, Hashable {
    public var name: String
    public var devices: [ResolvedHomeDevice]

    public init(name: String, devices: [ResolvedHomeDevice]) {
        self.name = name
        self.devices = devices
    }
}

public struct ResolvedHomeDevice: Sendable, Hashable {
    /// The device's name in the home (also `profile.name`).
    public var name: String
    public var structure: String
    /// nil: the device is in the structure but in no room.
    public var room: String?
    /// The profile reference as written in the home file.
    public var profileReference: String
    /// The device profile with the home's overrides applied.
    public var profile: ResolvedDeviceProfile

    public init(name: String, structure: String, room: String?, profileReference: String, profile: ResolvedDeviceProfile) {
        self.name = name
        self.structure = structure
        self.room = room
        self.profileReference = profileReference
        self.profile = profile
    }
}

enum HomeKeys {
    static let top = ["kind", "name", "description", "cloud", "structures"]
    static let structure = ["name", "address", "rooms", "devices", "groups", "bindings"]
    static let room = ["name", "devices"]
    static let group = ["name", "devices"]
    static let binding = ["switch", "lights"]
    static let device = ["profile", "name", "identity", "commissioning", "behaviour", "cloud", "values"]
}

struct HomeDeviceDocument {
    var origin: Origin
    var profile: Located<String>
    var overrides: DeviceOverrides
}

struct RoomDocument {
    var name: Located<String>
    var devices: [HomeDeviceDocument]
}

struct GroupDocument {
    var name: Located<String>
    var devices: [Located<String>]
}

struct BindingDocument {
    var switchDevice: Located<String>
    var lights: [Located<String>]
}

struct StructureDocument {
    var name: Located<String>
    var rooms: [RoomDocument]
    var devices: [HomeDeviceDocument]
    var address: String? = nil
    var groups: [GroupDocument] = []
    var bindings: [BindingDocument] = []
}

struct HomeDocument {
    var name: String?
    /// The relay (and home token) for every device of the home.
    var cloud: CloudDocument?
    var structures: [StructureDocument] = []
}

extension DocumentParser {
    func parseHome(_ root: YAMLNode) -> HomeDocument {
        var doc = HomeDocument()
        guard let top = reader.fields(root, at: .root, known: HomeKeys.top, what: "a home (a mapping)") else { return doc }
        if let kind = top["kind"] { checkKind(kind, expected: "home") }
        if let n = top["name"] { doc.name = reader.string(n, at: "name", nonEmpty: true) }
        if let n = top["description"] { _ = reader.string(n, at: "description") }
        if let n = top["cloud"] { doc.cloud = parseCloud(n, at: "cloud", known: CloudKeys.home) }
        guard let n = reader.require(top, "structures", at: .root, node: root),
            let items = reader.list(n, at: "structures", what: "a list of structures")
        else { return doc }
        if items.isEmpty { reader.error("structures", n, "expected at least one structure") }
        var names: [String: ProfilePath] = [:]
        for (i, item) in items.enumerated() {
            let p = ProfilePath("structures").index(i)
            guard let s = parseStructure(item, at: p) else { continue }
            if let first = names[s.name.value] {
                reader.error(s.name.origin.path, item, "structure name \"\(s.name.value)\" is already used by \(first)")
            } else {
                names[s.name.value] = p
            }
            doc.structures.append(s)
        }
        return doc
    }

    private func named(_ fields: Fields, at path: ProfilePath, node: YAMLNode) -> Located<String>? {
        guard let n = reader.require(fields, "name", at: path, node: node),
            let name = reader.string(n, at: path.key("name"), nonEmpty: true)
        else { return nil }
        return Located(value: name, origin: reader.origin(path.key("name"), n))
    }

    private func parseStructure(_ node: YAMLNode, at path: ProfilePath) -> StructureDocument? {
        guard let fields = reader.fields(node, at: path, known: HomeKeys.structure, what: "a structure mapping") else { return nil }
        let name = named(fields, at: path, node: node)
        var rooms: [RoomDocument] = []
        if let n = fields["rooms"], let items = reader.list(n, at: path.key("rooms"), what: "a list of rooms") {
            var names: [String: ProfilePath] = [:]
            for (i, item) in items.enumerated() {
                let p = path.key("rooms").index(i)
                guard let rf = reader.fields(item, at: p, known: HomeKeys.room, what: "a room mapping") else { continue }
                let roomName = named(rf, at: p, node: item)
                let devices = rf["devices"].map { parseDevices($0, at: p.key("devices")) } ?? []
                guard let roomName else { continue }
                if let first = names[roomName.value] {
                    reader.error(roomName.origin.path, item, "room name \"\(roomName.value)\" is already used by \(first)")
                } else {
                    names[roomName.value] = p
                }
                rooms.append(RoomDocument(name: roomName, devices: devices))
            }
        }
        let devices = fields["devices"].map { parseDevices($0, at: path.key("devices")) } ?? []
        let address = fields["address"].flatMap { reader.string($0, at: path.key("address"), nonEmpty: true) }
        let groups = fields["groups"].map { parseGroups($0, at: path.key("groups")) } ?? []
        let bindings = fields["bindings"].map { parseBindings($0, at: path.key("bindings")) } ?? []
        guard let name else { return nil }
        return StructureDocument(name: name, rooms: rooms, devices: devices, address: address, groups: groups, bindings: bindings)
    }

    /// A list of distinct device names (a group's members, a switch's lights).
    private func deviceNames(_ fields: Fields, _ key: String, at p: ProfilePath, node: YAMLNode, in what: String) -> [Located<String>]? {
        guard let n = reader.require(fields, key, at: p, node: node),
            let members = reader.list(n, at: p.key(key), what: "a list of device names")
        else { return nil }
        if members.isEmpty { reader.error(p.key(key), n, "expected at least one device name") }
        var devices: [Located<String>] = []
        for (j, member) in members.enumerated() {
            let mp = p.key(key).index(j)
            guard let device = reader.string(member, at: mp, nonEmpty: true) else { continue }
            if devices.contains(where: { $0.value == device }) {
                reader.error(mp, member, "device \"\(device)\" is already in this \(what)")
                continue
            }
            devices.append(Located(value: device, origin: reader.origin(mp, member)))
        }
        return devices
    }

    /// `bindings:` of a structure: each a light switch and the lights it is bound to.
    private func parseBindings(_ node: YAMLNode, at path: ProfilePath) -> [BindingDocument] {
        guard let items = reader.list(node, at: path, what: "a list of switch bindings") else { return [] }
        var out: [BindingDocument] = []
        for (i, item) in items.enumerated() {
            let p = path.index(i)
            guard let fields = reader.fields(item, at: p, known: HomeKeys.binding, what: "a switch binding mapping (switch, lights)"),
                let n = reader.require(fields, "switch", at: p, node: item),
                let name = reader.string(n, at: p.key("switch"), nonEmpty: true)
            else { continue }
            if let first = out.first(where: { $0.switchDevice.value == name }) {
                reader.error(p.key("switch"), n, "switch \"\(name)\" is already bound at \(first.switchDevice.origin.path); list all its lights there")
                continue
            }
            guard let lights = deviceNames(fields, "lights", at: p, node: item, in: "binding") else { continue }
            out.append(BindingDocument(switchDevice: Located(value: name, origin: reader.origin(p.key("switch"), n)), lights: lights))
        }
        return out
    }

    /// `groups:` of a structure: each a name and the names of its member devices.
    private func parseGroups(_ node: YAMLNode, at path: ProfilePath) -> [GroupDocument] {
        guard let items = reader.list(node, at: path, what: "a list of device groups") else { return [] }
        var out: [GroupDocument] = []
        var names: [String: ProfilePath] = [:]
        for (i, item) in items.enumerated() {
            let p = path.index(i)
            guard let fields = reader.fields(item, at: p, known: HomeKeys.group, what: "a device group mapping (name, devices)"),
                let name = named(fields, at: p, node: item)
            else { continue }
            if let first = names[name.value] {
                reader.error(name.origin.path, item, "group name \"\(name.value)\" is already used by \(first)")
                continue
            }
            names[name.value] = p
            guard let devices = deviceNames(fields, "devices", at: p, node: item, in: "group") else { continue }
            out.append(GroupDocument(name: name, devices: devices))
        }
        return out
    }

    private func parseDevices(_ node: YAMLNode, at path: ProfilePath) -> [HomeDeviceDocument] {
        guard let items = reader.list(node, at: path, what: "a list of devices") else { return [] }
        var out: [HomeDeviceDocument] = []
        for (i, item) in items.enumerated() {
            let p = path.index(i)
            guard let fields = reader.fields(item, at: p, known: HomeKeys.device, what: "a device mapping (with at least 'profile')") else {
                continue
            }
            var overrides = DeviceOverrides()
            if let n = fields["name"], let s = reader.string(n, at: p.key("name"), nonEmpty: true) {
                overrides.name = Located(value: s, origin: reader.origin(p.key("name"), n))
            }
            if let n = fields["identity"] { overrides.identity = parseIdentity(n, at: p.key("identity")) }
            if let n = fields["commissioning"] {
                (overrides.passcode, overrides.discriminator) = parseCommissioning(n, at: p.key("commissioning"))
            }
            if let n = fields["behaviour"] { overrides.behaviour = parseBehaviour(n, at: p.key("behaviour")) }
            if let n = fields["cloud"] { overrides.cloud = parseCloud(n, at: p.key("cloud"), known: CloudKeys.device) }
            if let n = fields["values"] { overrides.values = parseValueOverrides(n, at: p.key("values")) }
            guard let n = reader.require(fields, "profile", at: p, node: item),
                let ref = reader.string(n, at: p.key("profile"), nonEmpty: true)
            else { continue }
            out.append(
                HomeDeviceDocument(
                    origin: reader.origin(p, item),
                    profile: Located(value: ref, origin: reader.origin(p.key("profile"), n)),
                    overrides: overrides))
        }
        return out
    }

    /// `values: {1: {LevelControl: {currentLevel: 200}}}`.
    private func parseValueOverrides(_ node: YAMLNode, at path: ProfilePath) -> [ValueOverride] {
        guard let endpoints = reader.mappingEntries(node, at: path, what: "a mapping from endpoint numbers to cluster values") else {
            return []
        }
        var out: [ValueOverride] = []
        var seenEndpoints: Set<EndpointNumber> = []
        for entry in endpoints {
            guard let keyText = reader.scalarKey(entry, at: path) else { continue }
            guard case .scalar(let s) = entry.key, case .integer(let i) = s.kind, let n = i.asInt64, (0...0xFFFE).contains(n) else {
                reader.error(path.key(keyText), entry.key, "expected an endpoint number in 0...65534, got \(entry.key.shortDescription)")
                continue
            }
            let number = EndpointNumber(n)
            let ep = path.index(Int(n))
            guard seenEndpoints.insert(number).inserted else {
                reader.error(ep, entry.key, "duplicate endpoint number \(number)")
                continue
            }
            let endpoint = Located(value: number, origin: reader.origin(ep, entry.key))
            guard let clusters = reader.mappingEntries(entry.value, at: ep, what: "a mapping from cluster names to attribute values") else {
                continue
            }
            var seenClusters: Set<ClusterID> = []
            for c in clusters {
                guard let name = reader.scalarKey(c, at: ep) else { continue }
                let cp = ep.key(name)
                guard let def = clusterReference(c.key, at: cp) else { continue }
                guard seenClusters.insert(def.id).inserted else {
                    reader.error(cp, c.key, "cluster \(def.name) is given twice")
                    continue
                }
                guard let attributes = reader.mappingEntries(c.value, at: cp, what: "a mapping of attribute values") else { continue }
                let decoder = AttributeValueDecoder(reader: reader, cluster: def)
                var values: [AttributeValueDocument] = []
                for a in attributes {
                    guard let attrName = reader.scalarKey(a, at: cp) else { continue }
                    if attrName == DeviceKeys.features {
                        reader.error(cp.key(attrName), a.key, "a home cannot change a device's features; use another device profile")
                        continue
                    }
                    if let v = attributeValue(
                        a, named: attrName, in: def, decoder: decoder, at: cp, endpoint: number,
                        identityHint: path.components.dropLast().isEmpty
                            ? "identity" : ProfilePath(Array(path.components.dropLast())).key("identity").description)
                    {
                        if values.contains(where: { $0.attribute.id == v.attribute.id }) {
                            reader.error(cp.key(attrName), a.key, "attribute \(v.attribute.lowerCamelName) is given twice")
                            continue
                        }
                        values.append(v)
                    }
                }
                out.append(
                    ValueOverride(endpoint: endpoint, cluster: Located(value: def, origin: reader.origin(cp, c.key)), values: values))
            }
        }
        return out
    }
}
