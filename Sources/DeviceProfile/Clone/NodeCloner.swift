// `matter-sim clone`: a node dump becomes a device profile that serves the same node.
// Endpoints, device types, each cluster's revision, FeatureMap and the three lists and
// every attribute value are kept; values the model types are written by their type, the
// rest (manufacturer-specific, or against the model's constraints) as raw TLV with the type
// stated. What a device cannot share (fabrics, credentials, network state, serial and unique
// ID) the clone regenerates, and the profile says so at its top.
import MatterModel
import MatterTLV

public struct NodeCloner: Sendable {
    public struct Options: Sendable {
        /// The clone's serial number; nil derives one from the dump.
        public var serial: String?
        /// Drop serials, unique IDs, network names and location.
        public var anonymize: Bool
        /// The dump's file, named in the profile's header.
        public var source: String
        public init(serial: String? = nil, anonymize: Bool = false, source: String = "") {
            self.serial = serial
            self.anonymize = anonymize
            self.source = source
        }
    }

    public struct Result: Sendable {
        public var yaml: String
        /// The profile, loaded and validated.
        public var profile: ResolvedDeviceProfile
        /// Paths the clone did not copy, with why.
        public var regenerated: [String]
        public var rawAttributes: Int
    }

    let model: MatterModel
    private typealias Global = Clusters.Global.Attribute

    public init(model: MatterModel = .standard) { self.model = model }

    /// Root clusters whose state is the node's own (fabrics, ACL, credentials, commissioning).
    static let regeneratedRootClusters: Set<UInt32> = Set(
        [Clusters.AccessControl.id, Clusters.GeneralCommissioning.id, Clusters.NetworkCommissioning.id,
         Clusters.GeneralDiagnostics.id, Clusters.AdministratorCommissioning.id, Clusters.OperationalCredentials.id,
         Clusters.GroupKeyManagement.id].map(\.rawValue))
    /// Network diagnostics (Thread, Wi-Fi, Ethernet): present, with the node's own live values.
    static let networkDiagnostics: Set<UInt32> = Set(
        [Clusters.ThreadNetworkDiagnostics.id, Clusters.WiFiNetworkDiagnostics.id, Clusters.EthernetNetworkDiagnostics.id].map(\.rawValue))
    static let descriptor = Clusters.Descriptor.id.rawValue
    static let basicInformation = Clusters.BasicInformation.id.rawValue
    static let bridgedBasicInformation = Clusters.BridgedDeviceBasicInformation.id.rawValue
    /// BasicInformation attribute ID → identity key.
    static let identityKeys: [UInt32: String] = [
        1: "vendorName", 2: "vendorID", 3: "productName", 4: "productID", 7: "hardwareVersion", 8: "hardwareVersionString",
        9: "softwareVersion", 10: "softwareVersionString",
    ]
    static let serialNumber: UInt32 = 15
    static let uniqueID: UInt32 = 18
    static let location: UInt32 = 6
    static let nodeLabel: UInt32 = 5

    /// The clone of `dump`; throws when the dump is not one or a value contradicts its model type.
    public func clone(_ dump: NodeDump, options: Options) throws(CloneError) -> Result {
        var forcedRaw: Set<AttributePath> = []
        // A value the model's checks reject in view of the whole profile is served raw; a few
        // rounds settle it (each round only adds to the raw set).
        for _ in 0..<4 {
            let draft = try write(dump, options: options, forcedRaw: forcedRaw)
            let file = options.source.isEmpty ? "clone.yaml" : options.source
            do {
                let profile = try ProfileLoader(model: model).loadDevice(yaml: draft.yaml, file: file)
                return Result(yaml: draft.yaml, profile: profile, regenerated: draft.regenerated, rawAttributes: draft.rawCount)
            } catch {
                let movable = error.diagnostics.compactMap { draft.lines[$0.path.description] }
                guard !movable.isEmpty, movable.count == error.diagnostics.count, !Set(movable).isSubset(of: forcedRaw) else {
                    throw CloneError(path: file, message: "the clone does not validate:\n" + error.description)
                }
                forcedRaw.formUnion(movable)
            }
        }
        throw CloneError(path: options.source, message: "the clone does not validate after moving rejected values to rawAttributes")
    }

    struct Draft {
        var yaml: String
        var regenerated: [String]
        var rawCount: Int
        /// Profile path of each value line → the dumped attribute.
        var lines: [String: AttributePath]
    }

    private func write(_ dump: NodeDump, options: Options, forcedRaw: Set<AttributePath>) throws(CloneError) -> Draft {
        let file = options.source.isEmpty ? "dump" : options.source
        guard dump.clusters(on: 0).contains(ClusterID(Self.basicInformation)), dump.value(0, Self.basicInformation, 2) != nil,
            dump.value(0, Self.basicInformation, 4) != nil
        else {
            throw CloneError(path: "\(file): attributes[\"0/40/…\"]", message: "missing attributes: expected endpoint 0's Basic Information (VendorID 0/40/2, ProductID 0/40/4)")
        }
        var regenerated: [String] = []
        var lines: [String: AttributePath] = [:]
        var rawCount = 0
        var out: [String] = []

        // Identity.
        let basic = model.cluster(ClusterID(Self.basicInformation))
        var identity: [String] = []
        let originalSerial = dump.value(0, Self.basicInformation, Self.serialNumber).flatMap { if case .string(let s) = $0 { s } else { nil } } ?? ""
        let vendor = dump.value(0, Self.basicInformation, 2)?.integer?.magnitude ?? 0
        let product = dump.value(0, Self.basicInformation, 4)?.integer?.magnitude ?? 0
        let serial = options.serial ?? "CLONE-" + String(fnv1a64("clone:\(vendor):\(product):\(options.anonymize ? "" : originalSerial)") & 0xFFFF_FFFF, radix: 16, uppercase: true)
        identity.append("  serialNumber: \(ProfileYAML.quoted(serial))")
        regenerated.append("0/40/15 SerialNumber (\(options.serial == nil ? "derived" : "--serial")), 0/40/18 UniqueID (derived from the serial)")
        for (id, key) in Self.identityKeys.sorted(by: { $0.key < $1.key }) {
            guard let json = dump.value(0, Self.basicInformation, id), let basic, let attribute = basic.attribute(AttributeID(id)) else { continue }
            let value = try decode(json, attribute: attribute, cluster: basic, at: AttributePath(endpoint: 0, cluster: ClusterID(Self.basicInformation), attribute: AttributeID(id)), file: file)
            if let violation = basic.validate(value, for: attribute) {
                regenerated.append("0/40/\(id) \(attribute.name): the dumped value breaks the model (\(violation)); the default is served")
                continue
            }
            identity.append("  \(key): " + ProfileYAML.value(attribute.type.encoding(value), type: attribute.type, cluster: basic))
        }
        let productName = dump.value(0, Self.basicInformation, 3).flatMap { if case .string(let s) = $0 { s } else { nil } }

        out.append("# Cloned by `matter-sim clone` from \(options.source.isEmpty ? "a node dump" : options.source) (\(dump.format.rawValue)).")
        if options.anonymize { out.append("# Anonymized: serial numbers, unique IDs, network names and location dropped.") }
        out.append("name: \(ProfileYAML.quoted(productName.map { "\($0) (clone)" } ?? "Cloned device"))")
        out.append("identity:")
        out += identity
        out.append("endpoints:")

        for endpoint in dump.endpoints {
            let path = "endpoints[\(endpoint)]"
            var types: [String] = []
            var revisions: [String] = []
            if case .array(let entries)? = dump.value(endpoint, Self.descriptor, 0) {
                for entry in entries {
                    guard let id = entry["0"]?.integer ?? entry["deviceType"]?.integer, !id.negative, let raw = UInt32(exactly: id.magnitude) else {
                        throw CloneError(path: "\(file): attributes[\"\(endpoint)/29/0\"]", message: "expected DeviceTypeList entries {\"0\": device type ID, \"1\": revision}, got \(entry.kind)")
                    }
                    if let def = model.deviceType(DeviceTypeID(raw)) {
                        types.append(def.name)
                        // The revision as served, where it is not the model's.
                        if let r = entry["1"]?.integer ?? entry["revision"]?.integer, !r.negative, let revision = UInt16(exactly: r.magnitude),
                            revision >= 1, revision != def.revision
                        {
                            revisions.append("\(def.name): \(revision)")
                        }
                    } else {
                        regenerated.append("\(endpoint)/29/0 device type \(ProfileYAML.hexID(raw)): unknown to the model, left out")
                    }
                }
            }
            guard endpoint == 0 || !types.isEmpty else {
                throw CloneError(path: "\(file): attributes[\"\(endpoint)/29/0\"]", message: "missing attributes: expected endpoint \(endpoint)'s Descriptor DeviceTypeList with a device type the model knows")
            }
            out.append("  \(endpoint):")
            if !types.isEmpty { out.append("    deviceTypes: [\(types.joined(separator: ", "))]") }
            if !revisions.isEmpty { out.append("    deviceTypeRevisions: {\(revisions.joined(separator: ", "))}") }
            if let parent = Self.parent(of: endpoint, in: dump) { out.append("    parent: \(parent)") }
            if case .array(let ids)? = dump.value(endpoint, Self.descriptor, Clusters.Descriptor.Attribute.clientList.rawValue) {
                let clients = ids.compactMap { $0.integer.flatMap { $0.negative ? nil : UInt32(exactly: $0.magnitude) } }
                out.append("    clientClusters: \(ProfileYAML.idList(clients))")
            }
            var clusterLines: [String] = []
            // The clusters dumped, and those the ServerList names without attributes in the dump.
            var listed: [ClusterID] = []
            if case .array(let ids)? = dump.value(endpoint, Self.descriptor, 1) {
                listed = ids.compactMap { $0.integer.flatMap { $0.negative ? nil : UInt32(exactly: $0.magnitude) }.map { ClusterID($0) } }
            }
            for clusterID in Set(dump.clusters(on: endpoint) + listed).sorted() {
                let id = clusterID.rawValue
                let where_ = "\(endpoint)/\(id)"
                if endpoint == 0, Self.regeneratedRootClusters.contains(id) {
                    regenerated.append("\(where_) \(model.cluster(clusterID)?.name ?? "cluster"): the node's own (fabrics, credentials, commissioning)")
                    continue
                }
                let definition = model.cluster(clusterID)
                if Self.networkDiagnostics.contains(id), let definition {
                    regenerated.append("\(where_) \(definition.name): the node's own network state")
                    clusterLines.append("      \(definition.name):")
                    continue
                }
                guard let definition = definition ?? (clusterID.isManufacturerSpecific ? .manufacturerSpecific(clusterID, revision: 1, globalsFrom: nil) : nil) else {
                    regenerated.append("\(where_): cluster \(ProfileYAML.hexID(id)) is unknown to the model and not manufacturer-specific; left out")
                    continue
                }
                let known = model.cluster(clusterID) != nil
                let key = known ? definition.name : ProfileYAML.hexID(id, width: 8)
                let clusterPath = "\(path).clusters.\(key)"
                var lines_: [String] = []
                var raw: [String] = []
                let attributes = dump.attributes(of: endpoint, clusterID)
                let featureMap = attributes.first { $0.0 == Global.featureMap }?.1.integer.flatMap { UInt32(exactly: $0.magnitude) }
                let features = featureMap.map(definition.featureCodes(map:)) ?? []
                // Globals as served.
                // Globals as served, in the order a reader expects.
                let globalOrder = [Global.clusterRevision, Global.featureMap, Global.attributeList, Global.acceptedCommandList, Global.generatedCommandList].map(\.rawValue)
                for (attribute, json) in attributes.filter({ Self.isGlobal($0.0) }).sorted(by: {
                    (globalOrder.firstIndex(of: $0.0.rawValue) ?? 9) < (globalOrder.firstIndex(of: $1.0.rawValue) ?? 9)
                }) {
                    let at = "\(where_)/\(attribute.rawValue)"
                    switch attribute.rawValue {
                    case Global.clusterRevision.rawValue:
                        guard let v = json.integer, !v.negative, (1...0xFFFF).contains(v.magnitude) else { throw CloneError(path: "\(file): attributes[\"\(at)\"]", message: "expected a ClusterRevision in 1...65535, got \(json.kind)") }
                        lines_.append("        revision: \(v.magnitude)")
                    case Global.featureMap.rawValue:
                        guard let v = featureMap else { throw CloneError(path: "\(file): attributes[\"\(at)\"]", message: "expected a FeatureMap (a 32-bit integer), got \(json.kind)") }
                        lines_.append("        featureMap: \(v)")
                    case Global.attributeList.rawValue, Global.acceptedCommandList.rawValue, Global.generatedCommandList.rawValue:
                        guard case .array(let items) = json, let ids = Optional(items.compactMap { $0.integer.flatMap { $0.negative ? nil : UInt32(exactly: $0.magnitude) } }), ids.count == items.count else {
                            throw CloneError(path: "\(file): attributes[\"\(at)\"]", message: "expected a list of IDs, got \(json.kind)")
                        }
                        let name = attribute == Global.attributeList ? "attributeList" : attribute == Global.acceptedCommandList ? "acceptedCommandList" : "generatedCommandList"
                        // As served, repeats and an EventList (0xFFFA, gone since Matter 1.3) included.
                        lines_.append("        \(name): \(ProfileYAML.idList(ids))")
                    default:
                        if attribute.rawValue == Self.eventList { regenerated.append("\(at) EventList: not an attribute since Matter 1.3; not served (the AttributeList keeps it)") }
                    }
                }
                var decoded: [AttributeID: TLVValue] = [:]
                for (attribute, json) in attributes where !Self.isGlobal(attribute) {
                    // DeviceTypeList, ServerList, ClientList and PartsList are the node's own, from
                    // its endpoints (and `parent`); the TagList is copied.
                    if id == Self.descriptor, attribute.rawValue <= Clusters.Descriptor.Attribute.partsList.rawValue { continue }
                    let at = AttributePath(endpoint: endpoint, cluster: clusterID, attribute: attribute)
                    let model_ = known ? definition.attribute(attribute) : nil
                    if id == Self.basicInformation, endpoint == 0 {
                        if Self.identityKeys[attribute.rawValue] != nil || attribute.rawValue == Self.serialNumber || attribute.rawValue == Self.uniqueID { continue }
                    }
                    var json = json
                    if options.anonymize, id == Self.basicInformation || id == Self.bridgedBasicInformation {
                        if attribute.rawValue == Self.location { json = .string("XX") }
                        if attribute.rawValue == Self.nodeLabel { json = .string("") }
                    }
                    if id == Self.bridgedBasicInformation, attribute.rawValue == Self.serialNumber {
                        json = .string("\(serial)-\(endpoint)")
                        regenerated.append("\(where_)/15 SerialNumber: the clone's serial and the endpoint")
                    }
                    if options.anonymize, id == Self.bridgedBasicInformation, attribute.rawValue == Self.uniqueID {
                        json = .string(String(format16(fnv1a64("unique:\(serial):\(endpoint)"))))
                        regenerated.append("\(where_)/18 UniqueID: derived from the clone's serial (--anonymize)")
                    }
                    if model_?.fabricScoped == true || Self.isFabricScopedList(json) {
                        regenerated.append("\(where_)/\(attribute.rawValue) \(model_?.name ?? "attribute"): fabric-scoped, starts empty")
                        continue
                    }
                    if let model_, !forcedRaw.contains(at) {
                        let value = try decode(json, attribute: model_, cluster: definition, at: at, file: file)
                        decoded[attribute] = value
                        let allowed = model_.conformance.isAllowed(features: features)
                        let violation = definition.validate(value, for: model_, current: { decoded[$0] })
                        if allowed, violation == nil, ProfileYAML.writable(value, type: model_.type, cluster: definition) {
                            lines_.append("        \(model_.lowerCamelName): " + ProfileYAML.value(model_.type.encoding(value), type: model_.type, cluster: definition))
                            lines["\(clusterPath).\(model_.lowerCamelName)"] = at
                            continue
                        }
                        let why = !allowed ? "not part of \(definition.name) with its features" : violation.map { "the model expects \($0.expected)" } ?? "fields unknown to the model"
                        raw.append("          \(ProfileYAML.hexID(attribute.rawValue)): " + ProfileYAML.raw(model_.type.encoding(value)) + "  # \(model_.name): \(why)")
                    } else if let model_ {
                        let value = try decode(json, attribute: model_, cluster: definition, at: at, file: file)
                        raw.append("          \(ProfileYAML.hexID(attribute.rawValue)): " + ProfileYAML.raw(model_.type.encoding(value)) + "  # \(model_.name): rejected by the model's checks in this profile")
                    } else {
                        let value: TLVValue
                        do { value = try DumpValueDecoder.infer(json) } catch {
                            throw CloneError(path: "\(file): attributes[\"\(at.endpoint)/\(id)/\(attribute.rawValue)\"]\(error.path)", message: "expected \(error.expected), got \(error.got)")
                        }
                        raw.append("          \(ProfileYAML.hexID(attribute.rawValue, width: 8)): " + ProfileYAML.raw(value) + "  # type inferred from the dump")
                    }
                    rawCount += 1
                }
                if !raw.isEmpty {
                    lines_.append("        rawAttributes:")
                    lines_ += raw
                }
                clusterLines.append("      \(key):" + (known ? "" : "  # manufacturer-specific"))
                clusterLines += lines_
            }
            if !clusterLines.isEmpty {
                out.append("    clusters:")
                out += clusterLines
            }
        }
        var header = ["# Regenerated, not cloned:"] + regenerated.map { "#   \($0)" }
        header.append("# rawAttributes: \(rawCount) served as dumped, outside the model's checks (each says why).")
        let yaml = (Array(out.prefix(1)) + header + Array(out.dropFirst())).joined(separator: "\n") + "\n"
        return Draft(yaml: yaml, regenerated: regenerated, rawCount: rawCount, lines: lines)
    }

    private func decode(_ json: DumpJSON, attribute: AttributeDefinition, cluster: ClusterDefinition, at: AttributePath, file: String) throws(CloneError) -> TLVValue {
        do {
            return try DumpValueDecoder(cluster: cluster).decode(json, type: attribute.type)
        } catch {
            throw CloneError(
                path: "\(file): attributes[\"\(at.endpoint)/\(at.cluster.rawValue)/\(at.attribute.rawValue)\"]\(error.path)",
                message: "\(cluster.name).\(attribute.name): expected \(error.expected), got \(error.got)")
        }
    }

    /// Whether the clone regenerates this dumped attribute instead of copying it (what its
    /// profile's header lists): the node's own fabrics, credentials, commissioning and network
    /// state, serial numbers and the node's unique ID, fabric-scoped lists, and EventList.
    public static func isRegenerated(_ path: AttributePath, value: DumpJSON?) -> Bool {
        let cluster = path.cluster.rawValue, attribute = path.attribute.rawValue
        if path.endpoint == 0, regeneratedRootClusters.contains(cluster) { return true }
        if attribute == eventList { return true }
        if networkDiagnostics.contains(cluster) { return true }
        if cluster == basicInformation, attribute == serialNumber || attribute == uniqueID { return true }
        if cluster == bridgedBasicInformation, attribute == serialNumber { return true }
        return value.map(isFabricScopedList) ?? false
    }

    /// The endpoint `endpoint` is a part of, from the dumped PartsLists: of the application
    /// endpoints listing it, the one listing fewest (its nearest ancestor, whether the lists
    /// name all descendants or only children). nil: only the root lists it.
    static func parent(of endpoint: EndpointNumber, in dump: NodeDump) -> EndpointNumber? {
        guard endpoint != 0 else { return nil }
        var nearest: (endpoint: EndpointNumber, parts: Int)?
        for candidate in dump.endpoints where candidate != 0 && candidate != endpoint {
            guard case .array(let parts)? = dump.value(candidate, descriptor, Clusters.Descriptor.Attribute.partsList.rawValue) else { continue }
            let numbers = parts.compactMap { $0.integer.flatMap { $0.negative ? nil : EndpointNumber(exactly: $0.magnitude) } }
            if numbers.contains(endpoint), numbers.count < nearest?.parts ?? Int.max { nearest = (candidate, numbers.count) }
        }
        return nearest?.endpoint
    }

    static func isGlobal(_ attribute: AttributeID) -> Bool { (Global.generatedCommandList.rawValue...Global.clusterRevision.rawValue).contains(attribute.rawValue) }
    static let eventList = Clusters.Global.RetiredAttribute.eventList.rawValue

    /// A list of structs carrying a FabricIndex (field 254): one fabric's entries, not the device's.
    static func isFabricScopedList(_ json: DumpJSON) -> Bool {
        guard case .array(let items) = json else { return false }
        return items.contains { $0["254"] != nil || $0["fabricIndex"] != nil }
    }

    private func format16(_ v: UInt64) -> String { String(v, radix: 16, uppercase: true).leftPadded(16) }
}

