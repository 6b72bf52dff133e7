// The first pass over a device profile: the YAML read into typed pieces, every name
// looked up in the model, each value remembering where it was written. Whether the
// pieces fit together (device type requirements, feature conformance, ranges that
// depend on other attributes) is the resolver's job, after a home's overrides apply.
import MatterModel
import MatterTLV

/// Keys of a device profile's top level, in documentation order.
enum DeviceKeys {
    static let top = ["kind", "name", "description", "identity", "commissioning", "behaviour", "cloud", "endpoints"]
    /// Identity keys are Basic Information attribute names (Core spec 11.1.6).
    static let identity = [
        "vendorName", "vendorID", "productName", "productID", "serialNumber",
        "hardwareVersion", "hardwareVersionString", "softwareVersion", "softwareVersionString", "uniqueID",
    ]
    static let commissioning = ["passcode", "discriminator"]
    static let behaviour = ["level", "windowCovering", "fan", "reading", "readings", "room"]
    static let behaviourRoom = ["every", "heatingRate", "coolingRate", "leakPercent"]
    static let behaviourReading = ["schedule", "randomWalk"]
    static let readingSchedule = ["points", "repeatEvery"]
    static let readingRandomWalk = ["every", "step", "min", "max"]
    static let behaviourLevel = ["defaultTransitionTime", "defaultMoveRate"]
    static let behaviourWindowCovering = ["liftSpeed", "tiltSpeed"]
    static let behaviourFan = ["acceleration"]
    static let endpoint = ["deviceTypes", "clusters", "cloudOnly", "parent", "deviceTypeRevisions", "clientClusters"]
    static let features = "features"
    /// Global attributes a clone serves as the real device did (`ServedGlobals`).
    static let served = ["revision", "featureMap", "attributeList", "acceptedCommandList", "generatedCommandList"]
    static let rawAttributes = "rawAttributes"
}

/// One `rawAttributes` entry: served as written, typed by the profile, unchecked by the model.
struct RawAttributeDocument {
    var id: AttributeID
    var value: TLVValue
    var origin: Origin
}

struct AttributeValueDocument {
    var attribute: AttributeDefinition
    var value: TLVValue
    var origin: Origin
}

struct FeatureChoice {
    var definition: FeatureDefinition
    var origin: Origin
}

struct ClusterDocument {
    var definition: ClusterDefinition
    var origin: Origin
    /// nil: features not given (the resolver picks the required ones).
    var features: Located<[FeatureChoice]>?
    /// The features list had a mistake (reported): feature-dependent checks are skipped
    /// rather than run against a guessed feature set.
    var featuresInvalid = false
    var values: [AttributeValueDocument]
    var served = ServedGlobals()
    /// Where `featureMap` was written (it and `features` exclude each other).
    var featureMapOrigin: Origin?
    var raw: [RawAttributeDocument] = []
}

struct EndpointDocument {
    var number: EndpointNumber
    var origin: Origin
    /// nil: key absent.
    var deviceTypes: [Located<DeviceTypeDefinition>]?
    /// Some entry of `deviceTypes` was reported (so an empty list is no news).
    var deviceTypesHadErrors = false
    var clusters: [ClusterDocument]
    var cloudOnly: [Located<ClusterDefinition>]
    /// The endpoint this one is a part of (a composed device's tree, Core spec 9.2.1.1).
    var parent: Located<EndpointNumber>? = nil
    /// Revisions served in the DeviceTypeList, by device type (a real device's, as dumped).
    var deviceTypeRevisions: [(type: Located<DeviceTypeDefinition>, revision: UInt16)] = []
    /// The ClientList as served; nil: the client clusters the device types require.
    var clientClusters: [ClusterID]? = nil
}

/// Behaviour settings, each optional so a home can override one of them.
struct BehaviourDocument {
    var defaultTransitionTime: Located<UInt16>?
    var defaultMoveRate: Located<UInt8>?
    var liftSpeed: Located<Double>?
    var tiltSpeed: Located<Double>?
    var fanAcceleration: Located<Double>?
    var reading: Located<DeviceBehaviour.Reading>?
    /// Per measurement cluster (by name), for a device with several: each on its own, so a
    /// home can change one.
    var readings: [String: Located<DeviceBehaviour.Reading>] = [:]
    /// Each room setting on its own, so a home can change one.
    var room: [String: Located<Double>] = [:]

    /// `other`'s settings win where given.
    func overlaid(with other: BehaviourDocument) -> BehaviourDocument {
        BehaviourDocument(
            defaultTransitionTime: other.defaultTransitionTime ?? defaultTransitionTime,
            defaultMoveRate: other.defaultMoveRate ?? defaultMoveRate,
            liftSpeed: other.liftSpeed ?? liftSpeed,
            tiltSpeed: other.tiltSpeed ?? tiltSpeed,
            fanAcceleration: other.fanAcceleration ?? fanAcceleration,
            reading: other.reading ?? reading,
            readings: readings.merging(other.readings) { _, theirs in theirs },
            room: room.merging(other.room) { _, theirs in theirs })
    }
}

/// Attribute values a home sets on one cluster of a referenced device.
struct ValueOverride {
    var endpoint: Located<EndpointNumber>
    var cluster: Located<ClusterDefinition>
    var values: [AttributeValueDocument]
}

/// What a home changes about a device profile; every field optional.
struct DeviceOverrides {
    var name: Located<String>?
    var identity: [String: AttributeValueDocument] = [:]
    var passcode: Located<UInt32>?
    var discriminator: Located<UInt16>?
    var behaviour = BehaviourDocument()
    var values: [ValueOverride] = []
    /// The home entry's `cloud:` block, and the home's own (for all its devices).
    var cloud: CloudDocument?
    var homeCloud: CloudDocument?
}

struct DeviceDocument {
    var file: String
    var rootOrigin: Origin
    var name: Located<String>?
    /// Keyed by identity key ("vendorName").
    var identity: [String: AttributeValueDocument] = [:]
    /// Set when `identity` was a mapping (so a missing serial number is worth reporting).
    var identityOrigin: Origin?
    /// Identity keys present in the file, even those whose value was rejected.
    var identityKeysWritten: Set<String> = []
    var passcode: Located<UInt32>?
    var discriminator: Located<UInt16>?
    var behaviour = BehaviourDocument()
    var cloud: CloudDocument?
    var endpoints: [EndpointDocument] = []
}

/// Reads the pieces shared by device profiles and homes' overrides.
struct DocumentParser {
    let model: MatterModel
    let reader: DocumentReader

    var basicInformation: ClusterDefinition? { model.cluster(named: "BasicInformation") }

    // MARK: Device profile

    func parseDevice(_ root: YAMLNode) -> DeviceDocument {
        var doc = DeviceDocument(file: reader.file, rootOrigin: reader.origin(.root, root))
        guard let top = reader.fields(root, at: .root, known: DeviceKeys.top, what: "a device profile (a mapping)") else {
            return doc
        }
        if let kind = top["kind"] { checkKind(kind, expected: "device") }
        if let node = top["name"], let s = reader.string(node, at: "name", nonEmpty: true) {
            doc.name = Located(value: s, origin: reader.origin("name", node))
        }
        if let node = top["description"] { _ = reader.string(node, at: "description") }
        if let node = reader.require(top, "identity", at: .root, node: root) {
            if case .mapping(let entries, _) = node {
                doc.identityOrigin = reader.origin("identity", node)
                doc.identityKeysWritten = Set(entries.compactMap(\.keyText))
            }
            doc.identity = parseIdentity(node, at: "identity")
        }
        if let node = top["commissioning"] {
            (doc.passcode, doc.discriminator) = parseCommissioning(node, at: "commissioning")
        }
        if let node = top["behaviour"] {
            doc.behaviour = parseBehaviour(node, at: "behaviour")
        }
        if let node = top["cloud"] {
            doc.cloud = parseCloud(node, at: "cloud", known: CloudKeys.device)
        }
        if let node = reader.require(top, "endpoints", at: .root, node: root) {
            doc.endpoints = parseEndpoints(node, at: "endpoints")
        }
        return doc
    }

    func checkKind(_ node: YAMLNode, expected: String) {
        guard let text = reader.string(node, at: "kind") else { return }
        if text != expected {
            reader.error("kind", node, "expected '\(expected)' here, got \"\(text)\"")
        }
    }

    func parseIdentity(_ node: YAMLNode, at path: ProfilePath) -> [String: AttributeValueDocument] {
        guard let fields = reader.fields(node, at: path, known: DeviceKeys.identity, what: "an identity mapping") else { return [:] }
        guard let basic = basicInformation else {
            reader.error(path, node, "the data model has no BasicInformation cluster to hold the identity")
            return [:]
        }
        let decoder = AttributeValueDecoder(reader: reader, cluster: basic)
        var out: [String: AttributeValueDocument] = [:]
        for (key, entry) in fields.entries {
            guard let attribute = basic.attribute(named: key) else {
                reader.error(path.key(key), entry.key, "the data model's BasicInformation cluster has no attribute '\(key)'")
                continue
            }
            let p = path.key(key)
            if let v = decoder.decode(entry.value, type: attribute.type, nullable: attribute.nullable, at: p) {
                out[key] = AttributeValueDocument(attribute: attribute, value: v, origin: reader.origin(p, entry.value))
            }
        }
        return out
    }

    func parseCommissioning(_ node: YAMLNode, at path: ProfilePath) -> (Located<UInt32>?, Located<UInt16>?) {
        guard let fields = reader.fields(node, at: path, known: DeviceKeys.commissioning, what: "a commissioning mapping") else {
            return (nil, nil)
        }
        var passcode: Located<UInt32>?
        var discriminator: Located<UInt16>?
        if let n = fields["passcode"] {
            let p = path.key("passcode")
            if case .scalar(let s) = n, case .integer(let i) = s.kind {
                if let v = i.asInt64, CommissioningCodes.passcodeProblem(v) == nil {
                    passcode = Located(value: UInt32(v), origin: reader.origin(p, n))
                } else {
                    reader.error(
                        p, n,
                        CommissioningCodes.passcodeProblem(i.asInt64 ?? Int64.max)
                            ?? "expected a setup passcode in 1...99999998, got \(i)")
                }
            } else {
                reader.error(p, n, "expected a setup passcode (an integer in 1...99999998), got \(n.shortDescription)")
            }
        }
        if let n = fields["discriminator"] {
            let p = path.key("discriminator")
            if let v = reader.integer(n, at: p, in: 0...4095) {
                discriminator = Located(value: UInt16(v), origin: reader.origin(p, n))
            }
        }
        return (passcode, discriminator)
    }

    func parseBehaviour(_ node: YAMLNode, at path: ProfilePath) -> BehaviourDocument {
        var out = BehaviourDocument()
        guard let fields = reader.fields(node, at: path, known: DeviceKeys.behaviour, what: "a behaviour mapping") else { return out }
        if let n = fields["level"] {
            let p = path.key("level")
            if let level = reader.fields(n, at: p, known: DeviceKeys.behaviourLevel, what: "a level behaviour mapping") {
                if let v = level["defaultTransitionTime"] {
                    let q = p.key("defaultTransitionTime")
                    if let t = reader.integer(v, at: q, in: 0...65534) {
                        out.defaultTransitionTime = Located(value: UInt16(t), origin: reader.origin(q, v))
                    }
                }
                if let v = level["defaultMoveRate"] {
                    let q = p.key("defaultMoveRate")
                    if let r = reader.integer(v, at: q, in: 1...254) {
                        out.defaultMoveRate = Located(value: UInt8(r), origin: reader.origin(q, v))
                    }
                }
            }
        }
        if let n = fields["windowCovering"] {
            let p = path.key("windowCovering")
            if let wc = reader.fields(n, at: p, known: DeviceKeys.behaviourWindowCovering, what: "a window covering behaviour mapping") {
                for key in DeviceKeys.behaviourWindowCovering {
                    guard let v = wc[key] else { continue }
                    let q = p.key(key)
                    // Percent of full travel per second: 0.1 (16 minutes end to end) to 100 (one second).
                    guard let speed = reader.number(v, at: q, in: 0.1...100, unit: " (percent per second)") else { continue }
                    let located = Located(value: speed, origin: reader.origin(q, v))
                    if key == "liftSpeed" { out.liftSpeed = located } else { out.tiltSpeed = located }
                }
            }
        }
        if let n = fields["fan"] {
            let p = path.key("fan")
            if let fan = reader.fields(n, at: p, known: DeviceKeys.behaviourFan, what: "a fan behaviour mapping"),
                let v = fan["acceleration"]
            {
                let q = p.key("acceleration")
                // Percent of full speed per second: 1 (100 s from standstill to full) to 100 (one second).
                if let rate = reader.number(v, at: q, in: 1...100, unit: " (percent of full speed per second)") {
                    out.fanAcceleration = Located(value: rate, origin: reader.origin(q, v))
                }
            }
        }
        if let n = fields["room"] {
            let p = path.key("room")
            if let room = reader.fields(n, at: p, known: DeviceKeys.behaviourRoom, what: "a room behaviour mapping") {
                let ranges: [String: (ClosedRange<Double>, String)] = [
                    "every": (1...3_600, " (seconds)"), "heatingRate": (0...10, " (°C per step)"),
                    "coolingRate": (0...10, " (°C per step)"),
                    "leakPercent": (0...100, " (percent of the outdoor gap per step)"),
                ]
                for key in DeviceKeys.behaviourRoom {
                    guard let v = room[key], let (range, unit) = ranges[key] else { continue }
                    let q = p.key(key)
                    if let number = reader.number(v, at: q, in: range, unit: unit) {
                        out.room[key] = Located(value: number, origin: reader.origin(q, v))
                    }
                }
            }
        }
        if let n = fields["reading"] {
            let p = path.key("reading")
            if let reading = parseReading(n, at: p) { out.reading = Located(value: reading, origin: reader.origin(p, n)) }
        }
        if let n = fields["readings"],
            let entries = reader.mappingEntries(n, at: path.key("readings"), what: "a mapping of cluster names to readings")
        {
            for entry in entries {
                guard let cluster = reader.scalarKey(entry, at: path.key("readings")) else { continue }
                let p = path.key("readings").key(cluster)
                if let reading = parseReading(entry.value, at: p) {
                    out.readings[cluster] = Located(value: reading, origin: reader.origin(p, entry.key))
                }
            }
        }
        return out
    }

    /// What a reading's values may be, in its cluster's unit (°C, %, lux, kPa, m³/h, ppm, µg/m³,
    /// ppb); the cluster keeps them within what its sensor measures.
    static let readingValues = -1_000_000.0...1_000_000.0

    /// `reading: {schedule: {points: [[SECONDS, VALUE], …], repeatEvery: SECONDS}}` or
    /// `reading: {randomWalk: {every: SECONDS, step: S, min: LOW, max: HIGH}}`.
    func parseReading(_ node: YAMLNode, at path: ProfilePath) -> DeviceBehaviour.Reading? {
        guard let fields = reader.fields(node, at: path, known: DeviceKeys.behaviourReading, what: "a reading mapping") else { return nil }
        guard fields.entries.count == 1 else {
            reader.error(path, node, "expected one of schedule or randomWalk, got \(fields.entries.count == 0 ? "neither" : "both")")
            return nil
        }
        let day = 0.0...(366 * 86_400)
        if let n = fields["schedule"] {
            let p = path.key("schedule")
            guard let schedule = reader.fields(n, at: p, known: DeviceKeys.readingSchedule, what: "a schedule mapping"),
                let pointsNode = reader.require(schedule, "points", at: p, node: n),
                let items = reader.list(pointsNode, at: p.key("points"), what: "a list of [seconds, value] pairs")
            else { return nil }
            var points: [DeviceBehaviour.Reading.SchedulePoint] = []
            for (index, item) in items.enumerated() {
                let q = p.key("points").index(index)
                guard case .sequence(let pair, _) = item, pair.count == 2 else {
                    reader.error(q, item, "expected a [seconds, value] pair, got \(item.shortDescription)")
                    continue
                }
                guard let at = reader.number(pair[0], at: q.index(0), in: day, unit: " (seconds since the node started)"),
                    let value = reader.number(pair[1], at: q.index(1), in: Self.readingValues)
                else { continue }
                points.append(.init(at: at, value: value))
            }
            guard !points.isEmpty else {
                if items.isEmpty {
                    reader.error(p.key("points"), pointsNode, "expected at least one [seconds, value] pair, got an empty list")
                }
                return nil
            }
            var repeatEvery: Double?
            if let r = schedule["repeatEvery"] {
                guard let every = reader.number(r, at: p.key("repeatEvery"), in: 1...day.upperBound, unit: " (seconds)") else { return nil }
                if let late = points.first(where: { $0.at >= every }) {
                    reader.error(p.key("repeatEvery"), r, "expected more than the last point's time (\(late.at) s), got \(every)")
                    return nil
                }
                repeatEvery = every
            }
            return .schedule(points: points, repeatEvery: repeatEvery)
        }
        if let n = fields["randomWalk"] {
            let p = path.key("randomWalk")
            guard let walk = reader.fields(n, at: p, known: DeviceKeys.readingRandomWalk, what: "a randomWalk mapping") else { return nil }
            var numbers: [String: Double] = [:]
            for (key, range, unit) in [
                ("every", 0.1...day.upperBound, " (seconds)"), ("step", 0.0...Self.readingValues.upperBound, ""),
                ("min", Self.readingValues, ""), ("max", Self.readingValues, ""),
            ] {
                guard let v = reader.require(walk, key, at: p, node: n),
                    let number = reader.number(v, at: p.key(key), in: range, unit: unit)
                else { return nil }
                numbers[key] = number
            }
            guard let every = numbers["every"], let step = numbers["step"], let low = numbers["min"], let high = numbers["max"] else {
                return nil
            }
            guard low <= high else {
                reader.error(p.key("max"), walk["max"], "expected at least min (\(low)), got \(high)")
                return nil
            }
            return .randomWalk(every: every, step: step, min: low, max: high)
        }
        return nil
    }

    // MARK: Endpoints

    func parseEndpoints(_ node: YAMLNode, at path: ProfilePath) -> [EndpointDocument] {
        guard case .mapping(let entries, _) = node else {
            reader.error(
                path, node,
                "expected a mapping from endpoint numbers to endpoints (like `1: {deviceTypes: [OnOffLight]}`), got \(node.shortDescription)"
            )
            return []
        }
        var out: [EndpointDocument] = []
        var seen: [EndpointNumber: SourceMark] = [:]
        for entry in entries {
            guard let keyText = reader.scalarKey(entry, at: path) else { continue }
            guard case .scalar(let s) = entry.key, case .integer(let i) = s.kind, let n = i.asInt64, (0...0xFFFE).contains(n) else {
                reader.error(path.key(keyText), entry.key, "expected an endpoint number in 0...65534, got \(entry.key.shortDescription)")
                continue
            }
            let number = EndpointNumber(n)
            let p = path.index(Int(n))
            if let first = seen[number] {
                reader.error(p, entry.key, "duplicate endpoint number \(number) (already defined at \(first))")
                continue
            }
            seen[number] = entry.key.mark
            out.append(parseEndpoint(entry.value, number: number, at: p))
        }
        if out.isEmpty, entries.isEmpty {
            reader.error(path, node, "expected at least one endpoint")
        }
        return out
    }

    func parseEndpoint(_ node: YAMLNode, number: EndpointNumber, at path: ProfilePath) -> EndpointDocument {
        var doc = EndpointDocument(number: number, origin: reader.origin(path, node), deviceTypes: nil, clusters: [], cloudOnly: [])
        guard let fields = reader.fields(node, at: path, known: DeviceKeys.endpoint, what: "an endpoint mapping") else { return doc }
        if let n = fields["deviceTypes"] {
            let before = reader.sink.count
            doc.deviceTypes = parseDeviceTypes(n, at: path.key("deviceTypes"))
            doc.deviceTypesHadErrors = reader.sink.count != before
        }
        if let n = fields["clusters"] {
            doc.clusters = parseClusters(n, at: path.key("clusters"), endpoint: number)
        }
        if let n = fields["parent"] {
            let p = path.key("parent")
            if let v = reader.integer(n, at: p, in: 1...65534) {
                if v == Int64(number) {
                    reader.error(p, n, "an endpoint cannot be a part of itself")
                } else {
                    doc.parent = Located(value: EndpointNumber(v), origin: reader.origin(p, n))
                }
            }
        }
        if let n = fields["deviceTypeRevisions"] {
            let p = path.key("deviceTypeRevisions")
            for entry in reader.mappingEntries(n, at: p, what: "a mapping of device type names to revisions") ?? [] {
                guard let key = reader.scalarKey(entry, at: p), let type = deviceTypeReference(entry.key, at: p.key(key)),
                    let revision = reader.integer(entry.value, at: p.key(key), in: 1...65535)
                else { continue }
                doc.deviceTypeRevisions.append((Located(value: type, origin: reader.origin(p.key(key), entry.key)), UInt16(revision)))
            }
        }
        if let n = fields["clientClusters"] {
            let p = path.key("clientClusters")
            if let items = reader.list(n, at: p, what: "a list of cluster IDs or names") {
                var ids: [ClusterID] = []
                for (i, item) in items.enumerated() {
                    if case .scalar(let s) = item, case .integer(let v) = s.kind {
                        guard let id = v.asUInt64.flatMap({ UInt32(exactly: $0) }) else {
                            reader.error(p.index(i), item, "expected a 32-bit cluster ID, got \(s.text)")
                            continue
                        }
                        ids.append(ClusterID(id))
                    } else if let def = clusterReference(item, at: p.index(i)) {
                        ids.append(def.id)
                    }
                }
                doc.clientClusters = ids
            }
        }
        if let n = fields["cloudOnly"] {
            let p = path.key("cloudOnly")
            if let items = reader.list(n, at: p, what: "a list of cluster names") {
                var seen: Set<ClusterID> = []
                for (i, item) in items.enumerated() {
                    guard let def = clusterReference(item, at: p.index(i)) else { continue }
                    guard seen.insert(def.id).inserted else {
                        reader.error(p.index(i), item, "cluster \(def.name) is listed twice")
                        continue
                    }
                    doc.cloudOnly.append(Located(value: def, origin: reader.origin(p.index(i), item)))
                }
            }
        }
        return doc
    }

    func parseDeviceTypes(_ node: YAMLNode, at path: ProfilePath) -> [Located<DeviceTypeDefinition>] {
        guard let items = reader.list(node, at: path, what: "a list of device type names") else { return [] }
        var out: [Located<DeviceTypeDefinition>] = []
        for (i, item) in items.enumerated() {
            let p = path.index(i)
            guard let def = deviceTypeReference(item, at: p) else { continue }
            if out.contains(where: { $0.value.id == def.id }) {
                reader.error(p, item, "device type \(def.name) is listed twice")
                continue
            }
            out.append(Located(value: def, origin: reader.origin(p, item)))
        }
        return out
    }

    /// A device type named by its spec name ("OnOffLight") or numeric ID.
    func deviceTypeReference(_ item: YAMLNode, at p: ProfilePath) -> DeviceTypeDefinition? {
        guard case .scalar(let s) = item, s.kind != .null else {
            reader.error(p, item, "expected a device type name or ID, got \(item.shortDescription)")
            return nil
        }
        let def: DeviceTypeDefinition?
        if case .integer(let n) = s.kind {
            def = n.asUInt64.flatMap { UInt32(exactly: $0) }.flatMap { model.deviceType(DeviceTypeID($0)) }
            if def == nil { reader.error(p, item, "unknown device type ID \(s.text)") }
        } else {
            def = model.deviceType(named: s.text)
            if def == nil {
                reader.error(p, item, unknownNameMessage("device type", s.text, candidates: model.deviceTypeNames))
            }
        }
        return def
    }

    /// A cluster named by its spec name ("LevelControl", "levelControl") or numeric ID.
    func clusterReference(_ node: YAMLNode, at path: ProfilePath) -> ClusterDefinition? {
        guard case .scalar(let s) = node, s.kind != .null else {
            reader.error(path, node, "expected a cluster name or ID, got \(node.shortDescription)")
            return nil
        }
        return cluster(named: s, at: path, node: node)
    }

    private func cluster(named s: YAMLScalar, at path: ProfilePath, node: YAMLNode) -> ClusterDefinition? {
        if case .integer(let n) = s.kind {
            if let id = n.asUInt64.flatMap({ UInt32(exactly: $0) }) {
                if let def = model.cluster(ClusterID(id)) { return def }
                // A vendor's own cluster (a clone of a real device): served from `rawAttributes`.
                if ClusterID(id).isManufacturerSpecific {
                    return .manufacturerSpecific(ClusterID(id), revision: 1, globalsFrom: model.cluster(named: "Descriptor"))
                }
            }
            reader.error(path, node, "unknown cluster ID \(s.text)")
            return nil
        }
        if let def = model.cluster(named: s.text) { return def }
        reader.error(path, node, unknownNameMessage("cluster", s.text, candidates: model.clusterNames))
        return nil
    }

    func parseClusters(_ node: YAMLNode, at path: ProfilePath, endpoint: EndpointNumber) -> [ClusterDocument] {
        guard let entries = reader.mappingEntries(node, at: path, what: "a mapping from cluster names to their settings") else { return [] }
        var out: [ClusterDocument] = []
        for entry in entries {
            guard let key = reader.scalarKey(entry, at: path), case .scalar(let s) = entry.key else { continue }
            let p = path.key(key)
            guard let def = cluster(named: s, at: p, node: entry.key) else { continue }
            if let other = out.first(where: { $0.definition.id == def.id }) {
                reader.error(
                    p, entry.key,
                    "cluster \(def.name) is given twice (also as '\(other.origin.path.components.last.map(Self.text) ?? def.name)')")
                continue
            }
            var doc = ClusterDocument(definition: def, origin: reader.origin(p, entry.key), features: nil, values: [])
            guard let settings = reader.mappingEntries(entry.value, at: p, what: "a mapping of features and attribute values (or nothing)")
            else {
                out.append(doc)
                continue
            }
            let decoder = AttributeValueDecoder(reader: reader, cluster: def)
            for setting in settings {
                guard let name = reader.scalarKey(setting, at: p) else { continue }
                if name == DeviceKeys.features {
                    doc.features = parseFeatures(setting.value, of: def, at: p.key(name))
                    doc.featuresInvalid = doc.features == nil
                    continue
                }
                if DeviceKeys.served.contains(name) {
                    parseServed(setting, named: name, into: &doc, at: p.key(name))
                    continue
                }
                if name == DeviceKeys.rawAttributes {
                    doc.raw = parseRawAttributes(setting.value, of: def, at: p.key(name))
                    continue
                }
                if let v = attributeValue(
                    setting, named: name, in: def, decoder: decoder, at: p, endpoint: endpoint, identityHint: "identity")
                {
                    if doc.values.contains(where: { $0.attribute.id == v.attribute.id }) {
                        reader.error(p.key(name), setting.key, "attribute \(v.attribute.lowerCamelName) is given twice")
                        continue
                    }
                    doc.values.append(v)
                }
            }
            out.append(doc)
        }
        return out
    }

    private static func text(_ c: ProfilePath.Component) -> String {
        switch c {
        case .key(let k): k
        case .index(let i): String(i)
        }
    }

    /// `revision`, `featureMap` and the three lists, as a real device serves them.
    func parseServed(_ entry: YAMLEntry, named name: String, into doc: inout ClusterDocument, at p: ProfilePath) {
        let node = entry.value
        switch name {
        case "revision":
            if let v = reader.integer(node, at: p, in: 1...0xFFFF) { doc.served.revision = UInt16(v) }
        case "featureMap":
            if let v = reader.integer(node, at: p, in: 0...0xFFFF_FFFF) {
                doc.served.featureMap = UInt32(v)
                doc.featureMapOrigin = reader.origin(p, node)
            }
        default:
            guard case .sequence(let items, _) = node else {
                reader.error(p, node, "expected a list of IDs, got \(node.shortDescription)")
                return
            }
            // Served as written: a real device's list may repeat an ID, and a clone keeps that.
            var ids: [UInt32] = []
            for (i, item) in items.enumerated() {
                guard let v = reader.integer(item, at: p.index(i), in: 0...0xFFFF_FFFF) else { continue }
                ids.append(UInt32(v))
            }
            switch name {
            case "attributeList": doc.served.attributeList = ids
            case "acceptedCommandList": doc.served.acceptedCommandList = ids
            default: doc.served.generatedCommandList = ids
            }
        }
    }

    /// `rawAttributes: {ID: {type: T, value: V}}`.
    func parseRawAttributes(_ node: YAMLNode, of cluster: ClusterDefinition, at path: ProfilePath) -> [RawAttributeDocument] {
        guard let entries = reader.mappingEntries(node, at: path, what: "a mapping from attribute IDs to {type, value}") else { return [] }
        let decoder = RawAttributeDecoder(reader: reader)
        var out: [RawAttributeDocument] = []
        for entry in entries {
            guard let key = reader.scalarKey(entry, at: path) else { continue }
            let p = path.key(key)
            guard case .scalar(let s) = entry.key, case .integer(let i) = s.kind, let raw = i.asUInt64.flatMap({ UInt32(exactly: $0) }) else {
                reader.error(p, entry.key, "expected an attribute ID (an integer), got \(entry.key.shortDescription)")
                continue
            }
            let id = AttributeID(raw)
            if cluster.attribute(id)?.isGlobal == true || IDSpace.AttributeSuffix.global.contains(IDSpace.suffix(raw)) {
                reader.error(p, entry.key, "global attributes are served from revision, featureMap and the lists, not rawAttributes")
                continue
            }
            if out.contains(where: { $0.id == id }) {
                reader.error(p, entry.key, "attribute \(key) is given twice")
                continue
            }
            if let v = decoder.decodeTyped(entry.value, at: p) {
                out.append(RawAttributeDocument(id: id, value: v, origin: reader.origin(p, entry.key)))
            }
        }
        return out
    }

    func parseFeatures(_ node: YAMLNode, of cluster: ClusterDefinition, at path: ProfilePath) -> Located<[FeatureChoice]>? {
        guard let items = reader.list(node, at: path, what: "a list of feature names or codes") else { return nil }
        var out: [FeatureChoice] = []
        var ok = true
        for (i, item) in items.enumerated() {
            let p = path.index(i)
            guard case .scalar(let s) = item, s.kind == .string, let feature = cluster.feature(named: s.text) else {
                let text = item.keyLikeText ?? item.shortDescription
                if cluster.features.isEmpty {
                    reader.error(p, item, "cluster \(cluster.name) defines no features")
                } else {
                    let candidates = cluster.features.map(\.name) + cluster.features.map(\.code)
                    let listed = cluster.features.map { "\($0.name) (\($0.code))" }.joined(separator: ", ")
                    let base = unknownNameMessage("feature", text, candidates: candidates, listLimit: 0)
                    reader.error(
                        p, item, base + (closestMatch(to: text, in: candidates) == nil ? "; \(cluster.name) features are: \(listed)" : ""))
                }
                ok = false
                continue
            }
            if out.contains(where: { $0.definition.code == feature.code }) {
                reader.error(p, item, "feature \(feature.name) is listed twice")
                continue
            }
            out.append(FeatureChoice(definition: feature, origin: reader.origin(p, item)))
        }
        // A feature list with a mistake is not used, so no knock-on errors follow from it.
        return ok ? Located(value: out, origin: reader.origin(path, node)) : nil
    }

    /// One `attributeName: value` entry of a cluster mapping.
    func attributeValue(
        _ entry: YAMLEntry, named name: String, in cluster: ClusterDefinition, decoder: AttributeValueDecoder,
        at clusterPath: ProfilePath, endpoint: EndpointNumber, identityHint: String
    ) -> AttributeValueDocument? {
        let p = clusterPath.key(name)
        var attribute: AttributeDefinition?
        if case .scalar(let s) = entry.key, case .integer(let n) = s.kind {
            attribute = n.asUInt64.flatMap { UInt32(exactly: $0) }.flatMap { cluster.attribute(AttributeID($0)) }
            if attribute == nil {
                reader.error(p, entry.key, "cluster \(cluster.name) has no attribute with ID \(s.text)")
                return nil
            }
        } else {
            attribute = cluster.attribute(named: name)
        }
        guard let attribute else {
            let candidates = [DeviceKeys.features] + cluster.attributes.map(\.lowerCamelName)
            reader.error(p, entry.key, unknownNameMessage("attribute of \(cluster.name)", name, candidates: candidates, listLimit: 0))
            return nil
        }
        if attribute.isGlobal {
            // featureMap and the three lists are keys of their own (served as written).
            let hint = attribute.id == Clusters.Global.Attribute.clusterRevision ? "; give the served one as 'revision'" : ""
            reader.error(p, entry.key, "\(attribute.lowerCamelName) is derived from the model and the profile, not set directly\(hint)")
            return nil
        }
        if cluster.id == basicInformation?.id, DeviceKeys.identity.contains(attribute.lowerCamelName) {
            reader.error(
                p, entry.key, "set \(attribute.lowerCamelName) under \(identityHint).\(attribute.lowerCamelName), not as a cluster value")
            return nil
        }
        guard let value = decoder.decode(entry.value, type: attribute.type, nullable: attribute.nullable, at: p) else { return nil }
        return AttributeValueDocument(attribute: attribute, value: value, origin: reader.origin(p, entry.value))
    }
}
